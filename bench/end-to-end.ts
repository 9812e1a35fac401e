// Benchmark (b): requests per second and latency under load, direct to a fast store vs a plain proxy vs sparql-guard (1 and 2 workers).

import autocannon from 'autocannon';
import { cpuSeconds } from './_util/cpu-seconds.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { percentile } from './_util/percentile.js';
import { BENCH_KEY, startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';

const CONNECTIONS = 32;
const WARM_UP_S = 2;
const MEASURE_S = 8;
/** The added-latency target of bench/README.md. */
const ADDED_P50_TARGET_MS = 1;
const PROXY_RATIO_TARGET = 0.8;

type Scenario = 'direct' | 'proxy' | 'guard-1' | 'guard-2';
const SCENARIOS: readonly Scenario[] = ['direct', 'proxy', 'guard-1', 'guard-2'];
const LABELS: Record<Scenario, string> = {
  direct: 'direct to the store',
  proxy: 'plain Node pass-through proxy',
  'guard-1': 'sparql-guard, 1 worker',
  'guard-2': 'sparql-guard, 2 workers',
};

/** A medium query (12 patterns, OPTIONAL, FILTER), sent by an API-key caller granted ten graphs. */
const QUERY = `PREFIX ex: <https://bench.example.org/>
SELECT ?s ?o WHERE {
  ${Array.from({ length: 10 }, (_, i) => `?s ex:p${i} ?o${i} .`).join('\n  ')}
  OPTIONAL { ?s ex:label ?o . ?o ex:lang "en" }
  FILTER (?o0 != "x")
}`;
const REQUEST = {
  method: 'POST',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/sparql-results+json',
    authorization: `Bearer ${BENCH_KEY}`,
  },
  body: new URLSearchParams({ query: QUERY }).toString(),
};

interface Row {
  scenario: Scenario;
  requestsPerS: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  failures: number;
  /** CPU time of the front's processes (proxy, or guard primary and workers) per request; undefined for direct. */
  cpuUsPerRequest: number | undefined;
}

async function answerOf(url: string): Promise<{ status: number; type: string | null; body: string }> {
  const response = await fetch(url, REQUEST);
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

/** One scenario in this (fresh) process: its own store, and its own proxy or guard. */
async function scenario(name: Scenario): Promise<Row> {
  const store = await startBenchServer('fixed-upstream');
  const servers: BenchServer[] = [store];
  try {
    let target = store.url;
    if (name === 'proxy') servers.push(await startBenchServer('pass-through-proxy', [`${store.url}/sparql`]));
    if (name === 'guard-1' || name === 'guard-2') servers.push(await startBenchGuard(`${store.url}/sparql`, name === 'guard-1' ? 1 : 2));
    target = `${servers[servers.length - 1]!.url}/sparql`;

    // Check before timing: the answer through the front is the store's own answer.
    const direct = await answerOf(`${store.url}/sparql`);
    const through = await answerOf(target);
    if (
      direct.status !== 200 ||
      through.status !== 200 ||
      through.body !== direct.body ||
      !through.type?.startsWith('application/sparql-results+json')
    ) {
      throw new Error(`${name}: the answer through the front differs from the store's (status ${through.status})`);
    }

    await autocannon({ url: target, connections: CONNECTIONS, duration: WARM_UP_S, ...REQUEST });
    const front = name === 'direct' ? undefined : servers[servers.length - 1]!.pid;
    const cpuBefore = front === undefined ? undefined : cpuSeconds(front);
    const latencies: number[] = [];
    const instance = autocannon({ url: target, connections: CONNECTIONS, duration: MEASURE_S, ...REQUEST });
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status === 200) latencies.push(ms);
    });
    const result = await instance;
    const cpuAfter = front === undefined ? undefined : cpuSeconds(front);
    const sorted = Float64Array.from(latencies).sort();
    return {
      scenario: name,
      requestsPerS: result.requests.total / MEASURE_S,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      requests: result.requests.total,
      failures: result.non2xx + result.errors + result.timeouts,
      cpuUsPerRequest:
        cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1e6) / result.requests.total,
    };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(await scenario(args[0] as Scenario)));
    return;
  }
  console.log('### (b) End to end under load\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    `autocannon in the bench process, ${CONNECTIONS} connections, ${WARM_UP_S} s warm-up then ${MEASURE_S} s measured; POST form query (${Buffer.byteLength(QUERY)} bytes) with an API key; ` +
      'the store is a Node server answering a fixed 10-row SPARQL JSON result; every process on this one machine, each scenario in a fresh process; latency per request, client side; ' +
      'front CPU = user + system time of the proxy or guard processes (primary and workers) during the measured run, per request: the cost that does not depend on what else the machine runs\n',
  );
  const rows = new Map<Scenario, Row>();
  for (const name of SCENARIOS) {
    rows.set(name, runScenario<Row>(import.meta.url, name));
  }
  const direct = rows.get('direct')!;
  const proxy = rows.get('proxy')!;
  const guard1 = rows.get('guard-1')!;
  console.log(
    '| front | req/s | p50 ms | p99 ms | req/s vs direct | req/s vs proxy | added p50 ms vs direct | front CPU us/req | failed | target |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const [name, row] of rows) {
    const added = row.p50Ms - direct.p50Ms;
    const vsProxy = row.requestsPerS / proxy.requestsPerS;
    let target = '';
    if (name === 'guard-1') {
      const latency = added <= ADDED_P50_TARGET_MS ? 'met' : `MISSED by ${(added - ADDED_P50_TARGET_MS).toFixed(2)} ms`;
      const throughput = vsProxy >= PROXY_RATIO_TARGET ? 'met' : `MISSED by ${(PROXY_RATIO_TARGET - vsProxy).toFixed(2)}`;
      target = `added p50 <= ${ADDED_P50_TARGET_MS} ms: ${latency}; >= ${PROXY_RATIO_TARGET} x proxy: ${throughput}`;
    }
    if (name === 'guard-2') target = `2 workers / 1 worker: ${(row.requestsPerS / guard1.requestsPerS).toFixed(2)} x`;
    console.log(
      `| ${LABELS[name]} | ${row.requestsPerS.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${(row.requestsPerS / direct.requestsPerS).toFixed(2)} | ${name === 'direct' ? '' : vsProxy.toFixed(2)} | ${name === 'direct' ? '' : added.toFixed(2)} | ${row.cpuUsPerRequest?.toFixed(0) ?? ''} | ${row.failures} | ${target} |`,
    );
  }
  console.log('');
}

await main();
