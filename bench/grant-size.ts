// Benchmark (i): one caller granted 1 to 20,000 graphs: the guard's CPU per request and the store's time, per store, the same few queries.

import { createHash } from 'node:crypto';
import { cpuSeconds } from './_util/cpu-seconds.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';
import { percentile } from './_util/percentile.js';
import { startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';
import type { Grant } from '../src/policy/policy-set.js';
import { createPlanner } from '../src/sparql/create-planner.js';

/** Grant sizes (graphs of the one caller); BENCH_GRANT_SIZES=1,10,100 for a short run. */
const SIZES = (process.env.BENCH_GRANT_SIZES ?? '1,10,100,1000,5000,20000').split(',').map(Number);
/** Time spent per (store, size, query) on each of direct and through, milliseconds; at least MIN_REQUESTS. */
const CELL_MS = Number(process.env.BENCH_CELL_MS ?? 3000);
const MIN_REQUESTS = 3;
const MAX_REQUESTS = 5000;
/** Most the guard's CPU per request at 5,000 graphs may be, as a multiple of that at 10 (on the stand-in store). */
const CPU_TARGET = 3;

/** The stores: the stand-in (the guard's own cost alone) and the lab stores that are up. */
const STORES: readonly (readonly [name: string, variable: string | undefined])[] = [
  ['stand-in', undefined],
  ['oxigraph', 'RIG_OXIGRAPH_QUERY'],
  ['jena', 'RIG_JENA_QUERY'],
  ['virtuoso', 'RIG_VIRTUOSO_QUERY'],
];

const QUERIES = {
  default: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }',
  named: 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g',
} as const;
type QueryName = keyof typeof QUERIES;

const keyOf = (graphs: number) => `sg_bench_grant_size_${graphs}_0123456789abcdef`;
const graphIri = (i: number) => `https://bench.example.org/grant/g${i}`;

/** One (size, query) on one store. */
interface Cell {
  graphs: number;
  query: QueryName;
  /** The forwarded query's form body, bytes. */
  bodyBytes: number;
  /** 'ok', or the status and first words of a refusal (direct and through must agree). */
  outcome: string;
  directP50Ms?: number;
  throughP50Ms?: number;
  guardCpuUsPerRequest?: number;
  requests: number;
}

/** Policies: one caller per size, each with its own key, granted that many graphs. */
function policiesOf(sizes: readonly number[]): { policies: string; apiKeys: { agent: string; groups: string[]; sha256: string }[] } {
  let policies = '@prefix guard: <https://w3id.org/sparql-guard#> .\n';
  const apiKeys = [];
  for (const size of sizes) {
    const agent = `https://bench.example.org/agents/granted-${size}`;
    const graphs = Array.from({ length: size }, (_, i) => `<${graphIri(i)}>`).join(', ');
    policies += `<https://bench.example.org/policies/grant-${size}> a guard:Policy ; guard:agent <${agent}> ; guard:readGraph ${graphs} .\n`;
    apiKeys.push({ agent, groups: [], sha256: createHash('sha256').update(keyOf(size)).digest('hex') });
  }
  return { policies, apiKeys };
}

async function post(url: string, body: string, key?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/sparql-results+json',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body,
  });
  return { status: response.status, text: await response.text() };
}

/** The bindings of a SPARQL JSON answer in a canonical order, to compare answers. */
function canonical(text: string): string {
  try {
    const json = JSON.parse(text) as { results?: { bindings: unknown[] }; boolean?: boolean };
    return JSON.stringify(json.boolean ?? (json.results?.bindings ?? []).map((row) => JSON.stringify(row)).sort());
  } catch {
    return text;
  }
}

