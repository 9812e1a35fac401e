// A read never fails because a pooled connection to the store went stale: thousands of queries through stores that close idle connections, no 502.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { scrapeSample as sample } from '../helpers/scrape-sample.js';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startStallingStore } from './stalling-store.js';

const QUERY = encodeURIComponent('SELECT * WHERE { ?s ?p ?o } LIMIT 1');

/** Sends `total` queries, `concurrency` at a time (loopback, bounded), and counts the statuses. */
async function load(endpoint: string, total: number, concurrency: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  const client = async () => {
    while (next < total) {
      next += 1;
      const response = await fetch(`${endpoint}?query=${QUERY}`);
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return statuses;
}

describe('stale connections to the store', () => {
  const open: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const item of open.reverse()) await item.close();
  });

  it(
    'a store that stalls past its keep-alive: thousands of queries, no 502, each stale connection retried once',
    { timeout: 240_000 },
    async (t) => {
      // Node's defaults: 5 s keep-alive; a 6 s stall every 800 queries closes every connection idle since before it.
      const store = await startStallingStore({ stallEvery: 800, stallMs: 6_000 });
      open.push(store);
      const guard: TestGuard = await startTestGuard({ upstream: store.url, timeoutMs: 15_000, metrics: { port: 0 } });
      open.push(guard);
      const total = 2_000;
      // A stale connection is a race (the store's close against the guard's next write): on a busy machine
      // a round may see none, so up to three rounds run until one does; every round must answer every query.
      let retries = 0;
      for (let round = 1; round <= 3 && retries === 0; round += 1) {
        const statuses = await load(guard.endpoint, total, 8);
        const scrape = await (await fetch(`${guard.guard.metricsUrl!}/metrics`)).text();
        retries =
          sample(scrape, 'sparql_guard_upstream_retries_total', 'reason="reset"') +
          sample(scrape, 'sparql_guard_upstream_retries_total', 'reason="closed"');
        t.diagnostic(`round ${round}: statuses ${JSON.stringify(Object.fromEntries(statuses))}, retries ${retries}`);
        assert.deepEqual(Object.fromEntries(statuses), { 200: total });
        // A connection the store closed under a query had not let the query in: each was answered once.
        assert.equal(await store.answered(), total * round);
      }
      // The stalls did make stale connections, and each was retried on a fresh one.
      assert.ok(retries > 0, 'the stalls closed no connection in use in three rounds: the test did not test');
    },
  );

  it(
    'the embedded store (Node defaults, 5 s keep-alive): bursts of queries across idle gaps around its keep-alive, no 502',
    { timeout: 120_000 },
    async (t) => {
      const guard = await startTestGuard({ metrics: { port: 0 } });
      open.push(guard);
      const statuses = new Map<number, number>();
      // Gaps just under, at and past the store's 5 s keep-alive: the pool has dropped its idle connections first.
      for (const gapMs of [0, 4_900, 5_100]) {
        await new Promise((resolve) => setTimeout(resolve, gapMs));
        for (const [status, count] of await load(guard.endpoint, 700, 8)) statuses.set(status, (statuses.get(status) ?? 0) + count);
      }
      const scrape = await (await fetch(`${guard.guard.metricsUrl!}/metrics`)).text();
      t.diagnostic(
        `statuses ${JSON.stringify(Object.fromEntries(statuses))}, upstream failures ${sample(scrape, 'sparql_guard_upstream_failures_total', 'kind="reset"')}`,
      );
      assert.deepEqual(Object.fromEntries(statuses), { 200: 2_100 });
    },
  );
});
