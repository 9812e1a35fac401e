// Prometheus metrics on their own listener: names, labels and values after real requests, off by default, summed over cluster workers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { INTEGRATION_POLICIES, KEYS, sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { makeFolder, spawnGuard } from '../helpers/spawn-guard.js';

const SELECT = 'SELECT * WHERE { ?s ?p ?o } LIMIT 1';

/** The value of the sample `name{labels}` (labels in the order prom-client writes them), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const head = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((each) => each.startsWith(head));
  return line === undefined ? undefined : Number(line.slice(head.length));
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe('metrics of one process', () => {
  let t: TestGuard;
  before(async () => {
    t = await startTestGuard({ metrics: { port: 0, host: '127.0.0.1' } });
  });
  after(() => t.close());

  const get = (query: string, key?: string) =>
    fetch(`${t.endpoint}?query=${encodeURIComponent(query)}`, { headers: key === undefined ? {} : { 'x-api-key': key } }).then(
      async (response) => {
        await response.arrayBuffer();
        return response.status;
      },
    );

  it('counts requests, query outcomes, times and the plan cache after real queries', async () => {
    const before = await scrape(t.guard.metricsUrl!);
    assert.equal(sample(before, 'sparql_guard_queries_total', 'outcome="answered"'), undefined);
    assert.equal(await get(SELECT, KEYS.beta), 200);
    assert.equal(await get(SELECT, KEYS.beta), 200);
    assert.equal(await get('INSERT DATA { <a:b> <a:c> <a:d> }', KEYS.beta), 403);
    assert.equal(await get('SELECT * WHERE { SERVICE <http://example.org/s> { ?s ?p ?o } }', KEYS.beta), 403);
    assert.equal(await get('SELECT * WHERE {', KEYS.beta), 400);
    assert.equal(await get(SELECT, 'wrong-key'), 401);
    assert.equal((await fetch(`${t.guard.url}/healthz`)).status, 200);

    const text = await scrape(t.guard.metricsUrl!);
    assert.equal(sample(text, 'http_requests_total', 'method="GET",route="/sparql",status_code="200"'), 2);
    assert.equal(sample(text, 'http_requests_total', 'method="GET",route="/sparql",status_code="403"'), 2);
    assert.equal(sample(text, 'http_requests_total', 'method="GET",route="/healthz",status_code="200"'), 1);
    assert.equal(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="/sparql",status_code="200"'), 2);
    assert.equal(sample(text, 'sparql_guard_queries_total', 'outcome="answered"'), 2);
    assert.equal(sample(text, 'sparql_guard_queries_total', 'outcome="update"'), 1);
    assert.equal(sample(text, 'sparql_guard_queries_total', 'outcome="service"'), 1);
    assert.equal(sample(text, 'sparql_guard_queries_total', 'outcome="parse"'), 1);
    assert.equal(sample(text, 'sparql_guard_queries_total', 'outcome="unauthenticated"'), 1);
    assert.equal(sample(text, 'sparql_guard_upstream_duration_seconds_count'), 2);
    assert.equal(sample(text, 'sparql_guard_guard_duration_seconds_count'), 2);
    assert.ok(sample(text, 'sparql_guard_plan_cache_hits_total')! >= 1, 'the second SELECT is a cache hit');
    assert.ok(sample(text, 'sparql_guard_plan_cache_misses_total')! >= 1);
    assert.ok(sample(text, 'sparql_guard_plan_cache_entries')! >= 1);
    assert.ok(sample(text, 'sparql_guard_plan_cache_bytes')! > 0);
    assert.ok(sample(text, 'sparql_guard_policies')! > 0);
    assert.equal(sample(text, 'sparql_guard_store_dataset_check', 'verdict="honoured"'), 1);
    assert.equal(sample(text, 'sparql_guard_store_dataset_check', 'verdict="ignored"'), 0);
    assert.equal(sample(text, 'sparql_guard_in_flight_requests'), 0);
    assert.match(text, /^sparql_guard_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$/m);
    assert.ok(sample(text, 'sparql_guard_policy_last_load_success_timestamp_seconds')! > Date.now() / 1000 - 600);
    // Before any reload, each result is there at 0 (an increase() alert sees the first failure).
    assert.equal(sample(text, 'sparql_guard_policy_reloads_total', 'result="success"'), 0);
    assert.equal(sample(text, 'sparql_guard_policy_reloads_total', 'result="failure"'), 0);
    assert.ok(sample(text, 'process_cpu_user_seconds_total')! > 0, "prom-client's default process metrics");
  });

  it('counts reloads by result', async () => {
    assert.equal(await t.guard.reload(), true);
    const text = await scrape(t.guard.metricsUrl!);
    assert.equal(sample(text, 'sparql_guard_policy_reloads_total', 'result="success"'), 1);
    assert.equal(sample(text, 'sparql_guard_policy_reloads_total', 'result="failure"'), 0);
  });

  it('carries no agent, key or query text, and is not on the SPARQL port', async () => {
    await get('SELECT ?secretVariableName WHERE { ?secretVariableName ?p ?o }', KEYS.beta);
    const text = await scrape(t.guard.metricsUrl!);
    assert.doesNotMatch(text, /beta-user|example\.org\/agents|test-key|secretVariableName/);
    const onSparqlPort = await fetch(`${t.guard.url}/metrics`);
    assert.equal(onSparqlPort.status, 404);
    await onSparqlPort.arrayBuffer();
    const wrong = await fetch(`${t.guard.metricsUrl}/other`);
    assert.equal(wrong.status, 404);
    assert.match(await wrong.text(), /^[^\n]+\n$/);
  });
});

describe('metrics settings', () => {
  it('no listener unless configured', async () => {
    const t = await startTestGuard();
    try {
      assert.equal(t.guard.metricsUrl, undefined);
      assert.equal(
        t.logs.some((line) => line.event === 'metrics-listening'),
        false,
      );
    } finally {
      await t.close();
    }
  });

  it('counts a store that cannot be reached as an upstream failure', async () => {
    const t = await startTestGuard({ upstream: 'http://127.0.0.1:1/sparql', timeoutMs: 1000, metrics: { port: 0, host: '127.0.0.1' } });
    try {
      const response = await fetch(`${t.endpoint}?query=${encodeURIComponent(SELECT)}`, { headers: { 'x-api-key': KEYS.beta } });
      assert.equal(response.status, 502);
      await response.arrayBuffer();
      const text = await scrape(t.guard.metricsUrl!);
      assert.ok(sample(text, 'sparql_guard_upstream_failures_total', 'kind="refused"')! >= 1);
      assert.equal(sample(text, 'sparql_guard_queries_total', 'outcome="upstream_failed"'), 1);
      assert.equal(sample(text, 'sparql_guard_store_dataset_check', 'verdict="unverified"'), 1);
    } finally {
      await t.close();
    }
  });
});

describe('metrics with workers: 2', () => {
  it('one scrape of the primary sums both workers', { timeout: 240_000 }, async () => {
    const folder = makeFolder();
    const guard = spawnGuard(folder.folder, {
      workers: 2,
      policies: [INTEGRATION_POLICIES],
      auth: { apiKeys: [{ agent: 'http://example.org/agents/beta-user', groups: ['beta'], sha256: sha256(KEYS.beta) }] },
      metrics: { port: 0, host: '127.0.0.1' },
    });
    try {
      // Bounds for a loaded machine: two workers each load the policies and check the store.
      const metricsLine = await guard.waitFor((line) => line.event === 'metrics-listening', 0, 90_000);
      const listening = await guard.waitFor((line) => line.event === 'listening' && line.workers === 2, 0, 90_000);
      const metricsUrl = String(metricsLine.url).replace(/\/metrics$/, '');
      const endpoint = `${String(listening.url)}/sparql`;
      const count = 20;
      for (let i = 0; i < count; i += 1) {
        // A new connection per request, so both workers get some.
        const response = await fetch(`${endpoint}?query=${encodeURIComponent(SELECT)}`, {
          headers: { 'x-api-key': KEYS.beta, connection: 'close' },
        });
        assert.equal(response.status, 200);
        await response.arrayBuffer();
      }
      const served = () => guard.lines.filter((line) => line.path === '/sparql' && line.status === 200);
      await guard.waitFor(() => served().length >= count, 0, 90_000);
      assert.equal(new Set(served().map((line) => line.worker)).size, 2, 'both workers answered some');
      const text = await scrape(metricsUrl);
      assert.equal(sample(text, 'http_requests_total', 'method="GET",route="/sparql",status_code="200"'), count);
      assert.equal(sample(text, 'sparql_guard_queries_total', 'outcome="answered"'), count);
      assert.ok(sample(text, 'sparql_guard_policies')! > 0);
      assert.match(text, /^sparql_guard_build_info\{version="[^"]+"\} 1$/m);
    } finally {
      await guard.stop();
      folder.remove();
    }
  });
});
