// Benchmark (k): the hand-written undici dispatch handler of upstream/ beside undici's own request() and stream(), as CPU per query sent to a store, set against the guard's CPU per request.

import { Writable } from 'node:stream';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { createUpstream, type AbortLike } from '../src/upstream/create-upstream.js';
import { encodeQueryForm } from '../src/url-encoded-form.js';
import { cpuSeconds } from './_util/cpu-seconds.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { BENCH_KEY, startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';

/** Least share of the guard's CPU per request a hand-written piece must save to stay. */
const KEEP_TARGET = 0.03;
/** Queries in flight at once, as the guard has under load. */
const IN_FLIGHT = 8;
const WARM_UP_MS = 1_000;
const MEASURE_MS = 3_000;
/** ABBA order per alternative pair, so a drift of the machine's load weighs on each alike. */
const ORDER = ['createUpstream', 'undici request()', 'undici stream()', 'undici stream()', 'undici request()', 'createUpstream'] as const;
/** The guard's own CPU per request: a fixed rate below what one worker sustains. */
const GUARD_RATE_PER_S = 300;
const GUARD_CONNECTIONS = 8;
const GUARD_WARM_UP_S = 2;
const GUARD_MEASURE_S = 6;

const QUERY =
  'PREFIX ex: <https://bench.example.org/>\nSELECT ?s ?o WHERE { ?s ex:p0 ?o . OPTIONAL { ?s ex:label ?l } FILTER (?o != "x") }';
const ACCEPT = 'application/sparql-results+json';

type Alternative = (typeof ORDER)[number];

interface Run {
  cpuUsPerQuery: number;
  queries: number;
}

/** A signal that never fires, of the shape the guard passes (its client-gone object, not an AbortController). */
const NEVER: AbortLike = { aborted: false, addEventListener: () => undefined, removeEventListener: () => undefined };

/**
 * Each alternative as the guard would use it: the same pool options, request and headers, the
 * caller's signal, and the whole body consumed (taken whole when it arrived with its headers, as
 * the guard sends a small answer; else streamed). Resolves with the body's length.
 */
function createSender(alternative: Alternative, storeUrl: string): { send: () => Promise<number>; close: () => Promise<void> } {
  const url = new URL(storeUrl);
  const options = {
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
    connectTimeout: 60_000,
    keepAliveTimeout: 4_000,
    keepAliveTimeoutThreshold: 2_000,
  };
  if (alternative === 'createUpstream') {
    const upstream = createUpstream({ url: storeUrl, headers: {}, timeoutMs: 60_000 });
    return {
      send: async () => {
        const answer = await upstream.send({ query: QUERY }, { accept: ACCEPT, signal: NEVER });
        const whole = answer.takeWhole();
        if (whole !== undefined) return whole.length;
        let bytes = 0;
        for await (const chunk of answer.body as AsyncIterable<Buffer>) bytes += chunk.length;
        return bytes;
      },
      close: () => upstream.close(),
    };
  }
  const pool = new Pool(url.origin, options);
  const headers = {
    'user-agent': 'sparql-guard/bench',
    'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
    accept: ACCEPT,
  };
  const request = { path: `${url.pathname}${url.search}`, method: 'POST' as const, headers };
  if (alternative === 'undici request()') {
    return {
      send: async () => {
        const answer = await pool.request({ ...request, body: encodeQueryForm(QUERY), signal: NEVER as never });
        let bytes = 0;
        for await (const chunk of answer.body as AsyncIterable<Buffer>) bytes += chunk.length;
        return bytes;
      },
      close: () => pool.close(),
    };
  }
  return {
    send: async () => {
      let bytes = 0;
      await pool.stream(
        { ...request, body: encodeQueryForm(QUERY), signal: NEVER as never },
        () =>
          new Writable({
            write(chunk: Buffer, _encoding, done) {
              bytes += chunk.length;
              done();
            },
          }),
      );
      return bytes;
    },
    close: () => pool.close(),
  };
}

async function clientScenario(alternative: Alternative): Promise<Run> {
  const store = await startBenchServer('fixed-upstream');
  const sender = createSender(alternative, `${store.url}/sparql`);
  try {
    // Check before timing: the bytes received are the store's answer, whole.
    const expected = Buffer.byteLength(
      await (await fetch(`${store.url}/sparql`, { method: 'POST', body: new URLSearchParams({ query: QUERY }) })).text(),
    );
    const got = await sender.send();
    if (got !== expected) throw new Error(`${alternative}: ${got} bytes received, the store sent ${expected}`);
    const loop = async (untilMs: number): Promise<number> => {
      let queries = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (performance.now() < untilMs) {
            await sender.send();
            queries += 1;
          }
        }),
      );
      return queries;
    };
    await loop(performance.now() + WARM_UP_MS);
    const before = process.cpuUsage();
    const queries = await loop(performance.now() + MEASURE_MS);
    const used = process.cpuUsage(before);
    return { cpuUsPerQuery: (used.user + used.system) / queries, queries };
  } finally {
    await sender.close();
    await store.stop();
  }
}

