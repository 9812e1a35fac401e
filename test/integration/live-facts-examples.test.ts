// The shipped examples of facts from the store, through the real bin: the embedded store, a writable Oxigraph, and the lab stores that take updates.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startWritableStore, type WritableStore } from '../helpers/start-writable-store.js';
import { listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';

const PROJECTS = resolve('policies/examples/project-membership.json');
const ABAC = resolve('policies/examples/attribute-access-live.json');
const LABELS = 'SELECT ?label WHERE { GRAPH ?g { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label } } ORDER BY ?label';
const APOLLO = 'Apollo launch plan';
const GEMINI = 'Gemini docking plan';

/** An example configuration with its paths made absolute and `changes` applied. */
function exampleConfig(file: string, changes: (config: Record<string, unknown>) => void = () => {}): Record<string, unknown> {
  const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const absolute = (paths: unknown) => (paths as string[]).map((path) => resolve(dirname(file), path));
  config.policies = absolute(config.policies);
  config.rules = absolute(config.rules);
  config.embedded = { data: absolute((config.embedded as { data: string[] }).data) };
  config.port = 0;
  changes(config);
  return config;
}

/** The labels `agent` reads through the guard at `url`, or the status and text of a refusal. */
async function labelsOf(url: string, agent: string): Promise<string[] | string> {
  const response = await fetch(`${url}/sparql`, {
    method: 'POST',
    headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json', 'x-remote-user': agent },
    body: LABELS,
  });
  const body = await response.text();
  if (response.status !== 200) return `${response.status} ${body.trim()}`;
  return (JSON.parse(body) as { results: { bindings: { label: { value: string } }[] } }).results.bindings.map((row) => row.label.value);
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
  return Date.now() - started;
}

describe('examples on the embedded store (the bin, data from the example files)', () => {
  const folder = makeFolder();
  const guards: SpawnedGuard[] = [];
  after(async () => {
    await Promise.all(guards.map((guard) => guard.stop()));
    folder.remove();
  });

  it('project membership: members read their project graphs, others nothing', async () => {
    const guard = spawnGuard(folder.folder, exampleConfig(PROJECTS));
    guards.push(guard);
    const url = await listeningUrl(guard);
    await guard.waitFor((line) => line.event === 'policies-loaded');
    assert.deepEqual(await labelsOf(url, 'alice'), [APOLLO]);
    assert.deepEqual(await labelsOf(url, 'bob'), [GEMINI]);
    assert.match(String(await labelsOf(url, 'carol')), /^403 /);
    const loaded = guard.lines.find((line) => line.event === 'policies-loaded');
    assert.deepEqual(loaded?.facts, [{ source: 'projects', triples: 4, readMs: (loaded?.facts as { readMs: number }[])[0]!.readMs }]);
  });

  it('attribute-based access with the attributes in the store', async () => {
    const sub = makeFolder();
    const guard = spawnGuard(sub.folder, exampleConfig(ABAC));
    guards.push(guard);
    const url = await listeningUrl(guard);
    await guard.waitFor((line) => line.event === 'policies-loaded');
    assert.deepEqual(await labelsOf(url, 'ann'), ['Budget 2026', 'Ledger 2026']);
    assert.deepEqual(await labelsOf(url, 'bob'), ['Budget 2026']);
    assert.match(String(await labelsOf(url, 'cat')), /^403 /);
    await guard.stop();
    sub.remove();
  });
});

/** A store the application writes to: its query URL and how it runs an update. */
interface AppStore {
  readonly name: string;
  readonly queryUrl: string;
  update(text: string): Promise<void>;
}

/** Lab stores with an update endpoint (endpoints.env); Virtuoso's has none there. */
function labStores(): AppStore[] {
  const stores: [string, string | undefined, string | undefined][] = [
    ['oxigraph', process.env.RIG_OXIGRAPH_QUERY, process.env.RIG_OXIGRAPH_UPDATE],
    ['jena', process.env.RIG_JENA_QUERY, process.env.RIG_JENA_UPDATE],
  ];
  return stores.flatMap(([name, queryUrl, updateUrl]) =>
    queryUrl && updateUrl
      ? [
          {
            name,
            queryUrl,
            async update(text: string) {
              const response = await fetch(updateUrl, { method: 'POST', body: new URLSearchParams({ update: text }) });
              if (response.status >= 300) throw new Error(`${name} update: ${response.status} ${await response.text()}`);
              await response.arrayBuffer();
            },
          },
        ]
      : [],
  );
}

/**
 * The project example against a store the application writes with SPARQL Update: its graphs
 * under a prefix of this run, removed afterwards.
 */
function projectExampleOn(store: () => AppStore): void {
  const run = `https://example.org/test-22a/${randomUUID()}/`;
  const app = `${run}app/projects`;
  const apollo = `${run}graphs/apollo-plans`;
  const gemini = `${run}graphs/gemini-plans`;
  const P = 'PREFIX app: <https://example.org/app#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> ';
  const member = (agent: string, project: string) =>
    `<https://example.org/agents/${agent}> app:memberOf <https://example.org/projects/${project}> .`;
  const folder = makeFolder();
  let guard: SpawnedGuard;
  let url: string;
  before(async () => {
    await store().update(`${P}INSERT DATA {
      GRAPH <${app}> { ${member('alice', 'apollo')} ${member('bob', 'gemini')}
        <${apollo}> app:partOf <https://example.org/projects/apollo> . <${gemini}> app:partOf <https://example.org/projects/gemini> . }
      GRAPH <${apollo}> { <${run}plans/launch> rdfs:label "${APOLLO}" . }
      GRAPH <${gemini}> { <${run}plans/docking> rdfs:label "${GEMINI}" . } }`);
    guard = spawnGuard(
      folder.folder,
      exampleConfig(PROJECTS, (config) => {
        const [source] = config.facts as { query: string; refreshMs: number }[];
        source!.query = source!.query.replace('<https://example.org/app/projects>', `<${app}>`);
        source!.refreshMs = 1000;
        config.upstream = store().queryUrl;
      }),
    );
    url = await listeningUrl(guard);
    await guard.waitFor((line) => line.event === 'policies-loaded');
  });
  after(async () => {
    await guard?.stop();
    folder.remove();
    await store().update(`DROP SILENT GRAPH <${app}>; DROP SILENT GRAPH <${apollo}>; DROP SILENT GRAPH <${gemini}>`);
  });

  it('a member written by the application reads the project after one refresh; removed, it no longer does', async () => {
    assert.deepEqual(await labelsOf(url, 'alice'), [APOLLO]);
    assert.match(String(await labelsOf(url, 'carol')), /^403 /);
    await store().update(`${P}INSERT DATA { GRAPH <${app}> { ${member('carol', 'gemini')} } }`);
    const granted = await until(async () => (await labelsOf(url, 'carol')).toString() === GEMINI, 5000, 'carol granted');
    await store().update(`${P}DELETE DATA { GRAPH <${app}> { ${member('carol', 'gemini')} } }`);
    const revoked = await until(async () => String(await labelsOf(url, 'carol')).startsWith('403 '), 5000, 'carol revoked');
    assert.ok(granted < 3500 && revoked < 3500, `granted after ${granted} ms, revoked after ${revoked} ms (refreshMs 1000)`);
  });
}

describe('the project example on a writable Oxigraph (the bin, upstream over HTTP)', () => {
  let store: WritableStore;
  before(async () => {
    store = await startWritableStore();
  });
  projectExampleOn(() => ({ name: 'oxigraph-in-process', queryUrl: store.queryUrl, update: (text) => store.update(text) }));
  // After the example's own clean-up, which still writes to the store.
  after(() => store.close());
});

const lab = labStores();
if (lab.length === 0) {
  describe('the project example on the lab stores', { skip: 'RIG_OXIGRAPH_UPDATE / RIG_JENA_UPDATE are not set (no store lab)' }, () => {
    it('runs against each lab store that takes updates', () => {});
  });
}
for (const store of lab) {
  describe(`the project example on the lab store ${store.name}`, () => projectExampleOn(() => store));
}
