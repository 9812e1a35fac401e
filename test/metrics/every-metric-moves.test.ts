// Each metric of createMetrics watched through the real app and the metrics listener: it moves on the event it counts, and every duration grows with real time.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync, copyFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startStoreLink, type StoreLink } from '../helpers/start-store-link.js';
import { INTEGRATION_POLICIES, KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

/** Every metric family createMetrics registers (prom-client's default process metrics aside): each has a test below. */
const FAMILIES = [
  'http_requests_total',
  'http_request_duration_seconds',
  'sparql_guard_queries_total',
  'sparql_guard_guard_duration_seconds',
  'sparql_guard_upstream_duration_seconds',
  'sparql_guard_upstream_failures_total',
  'sparql_guard_upstream_retries_total',
  'sparql_guard_policy_reloads_total',
  'sparql_guard_policy_unchanged_reloads_total',
  'sparql_guard_policy_last_load_success_timestamp_seconds',
  'sparql_guard_in_flight_requests',
  'sparql_guard_build_info',
  'sparql_guard_plan_cache_hits_total',
  'sparql_guard_plan_cache_misses_total',
  'sparql_guard_plan_cache_entries',
  'sparql_guard_plan_cache_bytes',
  'sparql_guard_policies',
  'sparql_guard_store_dataset_check',
  'sparql_guard_fact_source_triples',
  'sparql_guard_fact_source_read_seconds',
  'sparql_guard_fact_source_age_seconds',
  'sparql_guard_fact_source_reads_total',
];

/** How long the link holds each query on its way to the store, and how long a body takes to arrive. */
const DELAY_MS = 300;
/** The least a sum must grow by for one delayed request: timers on both sides may fire a few ms apart. */
const AT_LEAST_S = (DELAY_MS * 0.9) / 1000;
const FACTS_QUERY = 'CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <http://example.org/graphs/a> { ?s ?p ?o } }';

/** The value of `name{labels}` (labels as prom-client writes them), 0 when absent. */
function sample(text: string, name: string, labels = ''): number {
  const head = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((each) => each.startsWith(head));
  return line === undefined ? 0 : Number(line.slice(head.length));
}

describe('every metric moves when it should', () => {
  let folder: string;
  let policyFile: string;
  /** On the embedded store, with a fact source and a policy file the tests change. */
  let t: TestGuard;
  /** The same store through a link that can be slowed or made to reset. */
  let link: StoreLink;
  let slow: TestGuard;

  const scrape = async (guard: TestGuard): Promise<string> => {
    const response = await fetch(`${guard.guard.metricsUrl!}/metrics`);
    assert.equal(response.status, 200);
    return response.text();
  };
  const query = async (guard: TestGuard, text: string, key: string = KEYS.beta): Promise<number> => {
    const response = await fetch(`${guard.endpoint}?query=${encodeURIComponent(text)}`, { headers: { 'x-api-key': key } });
    await response.arrayBuffer();
    return response.status;
  };
  /** Sends a query whose body arrives in two parts `DELAY_MS` apart. */
  const trickle = (guard: TestGuard, text: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(text);
      const sending = httpRequest(
        guard.endpoint,
        {
          method: 'POST',
          headers: { 'content-type': 'application/sparql-query', 'content-length': body.length, 'x-api-key': KEYS.beta },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      sending.on('error', reject);
      sending.write(body.subarray(0, 5));
      setTimeout(() => sending.end(body.subarray(5)), DELAY_MS);
    });

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-metrics-'));
    policyFile = join(folder, 'policies.ttl');
    copyFileSync(INTEGRATION_POLICIES, policyFile);
    const metrics = { port: 0, host: '127.0.0.1' };
    t = await startTestGuard({ metrics, policies: [policyFile], facts: [{ name: 'graph-a', query: FACTS_QUERY }] });
    link = await startStoreLink(t.guard.upstreamUrl);
    slow = await startTestGuard({ metrics, upstream: link.url, timeoutMs: 5000 });
  });
  after(async () => {
    await slow?.close();
    await link?.close();
    await t?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('lists every family the guard exports (a new metric needs a test here)', async () => {
    const text = await scrape(t);
    const families = [...text.matchAll(/^# TYPE (\S+) /gm)]
      .map((match) => match[1]!)
      .filter((name) => !name.startsWith('process_') && !name.startsWith('nodejs_'));
    assert.deepEqual(families.sort(), [...FAMILIES].sort());
  });

  it('http_request_duration_seconds: the sum grows by at least the time the store took', async () => {
    const of = (text: string, suffix: string) =>
      sample(text, `http_request_duration_seconds_${suffix}`, 'method="GET",route="/sparql",status_code="200"');
    const before = await scrape(slow);
    link.delayMs = DELAY_MS;
    try {
      assert.equal(await query(slow, 'SELECT * WHERE { ?s ?p ?o } LIMIT 1'), 200);
    } finally {
      link.delayMs = 0;
    }
    const after = await scrape(slow);
    assert.equal(of(after, 'count') - of(before, 'count'), 1);
    assert.ok(of(after, 'sum') - of(before, 'sum') >= AT_LEAST_S, `sum grew by ${of(after, 'sum') - of(before, 'sum')} s`);
  });

  it('sparql_guard_upstream_duration_seconds: the sum grows by at least the time the store took', async () => {
    const before = await scrape(slow);
    link.delayMs = DELAY_MS;
    try {
      assert.equal(await query(slow, 'SELECT * WHERE { ?s ?p ?o } LIMIT 2'), 200);
    } finally {
      link.delayMs = 0;
    }
    const after = await scrape(slow);
    const name = 'sparql_guard_upstream_duration_seconds';
    assert.equal(sample(after, `${name}_count`) - sample(before, `${name}_count`), 1);
    assert.ok(sample(after, `${name}_sum`) - sample(before, `${name}_sum`) >= AT_LEAST_S);
  });

  it("sparql_guard_guard_duration_seconds: the sum grows by at least the time the query's body took to arrive", async () => {
    const name = 'sparql_guard_guard_duration_seconds';
    const before = await scrape(t);
    assert.equal(await trickle(t, 'SELECT * WHERE { ?s ?p ?o } LIMIT 3'), 200);
    const after = await scrape(t);
    assert.equal(sample(after, `${name}_count`) - sample(before, `${name}_count`), 1);
    const grew = sample(after, `${name}_sum`) - sample(before, `${name}_sum`);
    assert.ok(grew >= AT_LEAST_S, `guard time grew by ${grew} s`);
    // The store's time is not the guard's: a slow store leaves the guard's sum small.
    const slowBefore = await scrape(slow);
    link.delayMs = DELAY_MS;
    try {
      assert.equal(await query(slow, 'SELECT * WHERE { ?s ?p ?o } LIMIT 4'), 200);
    } finally {
      link.delayMs = 0;
    }
    const slowAfter = await scrape(slow);
    assert.ok(sample(slowAfter, `${name}_sum`) - sample(slowBefore, `${name}_sum`) < DELAY_MS / 1000);
  });

  it('http_requests_total and sparql_guard_queries_total: one more per request, under its labels', async () => {
    const before = await scrape(t);
    assert.equal(await query(t, 'SELECT * WHERE { ?s ?p ?o } LIMIT 5'), 200);
    assert.equal(await query(t, 'SELECT * WHERE {'), 400);
    assert.equal(await query(t, 'SELECT * WHERE { ?s ?p ?o }', 'wrong-key'), 401);
    const after = await scrape(t);
    const requests = (text: string, status: number) =>
      sample(text, 'http_requests_total', `method="GET",route="/sparql",status_code="${status}"`);
    for (const status of [200, 400, 401]) assert.equal(requests(after, status) - requests(before, status), 1, `status ${status}`);
    const queries = (text: string, outcome: string) => sample(text, 'sparql_guard_queries_total', `outcome="${outcome}"`);
    for (const outcome of ['answered', 'parse', 'unauthenticated'])
      assert.equal(queries(after, outcome) - queries(before, outcome), 1, outcome);
  });

  it('http_requests_total: a request the guard ended with a 408 (its body stopped arriving) counts as 408, not 200', async () => {
    const quick = await startTestGuard({
      metrics: { port: 0, host: '127.0.0.1' },
      http: { headersTimeoutMs: 10000, requestTimeoutMs: 30000, idleTimeoutMs: 300, maxConnections: 400 },
    });
    try {
      const before = await scrape(quick);
      const status = await new Promise<number>((resolve, reject) => {
        const sending = httpRequest(
          quick.endpoint,
          { method: 'POST', headers: { 'content-type': 'application/sparql-query', 'content-length': 100, 'x-api-key': KEYS.beta } },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        sending.on('error', reject);
        sending.write('ASK');
      });
      assert.equal(status, 408);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = await scrape(quick);
      const requests = (text: string, code: number) =>
        sample(text, 'http_requests_total', `method="POST",route="/sparql",status_code="${code}"`);
      assert.equal(requests(after, 408) - requests(before, 408), 1, 'counted as 408');
      assert.equal(requests(after, 200) - requests(before, 200), 0, 'not as 200');
    } finally {
      await quick.close();
    }
  });

  it('a client that leaves before the store answered counts as 499 and as a query client_closed, never as 200 or answered', async () => {
    const before = await scrape(slow);
    link.delayMs = DELAY_MS * 3;
    try {
      const leaving = new AbortController();
      const asked = fetch(`${slow.endpoint}?query=${encodeURIComponent('SELECT * WHERE { ?s ?p ?o } LIMIT 7')}`, {
        headers: { 'x-api-key': KEYS.beta },
        signal: leaving.signal,
      });
      await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
      leaving.abort();
      await assert.rejects(asked);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      link.delayMs = 0;
    }
    const after = await scrape(slow);
    const requests = (text: string, code: number) =>
      sample(text, 'http_requests_total', `method="GET",route="/sparql",status_code="${code}"`);
    const queries = (text: string, outcome: string) => sample(text, 'sparql_guard_queries_total', `outcome="${outcome}"`);
    assert.equal(requests(after, 499) - requests(before, 499), 1, 'counted as 499');
    assert.equal(requests(after, 200) - requests(before, 200), 0, 'not as 200');
    assert.equal(queries(after, 'client_closed') - queries(before, 'client_closed'), 1);
    assert.equal(queries(after, 'answered') - queries(before, 'answered'), 0);
    assert.equal(sample(after, 'sparql_guard_in_flight_requests'), 0);
  });

  it('sparql_guard_in_flight_requests: 1 while a query waits for the store, 0 after', async () => {
    link.delayMs = DELAY_MS * 3;
    let answered: Promise<number> | undefined;
    try {
      answered = query(slow, 'SELECT * WHERE { ?s ?p ?o } LIMIT 6');
      await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
      // The scrape's own request is on the metrics listener, not counted.
      assert.equal(sample(await scrape(slow), 'sparql_guard_in_flight_requests'), 1);
    } finally {
      link.delayMs = 0;
    }
    assert.equal(await answered, 200);
    assert.equal(sample(await scrape(slow), 'sparql_guard_in_flight_requests'), 0);
  });

  it('sparql_guard_upstream_failures_total: one more per store failure, by kind', async () => {
    const before = await scrape(slow);
    link.reset = true;
    try {
      assert.equal(await query(slow, 'SELECT * WHERE { ?s ?p ?o } LIMIT 7'), 502);
    } finally {
      link.reset = false;
    }
    const after = await scrape(slow);
    const failures = (text: string) =>
      [...text.matchAll(/^sparql_guard_upstream_failures_total\{kind="[^"]+"\} (\S+)$/gm)].reduce(
        (sum, match) => sum + Number(match[1]),
        0,
      );
    assert.ok(failures(after) - failures(before) >= 1);
    const failed = (text: string) => sample(text, 'sparql_guard_queries_total', 'outcome="upstream_failed"');
    assert.equal(failed(after) - failed(before), 1);
  });

  it('sparql_guard_upstream_retries_total: one more per query the store dropped unanswered, by reason; one retry per query', async () => {
    const retries = (text: string) =>
      sample(text, 'sparql_guard_upstream_retries_total', 'reason="closed"') +
      sample(text, 'sparql_guard_upstream_retries_total', 'reason="reset"');
    const before = await scrape(slow);
    link.reset = true;
    const sent = link.received.length;
    try {
      assert.equal(await query(slow, 'SELECT * WHERE { ?s ?p ?o } LIMIT 9'), 502);
    } finally {
      link.reset = false;
    }
    assert.equal(link.received.length - sent, 2);
    assert.equal(retries(await scrape(slow)) - retries(before), 1);
    // A query the store answers is not retried.
    assert.equal(await query(slow, 'SELECT * WHERE { ?s ?p ?o } LIMIT 10'), 200);
    assert.equal(retries(await scrape(slow)) - retries(before), 1);
  });

  it('plan cache: a new query text is a miss and an entry, the same text again a hit', async () => {
    const before = await scrape(t);
    const text = 'SELECT ?never_seen_before WHERE { ?never_seen_before ?p ?o } LIMIT 8';
    assert.equal(await query(t, text), 200);
    const middle = await scrape(t);
    assert.ok(sample(middle, 'sparql_guard_plan_cache_misses_total') > sample(before, 'sparql_guard_plan_cache_misses_total'));
    assert.ok(sample(middle, 'sparql_guard_plan_cache_entries') > sample(before, 'sparql_guard_plan_cache_entries'));
    assert.ok(sample(middle, 'sparql_guard_plan_cache_bytes') > sample(before, 'sparql_guard_plan_cache_bytes'));
    assert.equal(await query(t, text), 200);
    const after = await scrape(t);
    assert.equal(sample(after, 'sparql_guard_plan_cache_hits_total') - sample(middle, 'sparql_guard_plan_cache_hits_total'), 1);
    assert.equal(sample(after, 'sparql_guard_plan_cache_misses_total'), sample(middle, 'sparql_guard_plan_cache_misses_total'));
  });

  it('reloads: success, unchanged, failure, the time of the last good load, and the policies in force', async () => {
    const reloads = (text: string, result: string) => sample(text, 'sparql_guard_policy_reloads_total', `result="${result}"`);
    const loadedAt = (text: string) => sample(text, 'sparql_guard_policy_last_load_success_timestamp_seconds');
    const start = await scrape(t);
    assert.equal(sample(start, 'sparql_guard_policies'), 4);

    // The same files again: a success that swaps nothing.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await t.guard.reload(), true);
    const same = await scrape(t);
    assert.equal(reloads(same, 'success') - reloads(start, 'success'), 1);
    assert.equal(
      sample(same, 'sparql_guard_policy_unchanged_reloads_total') - sample(start, 'sparql_guard_policy_unchanged_reloads_total'),
      1,
    );
    assert.ok(loadedAt(same) > loadedAt(start));

    // A broken file: a failure, and the set in force stays.
    const good = readFileSync(policyFile, 'utf8');
    writeFileSync(policyFile, `${good}\nthis is not turtle`);
    assert.equal(await t.guard.reload(), false);
    const broken = await scrape(t);
    assert.equal(reloads(broken, 'failure') - reloads(same, 'failure'), 1);
    assert.equal(loadedAt(broken), loadedAt(same));
    assert.equal(sample(broken, 'sparql_guard_policies'), 4);

    // One policy more: a success that changes the count.
    writeFileSync(policyFile, `${good}\np:more a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph g:b .\n`);
    assert.equal(await t.guard.reload(), true);
    const more = await scrape(t);
    assert.equal(reloads(more, 'success') - reloads(broken, 'success'), 1);
    assert.equal(
      sample(more, 'sparql_guard_policy_unchanged_reloads_total'),
      sample(broken, 'sparql_guard_policy_unchanged_reloads_total'),
    );
    assert.equal(sample(more, 'sparql_guard_policies'), 5);
    writeFileSync(policyFile, good);
    assert.equal(await t.guard.reload(), true);
  });

  it('fact sources: triples and read time of the answer in force, its age growing, one read more per reload', async () => {
    const labels = 'source="graph-a"';
    const before = await scrape(t);
    // Graph a of the integration data, as the store holds it.
    assert.ok(sample(before, 'sparql_guard_fact_source_triples', labels) > 0);
    assert.ok(sample(before, 'sparql_guard_fact_source_read_seconds', labels) > 0);
    await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
    const later = await scrape(t);
    const aged =
      sample(later, 'sparql_guard_fact_source_age_seconds', labels) - sample(before, 'sparql_guard_fact_source_age_seconds', labels);
    assert.ok(aged >= AT_LEAST_S, `age grew by ${aged} s`);
    const reads = (text: string) => sample(text, 'sparql_guard_fact_source_reads_total', `${labels},result="success"`);
    assert.equal(await t.guard.reload(), true);
    const reloaded = await scrape(t);
    assert.equal(reads(reloaded) - reads(later), 1);
    assert.ok(
      sample(reloaded, 'sparql_guard_fact_source_age_seconds', labels) < sample(later, 'sparql_guard_fact_source_age_seconds', labels),
    );
  });

  it('sparql_guard_store_dataset_check and sparql_guard_build_info: the verdict in force, the running version', async () => {
    const text = await scrape(t);
    assert.equal(sample(text, 'sparql_guard_store_dataset_check', 'verdict="honoured"'), 1);
    assert.equal(sample(text, 'sparql_guard_store_dataset_check', 'verdict="unverified"'), 0);
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    assert.equal(sample(text, 'sparql_guard_build_info', `version="${version}"`), 1);
    // A store that cannot be reached at start leaves the verdict unverified.
    const lost = await startTestGuard({ metrics: { port: 0, host: '127.0.0.1' }, upstream: 'http://127.0.0.1:1/sparql', timeoutMs: 1000 });
    try {
      const lostText = await scrape(lost);
      assert.equal(sample(lostText, 'sparql_guard_store_dataset_check', 'verdict="unverified"'), 1);
      assert.equal(sample(lostText, 'sparql_guard_store_dataset_check', 'verdict="honoured"'), 0);
    } finally {
      await lost.close();
    }
  });
});
