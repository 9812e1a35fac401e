// Benchmark (f): the guard's CPU per request with the Prometheus metrics off vs on, at one fixed request rate.

import autocannon from 'autocannon';
import { createMetrics } from '../src/metrics/create-metrics.js';
import { cpuSeconds } from './_util/cpu-seconds.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { BENCH_KEY, startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';

/** Most the guard's CPU per request may grow with the metrics on. */
const COST_TARGET = 0.05;
/** A fixed rate below what one worker sustains, so both variants do the same work at the same pace. */
const RATE_PER_S = 300;
const CONNECTIONS = 8;
const WARM_UP_S = 2;
const MEASURE_S = 6;
/** ABBA order, so a drift of the machine's load weighs on both variants alike. */
const ORDER = ['off', 'on', 'on', 'off', 'off', 'on'] as const;

type Variant = (typeof ORDER)[number];

const REQUEST = {
  method: 'POST',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/sparql-results+json',
    authorization: `Bearer ${BENCH_KEY}`,
  },
  body: new URLSearchParams({
    query: 'PREFIX ex: <https://bench.example.org/>\nSELECT ?s ?o WHERE { ?s ex:p0 ?o . OPTIONAL { ?s ex:label ?l } FILTER (?o != "x") }',
  }).toString(),
};

interface Run {
  cpuUsPerRequest: number;
  requests: number;
  failures: number;
}

async function scenario(variant: Variant): Promise<Run> {
  const store = await startBenchServer('fixed-upstream');
  const servers: BenchServer[] = [store];
  try {
    const guard = await startBenchGuard(`${store.url}/sparql`, 1, { metrics: variant === 'on' });
    servers.push(guard);
    const target = `${guard.url}/sparql`;
    // Check before timing: the answer through the guard is the store's own.
    const [direct, through] = await Promise.all([fetch(`${store.url}/sparql`, REQUEST), fetch(target, REQUEST)]);
    const [directBody, throughBody] = await Promise.all([direct.text(), through.text()]);
    if (through.status !== 200 || throughBody !== directBody)
      throw new Error(`${variant}: the answer through the guard differs (status ${through.status})`);

    await autocannon({ url: target, connections: CONNECTIONS, duration: WARM_UP_S, overallRate: RATE_PER_S, ...REQUEST });
    const before = cpuSeconds(guard.pid);
    const result = await autocannon({ url: target, connections: CONNECTIONS, duration: MEASURE_S, overallRate: RATE_PER_S, ...REQUEST });
    const after = cpuSeconds(guard.pid);
    if (before === undefined || after === undefined) throw new Error('no /proc: this benchmark needs Linux');
    return {
      cpuUsPerRequest: ((after - before) * 1e6) / result.requests.total,
      requests: result.requests.total,
      failures: result.non2xx + result.errors + result.timeouts,
    };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

/**
 * What the server calls per answered query, timed in this process without the network: the
 * part of the metrics' cost that does not drown in the noise of a loaded machine.
 */
function recordingUsPerRequest(): number {
  const metrics = createMetrics('0.0.0');
  const round = (n: number) => {
    for (let i = 0; i < n; i += 1) {
      metrics.requestStarted();
      metrics.guardTime(0.0004 + (i % 7) * 1e-5);
      metrics.upstreamTime(0.002 + (i % 5) * 1e-4);
      metrics.queryEnded('answered');
      metrics.requestEnded('POST', '/sparql', 200, 0.003 + (i % 11) * 1e-4);
    }
  };
  round(20_000);
  const rounds = 200_000;
  const started = process.hrtime.bigint();
  round(rounds);
  return Number(process.hrtime.bigint() - started) / 1e3 / rounds;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(await scenario(args[0] as Variant)));
    return;
  }
  console.log('### (f) Cost of the Prometheus metrics\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    `sparql-guard, 1 worker, in front of the Node stand-in store; autocannon at a fixed ${RATE_PER_S} req/s over ${CONNECTIONS} connections, ${WARM_UP_S} s warm-up then ${MEASURE_S} s measured; ` +
      `runs in the order ${ORDER.join(', ')} (each in a fresh guard process), median per variant; CPU = user + system time of the guard process per request\n`,
  );
  const runs: Record<Variant, Run[]> = { off: [], on: [] };
  for (const variant of ORDER) runs[variant].push(runScenario<Run>(import.meta.url, variant));
  const off = median(runs.off.map((run) => run.cpuUsPerRequest));
  const on = median(runs.on.map((run) => run.cpuUsPerRequest));
  const cost = on / off - 1;
  console.log('| metrics | guard CPU us/req (median) | runs (us/req) | requests | failed |');
  console.log('|---|---:|---|---:|---:|');
  for (const variant of ['off', 'on'] as const) {
    const each = runs[variant];
    console.log(
      `| ${variant} | ${median(each.map((run) => run.cpuUsPerRequest)).toFixed(0)} | ${each.map((run) => run.cpuUsPerRequest.toFixed(0)).join(', ')} | ${each.reduce((sum, run) => sum + run.requests, 0)} | ${each.reduce((sum, run) => sum + run.failures, 0)} |`,
    );
  }
  const verdict = cost <= COST_TARGET ? 'met' : `MISSED by ${((cost - COST_TARGET) * 100).toFixed(1)} points`;
  console.log(
    `\nmetrics on vs off: ${cost >= 0 ? '+' : ''}${(cost * 100).toFixed(1)} % CPU per request (target <= ${COST_TARGET * 100} %: ${verdict})`,
  );
  const recording = recordingUsPerRequest();
  console.log(
    `recording alone (in process, no network): ${recording.toFixed(2)} us per request = ${((recording / off) * 100).toFixed(2)} % of the guard's CPU per request with metrics off\n`,
  );
}

await main();
