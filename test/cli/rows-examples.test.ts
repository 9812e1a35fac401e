// The row and column examples (policies/examples/rows-*.ttl) through the real bin in front of an application's store: members see their projects, a membership written over SPARQL Update applies on the next query and its removal too; the public sees one class; contractors see a few columns.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { withoutBlankNodeLabels } from '../helpers/answer-text.js';
import { listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';
import { startWritableStore, type WritableStore } from '../helpers/start-writable-store.js';

const EXAMPLES = resolve('policies/examples');
const KG = 'https://example.org/kg#';
const NAMES = `PREFIX ex: <${KG}>\nSELECT ?n WHERE { ?s ex:name ?n }`;
const UPDATE_PREFIXES = `PREFIX ex: <${KG}> PREFIX app: <https://example.org/app#>\n`;
const MEMBERSHIP = 'GRAPH <https://example.org/app/memberships> { ex:gemini app:member <https://example.org/agents/ann> }';

/** Who asks: the reverse proxy's trusted headers, or nobody. */
const ANN = { 'x-remote-user': 'ann' };
const CY = { 'x-remote-user': 'cy', 'x-remote-groups': 'contractors' };

describe('rows examples through the real bin', () => {
  let store: WritableStore;
  let guard: SpawnedGuard;
  let url: string;
  const { folder, remove } = makeFolder();
  before(async () => {
    store = await startWritableStore([join(EXAMPLES, 'rows.trig')]);
    const config = JSON.parse(readFileSync(join(EXAMPLES, 'rows.json'), 'utf8')) as Record<string, unknown>;
    guard = spawnGuard(folder, {
      ...config,
      policies: (config['policies'] as string[]).map((file) => join(EXAMPLES, file)),
      port: 0,
      upstream: store.queryUrl,
      embedded: undefined,
    });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard?.stop();
    await store?.close();
    remove();
  });

  const ask = async (query: string, headers: Record<string, string> = {}): Promise<{ status: number; values: string[]; body: string }> => {
    const response = await fetch(`${url}/sparql`, {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json', ...headers },
      body: query,
    });
    const body = await response.text();
    if (response.status !== 200 || !body.startsWith('{')) return { status: response.status, values: [], body };
    const json = JSON.parse(body) as { head: { vars: string[] }; results: { bindings: Record<string, { value: string }>[] } };
    const name = json.head.vars[0] ?? '';
    return { status: 200, values: json.results.bindings.map((row) => row[name]?.value ?? '').sort(), body };
  };

  it('a member sees the projects it is a member of (and the public records), not the others', async () => {
    assert.deepEqual((await ask(NAMES, ANN)).values, ['Annual report 2025', 'Apollo']);
    const budget = await ask(`PREFIX ex: <${KG}>\nSELECT ?b WHERE { ?s ex:budget ?b }`, ANN);
    assert.deepEqual(budget.values, ['120000']);
  });

  it('a membership the application writes applies to the next query, no reload; its removal is as fast', async () => {
    const lines = guard.lines.length;
    await store.update(`${UPDATE_PREFIXES}INSERT DATA { ${MEMBERSHIP} }`);
    assert.deepEqual((await ask(NAMES, ANN)).values, ['Annual report 2025', 'Apollo', 'Gemini']);
    await store.update(`${UPDATE_PREFIXES}DELETE DATA { ${MEMBERSHIP} }`);
    assert.deepEqual((await ask(NAMES, ANN)).values, ['Annual report 2025', 'Apollo']);
    assert.equal(
      guard.lines.slice(lines).some((line) => String(line.event ?? '').startsWith('policies')),
      false,
      'no policy reload happened',
    );
  });

  it('the public sees the records of one class, every column of them, and nothing else', async () => {
    assert.deepEqual((await ask(NAMES)).values, ['Annual report 2025']);
    const columns = await ask(`PREFIX ex: <${KG}>\nSELECT ?p WHERE { ex:report-2025 ?p ?o }`);
    assert.deepEqual(columns.values, ['http://www.w3.org/1999/02/22-rdf-syntax-ns#type', `${KG}name`, `${KG}published`]);
    const count = await ask('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
    assert.deepEqual(count.values, ['3']);
  });

  it('contractors see names and e-mail addresses of every record, other columns only of public records', async () => {
    assert.deepEqual((await ask(NAMES, CY)).values, ['Ann Lee', 'Annual report 2025', 'Apollo', 'Ben Okafor', 'Gemini']);
    const emails = await ask(`PREFIX ex: <${KG}>\nSELECT ?e WHERE { ?s ex:email ?e }`, CY);
    assert.deepEqual(emails.values, ['ann@example.org', 'ben@example.org']);
    const everything = await ask('CONSTRUCT WHERE { ?s ?p ?o }', { ...CY, accept: 'application/n-triples' });
    assert.equal(everything.status, 200, everything.body);
    assert.doesNotMatch(withoutBlankNodeLabels(everything.body), /555|91000|87000|120000/);
  });

  it('a caller of no group or membership sees the public records only', async () => {
    assert.deepEqual((await ask(NAMES, { 'x-remote-user': 'zed' })).values, ['Annual report 2025']);
  });
});

describe("the demo's row rule and column list through the real bin (policies/demo.json as npm start serves it)", () => {
  let guard: SpawnedGuard;
  let url: string;
  const { folder, remove } = makeFolder();
  const DEMO = resolve('policies');
  before(async () => {
    const config = JSON.parse(readFileSync(join(DEMO, 'demo.json'), 'utf8')) as Record<string, unknown>;
    guard = spawnGuard(folder, {
      ...config,
      policies: [join(DEMO, 'demo.ttl')],
      embedded: { data: [join(DEMO, 'demo.trig')] },
      port: 0,
    });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard?.stop();
    remove();
  });

  const PROJECTS = `PREFIX ex: <https://example.org/ns#>
SELECT ?label ?status ?budget WHERE { GRAPH <https://example.org/graphs/projects> { ?p <http://www.w3.org/2000/01/rdf-schema#label> ?label OPTIONAL { ?p ex:status ?status } OPTIONAL { ?p ex:budget ?budget } } }`;
  const rowsOf = async (key: string | undefined): Promise<{ status: number; rows: string[] }> => {
    const response = await fetch(`${url}/sparql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/sparql-query',
        accept: 'application/sparql-results+json',
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      },
      body: PROJECTS,
    });
    const body = await response.text();
    if (response.status !== 200) return { status: response.status, rows: [body.trim()] };
    const json = JSON.parse(body) as { results: { bindings: Record<string, { value: string }>[] } };
    return {
      status: 200,
      rows: json.results.bindings.map((row) => ['label', 'status', 'budget'].map((name) => row[name]?.value ?? '-').join(' ')).sort(),
    };
  };

  it('carol, a member of Apollo, reads Apollo whole and no other project', async () => {
    assert.deepEqual(await rowsOf('sg_demo_carol_3f6b8e21c9a0d457'), { status: 200, rows: ['Apollo active 120000'] });
  });

  it('bob (research) reads Gemini whole, and the label and status of every project, no other budget', async () => {
    assert.deepEqual(await rowsOf('sg_demo_bob_research_2a94d0e6b8f5c317'), {
      status: 200,
      rows: ['Apollo active -', 'Gemini planned 80000', 'Mercury closed -'],
    });
  });

  it('alice, a member of nothing, reads no project; the anonymous caller is not granted the graph', async () => {
    assert.deepEqual(await rowsOf('sg_demo_alice_hr_7c1e5a93f04b2d68'), { status: 200, rows: [] });
    const anonymous = await rowsOf(undefined);
    assert.deepEqual(anonymous.rows, []);
  });
});
