// Audit records through the real guard and a real store: one line per request, the dataset the forwarded query really ran over, who granted each graph, never a credential or a constant.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startStoreLink, type StoreLink } from '../helpers/start-store-link.js';
import { INTEGRATION_API_KEYS, KEYS, sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const G = 'http://example.org/graphs/';
const P = 'http://example.org/policies/';
const AGENTS = 'http://example.org/agents/';
const HIDDEN = 'http://example.org/ns#label';

/** The integration policies, plus a hidden path in graph b for group beta and a graph per group by template. */
const POLICIES = `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix g: <${G}> .
@prefix p: <${P}> .
p:everyone a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph g:a .
p:beta a guard:Policy ; guard:group "beta" ; guard:readGraph g:b ; guard:hidePath <${HIDDEN}> .
p:keeper a guard:Policy ; guard:agent <${AGENTS}keeper> ; guard:readGraph g:a, g:b, g:secret .
p:per-group a guard:Policy ; guard:group "beta" ; guard:readGraphTemplate "${G}{group}" .
p:nobody a guard:Policy ; guard:agent <${AGENTS}nomatch> ; guard:readGraph g:b .
p:lonely-rows a guard:Policy ; guard:agent <${AGENTS}lonely> ; guard:readGraph g:b ;
    guard:rowPattern "?this <http://example.org/ns#seenIn> ?where" ; guard:rowData g:secret .
`;

/** A key whose caller is granted 300 graphs by one policy: more than the records list. */
const WIDE_KEY = 'test-key-wide-0123456789abcdef';
const WIDE_GRAPHS = Array.from({ length: 300 }, (_, i) => `${G}wide/${String(i).padStart(3, '0')}`);
const WIDE_POLICY = `<${P}wide> a <https://w3id.org/sparql-guard#Policy> ; <https://w3id.org/sparql-guard#agent> <${AGENTS}wide> ;
  <https://w3id.org/sparql-guard#readGraph> ${WIDE_GRAPHS.map((graph) => `<${graph}>`).join(', ')} .\n`;

type AuditRecord = Record<string, unknown> & {
  dataset: { default: string[] | { count: number; sha256: string }; named: string[] | { count: number; sha256: string } } | null;
  graphs?: Record<string, { grantedBy: string[]; rowDataOf?: string[]; restrictions: { kind: string; predicates?: string[] }[] }>;
  durationMs: { total: number; store: number | null };
};

/** The graphs of the FROM and FROM NAMED clauses of a query text the store received. */
function datasetOf(query: string): { default: string[]; named: string[] } {
  const named = [...query.matchAll(/FROM NAMED <([^>]*)>/g)].map((match) => match[1]!);
  const all = [...query.matchAll(/FROM <([^>]*)>/g)].map((match) => match[1]!);
  const empty = 'urn:x-sparql-guard:empty';
  return { default: all.filter((graph) => graph !== empty), named: named.filter((graph) => graph !== empty) };
}

describe('audit records', () => {
  let folder: string;
  let auditFile: string;
  let store: TestGuard;
  let link: StoreLink;
  let t: TestGuard;

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-'));
    auditFile = join(folder, 'audit.jsonl');
    const policyFile = join(folder, 'policies.ttl');
    writeFileSync(policyFile, POLICIES + WIDE_POLICY);
    store = await startTestGuard();
    link = await startStoreLink(store.guard.upstreamUrl);
    t = await startTestGuard({
      upstream: link.url,
      policies: [policyFile],
      explain: true,
      auth: { apiKeys: [...INTEGRATION_API_KEYS, { agent: `${AGENTS}wide`, sha256: sha256(WIDE_KEY) }] },
      audit: { file: auditFile, maxListed: 100 },
    });
  });
  after(async () => {
    await t?.close();
    await link?.close();
    await store?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  /** The records written so far (the writer batches for up to 20 ms). */
  const records = async (file = auditFile): Promise<AuditRecord[]> => {
    await new Promise((resolve) => setTimeout(resolve, 60));
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as AuditRecord);
  };
  const recordOf = async (requestId: string, file = auditFile): Promise<AuditRecord> => {
    const found = (await records(file)).filter((record) => record.requestId === requestId);
    assert.equal(found.length, 1, `one record for request ${requestId}`);
    return found[0]!;
  };
  const send = async (
    query: string,
    headers: Record<string, string> = {},
    path = '',
  ): Promise<{ status: number; id: string; body: string }> => {
    const response = await fetch(`${t.endpoint}${path}?query=${encodeURIComponent(query)}`, { headers });
    const body = await response.text();
    return { status: response.status, id: response.headers.get('x-request-id')!, body };
  };

  it("records an answered query: who, how, the dataset the store's query ran over, and who granted each graph", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const { status, id, body } = await send('SELECT ?s WHERE { ?s ?p ?o } LIMIT 3', { 'x-api-key': KEYS.beta, traceparent });
    assert.equal(status, 200);
    const record = await recordOf(id);
    assert.equal(record.audit, 1);
    assert.match(String(record.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(record.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(record.operation, 'query');
    assert.equal(record.agent, `${AGENTS}beta-user`);
    assert.equal(record.via, 'api-key');
    assert.deepEqual(record.groups, ['beta']);
    assert.equal(record.form, 'select');
    assert.equal(record.decision, 'allowed');
    assert.equal(record.code, null);
    assert.equal(record.status, 200);
    assert.deepEqual(record.policies, [`${P}everyone`, `${P}beta`, `${P}per-group`]);
    // The dataset is the one the store received, not the grant: compare with the forwarded text.
    assert.deepEqual(record.dataset, datasetOf(link.queries.at(-1)!));
    // FROM NAMED lists the graphs the per-graph checks of the hidden path in b read with GRAPH.
    assert.deepEqual(record.dataset, { default: [`${G}a`, `${G}b`, `${G}beta`], named: [`${G}a`, `${G}beta`, `${G}b`] });
    assert.deepEqual(record.graphs, {
      [`${G}a`]: { grantedBy: [`${P}everyone`], restrictions: [] },
      [`${G}b`]: { grantedBy: [`${P}beta`], restrictions: [{ kind: 'hidePath', predicates: [HIDDEN] }] },
      [`${G}beta`]: { grantedBy: [`${P}per-group`], restrictions: [] },
    });
    assert.match(String(record.policyDigest), /^[0-9a-f]{64}$/);
    assert.equal(record.factsGeneration, 0);
    assert.match(String(record.shape), /^[0-9a-f]{16}$/);
    assert.ok(Number(record.bytes) > Buffer.byteLength(body), 'bytes sent, headers included');
    assert.equal(record.limitedTo, null);
    assert.ok(record.durationMs.total > 0 && record.durationMs.store !== null && record.durationMs.store <= record.durationMs.total);
  });

  it('lists the dataset after the intersection with the grant: a requested graph that is not granted is not in it', async () => {
    const query = `SELECT ?s FROM <${G}a> FROM <${G}secret> FROM NAMED <${G}b> WHERE { ?s ?p ?o }`;
    const { status, id } = await send(query, { 'x-api-key': KEYS.beta });
    assert.equal(status, 200);
    const record = await recordOf(id);
    assert.deepEqual(record.dataset, datasetOf(link.queries.at(-1)!));
    // Secret is not granted; b is granted but the query reads no named graph, so FROM NAMED names none.
    assert.deepEqual(record.dataset, { default: [`${G}a`], named: [] });
    assert.deepEqual(Object.keys(record.graphs!), [`${G}a`]);
  });

  it('names the policies whose row rule reads a graph of the dataset that no policy grants (guard:rowData), apart from grantedBy', async () => {
    // The store's query lists the rule's data graph in FROM NAMED; the caller reads only the rule's yes or no of it.
    // The record said grantedBy [] and no restriction, as if the caller had read the whole graph under no policy.
    const { status, id } = await send('SELECT ?s ?p ?o WHERE { ?s ?p ?o }', { 'x-api-key': KEYS.lonely });
    assert.equal(status, 200);
    const record = await recordOf(id);
    assert.deepEqual(record.dataset, datasetOf(link.queries.at(-1)!));
    assert.ok(Array.isArray(record.dataset?.named) && record.dataset.named.includes(`${G}secret`), 'the rule reads secret');
    const rows = {
      kind: 'rows',
      policy: `${P}lonely-rows`,
      rule: '?this <http://example.org/ns#seenIn> ?where',
      columns: { hidePath: [] },
    };
    assert.deepEqual(record.graphs, {
      [`${G}a`]: { grantedBy: [`${P}everyone`], restrictions: [] },
      [`${G}b`]: { grantedBy: [`${P}lonely-rows`], restrictions: [rows] },
      [`${G}secret`]: { grantedBy: [], rowDataOf: [`${P}lonely-rows`], restrictions: [] },
    });
  });

  it('gives the same shape to queries that differ only in constants, and never writes a constant', async () => {
    const one = await send('SELECT ?s WHERE { ?s ?p "CONSTANT-ONE-d41d8cd9" }', { 'x-api-key': KEYS.beta });
    const two = await send('SELECT ?s WHERE { ?s ?p "CONSTANT-TWO-8f00b204" }', { 'x-api-key': KEYS.beta });
    const other = await send('SELECT ?o WHERE { ?s ?p ?o }', { 'x-api-key': KEYS.beta });
    const [a, b, c] = [await recordOf(one.id), await recordOf(two.id), await recordOf(other.id)];
    assert.equal(a.shape, b.shape);
    assert.notEqual(a.shape, c.shape);
    const text = readFileSync(auditFile, 'utf8');
    assert.doesNotMatch(text, /CONSTANT-ONE|CONSTANT-TWO/);
  });

  it('records refusals with their code and never a credential', async () => {
    const unknownKey = 'never-written-key-0123456789abcdef';
    const denied = await send('SELECT * WHERE { ?s ?p ?o }', { 'x-api-key': unknownKey });
    assert.equal(denied.status, 401);
    const update = await send('INSERT DATA { <a:b> <a:c> <a:d> }', { authorization: `Bearer ${KEYS.keeper}` });
    assert.equal(update.status, 403);
    const broken = await send('SELECT * WHERE {', { 'x-api-key': KEYS.beta });
    assert.equal(broken.status, 400);
    const hidden = await send(`SELECT ?l WHERE { GRAPH <${G}b> { ?s <${HIDDEN}> ?l } }`, { 'x-api-key': KEYS.beta });
    assert.equal(hidden.status, 403);

    const r401 = await recordOf(denied.id);
    assert.deepEqual(
      [r401.agent, r401.via, r401.decision, r401.code, r401.status, r401.policies, r401.dataset],
      [null, null, 'refused', 'unauthenticated', 401, null, null],
    );
    const r403 = await recordOf(update.id);
    assert.deepEqual(
      [r403.agent, r403.via, r403.decision, r403.code, r403.status],
      [`${AGENTS}keeper`, 'api-key', 'refused', 'update', 403],
    );
    const r400 = await recordOf(broken.id);
    assert.deepEqual([r400.agent, r400.decision, r400.code], [`${AGENTS}beta-user`, 'refused', 'parse']);
    const hiddenRecord = await recordOf(hidden.id);
    assert.deepEqual(
      [hiddenRecord.agent, hiddenRecord.decision, hiddenRecord.status, hiddenRecord.dataset],
      [`${AGENTS}beta-user`, 'refused', 403, null],
    );
    assert.ok(Array.isArray(hiddenRecord.policies), 'the grant was decided before the plan refused');

    const text = readFileSync(auditFile, 'utf8');
    for (const secret of [unknownKey, KEYS.beta, KEYS.keeper, sha256(KEYS.beta)]) assert.ok(!text.includes(secret), 'no key or key digest');
  });

  it('records a query whose client left before the store answered: 499, allowed (the store ran it), nothing sent', async () => {
    link.delayMs = 400;
    try {
      const leaving = new AbortController();
      const asked = fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT ?s WHERE { ?s ?p ?o } LIMIT 9')}`, {
        headers: { 'x-api-key': KEYS.beta },
        signal: leaving.signal,
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      leaving.abort();
      await assert.rejects(asked);
    } finally {
      link.delayMs = 0;
    }
    const record = (await records()).findLast((each) => each.outcome === 'client-closed');
    assert.ok(record !== undefined, 'a record');
    assert.equal(record.status, 499);
    assert.equal(record.decision, 'allowed');
    assert.equal(record.code, null);
    assert.equal(record.bytes, 0);
    assert.deepEqual(record.dataset, { default: [`${G}a`, `${G}b`, `${G}beta`], named: [`${G}a`, `${G}beta`, `${G}b`] });
  });

  it('records a request refused before its handler ran: a body over the limit (413)', async () => {
    const response = await fetch(t.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-query', 'x-api-key': KEYS.beta },
      body: `ASK { } # ${'x'.repeat(1024 * 1024)}`,
    });
    assert.equal(response.status, 413);
    await response.arrayBuffer();
    const record = await recordOf(response.headers.get('x-request-id')!);
    assert.deepEqual(
      [record.operation, record.decision, record.code, record.status, record.form, record.dataset],
      ['query', 'refused', 'too_large', 413, null, null],
    );
  });

  it('records explain and the service description as their own operations, and no probe', async () => {
    const explained = await send('SELECT * WHERE { ?s ?p ?o }', { 'x-api-key': KEYS.keeper }, '/explain');
    assert.equal(explained.status, 200);
    const record = await recordOf(explained.id);
    assert.equal(record.operation, 'explain');
    assert.deepEqual(record.dataset, { default: [`${G}a`, `${G}b`, `${G}secret`], named: [] });
    assert.equal(record.durationMs.store, null, 'nothing went to the store');

    const description = await fetch(t.endpoint, { headers: { accept: 'text/turtle', 'x-api-key': KEYS.keeper } });
    assert.equal(description.status, 200);
    await description.arrayBuffer();
    const described = await recordOf(description.headers.get('x-request-id')!);
    assert.equal(described.operation, 'service-description');
    assert.deepEqual(described.policies, [`${P}everyone`, `${P}keeper`]);

    const probe = await fetch(`${t.guard.url}/healthz`);
    await probe.arrayBuffer();
    assert.equal((await records()).filter((each) => each.requestId === probe.headers.get('x-request-id')).length, 0);
  });

  it('writes a count and a sha256 of the sorted list past maxListed, so the line stays short', async () => {
    const { status, id } = await send('SELECT * WHERE { ?s ?p ?o } LIMIT 1', { 'x-api-key': WIDE_KEY });
    assert.equal(status, 200);
    const record = await recordOf(id);
    const expected = createHash('sha256')
      .update(WIDE_GRAPHS.map((graph) => `${graph}\n`).join(''))
      .digest('hex');
    // Graph a is granted to everyone as well: 301 graphs.
    const all = [...WIDE_GRAPHS, `${G}a`].sort();
    const digest = createHash('sha256')
      .update(all.map((graph) => `${graph}\n`).join(''))
      .digest('hex');
    assert.notEqual(expected, digest);
    assert.deepEqual(record.dataset, { default: { count: 301, sha256: digest }, named: [] });
    assert.equal(record.graphs, undefined);
    const line = readFileSync(auditFile, 'utf8')
      .split('\n')
      .find((each) => each.includes(id))!;
    assert.ok(Buffer.byteLength(line) < 1500, `line of ${Buffer.byteLength(line)} bytes`);
  });

  it('reopens its file on reopenAudit (a rotation), and keeps writing to the new one', async () => {
    const rotated = `${auditFile}.1`;
    renameSync(auditFile, rotated);
    const before = await send('ASK {}', { 'x-api-key': KEYS.beta });
    await recordOf(before.id, rotated);
    t.guard.reopenAudit();
    assert.ok(t.logs.some((line) => line.event === 'audit-reopened'));
    const afterRotation = await send('ASK {}', { 'x-api-key': KEYS.beta });
    const record = await recordOf(afterRotation.id);
    assert.equal(record.form, 'ask');
    assert.equal((await records(rotated)).filter((each) => each.requestId === afterRotation.id).length, 0);
  });
});

describe('audit settings', () => {
  it('writes no record unless configured', async () => {
    const t = await startTestGuard();
    try {
      const response = await fetch(`${t.endpoint}?query=${encodeURIComponent('ASK {}')}`);
      await response.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 60));
      assert.equal(
        t.logs.some((line) => 'audit' in line),
        false,
      );
    } finally {
      await t.close();
    }
  });

  it('writes the query text only with queryText, and notes the result limit that capped the answer', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-'));
    const file = join(folder, 'audit.jsonl');
    const policyFile = join(folder, 'policies.ttl');
    writeFileSync(
      policyFile,
      `@prefix guard: <https://w3id.org/sparql-guard#> .
<${P}capped> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <${G}a> ; guard:resultLimit 2 .\n`,
    );
    const t = await startTestGuard({ policies: [policyFile], audit: { file, queryText: true } });
    try {
      // U+0085 and U+2028 end a line for some readers (Python's splitlines): written escaped, read back as they are.
      const query = 'SELECT ?s WHERE { ?s ?p "kept-constant\u0085\u2028\u009b" }';
      const response = await fetch(`${t.endpoint}?query=${encodeURIComponent(query)}`);
      assert.equal(response.status, 200);
      await response.arrayBuffer();
      const small = await fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT ?s WHERE { ?s ?p ?o } LIMIT 1')}`);
      await small.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 60));
      const text = readFileSync(file, 'utf8');
      assert.doesNotMatch(text, /[\u0085\u2028\u009b]/);
      const [first, second] = text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as AuditRecord);
      assert.equal(first!.query, query);
      assert.equal(first!.limitedTo, 2);
      assert.equal(first!.via, 'anonymous');
      assert.equal(second!.limitedTo, null, "the query's own LIMIT 1 is below the cap");
    } finally {
      await t.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('stops the start with one line when the file cannot be opened, whose fix fits the cause', async () => {
    await assert.rejects(
      startTestGuard({ audit: { file: '/nonexistent-folder/audit.jsonl' } }),
      /^Error: audit file \/nonexistent-folder\/audit\.jsonl: cannot be opened for appending \(ENOENT\) \(create its folder\)$/,
    );
    // A folder named as the file was told to "create its folder".
    const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-'));
    try {
      await assert.rejects(startTestGuard({ audit: { file: folder } }), {
        message: `audit file ${folder}: cannot be opened for appending (EISDIR) (it is a folder: give audit.file the path of a file in it)`,
      });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('the digest of a list past maxListed', () => {
  it('is the one the documented `LC_ALL=C sort | sha256sum` gives, also for IRIs beyond ASCII', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-'));
    const file = join(folder, 'audit.jsonl');
    const policyFile = join(folder, 'policies.ttl');
    // U+FF47 (fullwidth g) and U+1F600: UTF-16 code units put the second first, code points (and UTF-8 bytes) the first.
    const graphs = [`${G}\uff47`, `${G}\u{1f600}`, `${G}plain`];
    writeFileSync(
      policyFile,
      `<${P}wide> a <https://w3id.org/sparql-guard#Policy> ; <https://w3id.org/sparql-guard#agent> <https://w3id.org/sparql-guard#Everyone> ;
  <https://w3id.org/sparql-guard#readGraph> ${graphs.map((graph) => `<${graph}>`).join(', ')} .\n`,
    );
    const t = await startTestGuard({ policies: [policyFile], audit: { file, maxListed: 1 } });
    try {
      const response = await fetch(`${t.endpoint}?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`);
      assert.equal(response.status, 200);
      await response.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 60));
      const record = JSON.parse(readFileSync(file, 'utf8').trim()) as AuditRecord;
      // The command of docs/audit.md, as written, over the list kept elsewhere.
      const documented = execFileSync('sh', ['-c', `printf '%s\\n' "$@" | LC_ALL=C sort | sha256sum`, 'sh', ...graphs], {
        encoding: 'utf8',
      });
      assert.deepEqual(record.dataset?.default, { count: 3, sha256: documented.split(' ')[0] });
    } finally {
      await t.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
