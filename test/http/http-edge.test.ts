// The HTTP edge through createApp + inject (fastify's Testing guide): real policies, planner and credentials, a stand-in store only where a store's answer is needed.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { authChallenge, createCallerIdentifier, credentialHeaderNames } from '../../src/auth/identify-caller.js';
import { readConfig, type GuardConfig } from '../../src/config/read-config.js';
import { ERROR_CODE_HEADER, GUARD_CODES, GuardError, type GuardCode } from '../../src/guard-error.js';
import { loadPolicySet } from '../../src/policy/load/load-policy-set.js';
import type { PolicySet } from '../../src/policy/policy-set.js';
import { policySetSources } from '../../src/policy/load/policy-set-sources.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { createApp, type GuardServices } from '../../src/server/create-app.js';
import { createPolicyHolder } from '../../src/server/policy-holder.js';
import { createPlanner } from '../../src/sparql/create-planner.js';
import type { Upstream, UpstreamResponse } from '../../src/upstream/create-upstream.js';
import { INTEGRATION_API_KEYS, INTEGRATION_POLICIES, KEYS } from '../helpers/start-test-guard.js';

const SELECT = 'SELECT * WHERE { ?s ?p ?o } LIMIT 1';
const BETA = { authorization: `Bearer ${KEYS.beta}` };
const ORIGIN = 'https://app.example';

/** A stand-in store: records what it is sent and answers with `answer` (a store's fault or quirk on demand). */
interface StubStore extends Upstream {
  readonly sent: { query: string; accept: string; timeoutMs: number | undefined }[];
  answer: () => Partial<UpstreamResponse> & { text?: string };
}

function createStubStore(): StubStore {
  const store: StubStore = {
    sent: [],
    answer: () => ({}),
    store: 'http://stub.example/sparql',
    send({ query }, { accept, timeoutMs }) {
      store.sent.push({ query, accept, timeoutMs });
      const { text = '{"head":{"vars":[]},"results":{"bindings":[]}}', ...rest } = store.answer();
      return Promise.resolve({
        status: 200,
        contentType: 'application/sparql-results+json',
        cacheControl: undefined,
        contentLength: undefined,
        server: undefined,
        body: Readable.from([Buffer.from(text)]),
        timeoutMs: 60_000,
        takeWhole: () => undefined,
        ...rest,
      });
    },
    close: () => Promise.resolve(),
  };
  return store;
}

let config: GuardConfig;
let policySet: PolicySet;
let folder: string;
before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'sparql-guard-edge-'));
  const file = join(folder, 'guard.json');
  writeFileSync(file, JSON.stringify({ policies: [INTEGRATION_POLICIES], auth: { apiKeys: INTEGRATION_API_KEYS } }));
  config = readConfig({ GUARD_CONFIG: file });
  policySet = await loadPolicySet(policySetSources(config));
});
after(() => rmSync(folder, { recursive: true, force: true }));

interface Edge {
  readonly app: FastifyInstance;
  readonly store: StubStore;
  readonly logs: Record<string, unknown>[];
}

/** The app as start-guard assembles it, with the stand-in store; `services` replaces any part. */
function createEdge(options: { explain?: boolean; ui?: boolean; origins?: string[] } = {}, services: Partial<GuardServices> = {}): Edge {
  const store = createStubStore();
  const logs: Record<string, unknown>[] = [];
  const policies = createPolicyHolder(authChallenge(config.auth));
  policies.replace(policySet);
  const planner = createPlanner({
    baseIri: config.baseIri,
    maxQueryDepth: config.maxQueryDepth,
    planCache: config.planCache,
    allowedFunctions: config.allowedFunctions,
  });
  const app = createApp(
    {
      path: '/sparql',
      explain: options.explain ?? true,
      cors: { origins: options.origins ?? [ORIGIN], credentials: false },
      ui: options.ui ?? false,
    },
    {
      identifyCaller: createCallerIdentifier(config.auth),
      credentialHeaders: credentialHeaderNames(config.auth),
      grant: (caller) => policies.grant(caller),
      plan: (request, grant) => planner.plan(request, grant),
      upstream: store,
      notReadyReason: () => undefined,
      log: (entry) => logs.push({ ...entry }),
      ...services,
    },
  );
  return { app, store, logs };
}

