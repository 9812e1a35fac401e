// Keeps the README's configuration and error tables true to the code.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../src/config/read-config.js';
import { startTestGuard, type TestGuard } from './helpers/start-test-guard.js';

const readme = readFileSync('README.md', 'utf8');

/** The first-column cells of the table that follows `## heading`. */
function firstColumn(heading: string): string[] {
  const section = readme.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.split('|')[1]!.trim().replace(/`/g, ''));
}

/** Every key path of a JSON object, descending into objects but not into arrays. */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const nested = keyPaths(child, path);
    // Objects whose keys are names chosen by the operator (upstreamHeaders) are leaves.
    return nested.length === 0 || path === 'upstreamHeaders' ? [path] : nested;
  });
}

describe('README configuration table', () => {
  const documented = firstColumn('Configuration');
  const full = JSON.parse(readFileSync('test/fixtures/config/full.json', 'utf8')) as Record<string, unknown>;

  it('documents exactly the keys of the fixture that sets every key', () => {
    // A row may document a whole object (planCache, auth.trustedHeaders): its sub-keys fold into it.
    const rowOf = (path: string) => documented.find((row) => path === row || path.startsWith(`${row}.`)) ?? path;
    const fixtureKeys = new Set(keyPaths(full).map(rowOf));
    assert.deepEqual([...fixtureKeys].sort(), [...documented].sort());
  });

  it('lists keys the parser accepts, and the parser refuses any other', () => {
    const env = { STORE_HOST: 'h', STORE_CREDENTIAL: 'c', POLICY_DIR: 'p', BOB_AGENT: 'https://e.org/bob', BOB_KEY_SHA256: 'a'.repeat(64) };
    assert.doesNotThrow(() => parseConfig(full, { configFile: undefined, env }));
    assert.throws(() => parseConfig({ ...full, undocumented: true }, { configFile: undefined, env }), /undocumented/);
  });
});

describe('README errors table', () => {
  let t: TestGuard;
  let unreachable: TestGuard;
  before(async () => {
    t = await startTestGuard();
    unreachable = await startTestGuard({ upstream: 'http://127.0.0.1:1/sparql' });
  });
  after(async () => {
    await Promise.all([t.close(), unreachable.close()]);
  });

  it('lists the statuses the guard answers with, and each one is reachable', async () => {
    const documented = firstColumn('Errors').map(Number);
    assert.deepEqual(documented, [400, 401, 403, 404, 405, 408, 413, 415, 429, 431, 502, 503]);
    const q = encodeURIComponent('SELECT * WHERE { ?s ?p ?o }');
    const observed = new Map<number, Response>([
      [400, await fetch(t.endpoint)],
      [401, await fetch(`${t.endpoint}?query=${q}`, { headers: { 'x-api-key': 'unknown' } })],
      [403, await fetch(`${t.endpoint}?update=${q}`)],
      [404, await fetch(`${t.guard.url}/elsewhere`)],
      [405, await fetch(t.endpoint, { method: 'PUT' })],
      [413, await fetch(t.endpoint, { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: 'x'.repeat(2 ** 20 + 1) })],
      [415, await fetch(t.endpoint, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })],
      [431, await fetch(t.endpoint, { headers: { 'x-padding': 'x'.repeat(20_000) } })],
      [502, await fetch(`${unreachable.endpoint}?query=${q}`)],
    ]);
    for (const [status, response] of observed) {
      assert.equal(response.status, status);
      assert.match(await response.text(), /^[^\n]+\n$/);
    }
    // 503 (before the first policy set is loaded) is proven in test/server/policy-holder.test.ts;
    // 408 (a client too slow to send its request) in test/reliability/slow-clients.test.ts;
    // 429 (past guard:maxConcurrent, with a store slow enough to overlap) in test/server/limits-per-caller.test.ts.
  });
});