async function guardScenario(): Promise<Run> {
  const servers: BenchServer[] = [];
  try {
    const store = await startBenchServer('fixed-upstream');
    servers.push(store);
    const guard = await startBenchGuard(`${store.url}/sparql`, 1);
    servers.push(guard);
    const request = {
      method: 'POST' as const,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: ACCEPT, authorization: `Bearer ${BENCH_KEY}` },
      body: new URLSearchParams({ query: QUERY }).toString(),
    };
    const check = await fetch(`${guard.url}/sparql`, request);
    if (check.status !== 200) throw new Error(`the guard answered ${check.status}`);
    await check.text();
    const target = { url: `${guard.url}/sparql`, connections: GUARD_CONNECTIONS, overallRate: GUARD_RATE_PER_S, ...request };
    await autocannon({ ...target, duration: GUARD_WARM_UP_S });
    const before = cpuSeconds(guard.pid);
    const result = await autocannon({ ...target, duration: GUARD_MEASURE_S });
    const after = cpuSeconds(guard.pid);
    if (before === undefined || after === undefined) throw new Error('no /proc: this benchmark needs Linux');
    if (result.non2xx + result.errors + result.timeouts > 0) throw new Error('requests failed through the guard');
    return { cpuUsPerQuery: ((after - before) * 1e6) / result.requests.total, queries: result.requests.total };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    const run = args[0] === 'guard' ? await guardScenario() : await clientScenario(args[0] as Alternative);
    process.stdout.write(JSON.stringify(run));
    return;
  }
  console.log("### (k) The upstream client: the hand-written dispatch handler beside undici's request() and stream()\n");
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    `each alternative in a fresh process, in front of the Node stand-in store (its own process): ${IN_FLIGHT} queries in flight, ${WARM_UP_MS / 1000} s warm-up then ${MEASURE_MS / 1000} s measured; ` +
      `runs in the order ${ORDER.join(', ')}, median per alternative; CPU = user + system time of the client process per query (the store's not counted); ` +
      `the guard's CPU per request: sparql-guard serve (1 worker) in front of the same store, autocannon at ${GUARD_RATE_PER_S} req/s over ${GUARD_CONNECTIONS} connections, ${GUARD_WARM_UP_S} s warm-up then ${GUARD_MEASURE_S} s, two runs (before and after), median\n`,
  );
  const guardRuns: Run[] = [runScenario<Run>(import.meta.url, 'guard')];
  const runs = new Map<Alternative, Run[]>();
  for (const alternative of ORDER) {
    const each = runs.get(alternative) ?? [];
    each.push(runScenario<Run>(import.meta.url, alternative));
    runs.set(alternative, each);
  }
  guardRuns.push(runScenario<Run>(import.meta.url, 'guard'));
  const guardUs = median(guardRuns.map((run) => run.cpuUsPerQuery));
  const ours = median(runs.get('createUpstream')!.map((run) => run.cpuUsPerQuery));
  console.log(
    "| client | CPU us/query (median) | runs (us/query) | queries | vs createUpstream, us | as a share of the guard's CPU per request |",
  );
  console.log('|---|---:|---|---:|---:|---:|');
  for (const [alternative, each] of runs) {
    const us = median(each.map((run) => run.cpuUsPerQuery));
    console.log(
      `| ${alternative} | ${us.toFixed(1)} | ${each.map((run) => run.cpuUsPerQuery.toFixed(1)).join(', ')} | ${each.reduce((sum, run) => sum + run.queries, 0)} | ${(us - ours >= 0 ? '+' : '') + (us - ours).toFixed(1)} | ${(((us - ours) / guardUs) * 100).toFixed(1)} % |`,
    );
  }
  const best = Math.min(
    ...[...runs].filter(([name]) => name !== 'createUpstream').map(([, each]) => median(each.map((run) => run.cpuUsPerQuery))),
  );
  const saving = (best - ours) / guardUs;
  console.log(
    `\nthe guard's CPU per request: ${guardUs.toFixed(0)} us (runs ${guardRuns.map((run) => run.cpuUsPerQuery.toFixed(0)).join(', ')}); ` +
      `the hand-written handler saves ${(saving * 100).toFixed(1)} % of it against the best library alternative (keep it at >= ${KEEP_TARGET * 100} %: ${saving >= KEEP_TARGET ? 'KEEP' : 'REPLACE'})\n`,
  );
}

await main();
