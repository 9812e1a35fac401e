// A store's error that quotes the forwarded query must not hand the rewrite (granted graphs, hidden predicates) to a caller when explain is off.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OVERSIZED_ANSWER } from '../helpers/oversized-answer.js';
import { INTEGRATION_DATA, sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const KEY = 'test-key-echo-0123456789abcdef';
/** Graphs granted to the caller and the predicate hidden from it: none of them is in the caller's query. */
const SECRETS = ['http://example.org/g/public1', 'http://example.org/g/teamA', 'http://example.org/hiddenNote'];
/** A cross product of five patterns: Virtuoso's cost estimate refuses it over the lab's graphs. */
const COSTLY = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?x ?o }';
const SIMPLE = 'SELECT * WHERE { ?s ?p ?o } LIMIT 3';

const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-echo-'));
const POLICIES = join(folder, 'policies.ttl');
writeFileSync(
  POLICIES,
  '@prefix guard: <https://w3id.org/sparql-guard#> .\n' +
    '<http://example.org/policies/echo> a guard:Policy ; guard:agent <http://example.org/agents/echo> ;\n' +
    '  guard:readGraph <http://example.org/g/public1>, <http://example.org/g/teamA> ; guard:hidePath <http://example.org/hiddenNote> .\n',
);
after(() => rmSync(folder, { recursive: true, force: true }));

/** The guard's config for `upstream`: one caller, its graphs and hidden predicate, explain as given. */
function configFor(upstream: string, explain: boolean): Record<string, unknown> {
  return {
    upstream,
    embedded: undefined,
    explain,
    // A credential for the store: it must never reach a log line.
    upstreamHeaders: { authorization: 'Basic upstream-secret' },
    policies: [POLICIES],
    auth: { apiKeys: [{ agent: 'http://example.org/agents/echo', groups: [], sha256: sha256(KEY) }] },
  };
}