/** Sends `body` again and again for CELL_MS (at least MIN_REQUESTS times): client-side latency per request. */
async function repeat(url: string, body: string, key?: string): Promise<number[]> {
  const times: number[] = [];
  const until = performance.now() + CELL_MS;
  while (times.length < MIN_REQUESTS || (performance.now() < until && times.length < MAX_REQUESTS)) {
    const started = performance.now();
    await post(url, body, key);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

/** One store in a fresh process: a guard in front of it, each size and query direct and through. */
async function scenario(store: string, queryUrl: string | undefined): Promise<Cell[]> {
  const servers: BenchServer[] = [];
  try {
    let upstream = queryUrl;
    if (upstream === undefined) {
      const standIn = await startBenchServer('fixed-upstream');
      servers.push(standIn);
      upstream = `${standIn.url}/sparql`;
    }
    const guard = await startBenchGuard(upstream, 1, { ...policiesOf(SIZES), explain: true });
    servers.push(guard);
    const endpoint = `${guard.url}/sparql`;
    const cells: Cell[] = [];
    for (const graphs of SIZES) {
      for (const [name, text] of Object.entries(QUERIES) as [QueryName, string][]) {
        const key = keyOf(graphs);
        const callerBody = new URLSearchParams({ query: text }).toString();
        const explained = await fetch(`${endpoint}/explain?query=${encodeURIComponent(text)}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        const forwarded = ((await explained.json()) as { query: string }).query;
        const forwardedBody = new URLSearchParams({ query: forwarded }).toString();
        // Check before timing: through the guard, the store's own answer to the forwarded text.
        const direct = await post(upstream, forwardedBody);
        const through = await post(endpoint, callerBody, key);
        const cell: Cell = { graphs, query: name, bodyBytes: Buffer.byteLength(forwardedBody), outcome: 'ok', requests: 0 };
        if (direct.status !== 200) {
          cell.outcome = `store ${direct.status}, guard ${through.status}: ${through.text.trim().slice(0, 60)}`;
          // The store's status passes through, in the guard's one-line shape.
          if (through.status !== direct.status || !/^the store (refused|answered)/.test(through.text))
            throw new Error(`${store} ${graphs} ${name}: the store refused (${direct.status}) but the guard answered ${through.status}`);
          cells.push(cell);
          continue;
        }
        if (through.status !== 200 || canonical(through.text) !== canonical(direct.text)) {
          throw new Error(`${store} ${graphs} ${name}: the answer through the guard differs (status ${through.status})`);
        }
        const directTimes = await repeat(upstream, forwardedBody);
        const before = cpuSeconds(guard.pid);
        const throughTimes = await repeat(endpoint, callerBody, key);
        const after = cpuSeconds(guard.pid);
        if (before === undefined || after === undefined) throw new Error('no /proc: this benchmark needs Linux');
        cell.directP50Ms = percentile(directTimes, 50);
        cell.throughP50Ms = percentile(throughTimes, 50);
        cell.guardCpuUsPerRequest = ((after - before) * 1e6) / throughTimes.length;
        cell.requests = throughTimes.length;
        cells.push(cell);
      }
    }
    return cells;
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

/** Planning alone, in this process: per size and query, CPU per plan (best of ROUNDS rounds of PLANS plans). */
interface PlanCost {
  graphs: number;
  query: QueryName;
  cpuUsPerPlan: number;
}
const ROUNDS = 7;
const PLANS = 300;

function planScenario(): PlanCost[] {
  const planner = createPlanner({
    baseIri: 'http://localhost/',
    maxQueryDepth: 64,
    planCache: { maxEntries: 1000, maxBytes: 64 * 1024 * 1024 },
    allowedFunctions: [],
  });
  const costs: PlanCost[] = [];
  for (const graphs of SIZES) {
    // One grant object per caller, as the policy holder hands it out again.
    const grant: Grant = {
      policies: ['https://bench.example.org/policies/grant'],
      graphs: new Set(Array.from({ length: graphs }, (_, i) => graphIri(i))),
      hiddenByGraph: new Map(),
    };
    for (const [name, query] of Object.entries(QUERIES) as [QueryName, string][]) {
      const request = { query, defaultGraphs: [], namedGraphs: [] };
      const first = planner.plan(request, grant);
      if ((first.query.match(/FROM (NAMED )?<https/g) ?? []).length !== graphs)
        throw new Error(`${graphs} ${name}: the plan does not list the grant once`);
      for (let i = 0; i < 50; i += 1) planner.plan(request, grant);
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < ROUNDS; round += 1) {
        const started = process.cpuUsage();
        for (let i = 0; i < PLANS; i += 1) planner.plan(request, grant);
        const used = process.cpuUsage(started);
        best = Math.min(best, (used.user + used.system) / PLANS);
      }
      costs.push({ graphs, query: name, cpuUsPerPlan: best });
    }
  }
  return costs;
}

const fixed = (value: number | undefined, digits: number) => (value === undefined ? '-' : value.toFixed(digits));

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    const [store = '', queryUrl = ''] = args;
    if (store === 'planner') {
      process.stdout.write(JSON.stringify(planScenario()));
      return;
    }
    process.stdout.write(JSON.stringify(await scenario(store, queryUrl === '' ? undefined : queryUrl)));
    return;
  }
  process.stdout.write(`### (i) grant size\n\nmachine: ${describeMachine()}\nload at start: ${describeLoad()}\n\n`);
  process.stdout.write(
    `One caller granted N graphs (an API key per N), two queries: \`default\` = \`${QUERIES.default}\`, \`named\` = \`${QUERIES.named}\`. ` +
      `Direct = the guard's forwarded text sent to the store by the client; through = the caller's query through \`sparql-guard serve\` (1 worker). ` +
      `p50 of sequential requests for ${CELL_MS / 1000} s each (at least ${MIN_REQUESTS}); guard CPU per request from /proc over the through requests.\n\n`,
  );
  const plans = runScenario<PlanCost[]>(import.meta.url, 'planner');
  process.stdout.write(`#### planning alone (in process: grant -> forwarded text and form body, best of ${ROUNDS} x ${PLANS} plans)\n\n`);
  process.stdout.write(`${tableHeader(['graphs', 'query', 'CPU / plan'], 'rlr')}\n`);
  for (const cost of plans) {
    process.stdout.write(`${tableRow([cost.graphs.toLocaleString('en-US'), cost.query, `${cost.cpuUsPerPlan.toFixed(1)} us`])}\n`);
  }
  process.stdout.write('\n');
  const standIn: Cell[] = [];
  for (const [store, variable] of STORES) {
    const queryUrl = variable === undefined ? '' : (process.env[variable] ?? '');
    if (variable !== undefined && queryUrl === '') {
      process.stdout.write(`${store}: skipped (${variable} is not set: the lab is not up)\n\n`);
      continue;
    }
    const cells = runScenario<Cell[]>(import.meta.url, store, queryUrl);
    if (store === 'stand-in') standIn.push(...cells);
    process.stdout.write(`#### ${store}\n\n`);
    process.stdout.write(
      `${tableHeader(['graphs', 'query', 'forwarded body', 'store p50 (direct)', 'through p50', 'guard CPU / request', 'requests', 'outcome'], 'rlrrrrrl')}\n`,
    );
    for (const cell of cells) {
      process.stdout.write(
        `${tableRow([
          cell.graphs.toLocaleString('en-US'),
          cell.query,
          `${(cell.bodyBytes / 1024).toFixed(1)} KiB`,
          `${fixed(cell.directP50Ms, 2)} ms`,
          `${fixed(cell.throughP50Ms, 2)} ms`,
          `${fixed(cell.guardCpuUsPerRequest, 0)} us`,
          cell.requests,
          cell.outcome,
        ])}\n`,
      );
    }
    process.stdout.write('\n');
  }
  for (const query of Object.keys(QUERIES) as QueryName[]) {
    const at = (graphs: number) => standIn.find((cell) => cell.graphs === graphs && cell.query === query)?.guardCpuUsPerRequest;
    const small = at(10);
    const large = at(5000);
    if (small === undefined || large === undefined) continue;
    const ratio = large / small;
    process.stdout.write(
      `guard CPU per request, 5,000 graphs vs 10, \`${query}\` (stand-in store): ${ratio.toFixed(2)} x (${large.toFixed(0)} vs ${small.toFixed(0)} us), target <= ${CPU_TARGET} x: ${ratio <= CPU_TARGET ? 'met' : 'missed'}\n`,
    );
  }
  process.stdout.write('\n');
}

await main();
