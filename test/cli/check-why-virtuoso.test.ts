// `check --why` in front of a store that says it is Virtuoso names the graphs where the caller's queries with an
// EXISTS, a NOT EXISTS or a MINUS are refused (test/security/rows/negation-beside-checks.test.ts, at query time),
// and says nothing of it in front of any other store or for a caller whose row checks are joins.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { storesUnderTest } from '../helpers/rig-stores.js';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const MAIN = 'http://example.org/check-why-virtuoso/main';
const OTHER = 'http://example.org/check-why-virtuoso/other';
const ALICE = 'http://example.org/agents/alice';
const BOB = 'http://example.org/agents/bob';
const CAROL = 'http://example.org/agents/carol';

/**
 * alice reads main through two policies that show different columns, one for a rule's rows (a filter with an
 * EXISTS checks a variable predicate there), and other through one policy without rules; bob reads main under
 * one rule for every column he sees (joins). carol's default graph merges main, where she sees one column, and
 * other, where she sees all: per-graph hidden-path checks with a NOT EXISTS.
 */
const POLICIES = `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix ex: <http://example.org/rows#> .
@prefix pol: <http://example.org/policies/check-why/> .
pol:alice-open a guard:Policy ; guard:agent <${ALICE}> ; guard:readGraph <${MAIN}>, <${OTHER}> ;
    guard:readPath rdf:type, ex:budget .
pol:alice-leads a guard:Policy ; guard:agent <${ALICE}> ; guard:readGraph <${MAIN}> ;
    guard:rowPattern "?this ex:lead ?l" ; guard:readPath ex:name .
pol:bob-rows a guard:Policy ; guard:agent <${BOB}> ; guard:readGraph <${MAIN}> ;
    guard:rowPattern "?this ex:team ?t" .
pol:carol-main a guard:Policy ; guard:agent <${CAROL}> ; guard:readGraph <${MAIN}> ; guard:readPath ex:name .
pol:carol-other a guard:Policy ; guard:agent <${CAROL}> ; guard:readGraph <${OTHER}> .
`;

function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

const REFUSAL =
  /^in front of this store \(Virtuoso\), a query with an EXISTS, a NOT EXISTS or a MINUS that reads (<[^ ]+>(?: <[^ ]+>)*) with a variable predicate is refused \(403\)/m;
const IN_DEFAULT =
  /^in front of this store \(Virtuoso\), a query with an EXISTS, a NOT EXISTS or a MINUS that reads the default graph with a variable predicate is refused \(403\): it merges (.*), which hide/m;

describe('sparql-guard check --why and the refusals in front of Virtuoso', () => {
  let folder: string;
  /** The embedded store, served over HTTP by a guard of the test: a store that does not say it is Virtuoso. */
  let embedded: TestGuard;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-check-why-virtuoso-'));
    writeFileSync(join(folder, 'policies.ttl'), POLICIES);
    embedded = await startTestGuard();
  });
  after(async () => {
    await embedded?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const config = (name: string, upstream: string): string => {
    const file = join(folder, `${name}.json`);
    writeFileSync(file, JSON.stringify({ upstream, policies: [join(folder, 'policies.ttl')], timeoutMs: 5000 }));
    return file;
  };

  for (const store of storesUnderTest()) {
    const virtuoso = store.name === 'virtuoso';
    it(`${store.name}: ${virtuoso ? 'names main for alice, the default graph for carol, nothing for bob' : 'names nothing'} (text and JSON)`, async () => {
      const file = config(store.name, store.queryUrl ?? embedded.guard.upstreamUrl);
      const merged = [`<${MAIN}>`, `<${OTHER}>`];
      const listing = await run(['check', '--config', file]);
      assert.equal(listing.status, 0, listing.stderr);
      assert.equal(/^store: says it is Virtuoso .*check --why AGENT names the graphs$/m.test(listing.stdout), virtuoso, listing.stdout);
      for (const [agent, refused, inDefault] of [
        [ALICE, virtuoso ? [`<${MAIN}>`] : [], []],
        [BOB, [], []],
        [CAROL, [], virtuoso ? merged : []],
      ] as const) {
        const [text, json] = await Promise.all([
          run(['check', '--config', file, '--why', agent]),
          run(['check', '--json', '--config', file, '--why', agent]),
        ]);
        assert.equal(text.status, 0, text.stderr);
        const line = REFUSAL.exec(text.stdout);
        assert.deepEqual(line === null ? [] : (line[1] ?? '').split(' '), refused, `${agent}: ${text.stdout}`);
        const merge = IN_DEFAULT.exec(text.stdout);
        assert.deepEqual(merge === null ? [] : (merge[1] ?? '').split(' '), inDefault, `${agent}: ${text.stdout}`);
        assert.equal(json.status, 0, json.stderr);
        const parsed = JSON.parse(json.stdout) as { refusedBesideNegation?: string[]; refusedBesideNegationInDefaultGraph?: string[] };
        assert.deepEqual(parsed.refusedBesideNegation ?? [], refused, `${agent}: ${json.stdout}`);
        assert.deepEqual(parsed.refusedBesideNegationInDefaultGraph ?? [], inDefault, `${agent}: ${json.stdout}`);
      }
    });
  }
});
