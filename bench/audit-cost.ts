// Benchmark: audit records on vs off on the templated mix (the guard's CPU per request), and the size of a record for a caller granted 20,000 graphs.

import autocannon from 'autocannon';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { readTraceContext } from '../src/http/read-trace-context.js';
import type { PolicySet } from '../src/policy/policy-set.js';
import { createAuditLog } from '../src/server/create-audit-log.js';
import { createPlanner } from '../src/sparql/create-planner.js';
import { BSBM_SHAPES, seededRandom } from './bsbm-mix.js';
import { cpuSeconds } from './_util/cpu-seconds.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { percentile } from './_util/percentile.js';
import { BENCH_KEY, startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';

const CONNECTIONS = 32;
/** Rounds of the two scenarios in alternating order, each a fresh process; the median of each is shown. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP_S = 3;
const MEASURE_S = Number(process.env.BENCH_MEASURE_S ?? 8);
/** The targets: at most 5 % more guard CPU per request with records on; a record under 2 KB at 20,000 graphs. */
const CPU_TARGET = 1.05;
const LINE_TARGET_BYTES = 2048;
const WIDE_GRAPHS = 20_000;

type Scenario = 'audit-off' | 'audit-on';
const SCENARIOS: readonly Scenario[] = ['audit-off', 'audit-on'];

const HEADERS = {
  'content-type': 'application/x-www-form-urlencoded',
  accept: 'application/sparql-results+json',
  authorization: `Bearer ${BENCH_KEY}`,
};

interface Row {
  requestsPerS: number;
  cpuUsPerRequest: number;
  failures: number;
  records: number;
}

async function scenario(name: Scenario): Promise<Row> {
  const store = await startBenchServer('fixed-upstream');
  const servers: BenchServer[] = [store];
  try {
    const guard = await startBenchGuard(`${store.url}/sparql`, 1, name === 'audit-on' ? { audit: {} } : {});
    servers.push(guard);
    const target = `${guard.url}/sparql`;
    const random = seededRandom(12);
    const next = () => new URLSearchParams({ query: BSBM_SHAPES[Math.floor(random() * BSBM_SHAPES.length)]!(random) }).toString();
    // Check before timing: every shape gets through.
    for (const shape of BSBM_SHAPES) {
      const response = await fetch(target, {
        method: 'POST',
        headers: HEADERS,
        body: new URLSearchParams({ query: shape(seededRandom(7)) }).toString(),
      });
      await response.text();
      if (response.status !== 200) throw new Error(`${name}: a shape was answered ${response.status}`);
    }
    const load = (seconds: number) =>
      autocannon({
        url: target,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [{ method: 'POST', headers: HEADERS, setupRequest: (request) => ({ ...request, body: next() }) }],
      });
    await load(WARM_UP_S);
    const before = cpuSeconds(guard.pid) ?? Number.NaN;
    const result = await load(MEASURE_S);
    const after = cpuSeconds(guard.pid) ?? Number.NaN;
    await new Promise((resolve) => setTimeout(resolve, 200));
    let records = 0;
    if (name === 'audit-on')
      records = readFileSync(guard.auditFile!, 'utf8')
        .split('\n')
        .filter((line) => line !== '').length;
    return {
      requestsPerS: result.requests.total / MEASURE_S,
      cpuUsPerRequest: ((after - before) * 1e6) / result.requests.total,
      failures: result.non2xx + result.errors + result.timeouts,
      records,
    };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

/** The record of one query by a caller granted 20,000 graphs, with the default bound and with fullLists: its size in bytes. */
async function wideRecord(full: boolean): Promise<number> {
  const store = await startBenchServer('fixed-upstream');
  const graphs = Array.from({ length: WIDE_GRAPHS }, (_, i) => `<https://bench.example.org/grant/g${i}>`).join(', ');
  const key = 'sg_bench_wide_0123456789abcdef01';
  const guard = await startBenchGuard(`${store.url}/sparql`, 1, {
    policies: `@prefix guard: <https://w3id.org/sparql-guard#> .\n<https://bench.example.org/policies/wide> a guard:Policy ; guard:agent <https://bench.example.org/agents/wide> ; guard:readGraph ${graphs} .\n`,
    apiKeys: [{ agent: 'https://bench.example.org/agents/wide', groups: [], sha256: createHash('sha256').update(key).digest('hex') }],
    audit: full ? { fullLists: true } : {},
  });
  try {
    for (const query of ['SELECT * WHERE { ?s ?p ?o } LIMIT 10', 'SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 10']) {
      const response = await fetch(`${guard.url}/sparql`, {
        method: 'POST',
        headers: { ...HEADERS, authorization: `Bearer ${key}` },
        body: new URLSearchParams({ query }).toString(),
      });
      await response.text();
      if (response.status !== 200) throw new Error(`wide caller answered ${response.status}`);
    }
    // A record is written when its response closes, and batched for up to 20 ms: wait for both.
    let lines: string[] = [];
    for (let waited = 0; lines.length < 2 && waited < 30_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      lines = readFileSync(guard.auditFile!, 'utf8')
        .split('\n')
        .filter((line) => line !== '');
    }
    if (lines.length !== 2) {
      const log = readFileSync(join(dirname(guard.auditFile!), 'guard.log'), 'utf8');
      throw new Error(`expected 2 records, found ${lines.length}; the guard's log:\n${log}`);
    }
    return Math.max(...lines.map((line) => Buffer.byteLength(line) + 1));
  } finally {
    await guard.stop();
    await store.stop();
  }
}

/**
 * The record's own cost in this process: real plans of the templated mix (the planner, a grant of
 * ten graphs as the bench caller's), each request's record built and appended to a file, as
 * user + system CPU per record. Apart from the load test, whose figures move more than this.
 */
function recordCostUs(): { us: number; bytes: number } {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-cost-'));
  const file = join(folder, 'audit.jsonl');
  try {
    const planner = createPlanner({ baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 1000, maxBytes: 1 << 24 } });
    const graphs = Array.from({ length: 10 }, (_, i) => `https://bench.example.org/graphs/g${i}`);
    const policy = { iri: 'https://bench.example.org/policies/bench', graphs, graphTemplates: [], hidePaths: [], graphPrefixes: [] };
    const grant = { policies: [policy.iri], graphs: new Set(graphs), hiddenByGraph: new Map<string, Set<string>>() };
    const inForce = { set: { policies: [policy] } as unknown as PolicySet, policyDigest: 'a'.repeat(64), factsGeneration: 0 };
    const caller = { agent: 'https://bench.example.org/agents/caller', groups: ['bench'], authenticated: true, via: 'api-key' as const };
    const random = seededRandom(5);
    const requests = Array.from({ length: 2000 }, () => {
      const query = BSBM_SHAPES[Math.floor(random() * BSBM_SHAPES.length)]!(random);
      const plan = planner.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant);
      const trace = readTraceContext(undefined);
      return {
        operation: 'query',
        caller,
        grant,
        plan,
        policiesInForce: inForce,
        requestId: trace.spanId,
        trace,
        startedAt: performance.now(),
        storeMs: 1.5,
        agent: caller.agent,
      };
    }) as unknown as FastifyRequest[];
    const audit = createAuditLog(
      { file, queryText: false, maxListed: 64, fullLists: false },
      { stdout: () => undefined, flushStdout: () => undefined, log: () => undefined },
    );
    const end = { status: 200, outcome: 'completed' as const, bytes: 1200, code: undefined };
    for (let i = 0; i < 20_000; i++) audit.record(requests[i % requests.length]!, end);
    const count = 200_000;
    const before = process.cpuUsage();
    for (let i = 0; i < count; i++) audit.record(requests[i % requests.length]!, end);
    const used = process.cpuUsage(before);
    audit.close();
    return { us: (used.user + used.system) / count, bytes: statSync(file).size / (count + 20_000) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    const result =
      args[0] === 'wide'
        ? await wideRecord(args[1] === 'full')
        : args[0] === 'record-cost'
          ? recordCostUs()
          : await scenario(args[0] as Scenario);
    process.stdout.write(JSON.stringify(result));
    return;
  }
  console.log('### Audit records: cost and size\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    `the templated mix of templated-workload.ts (BSBM-style shapes, new constants per request), autocannon, ${CONNECTIONS} connections, ${WARM_UP_S} s warm-up then ${MEASURE_S} s measured, ` +
      `the fixed-answer store, one guard process with audit records to a file (default settings) or none; guard CPU = user + system time per request; ${ROUNDS} rounds in alternating order, medians\n`,
  );
  const runs = new Map<Scenario, Row[]>(SCENARIOS.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? SCENARIOS : [...SCENARIOS].reverse())
      runs.get(name)!.push(runScenario<Row>(import.meta.url, name));
  }
  const median = (name: Scenario, pick: (row: Row) => number) => percentile(Float64Array.from(runs.get(name)!.map(pick)).sort(), 50);
  const off = median('audit-off', (row) => row.cpuUsPerRequest);
  const on = median('audit-on', (row) => row.cpuUsPerRequest);
  console.log('| audit records | req/s | guard CPU us/req | failed | records written | target |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const name of SCENARIOS) {
    const failures = runs.get(name)!.reduce((sum, row) => sum + row.failures, 0);
    const records = runs.get(name)!.reduce((sum, row) => sum + row.records, 0);
    const ratio = on / off;
    const target =
      name === 'audit-on'
        ? `CPU <= ${CPU_TARGET} x off: ${ratio.toFixed(3)} x, ${ratio <= CPU_TARGET ? 'met' : `MISSED by ${((ratio - CPU_TARGET) * 100).toFixed(1)} points`}`
        : '';
    console.log(
      `| ${name === 'audit-on' ? 'on (file)' : 'off'} | ${median(name, (row) => row.requestsPerS).toFixed(0)} | ${median(name, (row) => row.cpuUsPerRequest).toFixed(0)} | ${failures} | ${records} | ${target} |`,
    );
  }
  const cost = runScenario<{ us: number; bytes: number }>(import.meta.url, 'record-cost');
  const share = cost.us / off;
  console.log('');
  console.log(
    `one record in process (real plans of the mix, appended to a file): ${cost.us.toFixed(2)} us CPU, ${cost.bytes.toFixed(0)} bytes; ` +
      `${(share * 100).toFixed(1)} % of the guard's CPU per request with records off above (target <= ${((CPU_TARGET - 1) * 100).toFixed(0)} %: ${share <= CPU_TARGET - 1 ? 'met' : 'MISSED'})`,
  );
  console.log('');
  const bounded = runScenario<number>(import.meta.url, 'wide', 'bounded');
  const full = runScenario<number>(import.meta.url, 'wide', 'full');
  console.log(`| a caller granted ${WIDE_GRAPHS.toLocaleString('en')} graphs, largest of two records | bytes per line | target |`);
  console.log('|---|---:|---|');
  console.log(
    `| default (maxListed 64: a count and a sha256) | ${bounded} | < ${LINE_TARGET_BYTES}: ${bounded < LINE_TARGET_BYTES ? 'met' : 'MISSED'} |`,
  );
  console.log(`| fullLists: true | ${full} | (every IRI, for comparison) |`);
  console.log('');
}

await main();
