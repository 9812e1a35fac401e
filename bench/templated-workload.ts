// Benchmark: an application's traffic (BSBM-style shapes, new constants per request) beside one repeated query, plain proxy vs sparql-guard; plan-cache hit rate; shape-key cost.

import autocannon from 'autocannon';
import { createPlanner } from '../src/sparql/create-planner.js';
import { lexQueryShape } from '../src/sparql/lex-query-shape.js';
import { prepareQuery } from '../src/sparql/prepare-query.js';
import { applyGrant } from '../src/sparql/apply-grant.js';
import { compileFunctionAllowList } from '../src/sparql/check-function-calls.js';
import { BSBM_SHAPES, seededRandom } from './bsbm-mix.js';
import { cpuSeconds } from './_util/cpu-seconds.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { percentile } from './_util/percentile.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { BENCH_KEY, startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';

const CONNECTIONS = 32;
/** Each scenario runs this many times, in alternating order, each in a fresh process; the median of each figure is shown. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP_S = 3;
const MEASURE_S = 8;
/** Targets of the plan-shape work, printed beside the figures. */
const TEMPLATED_CPU_VS_REPEATED = 1.2;
const TEMPLATED_RPS_VS_PROXY = 0.8;
const REPEATED_CPU_VS_PROXY = 1.25;
const SHAPE_KEY_P50_US = 5;
const HIT_RATE = 0.99;

type Scenario = 'proxy-repeated' | 'proxy-templated' | 'guard-repeated' | 'guard-templated';
const SCENARIOS: readonly Scenario[] = ['proxy-repeated', 'guard-repeated', 'proxy-templated', 'guard-templated'];
const LABELS: Record<Scenario, string> = {
  'proxy-repeated': 'plain Node proxy, one query repeated',
  'guard-repeated': 'sparql-guard, one query repeated',
  'proxy-templated': 'plain Node proxy, templated mix',
  'guard-templated': 'sparql-guard, templated mix',
};

const HEADERS = {
  'content-type': 'application/x-www-form-urlencoded',
  accept: 'application/sparql-results+json',
  authorization: `Bearer ${BENCH_KEY}`,
};
const REPEATED = BSBM_SHAPES[0]!(seededRandom(1));

interface Row {
  scenario: Scenario;
  requestsPerS: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  cpuUsPerRequest: number | undefined;
}

/** The next request body: the repeated query, or a random shape with random constants. */
function bodies(templated: boolean, seed: number): () => string {
  const random = seededRandom(seed);
  const repeated = new URLSearchParams({ query: REPEATED }).toString();
  return templated
    ? () => new URLSearchParams({ query: BSBM_SHAPES[Math.floor(random() * BSBM_SHAPES.length)]!(random) }).toString()
    : () => repeated;
}

async function load(target: string, templated: boolean, seconds: number, seed: number, onLatency?: (ms: number) => void) {
  const next = bodies(templated, seed);
  const instance = autocannon({
    url: target,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST', headers: HEADERS, setupRequest: (request) => ({ ...request, body: next() }) }],
  });
  if (onLatency !== undefined) {
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status === 200) onLatency(ms);
    });
  }
  return instance;
}

async function scenario(name: Scenario): Promise<Row> {
  const store = await startBenchServer('fixed-upstream');
  const servers: BenchServer[] = [store];
  try {
    const front = name.startsWith('proxy')
      ? await startBenchServer('pass-through-proxy', [`${store.url}/sparql`])
      : await startBenchGuard(`${store.url}/sparql`, 1);
    servers.push(front);
    const target = `${front.url}/sparql`;
    const templated = name.endsWith('templated');
    // Check before timing: every shape gets through with 200.
    for (const shape of BSBM_SHAPES) {
      const response = await fetch(target, {
        method: 'POST',
        headers: HEADERS,
        body: new URLSearchParams({ query: shape(seededRandom(7)) }).toString(),
      });
      await response.text();
      if (response.status !== 200) throw new Error(`${name}: a shape was answered ${response.status}`);
    }
    await load(target, templated, WARM_UP_S, 11);
    const cpuBefore = cpuSeconds(front.pid);
    const latencies: number[] = [];
    const result = await load(target, templated, MEASURE_S, 12, (ms) => latencies.push(ms));
    const cpuAfter = cpuSeconds(front.pid);
    const sorted = Float64Array.from(latencies).sort();
    return {
      scenario: name,
      requestsPerS: result.requests.total / MEASURE_S,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      failures: result.non2xx + result.errors + result.timeouts,
      cpuUsPerRequest:
        cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1e6) / result.requests.total,
    };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

/** Each figure's median over the runs of one scenario (failures summed). */
function medianRow(rows: readonly Row[]): Row {
  const median = (pick: (row: Row) => number | undefined): number => {
    const values = Float64Array.from(rows.map((row) => pick(row) ?? Number.NaN)).sort();
    return percentile(values, 50);
  };
  return {
    scenario: rows[0]!.scenario,
    requestsPerS: median((row) => row.requestsPerS),
    p50Ms: median((row) => row.p50Ms),
    p99Ms: median((row) => row.p99Ms),
    failures: rows.reduce((sum, row) => sum + row.failures, 0),
    cpuUsPerRequest: median((row) => row.cpuUsPerRequest),
  };
}

/** The planner's hit rate on the mix after warm-up: plans served without preparing. */
function hitRate(): { rate: number; shapes: number } {
  let prepares = 0;
  const planner = createPlanner(
    { baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 1000, maxBytes: 16 * 1024 * 1024 } },
    (request, settings) => {
      prepares++;
      return prepareQuery(request, settings);
    },
  );
  const grant = { policies: ['urn:bench'], graphs: new Set(['https://bench.example.org/graphs/g0']), hiddenByGraph: new Map() };
  const next = bodies(true, 21);
  const plan = () => planner.plan({ query: new URLSearchParams(next()).get('query') ?? '', defaultGraphs: [], namedGraphs: [] }, grant);
  for (let i = 0; i < 500; i++) plan();
  const warm = prepares;
  const measured = 20_000;
  for (let i = 0; i < measured; i++) plan();
  return { rate: 1 - (prepares - warm) / measured, shapes: warm };
}

