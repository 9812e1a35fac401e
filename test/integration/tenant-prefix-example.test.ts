// The shipped tenants example (guard:readGraphPrefix) through the real bin: the embedded store, then a store the application writes.

import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startWritableStore, type WritableStore } from '../helpers/start-writable-store.js';
import { listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';

const EXAMPLE = resolve('policies/examples/tenant-prefix.json');
const ACME = 'https://data.example.org/tenants/acme/';
const LABELS = 'SELECT ?label WHERE { GRAPH ?g { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label } } ORDER BY ?label';
const VALUES = 'SELECT DISTINCT ?o WHERE { GRAPH ?g { ?s ?p ?o } }';

/** The example configuration with absolute paths, port 0 and `changes` applied. */
function exampleConfig(changes: Record<string, unknown> = {}): Record<string, unknown> {
  const config = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>;
  const absolute = (paths: unknown) => (paths as string[]).map((path) => resolve(dirname(EXAMPLE), path));
  return {
    ...config,
    policies: absolute(config.policies),
    embedded: { data: absolute((config.embedded as { data: string[] }).data) },
    port: 0,
    ...changes,
  };
}

/** The values of `?label` (or of `?o`, with `query`) that a member of `group` reads through the guard. */
async function labelsOf(url: string, group: string, query = LABELS): Promise<string[]> {
  const response = await fetch(`${url}/sparql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/sparql-query',
      accept: 'application/sparql-results+json',
      'x-remote-user': `${group}-user`,
      'x-remote-groups': group,
    },
    body: query,
  });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  const rows = (JSON.parse(body) as { results: { bindings: Record<string, { value: string }>[] } }).results.bindings;
  return rows.map((row) => (row.label ?? row.o)?.value ?? '');
}

describe('tenants example on the embedded store', () => {
  const folder = makeFolder();
  let guard: SpawnedGuard;
  let url: string;
  before(async () => {
    guard = spawnGuard(folder.folder, exampleConfig());
    url = await listeningUrl(guard);
    await guard.waitFor((line) => line.event === 'policies-loaded');
  });
  after(async () => {
    await guard.stop();
    folder.remove();
  });

  it('gives each tenant its own graphs, never the look-alike tenant, and hides the internal notes', async () => {
    assert.deepEqual(await labelsOf(url, 'acme'), ['Acme customer 1', 'Acme order 1']);
    assert.deepEqual(await labelsOf(url, 'globex'), ['Globex order 1']);
    const acmeValues = await labelsOf(url, 'acme', VALUES);
    assert.ok(acmeValues.includes('Acme order 1'));
    assert.ok(!acmeValues.includes('rush it'), 'the internal note is hidden in the listed graphs');
    assert.ok(!acmeValues.includes('Acme-evil order 1'));
  });
});

describe('tenants example on a store the application writes', () => {
  const folder = makeFolder();
  let store: WritableStore;
  let guard: SpawnedGuard;
  let url: string;
  before(async () => {
    store = await startWritableStore([resolve(dirname(EXAMPLE), 'tenant-prefix.trig')]);
    guard = spawnGuard(folder.folder, exampleConfig({ upstream: store.queryUrl, prefixRefreshMs: 1000 }));
    url = await listeningUrl(guard);
    await guard.waitFor((line) => line.event === 'policies-loaded');
  });
  after(async () => {
    await guard.stop();
    await store.close();
    folder.remove();
  });

  const until = async (check: () => Promise<boolean>, what: string): Promise<number> => {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > 10_000) assert.fail(`${what}: not within 10 s`);
      await new Promise((done) => setTimeout(done, 100));
    }
    return Date.now() - started;
  };

  it('grants a graph the application creates under the prefix after one refresh, and drops it when removed', async () => {
    await store.update(
      `INSERT DATA { GRAPH <${ACME}invoices> { <${ACME}invoices/1> <http://www.w3.org/2000/01/rdf-schema#label> "Acme invoice 1" } }`,
    );
    await until(async () => (await labelsOf(url, 'acme')).includes('Acme invoice 1'), 'the new graph');
    assert.deepEqual(await labelsOf(url, 'globex'), ['Globex order 1']);
    await store.update(`DROP GRAPH <${ACME}invoices>`);
    await until(async () => !(await labelsOf(url, 'acme')).includes('Acme invoice 1'), 'the removal');
    assert.ok(guard.lines.some((line) => line.event === 'policies-reloaded' && line.trigger === 'schedule'));
  });
});

describe('a policy file saved between two listings, watchPolicies off', () => {
  const folder = makeFolder();
  const policyFile = resolve(folder.folder, 'tenant-prefix.ttl');
  let store: WritableStore;
  let guard: SpawnedGuard;
  let url: string;
  before(async () => {
    store = await startWritableStore([resolve(dirname(EXAMPLE), 'tenant-prefix.trig')]);
    copyFileSync(resolve(dirname(EXAMPLE), 'tenant-prefix.ttl'), policyFile);
    guard = spawnGuard(folder.folder, exampleConfig({ upstream: store.queryUrl, prefixRefreshMs: 1000, policies: [policyFile] }));
    url = await listeningUrl(guard);
    await guard.waitFor((line) => line.event === 'policies-loaded');
  });
  after(async () => {
    await guard.stop();
    await store.close();
    folder.remove();
  });

  it('lists the graphs again under the prefixes in force, and takes the saved file at SIGHUP only', async () => {
    // Saved, not signalled: Acme's prefix moved to a tenant that holds nothing.
    writeFileSync(policyFile, readFileSync(policyFile, 'utf8').replace(`"${ACME}"`, '"https://data.example.org/tenants/nobody/"'));
    await store.update(
      `INSERT DATA { GRAPH <${ACME}invoices> { <${ACME}invoices/1> <http://www.w3.org/2000/01/rdf-schema#label> "Acme invoice 1" } }`,
    );
    const started = Date.now();
    while (!(await labelsOf(url, 'acme')).includes('Acme invoice 1')) {
      if (Date.now() - started > 10_000) assert.fail('the listing on the schedule did not keep the prefix in force');
      await new Promise((done) => setTimeout(done, 100));
    }
    const from = guard.lines.length;
    guard.child.kill('SIGHUP');
    await guard.waitFor((line) => line.event === 'policies-reloaded' && line.trigger === 'reload', from);
    assert.deepEqual(await labelsOf(url, 'acme'), []);
  });
});