/** Asserts the shape every error of the guard has: its code and that code's status, one line of text/plain, not cacheable. */
function assertError(response: LightMyRequestResponse, code: GuardCode): string {
  assert.equal(response.statusCode, GUARD_CODES[code], response.body);
  assert.equal(response.headers[ERROR_CODE_HEADER], code, response.body);
  assert.match(String(response.headers['content-type']), /^text\/plain; charset=utf-8/);
  assert.match(response.body, /^[^\n]+\n$/, 'one line');
  assert.equal(response.headers['cache-control'], 'private, no-store');
  return response.body;
}

const queryUrl = (query: string) => `/sparql?query=${encodeURIComponent(query)}`;

describe('paths and methods', () => {
  it('404 for an unknown path; 405 with the Allow of each known path', async () => {
    const { app } = createEdge();
    assertError(await app.inject({ url: '/nope' }), 'not_found');
    assertError(await app.inject({ url: '/sparql/' }), 'not_found');
    assertError(await app.inject({ url: '/sparql/?query=ASK%20%7B%7D' }), 'not_found');
    for (const [url, allow] of [
      ['/sparql', 'GET, POST, OPTIONS'],
      ['/sparql/explain', 'GET, POST, OPTIONS'],
      ['/healthz', 'GET'],
      ['/readyz', 'GET'],
    ]) {
      for (const method of ['PUT', 'DELETE', 'PATCH'] as const) {
        const response = await app.inject({ method, url: url! });
        assertError(response, 'method_not_allowed');
        assert.equal(response.headers.allow, allow, `${method} ${url}`);
      }
    }
    const head = await app.inject({ method: 'HEAD', url: '/sparql' });
    assert.equal(head.statusCode, 405, 'HEAD is not GET here');
    assert.equal(head.headers.allow, 'GET, POST, OPTIONS');
    assertError(await app.inject({ method: 'POST', url: '/healthz' }), 'method_not_allowed');
  });

  it('a path whose percent-encoding cannot be decoded is the one-line 400, logged; a decodable one is routed as before', async () => {
    const { app, logs } = createEdge();
    for (const url of ['/sparql%ZZ', '/x%C3', '/healthz%', '/sparql%E0%80?query=ASK%20%7B%7D']) {
      for (const method of ['GET', 'POST', 'PUT'] as const) {
        const response = await app.inject({ method, url, headers: { origin: ORIGIN } });
        assert.match(assertError(response, 'bad_request'), /malformed URL/, `${method} ${url}`);
        assert.equal(response.headers['access-control-allow-origin'], ORIGIN, `${method} ${url}`);
        assert.match(String(response.headers.vary), /^Origin, Accept/, `${method} ${url}`);
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(logs.filter((entry) => entry.status === 400 && entry.code === 'bad_request').length, 12, JSON.stringify(logs));
    assertError(await app.inject({ url: '/x%41' }), 'not_found');
    assert.equal((await app.inject({ url: '/healt%68z' })).statusCode, 200, 'a decodable escape still names its path');
  });

  it('explain off: {path}/explain is 404, not 405', async () => {
    const { app } = createEdge({ explain: false });
    assertError(await app.inject({ url: `/sparql/explain?query=${encodeURIComponent(SELECT)}` }), 'not_found');
    assertError(await app.inject({ method: 'PUT', url: '/sparql/explain' }), 'not_found');
  });

  it('the query page off: / is 404; on: / redirects a browser to the endpoint, and is 404 to any other client', async () => {
    assertError(await createEdge().app.inject({ url: '/', headers: { accept: 'text/html' } }), 'not_found');
    const { app } = createEdge({ ui: true });
    const response = await app.inject({ url: '/', headers: { accept: 'text/html,*/*;q=0.8' } });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/sparql');
    for (const accept of [undefined, '*/*', 'application/sparql-results+json', 'text/html;q=0']) {
      assertError(await app.inject({ url: '/', headers: accept === undefined ? {} : { accept } }), 'not_found');
    }
  });
});

describe('request bodies', () => {
  it('413 for a body over 1 MiB, before the store is asked', async () => {
    const { app, store } = createEdge();
    const response = await app.inject({
      method: 'POST',
      url: '/sparql',
      headers: { ...BETA, 'content-type': 'application/sparql-query' },
      payload: `${SELECT} #${'x'.repeat(1024 * 1024)}`,
    });
    assertError(response, 'too_large');
    assert.equal(store.sent.length, 0);
  });

  it('415 for another media type or charset; 403 for an update whatever else is wrong', async () => {
    const { app, store } = createEdge();
    const post = (contentType: string, payload: string) =>
      app.inject({ method: 'POST', url: '/sparql', headers: { ...BETA, 'content-type': contentType }, payload });
    assertError(await post('application/json', '{}'), 'unsupported_media_type');
    assertError(await post('application/sparql-query; charset=iso-8859-1', SELECT), 'unsupported_media_type');
    assertError(await post('application/sparql-update', 'DROP ALL'), 'update');
    assertError(await post('application/x-www-form-urlencoded', `update=${encodeURIComponent('DROP ALL')}`), 'update');
    assertError(await post('application/x-www-form-urlencoded', 'query=%FF'), 'bad_request');
    assert.equal(store.sent.length, 0);
  });

  it('an update operation as the query is the 403 of the other two update forms whoever sends it: a bad key, no policy for the caller', async () => {
    // Policies that grant nobody anything: the anonymous caller gets 401, an identified one 403.
    const nobody = createPolicyHolder(authChallenge(config.auth));
    nobody.replace(
      await loadPolicySet({ policyFiles: [resolve('test/fixtures/integration/no-policies.ttl')], ruleFiles: shippedRuleFiles() }),
    );
    const { app, store } = createEdge({}, { grant: (caller) => nobody.grant(caller) });
    const callers = [{ 'x-api-key': 'wrong-key' }, {}, BETA];
    const updates = [
      'INSERT DATA { <x:a> <x:b> <x:c> }',
      'PREFIX x: <x:> DROP ALL',
      'DELETE WHERE { ?s ?p ?o }',
      '\\u0043LEAR ALL',
      'LOAD garbage',
    ];
    for (const headers of callers) {
      for (const update of updates) {
        for (const path of ['/sparql', '/sparql/explain']) {
          const form = `query=${encodeURIComponent(update)}`;
          const what = `${JSON.stringify(headers)} ${path} ${update}`;
          const answers = [
            await app.inject({ url: `${path}?${form}`, headers }),
            await app.inject({
              method: 'POST',
              url: path,
              headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
              payload: form,
            }),
            await app.inject({
              method: 'POST',
              url: path,
              headers: { ...headers, 'content-type': 'application/sparql-query' },
              payload: update,
            }),
          ];
          for (const answer of answers) assert.equal(answer.headers[ERROR_CODE_HEADER], 'update', `${what}: ${answer.body}`);
        }
      }
    }
    // A query that is not an update keeps the caller's own refusal.
    assertError(await app.inject({ url: queryUrl(SELECT), headers: callers[0] }), 'unauthenticated');
    assertError(await app.inject({ url: queryUrl(SELECT), headers: callers[1] }), 'unauthenticated');
    assertError(await app.inject({ url: queryUrl(SELECT), headers: callers[2] }), 'forbidden');
    assert.equal(store.sent.length, 0);
  });

  it('400 for percent-escapes that are not UTF-8, in the URL or a form, as for such a raw body: never U+FFFD run as the query', async () => {
    const { app, store } = createEdge();
    const escaped = 'query=ASK%7B%3Fs%20%3Fp%20%22%C3%22%7D';
    for (const path of ['/sparql', '/sparql/explain']) {
      const get = await app.inject({ method: 'GET', url: `${path}?${escaped}`, headers: BETA });
      assert.match(assertError(get, 'bad_request'), /not valid UTF-8/);
      const form = await app.inject({
        method: 'POST',
        url: path,
        headers: { ...BETA, 'content-type': 'application/x-www-form-urlencoded' },
        payload: escaped,
      });
      assert.match(assertError(form, 'bad_request'), /not valid UTF-8/);
      const raw = await app.inject({
        method: 'POST',
        url: path,
        headers: { ...BETA, 'content-type': 'application/sparql-query' },
        payload: Buffer.from([...Buffer.from('ASK{?s ?p "'), 0xc3, ...Buffer.from('"}')]),
      });
      assert.match(assertError(raw, 'bad_request'), /not valid UTF-8/);
    }
    assert.equal(store.sent.length, 0);
  });

  it('415 with Accept-Encoding: identity for a gzip body, before the store is asked; identity is read', async () => {
    const { app, store } = createEdge();
    const post = (contentEncoding: string, payload: Buffer) =>
      app.inject({
        method: 'POST',
        url: '/sparql',
        headers: { ...BETA, 'content-type': 'application/sparql-query', 'content-encoding': contentEncoding },
        payload,
      });
    const gzipped = await post('gzip', gzipSync(SELECT));
    assert.equal(
      assertError(gzipped, 'unsupported_media_type'),
      'the request body has Content-Encoding gzip: send it without a content coding\n',
    );
    assert.equal(gzipped.headers['accept-encoding'], 'identity');
    assert.equal(store.sent.length, 0);
    assert.equal((await post('identity', Buffer.from(SELECT))).statusCode, 200);
    assert.equal(store.sent.length, 1);
  });

  it('a form and a query body reach the store as the same plan', async () => {
    const { app, store } = createEdge();
    const form = await app.inject({
      method: 'POST',
      url: '/sparql',
      headers: { ...BETA, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `query=${encodeURIComponent(SELECT)}`,
    });
    const direct = await app.inject({
      method: 'POST',
      url: '/sparql',
      headers: { ...BETA, 'content-type': 'application/sparql-query' },
      payload: SELECT,
    });
    assert.equal(form.statusCode, 200);
    assert.equal(direct.statusCode, 200);
    assert.equal(store.sent.length, 2);
    assert.equal(store.sent[0]!.query, store.sent[1]!.query);
    assert.match(store.sent[0]!.query, /FROM <http:\/\/example\.org\/graphs\/a>/);
  });
});

describe('CORS and Vary', () => {
  it('answers a preflight with 204, Allow and the allowed headers for a listed origin', async () => {
    const { app } = createEdge();
    for (const url of ['/sparql', '/sparql/explain']) {
      const response = await app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
      assert.equal(response.statusCode, 204);
      assert.equal(response.headers.allow, 'GET, POST, OPTIONS');
      assert.equal(response.headers['access-control-allow-origin'], ORIGIN);
      assert.match(String(response.headers['access-control-allow-headers']), /Authorization/);
    }
  });

  it('carries Access-Control-Allow-Origin on answers, errors and probes for a listed origin only', async () => {
    const { app } = createEdge();
    const answers = [
      await app.inject({ url: queryUrl(SELECT), headers: { ...BETA, origin: ORIGIN } }),
      await app.inject({ url: queryUrl(SELECT), headers: { authorization: 'Bearer not-a-key', origin: ORIGIN } }),
      await app.inject({ method: 'PUT', url: '/sparql', headers: { origin: ORIGIN } }),
      await app.inject({ url: '/healthz', headers: { origin: ORIGIN } }),
    ];
    assert.deepEqual(
      answers.map((response) => response.statusCode),
      [200, 401, 405, 200],
    );
    for (const response of answers) assert.equal(response.headers['access-control-allow-origin'], ORIGIN);
    const stranger = await app.inject({ url: queryUrl(SELECT), headers: { ...BETA, origin: 'https://evil.example' } });
    assert.equal(stranger.statusCode, 200);
    assert.equal(stranger.headers['access-control-allow-origin'], undefined);
  });

  it('Vary names Origin, Accept and every credential header on every answer', async () => {
    const { app } = createEdge();
    const expected = ['Origin', 'Accept', ...credentialHeaderNames(config.auth)].join(', ');
    assert.match(expected, /authorization/);
    const answers = [
      await app.inject({ url: queryUrl(SELECT), headers: BETA }),
      await app.inject({ url: queryUrl(SELECT) }),
      await app.inject({ url: `/sparql/explain?query=${encodeURIComponent(SELECT)}`, headers: BETA }),
      await app.inject({ url: '/nope' }),
      await app.inject({ url: '/readyz' }),
    ];
    for (const response of answers) assert.equal(response.headers.vary, expected, `${response.statusCode}`);
  });
});

describe('error rendering', () => {
  it('401 lists Basic first for clients and navigations, Bearer first for a script in a browser (no login dialog)', async () => {
    const { app } = createEdge();
    const challengeFor = async (headers: Record<string, string>) =>
      String((await app.inject({ url: queryUrl(SELECT), headers: { 'x-api-key': 'wrong-key', ...headers } })).headers['www-authenticate']);
    const basicFirst = 'Basic realm="sparql-guard", charset="UTF-8", Bearer realm="sparql-guard"';
    const bearerFirst = 'Bearer realm="sparql-guard", Basic realm="sparql-guard", charset="UTF-8"';
    assert.equal(await challengeFor({}), basicFirst);
    assert.equal(await challengeFor({ 'sec-fetch-mode': 'navigate' }), basicFirst);
    assert.equal(await challengeFor({ 'sec-fetch-mode': 'cors' }), bearerFirst);
    assert.equal(await challengeFor({ 'sec-fetch-mode': 'same-origin' }), bearerFirst);
  });

  it('401 carries the challenge; refusals never echo the query', async () => {
    const { app } = createEdge();
    const response = await app.inject({ url: queryUrl(SELECT), headers: { 'x-api-key': 'wrong-key' } });
    assertError(response, 'unauthenticated');
    assert.match(String(response.headers['www-authenticate']), /(^|, )Bearer realm=/);
    const body = assertError(await app.inject({ url: queryUrl('SELECT * WHERE { ?s ?p CANARY-ECHO'), headers: BETA }), 'parse');
    assert.doesNotMatch(body, /CANARY-ECHO/);
  });

  it('a bug of ours is a one-line 500 and a log line naming only its kind', async () => {
    const { app, logs } = createEdge(
      {},
      {
        plan: () => {
          throw new TypeError('secret detail of the request');
        },
      },
    );
    const body = assertError(await app.inject({ url: queryUrl(SELECT), headers: BETA }), 'internal_error');
    assert.equal(body, 'internal error\n');
    const line = logs.find((entry) => entry.event === 'internal-error');
    assert.deepEqual(line, { event: 'internal-error', path: '/sparql', error: 'TypeError' });
    assert.doesNotMatch(JSON.stringify(logs), /secret detail/);
  });

  it("the store's failure is the guard's one-line 502", async () => {
    const { app, store } = createEdge();
    store.send = () => Promise.reject(new GuardError(502, 'upstream_failed', 'the store could not be reached'));
    assert.equal(
      assertError(await app.inject({ url: queryUrl(SELECT), headers: BETA }), 'upstream_failed'),
      'the store could not be reached\n',
    );
  });
});

describe('explain', () => {
  it('answers the rewritten query as JSON and never asks the store', async () => {
    const { app, store } = createEdge();
    const response = await app.inject({ url: `/sparql/explain?query=${encodeURIComponent(SELECT)}`, headers: BETA });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.equal(response.headers['cache-control'], 'private, no-store');
    const explain = response.json() as Record<string, unknown>;
    assert.equal(explain.agent, 'http://example.org/agents/beta-user');
    assert.deepEqual(explain.groups, ['beta']);
    assert.deepEqual(explain.policies, ['<http://example.org/policies/everyone>', '<http://example.org/policies/beta>']);
    assert.equal(explain.form, 'select');
    // The query reads no named graph: FROM NAMED holds only the reserved empty graph.
    assert.match(String(explain.query), /FROM NAMED <urn:x-sparql-guard:empty>/);
    assert.equal(store.sent.length, 0);
  });

  it('refuses as the query route does', async () => {
    const { app } = createEdge();
    assertError(
      await app.inject({ url: `/sparql/explain?query=${encodeURIComponent(SELECT)}`, headers: { 'x-api-key': 'wrong-key' } }),
      'unauthenticated',
    );
    assertError(await app.inject({ url: '/sparql/explain?update=CLEAR%20ALL', headers: BETA }), 'update');
    assertError(await app.inject({ url: '/sparql/explain', headers: BETA }), 'bad_request');
  });
});

describe("the store's answer", () => {
  it("passes the store's status, type and body on, with the Accept the form calls for", async () => {
    const { app, store } = createEdge();
    store.answer = () => ({ status: 200, contentType: 'application/sparql-results+xml', text: '<sparql/>' });
    const response = await app.inject({ url: queryUrl(SELECT), headers: { ...BETA, accept: 'application/sparql-results+xml' } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/sparql-results+xml');
    assert.equal(response.body, '<sparql/>');
    assert.equal(store.sent.at(-1)!.accept, 'application/sparql-results+xml');
    await app.inject({ url: queryUrl(SELECT), headers: BETA });
    assert.equal(store.sent.at(-1)!.accept, 'application/sparql-results+json');
  });

  it("a store's answer, opened in a browser, is read as its type only and runs nothing (a store's HTML renders inert)", async () => {
    const { app, store } = createEdge();
    store.answer = () => ({ contentType: 'text/html', text: '<script>alert(1)</script>' });
    const response = await app.inject({ url: queryUrl(SELECT), headers: { ...BETA, accept: 'text/html' } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'; sandbox");
    const refused = await app.inject({ url: '/nowhere' });
    assert.equal(refused.headers['x-content-type-options'], 'nosniff');
  });

  it('a coding the store used although asked for none is named: the caller is not handed gzip as JSON', async () => {
    const { app, store } = createEdge();
    const json = '{"head":{},"boolean":true}';
    store.answer = () => ({ contentEncoding: 'gzip', body: Readable.from([gzipSync(json)]) });
    const response = await app.inject({ url: queryUrl('ASK {}'), headers: BETA });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(response.rawPayload).toString(), json);
    store.answer = () => ({ contentEncoding: 'identity' });
    assert.equal((await app.inject({ url: queryUrl('ASK {}'), headers: BETA })).headers['content-encoding'], undefined);
  });

  it('Cache-Control: private, no-store, plus only the directives of the store that restrict further', async () => {
    const { app, store } = createEdge();
    const cases: [string | undefined, string][] = [
      [undefined, 'private, no-store'],
      ['public, max-age=3600, immutable', 'private, no-store'],
      ['no-cache, max-age=60, must-revalidate', 'private, no-store, no-cache, must-revalidate'],
    ];
    for (const [fromStore, expected] of cases) {
      store.answer = () => ({ cacheControl: fromStore });
      const response = await app.inject({ url: queryUrl(SELECT), headers: BETA });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], expected, String(fromStore));
    }
  });
});

describe('probes', () => {
  it('/healthz and /readyz answer ok when the policies are loaded and the store is fine', async () => {
    const { app } = createEdge({}, { upstreamProblem: () => Promise.resolve(undefined) });
    for (const url of ['/healthz', '/readyz']) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 200);
      assert.equal(response.body, 'ok');
      assert.equal(response.headers['cache-control'], 'private, no-store');
    }
  });

  it('policies not loaded: both 503 with the reason', async () => {
    const { app } = createEdge({}, { notReadyReason: () => 'policies are not loaded yet' });
    for (const url of ['/healthz', '/readyz']) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 503);
      assert.equal(response.body, 'policies are not loaded yet\n');
    }
  });

  it('a store problem or the drain: /readyz 503, /healthz still 200 (liveness never depends on the store)', async () => {
    const sick = createEdge({}, { upstreamProblem: () => Promise.resolve('the store ignores FROM') });
    assert.equal((await sick.app.inject({ url: '/readyz' })).statusCode, 503);
    assert.equal((await sick.app.inject({ url: '/readyz' })).body, 'the store ignores FROM\n');
    assert.equal((await sick.app.inject({ url: '/healthz' })).statusCode, 200);

    const draining = createEdge({}, { draining: () => true });
    const ready = await draining.app.inject({ url: '/readyz' });
    assert.equal(ready.statusCode, 503);
    assert.equal(ready.body, 'draining: the guard is shutting down\n');
    assert.equal(ready.headers.connection, 'close');
    const query = await draining.app.inject({ url: queryUrl(SELECT), headers: BETA });
    assert.equal(query.statusCode, 200, 'queries are still answered during the drain');
    assert.equal(query.headers.connection, 'close');
  });
});
