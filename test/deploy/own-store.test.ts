// The own-store template as a newcomer meets it: its keys as docs/configuration.md describes them, and a fresh copy that answers each of its callers.

import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readConfig } from '../../src/config/read-config.js';
import { startEmbeddedStore, type EmbeddedStore } from '../../src/embedded/start-embedded-store.js';
import { startGuard, type RunningGuard } from '../../src/server/start-guard.js';
import { declaredKeys, defaultOf } from '../helpers/config-table.js';
import { readDoc, sectionOf } from '../helpers/markdown-table.js';
import { sha256 } from '../helpers/start-test-guard.js';

const TEMPLATE = resolve('deploy/own-store');
/** The keys the template sets otherwise than their default, each named in docs/configuration.md. */
const CHOICES = ['policies', 'auth.apiKeys', 'watchPolicies'];
/** Keys without a default that the template sets, also named there. */
const SET_WITHOUT_DEFAULT = ['upstream', 'metrics'];

/** The value at a dotted path of a JSON object, or undefined. */
function valueAt(object: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((value, name) => (value as Record<string, unknown> | undefined)?.[name], object);
}

describe('deploy/own-store/guard.json: every key at its default but the choices docs/configuration.md names', () => {
  const template = JSON.parse(readFileSync(join(TEMPLATE, 'guard.json'), 'utf8')) as Record<string, unknown>;

  it('writes every key that has a default, and with its default unless it is one of the choices', () => {
    let compared = 0;
    for (const [path, key] of declaredKeys()) {
      // An object's keys are compared one by one; keys under a section without a default (auth.jwt) are the section's.
      if (key.keys !== undefined) continue;
      const parent = path.includes('.') ? declaredKeys().find(([name]) => name === path.slice(0, path.lastIndexOf('.')))?.[1] : undefined;
      if (parent !== undefined && parent.default === undefined) continue;
      const fallback = defaultOf(key);
      if (fallback === undefined) continue;
      const written = valueAt(template, path);
      assert.notEqual(written, undefined, `the template does not write ${path}`);
      if (!CHOICES.includes(path)) assert.deepEqual(written, fallback, `the template writes ${path} otherwise than its default`);
      compared++;
    }
    assert.ok(compared > 25, `only ${compared} keys compared`);
  });

  it('sets no top-level key without a default but those it names', () => {
    for (const [path, key] of declaredKeys()) {
      if (path.includes('.') || defaultOf(key) !== undefined || template[path] === undefined) continue;
      assert.ok(SET_WITHOUT_DEFAULT.includes(path), `the template sets ${path}, which has no default`);
    }
  });

  it('docs/configuration.md names each choice and each key set without a default', () => {
    const section = sectionOf(readDoc('docs/configuration.md'), '## Your own store');
    assert.match(section, /every key that has a\s+default, with its default/);
    for (const path of [...CHOICES, ...SET_WITHOUT_DEFAULT]) assert.ok(section.includes(`\`${path}\``), `${path} is not named`);
  });
});

describe('deploy/own-store: a fresh copy, filled against the embedded store, answers each caller', () => {
  const aliceKey = 'own-store-template-alice-key-0123456789';
  let store: EmbeddedStore;
  let guard: RunningGuard;
  let folder: string;
  before(async () => {
    store = await startEmbeddedStore({ dataFiles: [resolve('policies/demo.trig')], log: () => undefined });
    mkdirSync(resolve('.tmp'), { recursive: true });
    folder = mkdtempSync(join(resolve('.tmp'), 'own-store-'));
    cpSync(TEMPLATE, folder, { recursive: true });
    // The one edit: the metrics listener on any free port, as two guards on one machine need.
    const config = JSON.parse(readFileSync(join(folder, 'guard.json'), 'utf8')) as { metrics: { port: number } };
    config.metrics.port = 0;
    writeFileSync(join(folder, 'guard.json'), JSON.stringify(config));
    const env = { GUARD_CONFIG: join(folder, 'guard.json'), STORE_URL: store.queryUrl, ALICE_KEY_SHA256: sha256(aliceKey), PORT: '0' };
    guard = await startGuard(readConfig(env), () => undefined);
  });
  after(async () => {
    await guard?.close();
    await store?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  const callers = { anonymous: {}, alice: { authorization: `Bearer ${aliceKey}` } } as const;
  // What an application sends: none of these is refused for any caller.
  const queries = {
    select: 'SELECT ?s ?name WHERE { ?s <https://example.org/ns#name> ?name } LIMIT 5',
    'ending in VALUES': 'SELECT ?s ?name WHERE { ?s <https://example.org/ns#name> ?name } VALUES ?name { "Alice" "Bob" }',
    count: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }',
    ask: 'ASK { ?s ?p ?o }',
    construct: 'CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 3',
    graphs: 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }',
  };

  for (const [caller, headers] of Object.entries(callers)) {
    for (const [name, query] of Object.entries(queries)) {
      it(`${caller}: ${name} is answered`, async () => {
        const response = await fetch(`${guard.url}/sparql`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ query }),
        });
        assert.equal(response.status, 200, `${response.status}: ${await response.clone().text()}`);
        await response.arrayBuffer();
      });
    }
  }

  it('anonymous reads the public graph only; alice (hr) also the people graph with its salaries', async () => {
    const graphsOf = async (headers: Record<string, string>) => {
      const response = await fetch(`${guard.url}/sparql?query=${encodeURIComponent(queries.graphs)}`, { headers });
      const body = (await response.json()) as { results: { bindings: { g: { value: string } }[] } };
      return body.results.bindings.map((binding) => binding.g.value).sort();
    };
    assert.deepEqual(await graphsOf(callers.anonymous), ['https://example.org/graphs/public']);
    assert.deepEqual(await graphsOf(callers.alice), ['https://example.org/graphs/people', 'https://example.org/graphs/public']);
    const salaries = await fetch(
      `${guard.url}/sparql?query=${encodeURIComponent('SELECT (COUNT(*) AS ?n) WHERE { ?s <https://example.org/ns#salary> ?o }')}`,
      { headers: callers.alice },
    );
    assert.equal(salaries.status, 200);
    assert.match(await salaries.text(), /"6"/);
  });
});
