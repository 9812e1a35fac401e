// Config datasetForm "auto", the default: in front of a store that says it is Virtuoso the guard sends the dataset as
// graph filters (no FROM; docs/operations.md, "A few graphs"), in front of any other store as FROM and FROM NAMED;
// serve and `sparql-guard explain` choose alike, and a form the config fixes is the form sent, whatever the store.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { CALLERS, SECURITY_POLICIES, startSecurityGuard, storesUnderTest } from '../helpers/rig-stores.js';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const QUERY = 'SELECT ?s ?o WHERE { ?s ?p ?o FILTER(isIRI(?s) && isLiteral(?o)) }';
const KEEPER = 'http://example.org/agents/keeper';

function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, ...env } = process.env;
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      done({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

/** The text the guard forwards for QUERY as the keeper (explain), and the answer it relays (its rows sorted). */
async function forwarded(guard: TestGuard): Promise<{ query: string; answer: string[] }> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${CALLERS.keeper}` };
  const explained = await fetch(`${guard.endpoint}/explain`, { method: 'POST', headers, body: new URLSearchParams({ query: QUERY }) });
  assert.equal(explained.status, 200);
  const answered = await fetch(guard.endpoint, {
    method: 'POST',
    headers: { ...headers, accept: 'application/sparql-results+json' },
    body: new URLSearchParams({ query: QUERY }),
  });
  assert.equal(answered.status, 200);
  const rows = ((await answered.json()) as { results: { bindings: unknown[] } }).results.bindings.map((row) => JSON.stringify(row));
  // Explain's `query` is the contract's rewritten query, with FROM clauses, whatever is sent; `forwarded` the text sent, where it differs.
  const { query, forwarded: sent } = (await explained.json()) as { query: string; forwarded?: string };
  assert.match(query, /^FROM </m, query);
  return { query: sent ?? query, answer: rows.sort() };
}

describe('datasetForm "auto": the graph-filter form in front of Virtuoso only', () => {
  let folder: string;
  /** The embedded store over HTTP, for explain's config: a store that does not say it is Virtuoso. */
  let embedded: TestGuard;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-dataset-form-'));
    embedded = await startTestGuard();
  });
  after(async () => {
    await embedded?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  for (const store of storesUnderTest()) {
    const virtuoso = store.name === 'virtuoso';
    it(`${store.name}: serve and explain send ${virtuoso ? 'graph filters' : 'FROM and FROM NAMED'}; "clauses" and "graph-filters" are sent as set, and answer alike`, async () => {
      const answers: string[][] = [];
      for (const [config, clauses] of [
        [{}, !virtuoso],
        [{ datasetForm: 'clauses' }, true],
        [{ datasetForm: 'graph-filters' }, false],
      ] as const) {
        const guard = await startSecurityGuard(store, config);
        try {
          const { query, answer } = await forwarded(guard);
          assert.equal(/^FROM </m.test(query), clauses, `${JSON.stringify(config)}: ${query}`);
          assert.equal(/SAMETERM\(\?graph_\d+, </.test(query), !clauses, `${JSON.stringify(config)}: ${query}`);
          answers.push(answer);
        } finally {
          await guard.close();
        }
      }
      assert.ok((answers[0]?.length ?? 0) > 0);
      assert.deepEqual(answers[1], answers[0]);
      assert.deepEqual(answers[2], answers[0]);

      if (store.queryUrl === undefined) return; // explain's own store check: an upstream it asks
      const file = join(folder, `${store.name}.json`);
      writeFileSync(file, JSON.stringify({ upstream: store.queryUrl, policies: [resolve(SECURITY_POLICIES)], timeoutMs: 5000 }));
      const explained = await run(['explain', '--config', file, '--agent', KEEPER, '--query', QUERY]);
      assert.equal(explained.status, 0, explained.stderr);
      const { query, forwarded: sent } = JSON.parse(explained.stdout) as { query: string; forwarded?: string };
      assert.match(query, /^FROM </m, query);
      assert.equal(sent !== undefined && /SAMETERM\(\?graph_\d+, </.test(sent) && !/\bFROM\b/.test(sent), virtuoso, sent);
    });
  }

  it('explain against a store that does not say it is Virtuoso keeps the clauses', async () => {
    const file = join(folder, 'embedded.json');
    writeFileSync(file, JSON.stringify({ upstream: embedded.guard.upstreamUrl, policies: [resolve(SECURITY_POLICIES)], timeoutMs: 5000 }));
    const explained = await run(['explain', '--config', file, '--agent', KEEPER, '--query', QUERY]);
    assert.equal(explained.status, 0, explained.stderr);
    const explainedJson = JSON.parse(explained.stdout) as { query: string; forwarded?: string };
    assert.match(explainedJson.query, /^FROM </m);
    assert.equal(explainedJson.forwarded, undefined);
  });
});
