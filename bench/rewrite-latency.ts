// Benchmark (a): planning latency of a cold plan (parse, checks, serialisation) vs a plan-cache hit, for three query sizes.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedStore } from '../src/embedded/start-embedded-store.js';
import type { QueryRequest } from '../src/sparql/query-request.js';
import type { Grant } from '../src/policy/policy-set.js';
import { createPlanner } from '../src/sparql/create-planner.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { percentile } from './_util/percentile.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';

const EX = 'https://bench.example.org/';
const GRANTED = `${EX}graphs/granted`;
const OTHER = `${EX}graphs/other`;
/** Target: a cache hit of the medium query plans in at most 10 us (p50). */
const HIT_P50_TARGET_US = 10;

type Size = 'small' | 'medium' | 'large';
const SIZES: readonly Size[] = ['small', 'medium', 'large'];

/** Samples per path, each capped by a time budget so the whole bench stays short on a slow machine. */
const COLD_SAMPLES = 2_000;
const HIT_SAMPLES = 200_000;
const BUDGET_MS = 3_000;
const MIN_SAMPLES = 20;

/** The caller's grant: the graph with the data, the one without stays out, plus nine empty graphs. */
const GRANT: Grant = {
  policies: [`${EX}policies/bench`],
  graphs: new Set([GRANTED, ...Array.from({ length: 9 }, (_, i) => `${EX}graphs/empty-${i}`)]),
  hiddenByGraph: new Map(),
};

const patterns = (from: number, to: number): string =>
  Array.from({ length: to - from }, (_, k) => `?s ex:p${from + k} ?o${from + k} .`).join('\n  ');

/** small = 5 triple patterns; medium = 30 with two OPTIONALs and a FILTER; large = 300. */
function queryText(size: Size): string {
  const prologue = `PREFIX ex: <${EX}>\n`;
  if (size === 'small') return `${prologue}SELECT ?s ?o0 ?o1 ?o2 ?o3 ?o4 WHERE {\n  ${patterns(0, 5)}\n}`;
  if (size === 'large') return `${prologue}SELECT * WHERE {\n  ${patterns(0, 300)}\n}`;
  return `${prologue}SELECT * WHERE {
  ${patterns(0, 25)}
  OPTIONAL { ?s ex:missing ?m . ?m ex:p1 ?x . }
  OPTIONAL { ${patterns(25, 28)} }
  FILTER (STRSTARTS(?o0, "granted") && ?o1 != "x" && (?o2 = "granted-2" || BOUND(?m)))
}`;
}

/** One subject with 300 properties in the granted graph, and again with other values in a graph not granted. */
function dataTrig(): string {
  const graph = (iri: string, value: string) =>
    `<${iri}> {\n${Array.from({ length: 300 }, (_, i) => `  ex:s1 ex:p${i} "${value}-${i}" .`).join('\n')}\n}\n`;
  return `@prefix ex: <${EX}> .\n${graph(GRANTED, 'granted')}${graph(OTHER, 'other')}`;
}

interface Row {
  size: Size;
  patterns: number;
  queryBytes: number;
  planBytes: number;
  coldP50Us: number;
  coldP99Us: number;
  hitP50Us: number;
  hitP99Us: number;
  coldSamples: number;
  hitSamples: number;
}

/**
 * Checks the plan before timing it: a cache hit gives the very text of a cold plan,
 * and run on real Oxigraph that text finds exactly the one granted solution (a plan
 * that let the other graph in would give 2^n solutions).
 */
async function checkPlan(size: Size, request: QueryRequest): Promise<string> {
  const cold = createPlanner({ baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 0, maxBytes: 1 } });
  const cached = createPlanner({ baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 10, maxBytes: 1 << 24 } });
  const expected = cold.plan(request, GRANT).query;
  for (let i = 0; i < 3; i += 1) {
    if (cached.plan(request, GRANT).query !== expected) throw new Error(`${size}: a cache hit differs from the cold plan`);
  }
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-'));
  const store = await startEmbeddedStore({ dataFiles: [await writeData(folder)], log: () => {} });
  try {
    const response = await fetch(store.queryUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
      body: new URLSearchParams({ query: expected }),
    });
    const json = (await response.json()) as { results: { bindings: Record<string, { value: string }>[] } };
    const rows = json.results.bindings;
    const values = rows.flatMap((row) =>
      Object.entries(row)
        .filter(([name]) => name.startsWith('o'))
        .map(([, term]) => term.value),
    );
    if (response.status !== 200 || rows.length !== 1 || values.some((value) => !value.startsWith('granted-'))) {
      throw new Error(`${size}: the plan does not give exactly the granted solution (${rows.length} rows)`);
    }
  } finally {
    await store.stop();
    await rm(folder, { recursive: true, force: true });
  }
  return expected;

  async function writeData(dir: string): Promise<string> {
    const file = join(dir, 'data.trig');
    await writeFile(file, dataTrig());
    return file;
  }
}

