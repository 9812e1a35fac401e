// Benchmark (c): a 500 MB SPARQL JSON answer streamed direct from the store, through a plain Node proxy and through sparql-guard: MB/s and the guard's peak RSS.

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { BENCH_KEY, startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';

/** The stand-in store streams LIMIT rows in blocks of 1,000 rows (135,780 bytes): 3,683 blocks are 500 MB. */
const LIMIT = 3_683_000;
const CHECK_LIMIT = 100_000;
const RUNS = 2;
/** Target: streaming through the guard at 0.9 of the store asked directly, RSS growing by at most 50 MB. */
const SPEED_RATIO_TARGET = 0.9;
const RSS_GROWTH_TARGET_MB = 50;
const MB = 1e6;

type Scenario = 'direct' | 'proxy' | 'guard';

interface Row {
  scenario: Scenario;
  bytes: number;
  /** Best of RUNS. */
  mbPerS: number;
  /** Guard only: RSS before the transfers and the highest RSS seen during them. */
  rssBeforeMb?: number;
  rssPeakMb?: number;
}

const queryFor = (limit: number) => `SELECT ?s ?o WHERE { ?s ?p ?o } LIMIT ${limit}`;

/** POSTs the query and reads the whole answer, hashing it or only counting it; returns bytes and seconds. */
function download(url: string, limit: number, hash: boolean): Promise<{ bytes: number; seconds: number; sha256: string; status: number }> {
  const body = new URLSearchParams({ query: queryFor(limit) }).toString();
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const outgoing = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/sparql-results+json',
          authorization: `Bearer ${BENCH_KEY}`,
        },
      },
      (answer) => {
        const digest = createHash('sha256');
        let bytes = 0;
        answer.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (hash) digest.update(chunk);
        });
        answer.on('end', () =>
          resolve({
            bytes,
            seconds: (performance.now() - started) / 1_000,
            sha256: hash ? digest.digest('hex') : '',
            status: answer.statusCode ?? 0,
          }),
        );
        answer.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Resident set size of a process, from /proc (Linux); undefined elsewhere. */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : (Number(kb) * 1024) / MB;
  } catch {
    return undefined;
  }
}

/** Highest RSS of a process since clear_refs was written, from the kernel's own mark (exact, unlike sampling). */
function peakRssMb(pid: number): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : (Number(kb) * 1024) / MB;
  } catch {
    return undefined;
  }
}

async function scenario(name: Scenario): Promise<Row> {
  const store = await startBenchServer('fixed-upstream');
  const servers: BenchServer[] = [store];
  try {
    if (name === 'proxy') servers.push(await startBenchServer('pass-through-proxy', [`${store.url}/sparql`]));
    if (name === 'guard') servers.push(await startBenchGuard(`${store.url}/sparql`, 1));
    const front = servers[servers.length - 1]!;
    const url = `${front.url}/sparql`;

    // Check before timing: the same bytes through the guard as from the store, and they are the JSON expected.
    const direct = await download(`${store.url}/sparql`, CHECK_LIMIT, true);
    const through = await download(url, CHECK_LIMIT, true);
    if (direct.status !== 200 || through.status !== 200 || through.sha256 !== direct.sha256) {
      throw new Error(`${name}: the streamed answer differs from the store's`);
    }

    let rssBeforeMb: number | undefined;
    let rssPeakMb: number | undefined;
    let sampler: NodeJS.Timeout | undefined;
    if (name === 'guard') {
      rssBeforeMb = rssMb(front.pid);
      // Reset the kernel's high-water mark (Linux: writing 5 to clear_refs), and sample as well.
      try {
        writeFileSync(`/proc/${front.pid}/clear_refs`, '5');
      } catch {
        // Not Linux, or not allowed: the samples alone give the peak.
      }
      rssPeakMb = rssBeforeMb;
      sampler = setInterval(() => {
        const now = rssMb(front.pid);
        if (now !== undefined && (rssPeakMb === undefined || now > rssPeakMb)) rssPeakMb = now;
      }, 10);
    }
    let best = { bytes: 0, seconds: Number.POSITIVE_INFINITY };
    for (let run = 0; run < RUNS; run += 1) {
      const result = await download(url, LIMIT, false);
      if (result.status !== 200) throw new Error(`${name}: status ${result.status}`);
      if (result.seconds < best.seconds) best = result;
    }
    if (sampler !== undefined) {
      clearInterval(sampler);
      const mark = peakRssMb(front.pid);
      if (mark !== undefined && rssPeakMb !== undefined && mark > rssPeakMb) rssPeakMb = mark;
    }
    return { scenario: name, bytes: best.bytes, mbPerS: best.bytes / MB / best.seconds, rssBeforeMb, rssPeakMb };
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
  console.log('### (c) Streaming a 500 MB answer\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    `SELECT answered by the stand-in store with ${LIMIT.toLocaleString('en')} rows of SPARQL JSON (chunked, no Content-Length); one client on a fresh connection reads it all; best of ${RUNS} runs; each front in a fresh process; RSS of the guard process from /proc (MB = 10^6 bytes); the plain proxy shows what any Node process relaying the bytes costs on this machine\n`,
  );
  const rows = (['direct', 'proxy', 'guard'] as const).map((name) => runScenario<Row>(import.meta.url, name));
  const [direct, proxy, guard] = rows as [Row, Row, Row];
  console.log('| front | MB | MB/s | vs direct | vs proxy | guard RSS before MB | guard peak RSS MB | RSS growth MB | target |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  console.log(`| direct to the store | ${(direct.bytes / MB).toFixed(0)} | ${direct.mbPerS.toFixed(0)} | 1.00 | | | | | |`);
  console.log(
    `| plain Node pass-through proxy | ${(proxy.bytes / MB).toFixed(0)} | ${proxy.mbPerS.toFixed(0)} | ${(proxy.mbPerS / direct.mbPerS).toFixed(2)} | 1.00 | | | | |`,
  );
  const ratio = guard.mbPerS / direct.mbPerS;
  const growth = (guard.rssPeakMb ?? Number.NaN) - (guard.rssBeforeMb ?? Number.NaN);
  const speed = ratio >= SPEED_RATIO_TARGET ? 'met' : `MISSED by ${(SPEED_RATIO_TARGET - ratio).toFixed(2)}`;
  const memory =
    growth < RSS_GROWTH_TARGET_MB
      ? 'met'
      : Number.isNaN(growth)
        ? 'not measured (no /proc)'
        : `MISSED by ${(growth - RSS_GROWTH_TARGET_MB).toFixed(0)} MB`;
  console.log(
    `| sparql-guard, 1 worker | ${(guard.bytes / MB).toFixed(0)} | ${guard.mbPerS.toFixed(0)} | ${ratio.toFixed(2)} | ${(guard.mbPerS / proxy.mbPerS).toFixed(2)} | ${guard.rssBeforeMb?.toFixed(0) ?? '?'} | ${guard.rssPeakMb?.toFixed(0) ?? '?'} | ${growth.toFixed(0)} | >= ${SPEED_RATIO_TARGET} x direct: ${speed}; growth < ${RSS_GROWTH_TARGET_MB} MB: ${memory} |`,
  );
  console.log('');
}

await main();