async function ask(t: TestGuard, query: string) {
  const response = await fetch(t.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${KEY}` },
    body: new URLSearchParams({ query }),
  });
  return {
    status: response.status,
    code: response.headers.get('sparql-guard-error'),
    type: response.headers.get('content-type'),
    body: await response.text(),
  };
}

/** The caller learns nothing of the rewrite: no granted graph, no hidden predicate, no FROM. */
function assertNoRewrite(body: string): void {
  for (const secret of SECRETS) assert.ok(!body.includes(secret), `the answer names ${secret}: ${body}`);
  assert.doesNotMatch(body, /FROM (NAMED )?<|FILTER|NOT IN|SPARQL query|<http/);
  assert.match(body, /^[^\n]+\n$/, 'one line');
}

/** The store's text in the operator's log line. */
function loggedText(t: TestGuard): string {
  const line = t.logs.findLast((each) => each.event === 'store-error');
  assert.ok(line !== undefined, 'a store-error line is logged');
  assert.ok(!JSON.stringify(line).includes('upstream-secret'), 'the log names the store without its credential');
  return String(line.text);
}

describe('a store error that echoes the forwarded query (stub in the words of Virtuoso and Jena)', () => {
  const open: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const item of open.reverse()) await item.close();
  });

  const start = async (status: number, wording: (query: string) => string, explain: boolean, headers: Record<string, string> = {}) => {
    const store = await startEchoStore(status, wording, headers);
    open.push(store);
    const t = await startTestGuard(configFor(store.url, explain));
    open.push(t);
    return t;
  };

  it("Virtuoso's cost refusal: the store's 500, store_refused, one line that says why, nothing of the rewrite", async () => {
    const t = await start(
      500,
      (q) => `Virtuoso 42000 Error The estimated execution time 9657574 (sec) exceeds the limit of 400 (sec).\n\nSPARQL query:\n${q}`,
      false,
    );
    const { status, code, type, body } = await ask(t, COSTLY);
    assert.equal(status, 500);
    assert.equal(code, 'store_refused');
    assert.match(type ?? '', /^text\/plain/);
    assert.match(
      body,
      /the store refused the query as forwarded \(HTTP 500\): with 2 graphs in its dataset, \d+ KiB, its estimated cost is over the store's limit/,
    );
    assertNoRewrite(body);
    // The operator has the store's whole text.
    assert.match(loggedText(t), /estimated execution time[\s\S]*FROM <http:\/\/example\.org\/g\/public1>/);
  });

  it("Jena's parse error that quotes the query: the store's 400, store_error, nothing of the rewrite", async () => {
    const t = await start(400, (q) => `Error 400: Parse error: \n${q}\n\nEncountered " "}" "} "" at line 9, column 1.`, false);
    const { status, code, body } = await ask(t, SIMPLE);
    assert.equal(status, 400);
    assert.equal(code, 'store_error');
    assert.equal(body, "the store answered HTTP 400 to the query as forwarded; its message is in the guard's log\n");
    assertNoRewrite(body);
  });

  it('a store error at a status the guard never uses itself passes that status on', async () => {
    const t = await start(507, (q) => `insufficient storage for ${q}`, false);
    const { status, code, body } = await ask(t, SIMPLE);
    assert.equal(status, 507);
    assert.equal(code, 'store_error');
    assertNoRewrite(body);
  });

  it("with explain on, the store's text reaches the caller and its own log line, never the request log line (it quotes the query)", async () => {
    const t = await start(503, (q) => `Service Unavailable while running:\n${q}`, true);
    const { status, code, body } = await ask(t, SIMPLE);
    assert.equal(status, 503);
    assert.equal(code, 'store_error');
    assert.match(body, /the store said: Service Unavailable while running: .*FROM <http:\/\/example\.org\/g\/public1>/);
    assert.match(loggedText(t), /FROM <http:\/\/example\.org\/g\/public1>/);
    const line = t.logs.findLast((each) => each.status === 503 && each.event === undefined);
    assert.ok(line !== undefined, 'a request line');
    assert.equal(line.error, "the store answered HTTP 503 to the query as forwarded; its message is in the guard's log");
    for (const secret of [...SECRETS, 'SELECT', 'LIMIT 3'])
      assert.ok(!JSON.stringify(line).includes(secret), `the request line holds ${secret}`);
  });

  it("a store's redirection is no answer: its status passes on, its body and its Location (the store's address) do not", async () => {
    const t = await start(302, (q) => `<a href="http://store.internal:8890/sparql?query=${encodeURIComponent(q)}">moved</a> ${q}`, false, {
      location: 'http://store.internal:8890/sparql',
    });
    const response = await fetch(t.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${KEY}` },
      body: new URLSearchParams({ query: SIMPLE }),
      redirect: 'manual',
    });
    const body = await response.text();
    assert.equal(response.status, 302);
    assert.equal(response.headers.get('sparql-guard-error'), 'store_error');
    assert.equal(response.headers.get('location'), null);
    assert.equal(body, "the store answered HTTP 302 to the query as forwarded; its message is in the guard's log\n");
    assertNoRewrite(body);
  });

  it('with explain on, the store text reaches the caller (the rewrite is not confidential there): the oracle sees a leak', async () => {
    const t = await start(400, (q) => `Error 400: Parse error: \n${q}\n`, true);
    const { status, code, body } = await ask(t, SIMPLE);
    assert.equal(status, 400);
    assert.equal(code, 'store_error');
    assert.match(body, /^the store answered HTTP 400 to the query as forwarded; the store said: Error 400: Parse error: /);
    assert.throws(() => assertNoRewrite(body));
  });
});

/** A store that answers every query but the guard's dataset check with `status`, `headers` and `wording(query)`. */
async function startEchoStore(
  status: number,
  wording: (query: string) => string,
  headers: Record<string, string> = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += String(chunk);
    const query = new URLSearchParams(text).get('query') ?? '';
    if (/^ASK\nFROM <urn:x-sparql-guard:empty>/.test(query)) {
      response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
      response.end(`{"head":{},"boolean":${/WHERE \{ \}$/.test(query)}}`);
      return;
    }
    response.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(wording(query));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A link in front of a real lab store that breaks each forwarded query on its way (one `}` more),
 * so the store answers with its own parse error, quoting the forwarded text as it does. The
 * guard's dataset check passes unbroken. A stand-in for a store's refusal, not for its words.
 */
async function startBreakingLink(storeUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += String(chunk);
    const form = new URLSearchParams(text);
    const query = form.get('query') ?? '';
    if (!/^ASK\nFROM <urn:x-sparql-guard:empty>/.test(query)) form.set('query', `${query} }`);
    const answer = await fetch(storeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: request.headers.accept ?? '*/*' },
      body: form,
    });
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    response.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const LAB = [
  ['oxigraph', process.env.RIG_OXIGRAPH_QUERY],
  ['jena', process.env.RIG_JENA_QUERY],
  ['virtuoso', process.env.RIG_VIRTUOSO_QUERY],
] as const;

