// Reloads under concurrent traffic: every answer is wholly under one set (the old or the new), never a mix, never without one; failed reloads keep the set and the metrics say so.

import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';
import { scrapeSample } from '../helpers/scrape-sample.js';

const FIXTURES = resolve('test/fixtures/reload');
const fixture = (name: string) => join(FIXTURES, name);
const P = 'http://example.org/policies/';
const G = 'http://example.org/graphs/';

/** What an explain answer says of the set it was planned under: its policies and the graphs its FROM clauses name. */
function setOf(answer: { policies: string[]; query: string }): string {
  const graphs = [...answer.query.matchAll(/FROM <([^>]+)>/g)].map((match) => match[1]).sort();
  return JSON.stringify([answer.policies, graphs]);
}

const V1 = JSON.stringify([[`<${P}everyone>`], [`${G}a`]]);
const V2 = JSON.stringify([
  [`<${P}everyone>`, `<${P}everyone-b>`],
  [`${G}a`, `${G}b`],
]);

describe('reloads under concurrent traffic', () => {
  let folder: ReturnType<typeof makeFolder>;
  let guard: SpawnedGuard;
  let url: string;
  let metricsUrl: string;
  let policyFile: string;
  before(async () => {
    folder = makeFolder();
    policyFile = join(folder.folder, 'policies.ttl');
    copyFileSync(fixture('policies-v1.ttl'), policyFile);
    guard = spawnGuard(folder.folder, { policies: [policyFile], explain: true, metrics: { port: 0 } });
    url = await listeningUrl(guard);
    const line = await guard.waitFor((entry) => entry.event === 'metrics-listening');
    metricsUrl = String(line.url);
  });
  const scrape = async () => (await fetch(metricsUrl)).text();
  after(async () => {
    await guard.stop();
    folder.remove();
  });

  it('answers every request under the old set or the new one, whole, while the files swap and some reloads fail', async () => {
    const seen = new Map<string, number>();
    const wrong: string[] = [];
    let stop = false;
    const client = async () => {
      while (!stop) {
        const response = await fetch(`${url}/sparql/explain?query=${encodeURIComponent('SELECT * { ?s ?p ?o }')}`);
        const text = await response.text();
        if (response.status !== 200) {
          wrong.push(`${response.status} ${text}`);
          continue;
        }
        const set = setOf(JSON.parse(text) as { policies: string[]; query: string });
        if (set !== V1 && set !== V2) wrong.push(set);
        seen.set(set, (seen.get(set) ?? 0) + 1);
      }
    };
    const clients = [client(), client(), client(), client()];
    const failuresBefore = scrapeSample(await scrape(), 'sparql_guard_policy_reloads_total', 'result="failure"');
    let failures = 0;
    try {
      const versions = ['policies-v2.ttl', 'broken.ttl', 'policies-v1.ttl', 'policies-v2.ttl', 'broken.ttl', 'policies-v1.ttl'];
      for (let round = 0; round < 2; round++) {
        for (const version of versions) {
          copyFileSync(fixture(version), policyFile);
          const from = guard.lines.length;
          guard.child.kill('SIGHUP');
          const line = await guard.waitFor(
            (entry) => entry.event === 'policies-reloaded' || entry.event === 'policies-reload-failed',
            from,
          );
          if (line.event === 'policies-reload-failed') failures++;
          assert.equal(line.event === 'policies-reload-failed', version === 'broken.ttl', `${version}: ${JSON.stringify(line)}`);
        }
      }
    } finally {
      stop = true;
      await Promise.all(clients);
    }
    assert.deepEqual(wrong.slice(0, 5), []);
    assert.ok((seen.get(V1) ?? 0) > 0 && (seen.get(V2) ?? 0) > 0, JSON.stringify([...seen]));
    assert.equal(scrapeSample(await scrape(), 'sparql_guard_policy_reloads_total', 'result="failure"') - failuresBefore, failures);
  });

  it('a broken file between two reloads leaves the set of the last good one in force', async () => {
    copyFileSync(fixture('policies-v2.ttl'), policyFile);
    let from = guard.lines.length;
    guard.child.kill('SIGHUP');
    await guard.waitFor((entry) => entry.event === 'policies-reloaded', from);
    writeFileSync(
      policyFile,
      '@prefix guard: <https://w3id.org/sparql-guard#> .\n<x> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph "not an IRI" .\n',
    );
    from = guard.lines.length;
    guard.child.kill('SIGHUP');
    const line = await guard.waitFor((entry) => entry.event === 'policies-reload-failed', from);
    assert.doesNotMatch(String(line.error), /\n/);
    const response = await fetch(`${url}/sparql/explain?query=${encodeURIComponent('SELECT * { ?s ?p ?o }')}`);
    assert.equal(setOf((await response.json()) as { policies: string[]; query: string }), V2);
  });
});