/** Times up to `samples` calls one by one (at least MIN_SAMPLES, then until BUDGET_MS); microseconds, ascending. */
function time(samples: number, call: () => unknown): Float64Array {
  const out = new Float64Array(samples);
  const deadline = performance.now() + BUDGET_MS;
  let taken = 0;
  while (taken < samples && (taken < MIN_SAMPLES || performance.now() < deadline)) {
    const started = process.hrtime.bigint();
    call();
    out[taken] = Number(process.hrtime.bigint() - started) / 1_000;
    taken += 1;
  }
  return out.subarray(0, taken).sort();
}

/** One size in this (fresh) process. */
async function scenario(size: Size): Promise<Row> {
  const request: QueryRequest = { query: queryText(size), defaultGraphs: [], namedGraphs: [] };
  const plan = await checkPlan(size, request);
  const options = { baseIri: 'http://localhost/', maxQueryDepth: 64 };
  const uncached = createPlanner({ ...options, planCache: { maxEntries: 0, maxBytes: 1 } });
  const cached = createPlanner({ ...options, planCache: { maxEntries: 1_000, maxBytes: 16 * 2 ** 20 } });
  // A server reads every request's text into a new string, whose hash (the cache key's) V8 has
  // not computed yet. Reusing one request object would let the optimiser fold the key into a
  // constant with a cached hash, and time a look-up no server ever does: rotate fresh copies.
  const copies = Array.from({ length: 1_000 }, (): QueryRequest => ({ ...request, query: Buffer.from(request.query).toString() }));
  let next = 0;
  const fresh = (): QueryRequest => copies[(next = (next + 1) % copies.length)]!;
  // Warm the JIT on both paths before sampling, as a server that has run for a while would be.
  for (let i = 0; i < 10; i += 1) uncached.plan(fresh(), GRANT);
  time(HIT_SAMPLES / 10, () => cached.plan(fresh(), GRANT));
  const cold = time(COLD_SAMPLES, () => uncached.plan(fresh(), GRANT));
  const hit = time(HIT_SAMPLES, () => cached.plan(fresh(), GRANT));
  return {
    size,
    patterns: size === 'small' ? 5 : size === 'medium' ? 30 : 300,
    queryBytes: Buffer.byteLength(request.query),
    planBytes: Buffer.byteLength(plan),
    coldP50Us: percentile(cold, 50),
    coldP99Us: percentile(cold, 99),
    hitP50Us: percentile(hit, 50),
    hitP99Us: percentile(hit, 99),
    coldSamples: cold.length,
    hitSamples: hit.length,
  };
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(await scenario(args[0] as Size)));
    return;
  }
  console.log('### (a) Rewrite latency: cold plan vs plan-cache hit\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    'each size in a fresh process; one planner call per sample (query text + protocol dataset -> Plan for a caller granted 10 graphs), after JIT warm-up\n',
  );
  console.log(
    '| query | patterns | query bytes | plan bytes | cold p50 us | cold p99 us | hit p50 us | hit p99 us | cold/hit (p50) | samples cold / hit | target |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const size of SIZES) {
    const row = runScenario<Row>(import.meta.url, size);
    const us = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(0));
    const target =
      size === 'medium'
        ? `hit p50 <= ${HIT_P50_TARGET_US} us: ${row.hitP50Us <= HIT_P50_TARGET_US ? 'met' : `MISSED by ${us(row.hitP50Us - HIT_P50_TARGET_US)} us`}`
        : '';
    console.log(
      `| ${row.size} | ${row.patterns} | ${row.queryBytes} | ${row.planBytes} | ${us(row.coldP50Us)} | ${us(row.coldP99Us)} | ${us(row.hitP50Us)} | ${us(row.hitP99Us)} | ${(row.coldP50Us / row.hitP50Us).toFixed(0)}x | ${row.coldSamples} / ${row.hitSamples} | ${target} |`,
    );
  }
  console.log('');
}

await main();