function timeUs(run: () => unknown, iterations: number): Float64Array {
  for (let i = 0; i < Math.min(2000, iterations); i++) run();
  const times = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    run();
    times[i] = Number(process.hrtime.bigint() - start) / 1000;
  }
  return times.sort();
}

/** A query of `patterns` triple patterns with constants in most of them; another `salt`, other constants in the same shape. */
function sized(patterns: number, salt = 0): string {
  const lines = Array.from({ length: patterns }, (_, i) =>
    i % 3 === 0
      ? `?s ex:p${i} "value ${i + salt}"@en .`
      : i % 3 === 1
        ? `?s ex:q${i} ex:o${i}${salt === 0 ? '' : 'x' + salt} .`
        : `?s ex:r${i} ?v${i} . FILTER(?v${i} > ${i + salt})`,
  );
  return `PREFIX ex: <https://bench.example.org/>\nSELECT * WHERE {\n  ${lines.join('\n  ')}\n} LIMIT 10`;
}

function micro(): string[] {
  const lines: string[] = [];
  lines.push('| query | bytes | constants | shape key (one lexical pass) p50 us | p99 us | target |');
  lines.push('|---|---:|---:|---:|---:|---|');
  for (const [label, patterns] of [
    ['small (3 patterns)', 3],
    ['medium (30 patterns)', 30],
    ['large (300 patterns)', 300],
  ] as const) {
    // An application's next query: the same shape with other constants, each a new string as a server reads it.
    const texts = Array.from({ length: 256 }, (_, i) => sized(patterns, i === 0 ? 0 : 1000 + 7 * i));
    const first = lexQueryShape(texts[0]!, 'http://localhost/');
    if (first === undefined) throw new Error(`the ${label} query has no shape`);
    for (const other of texts) {
      if (lexQueryShape(other, 'http://localhost/')?.key !== first.key) throw new Error(`a ${label} query has another shape`);
    }
    const iterations = patterns === 300 ? 2000 : 20_000;
    let next = 0;
    const lexed = timeUs(() => lexQueryShape(texts[next++ & 255]!, 'http://localhost/'), iterations);
    const p50 = percentile(lexed, 50);
    const target =
      patterns === 30
        ? `p50 <= ${SHAPE_KEY_P50_US} us: ${p50 <= SHAPE_KEY_P50_US ? 'met' : `MISSED by ${(p50 - SHAPE_KEY_P50_US).toFixed(2)} us`}`
        : '';
    lines.push(
      `| ${label} | ${texts[0]!.length} | ${first.refs.length} | ${p50.toFixed(2)} | ${percentile(lexed, 99).toFixed(2)} | ${target} |`,
    );
  }
  // For scale: what reading the medium text once costs on this machine now (no lexing at all).
  const medium = sized(30);
  let sink = 0;
  const read = timeUs(() => {
    for (let i = 0; i < medium.length; i++) sink = (sink + medium.charCodeAt(i)) | 0;
  }, 20_000);
  lines.push(
    `| reading the medium text once (a charCodeAt loop, for scale) | ${medium.length} | | ${percentile(read, 50).toFixed(2)} | ${percentile(read, 99).toFixed(2)} | |`,
  );
  // Cold plans: a first sight of a shape through the planner vs preparing the exact text (the plan before shapes).
  const grant = { policies: ['urn:bench'], graphs: new Set(['https://bench.example.org/graphs/g0']), hiddenByGraph: new Map() };
  const settings = { baseIri: 'http://localhost/', maxQueryDepth: 64, allowedFunctions: compileFunctionAllowList([]) };
  const options = { baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 1000, maxBytes: 1 << 24 } };
  lines.push('');
  lines.push('| cold plan, medium query | p50 us | p99 us | target |');
  lines.push('|---|---:|---:|---|');
  const text = sized(30);
  const request = { query: text, defaultGraphs: [], namedGraphs: [] };
  const exact = timeUs(() => applyGrant(prepareQuery(request, settings), grant), 300);
  const shaped = timeUs(() => createPlanner(options).plan(request, grant), 300);
  const ratio = percentile(shaped, 50) / percentile(exact, 50);
  lines.push(`| exact text (prepare, no shapes) | ${percentile(exact, 50).toFixed(0)} | ${percentile(exact, 99).toFixed(0)} | |`);
  lines.push(
    `| first sight of a shape | ${percentile(shaped, 50).toFixed(0)} | ${percentile(shaped, 99).toFixed(0)} | no slower: ${ratio <= 1 ? 'met' : `MISSED by ${((ratio - 1) * 100).toFixed(0)} %`} (${ratio.toFixed(2)} x) |`,
  );
  return lines;
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(await scenario(args[0] as Scenario)));
    return;
  }
  console.log("### Templated workload: an application's traffic\n");
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    `${BSBM_SHAPES.length} query shapes in the style of the BSBM explore mix, each request a random shape with random product, feature, type, vendor-country IRIs, numbers, words and dates; ` +
      `beside one of them repeated. autocannon, ${CONNECTIONS} connections, ${WARM_UP_S} s warm-up then ${MEASURE_S} s measured, API key, POST form; ` +
      'the store is the fixed-answer Node server; each scenario in a fresh process; front CPU = user + system time of the proxy or guard process per request; ' +
      `${ROUNDS} rounds, the scenarios in turn and in reverse order in every other round, each figure the median of its runs (one run after another on one machine varies by up to a factor of 1.5)\n`,
  );
  const runs = new Map<Scenario, Row[]>(SCENARIOS.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? SCENARIOS : [...SCENARIOS].reverse())
      runs.get(name)!.push(runScenario<Row>(import.meta.url, name));
  }
  const rows = new Map<Scenario, Row>(SCENARIOS.map((name) => [name, medianRow(runs.get(name)!)]));
  const cpu = (name: Scenario) => rows.get(name)!.cpuUsPerRequest ?? Number.NaN;
  console.log('| front, workload | req/s | p50 ms | p99 ms | front CPU us/req | failed | target |');
  console.log('|---|---:|---:|---:|---:|---:|---|');
  for (const [name, row] of rows) {
    let target = '';
    if (name === 'guard-repeated') {
      const ratio = cpu('guard-repeated') / cpu('proxy-repeated');
      target = `CPU <= ${REPEATED_CPU_VS_PROXY} x proxy: ${ratio.toFixed(2)} x, ${ratio <= REPEATED_CPU_VS_PROXY ? 'met' : `MISSED by ${(ratio - REPEATED_CPU_VS_PROXY).toFixed(2)}`}`;
    }
    if (name === 'guard-templated') {
      const cpuRatio = cpu('guard-templated') / cpu('guard-repeated');
      const rps = row.requestsPerS / rows.get('proxy-templated')!.requestsPerS;
      target =
        `CPU <= ${TEMPLATED_CPU_VS_REPEATED} x repeated: ${cpuRatio.toFixed(2)} x, ${cpuRatio <= TEMPLATED_CPU_VS_REPEATED ? 'met' : `MISSED by ${(cpuRatio - TEMPLATED_CPU_VS_REPEATED).toFixed(2)}`}; ` +
        `req/s >= ${TEMPLATED_RPS_VS_PROXY} x proxy: ${rps.toFixed(2)} x, ${rps >= TEMPLATED_RPS_VS_PROXY ? 'met' : `MISSED by ${(TEMPLATED_RPS_VS_PROXY - rps).toFixed(2)}`}`;
    }
    console.log(
      `| ${LABELS[name]} | ${row.requestsPerS.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.cpuUsPerRequest?.toFixed(0) ?? ''} | ${row.failures} | ${target} |`,
    );
  }
  const { rate, shapes } = hitRate();
  console.log('');
  console.log(
    `plan-cache hit rate on the mix after warm-up (20,000 plans in process, ${shapes} prepares during 500 warm-up plans): ${(rate * 100).toFixed(2)} % (target >= ${HIT_RATE * 100} %: ${rate >= HIT_RATE ? 'met' : `MISSED by ${((HIT_RATE - rate) * 100).toFixed(2)} points`})\n`,
  );
  for (const line of micro()) console.log(line);
  console.log('');
}

await main();