for (const [name, storeUrl] of LAB) {
  const skip = storeUrl ? false : `RIG_${name.toUpperCase()}_QUERY is not set (the store lab is not up)`;
  describe(`the lab's ${name}: its real error texts`, { skip }, () => {
    let link: { url: string; close(): Promise<void> };
    let t: TestGuard;
    before(async () => {
      link = await startBreakingLink(storeUrl!);
      t = await startTestGuard(configFor(link.url, false));
    });
    after(async () => {
      await t.close();
      await link.close();
    });

    it(`${name}'s parse error of the forwarded text: the store's status, one line, nothing of the rewrite`, async () => {
      const { status, code, body } = await ask(t, SIMPLE);
      assert.equal(status, 400, body);
      assert.equal(code, 'store_error');
      assertNoRewrite(body);
      const text = loggedText(t);
      assert.ok(text.length > 0, 'the store said something');
      // Jena and Virtuoso quote the forwarded text: had the guard passed it on, the caller would have had the rewrite.
      if (name !== 'oxigraph') assert.ok(text.includes(SECRETS[0]!), `${name} quoted the forwarded query: ${text}`);
    });
  });
}

describe(
  "the lab's Virtuoso refusing the forwarded query for its cost",
  { skip: process.env.RIG_VIRTUOSO_QUERY ? false : 'RIG_VIRTUOSO_QUERY is not set (the store lab is not up)' },
  () => {
    let t: TestGuard;
    before(async () => {
      t = await startTestGuard({ ...configFor(process.env.RIG_VIRTUOSO_QUERY!, false), timeoutMs: 20_000 });
    });
    after(() => t.close());

    it('500 store_refused naming the cost, at a grant of two graphs, with nothing of the rewrite; its words in the log', async () => {
      // Virtuoso refuses this query in a few milliseconds (its estimate: millions of seconds). A
      // lab whose database drifted under a day of test writes ran it instead (stop 47's CI: the
      // guard's 502 at timeoutMs); .ci/run now starts each run from a freshly loaded lab.
      const answer = await ask(t, COSTLY);
      assert.ok(
        !(answer.status === 502 && /did not answer/.test(answer.body)),
        `the lab's Virtuoso ran the query instead of refusing it for its cost (wipe its database: rig/down.sh --wipe): ${answer.body}`,
      );
      const { status, code, body } = answer;
      assert.equal(status, 500, body);
      assert.equal(code, 'store_refused');
      assert.match(body, /with 2 graphs in its dataset, \d+ KiB, its estimated cost is over the store's limit/);
      assertNoRewrite(body);
      assert.match(loggedText(t), /^Virtuoso 42000 Error The estimated execution time -?\d+ \(sec\) exceeds the limit of \d+ \(sec\)/);
    });
  },
);

describe('the embedded store unable to send an answer longer than one JavaScript string', () => {
  let t: TestGuard;
  before(async () => {
    t = await startTestGuard({ ...configFor('', false), upstream: undefined, embedded: { data: [INTEGRATION_DATA] } });
  });
  after(() => t.close());

  // Found by sending Jena's serialization tests through the guard: a cross product over the keeper's graphs came back as a 400 in V8's words.
  it('500 store_refused naming the answer, not a 400 that blames the query; the next query is answered', { timeout: 120_000 }, async () => {
    const { status, code, body } = await ask(t, OVERSIZED_ANSWER);
    assert.equal(status, 500, body);
    assert.equal(code, 'store_refused');
    assert.match(body, /its answer is larger than the store can send/);
    assert.match(loggedText(t), /^the answer is too large for the embedded store/);
    assertNoRewrite(body);
    assert.equal((await ask(t, 'ASK { ?s ?p ?o }')).status, 200);
  });
});
