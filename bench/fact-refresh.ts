// Benchmark: 100,000 membership facts from a lab store: read and compile times, query latency during back-to-back refreshes, and the cost of a refresh that changes nothing.

import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../src/config/read-config.js';
import { fetchFactSource } from '../src/policy/store-reads/fetch-fact-source.js';
import { loadPolicySetWithStats } from '../src/policy/load/load-policy-set.js';
import { policySetSources } from '../src/policy/load/policy-set-sources.js';
import { createUpstream } from '../src/upstream/create-upstream.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';
import { percentile } from './_util/percentile.js';
import { spawnServe } from './_util/spawn-serve.js';

/** Membership facts; BENCH_FACTS overrides. */
const FACTS = Number(process.env.BENCH_FACTS ?? 100_000);
const PROJECTS = 1000;
const RATE_PER_S = Number(process.env.BENCH_RATE ?? 100);
const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 10) * 1000;
/** Target: p99 added by back-to-back refreshes. */
const ADDED_P99_TARGET_MS = 20;
const BIN = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const RULES = resolve('rules/examples/project-membership.n3');
/** The lab store the facts live in: BENCH_STORE=virtuoso for the lab's Virtuoso (written to through isql). */
const STORE = process.env.BENCH_STORE ?? 'oxigraph';
const QUERY_URL = process.env[`RIG_${STORE.toUpperCase()}_QUERY`];
const UPDATE_URL = process.env[`RIG_${STORE.toUpperCase()}_UPDATE`];
const P = 'PREFIX app: <https://example.org/app#> ';
const QUERY = 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }';

/** The graphs of one run, under a prefix of its own in the shared lab store. */
interface Run {
  readonly base: string;
  readonly app: string;
}

const sourceQuery = (run: Run) =>
  `PREFIX app: <https://example.org/app#> PREFIX proj: <https://example.org/projects#> CONSTRUCT { ?agent proj:memberOf ?project. ?graph proj:belongsTo ?project } WHERE { GRAPH <${run.app}> { { ?agent app:memberOf ?project } UNION { ?graph app:partOf ?project } } }`;

async function update(text: string): Promise<void> {
  if (STORE === 'virtuoso') return updateThroughIsql(text);
  const send = () => fetch(UPDATE_URL!, { method: 'POST', body: new URLSearchParams({ update: text }) });
  // A keep-alive connection the store closed while idle fails once (EPIPE); a new one does not.
  const response = await send().catch(send);
  if (response.status >= 300) throw new Error(`lab update: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

/** Virtuoso takes no update over HTTP in the lab: its SQL port (the HTTP port + 10, see ../shared/rig) runs it. */
async function updateThroughIsql(text: string): Promise<void> {
  const port = Number(new URL(QUERY_URL!).port) + 10;
  const statements = text.split(';\n').map((statement) => `SPARQL ${statement.replaceAll('\n', ' ')};\n`);
  const isql = spawn('isql-vt', [`127.0.0.1:${port}`, 'dba', 'dba'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  isql.stdout.on('data', (chunk: Buffer) => (output += String(chunk)));
  isql.stderr.on('data', (chunk: Buffer) => (output += String(chunk)));
  isql.stdin.end(statements.join(''));
  const [code] = (await once(isql, 'exit')) as [number];
  if (code !== 0 || /\*\*\* Error/.test(output))
    throw new Error(`lab update through isql: ${output.split('\n').find((line) => line.includes('Error')) ?? code}`);
}

/** Writes the memberships (agent i in project i mod PROJECTS) and one graph per project, in chunks. */
async function fillStore(run: Run): Promise<void> {
  // Virtuoso's SPARQL compiler runs out of memory on an INSERT DATA of about 5,000 triples.
  const chunk = STORE === 'virtuoso' ? 2_000 : 20_000;
  for (let from = 0; from < FACTS; from += chunk) {
    const triples: string[] = [];
    for (let i = from; i < Math.min(FACTS, from + chunk); i += 1) {
      triples.push(`<${run.base}agents/${i}> app:memberOf <${run.base}projects/${i % PROJECTS}> .`);
    }
    await update(`${P}INSERT DATA { GRAPH <${run.app}> { ${triples.join('\n')} } }`);
  }
  const graphs: string[] = [];
  const content: string[] = [];
  for (let p = 0; p < PROJECTS; p += 1) {
    graphs.push(`<${run.base}graphs/${p}> app:partOf <${run.base}projects/${p}> .`);
    if (p < 10) content.push(`GRAPH <${run.base}graphs/${p}> { <${run.base}s/${p}> <${run.base}p> "${p}" . }`);
  }
  await update(`${P}INSERT DATA { GRAPH <${run.app}> { ${graphs.join('\n')} } ${content.join('\n')} }`);
}

async function emptyStore(run: Run): Promise<void> {
  const drops = [`DROP SILENT GRAPH <${run.app}>`];
  for (let p = 0; p < 10; p += 1) drops.push(`DROP SILENT GRAPH <${run.base}graphs/${p}>`);
  await update(drops.join(';\n'));
}

/** One policy per project, as policies/examples/project-membership.ttl writes them. */
function policyTurtle(run: Run): string {
  const lines = ['@prefix guard: <https://w3id.org/sparql-guard#>.', '@prefix proj: <https://example.org/projects#>.'];
  for (let p = 0; p < PROJECTS; p += 1) {
    lines.push(`<${run.base}policies/${p}> a guard:Policy; guard:group "project-${p}"; proj:forProject <${run.base}projects/${p}>.`);
  }
  return `${lines.join('\n')}\n`;
}

async function writeConfig(folder: string, run: Run, extra: Record<string, unknown> = {}): Promise<string> {
  const policyFile = join(folder, 'policies.ttl');
  await writeFile(policyFile, policyTurtle(run));
  const configFile = join(folder, 'guard.json');
  await writeFile(
    configFile,
    JSON.stringify({
      upstream: QUERY_URL,
      policies: [policyFile],
      rules: [RULES],
      facts: [{ name: 'members', query: sourceQuery(run), refreshMs: 3_600_000 }],
      auth: { trustedHeaders: { agent: 'x-remote-user', agentPrefix: `${run.base}agents/` } },
      port: 0,
      host: '127.0.0.1',
      ...extra,
    }),
  );
  return configFile;
}

/** A GET of the query as member `agent`: wall time and status. */
function timedQuery(target: string, agent: Agent, member: string): Promise<{ ms: number; status: number }> {
  return new Promise((done, fail) => {
    const started = performance.now();
    request(target, { agent, headers: { accept: 'application/sparql-results+json', 'x-remote-user': member } }, (response) => {
      response.resume();
      response.on('end', () => done({ ms: performance.now() - started, status: response.statusCode ?? 0 }));
    })
      .on('error', fail)
      .end();
  });
}

interface LatencyResult {
  readonly scenario: string;
  readonly requests: number;
  readonly failed: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** The same figures for the guard alone: a caller no policy applies to, refused (403) without the store. */
  readonly guardP50: number;
  readonly guardP99: number;
  readonly refreshes: number;
  readonly refreshMs: number;
}

/** Queries at RATE_PER_S for DURATION_MS, with back-to-back refreshes (one membership changed before each) when `refreshing`. */
async function latency(run: Run, refreshing: boolean): Promise<LatencyResult> {
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-facts-'));
  const { child, events, next } = spawnServe(BIN, await writeConfig(folder, run));
  try {
    const url = String((await next(['listening'], 0)).url);
    await next(['policies-loaded'], 0);
    // The members' queries wait for the store; the outsiders' must not wait behind them for a socket.
    const agent = new Agent({ keepAlive: true, maxSockets: 256 });
    const outsiderAgent = new Agent({ keepAlive: true, maxSockets: 256 });
    const target = `${url}/sparql?query=${encodeURIComponent(QUERY)}`;
    const check = await timedQuery(target, agent, '1');
    if (check.status !== 200) throw new Error(`unexpected answer ${check.status}`);
    for (let i = 0; i < 200; i += 1) await timedQuery(target, agent, String(i % 10));

    let refreshes = 0;
    let refreshMs = 0;
    let running = true;
    const refresher = (async () => {
      const extra = `<${run.base}agents/extra> app:memberOf <${run.base}projects/0> .`;
      while (refreshing && running) {
        // Each refresh finds one membership more or less: a new table to compile and swap.
        await update(`${P}${refreshes % 2 === 0 ? 'INSERT' : 'DELETE'} DATA { GRAPH <${run.app}> { ${extra} } }`);
        const from = events.length;
        child.kill('SIGHUP');
        const line = await next(['policies-reloaded', 'policies-reload-failed'], from);
        if (line.event !== 'policies-reloaded') throw new Error(`refresh failed: ${String(line.error)}`);
        refreshes += 1;
        refreshMs += Number(line.durationMs);
      }
    })();

    const latencies: number[] = [];
    const guardAlone: number[] = [];
    let failed = 0;
    const inFlight: Promise<void>[] = [];
    const started = performance.now();
    for (let sent = 0; performance.now() - started < DURATION_MS; sent += 1) {
      const due = started + (sent * 1000) / RATE_PER_S;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      // Every fourth request is a caller no policy applies to: its time is the guard's own.
      const outsider = sent % 4 === 3;
      inFlight.push(
        timedQuery(target, outsider ? outsiderAgent : agent, outsider ? 'outsider' : String(sent % 10)).then(
          (answer) => {
            if (outsider && answer.status === 403) guardAlone.push(answer.ms);
            else if (!outsider && answer.status === 200) latencies.push(answer.ms);
            else failed += 1;
          },
          () => void (failed += 1),
        ),
      );
    }
    await Promise.all(inFlight);
    running = false;
    await refresher;
    agent.destroy();
    outsiderAgent.destroy();
    latencies.sort((a, b) => a - b);
    guardAlone.sort((a, b) => a - b);
    return {
      guardP50: percentile(guardAlone, 50),
      guardP99: percentile(guardAlone, 99),
      scenario: refreshing ? 'refreshing back to back (one membership changed each time)' : 'no refresh',
      requests: latencies.length + guardAlone.length + failed,
      failed,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? Number.NaN,
      refreshes,
      refreshMs: refreshes > 0 ? refreshMs / refreshes : Number.NaN,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
    await rm(folder, { recursive: true, force: true });
  }
}

interface LoadTimes {
  readonly triples: number;
  readonly bytes: number;
  readonly fetchMs: number;
  readonly workerMs: number;
  readonly compileMs: number;
  readonly policies: number;
}

/** Reads the source and loads the set in this process, as a refresh does: where the time goes. */
async function loadTimes(run: Run): Promise<LoadTimes> {
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-facts-'));
  try {
    const configFile = await writeConfig(folder, run);
    const config = parseConfig(JSON.parse(readFileSync(configFile, 'utf8')), { configFile, env: {} });
    const upstream = createUpstream({ url: QUERY_URL!, headers: {}, timeoutMs: 60_000 });
    const sources = policySetSources(config);
    const fetched = await fetchFactSource(upstream, config.facts[0]!);
    const { stats } = await loadPolicySetWithStats(sources, { inputs: { facts: [fetched] } });
    await upstream.close();
    return {
      triples: stats.facts[0]!.triples,
      bytes: fetched.body.byteLength,
      fetchMs: fetched.fetchMs,
      workerMs: stats.readMs + stats.eyeMs + stats.otherMs,
      compileMs: stats.compileMs,
      policies: stats.policyCount,
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

interface UnchangedResult {
  readonly reads: number;
  readonly unchanged: number;
  readonly swapped: boolean;
  readonly hitRateBefore: number;
  readonly hitRateAfter: number;
  readonly missesAfter: number;
}

/** A SIGHUP with nothing changed: store reads, swaps and plan-cache hits across it, from the guard's metrics. */
async function unchanged(run: Run): Promise<UnchangedResult> {
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-facts-'));
  const { child, events, next } = spawnServe(BIN, await writeConfig(folder, run, { metrics: { port: 0, host: '127.0.0.1' } }));
  try {
    const url = String((await next(['listening'], 0)).url);
    const metricsUrl = String((await next(['metrics-listening'], 0)).url);
    await next(['policies-loaded'], 0);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const target = `${url}/sparql?query=${encodeURIComponent(QUERY)}`;
    const sample = async () => {
      const text = await (await fetch(metricsUrl)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
      return {
        hits: value('sparql_guard_plan_cache_hits_total'),
        misses: value('sparql_guard_plan_cache_misses_total'),
        reads: value('sparql_guard_fact_source_reads_total\\{source="members",result="success"\\}'),
        unchanged: value('sparql_guard_policy_unchanged_reloads_total'),
      };
    };
    for (let i = 0; i < 200; i += 1) await timedQuery(target, agent, String(i % 10));
    const before = await sample();
    for (let i = 0; i < 200; i += 1) await timedQuery(target, agent, String(i % 10));
    const middle = await sample();
    const from = events.length;
    child.kill('SIGHUP');
    const line = await next(['policies-reloaded', 'policies-reload-failed'], from);
    const afterReload = await sample();
    for (let i = 0; i < 200; i += 1) await timedQuery(target, agent, String(i % 10));
    const after = await sample();
    agent.destroy();
    const rate = (a: typeof before, b: typeof before) => (b.hits - a.hits) / (b.hits - a.hits + b.misses - a.misses);
    return {
      reads: afterReload.reads - middle.reads,
      unchanged: afterReload.unchanged - middle.unchanged,
      swapped: line.unchanged !== true,
      hitRateBefore: rate(before, middle),
      hitRateAfter: rate(afterReload, after),
      missesAfter: after.misses - afterReload.misses,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
    await rm(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    const run: Run = { base: args[1]!, app: `${args[1]!}app` };
    const result =
      args[0] === 'load'
        ? await loadTimes(run)
        : args[0] === 'unchanged'
          ? await unchanged(run)
          : await latency(run, args[0] === 'refresh');
    process.stdout.write(JSON.stringify(result));
    return;
  }
  console.log('### Facts from the store: refresh of membership facts\n');
  if (QUERY_URL === undefined || (UPDATE_URL === undefined && STORE !== 'virtuoso')) {
    console.log(`skipped: RIG_${STORE.toUpperCase()}_QUERY and _UPDATE are not set (source the lab endpoints.env)\n`);
    return;
  }
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()}`);
  console.log(
    `${FACTS} memberships in ${PROJECTS} projects (one policy each, rules/examples/project-membership.n3) in the lab ${STORE}; each scenario in a fresh process\n`,
  );
  const base = `https://example.org/bench-facts/${randomUUID()}/`;
  const run: Run = { base, app: `${base}app` };
  await fillStore(run);
  try {
    const load = runScenario<LoadTimes>(import.meta.url, 'load', base);
    console.log(tableHeader(['triples', 'answer bytes', 'read ms', 'worker ms (parse, check, rules)', 'compile ms', 'policies'], 'rrrrrr'));
    console.log(
      tableRow([load.triples, load.bytes, load.fetchMs.toFixed(0), load.workerMs.toFixed(0), load.compileMs.toFixed(0), load.policies]),
    );
    console.log('');
    console.log(`${RATE_PER_S} queries/s for ${DURATION_MS / 1000} s, as members (trusted header)\n`);
    console.log(
      tableHeader(
        [
          'scenario',
          'requests',
          'failed',
          'p50 ms',
          'p99 ms',
          'max ms',
          'guard alone p50 ms',
          'guard alone p99 ms',
          'refreshes',
          'mean refresh ms',
        ],
        'lrrrrrrrrr',
      ),
    );
    // A figure with no sample (no refresh in the steady run) is NaN here and null after the scenario's JSON.
    const fmt = (ms: number | null) => (ms === null || Number.isNaN(ms) ? '-' : ms.toFixed(1));
    const rows = ['steady', 'refresh'].map((name) => runScenario<LatencyResult>(import.meta.url, name, base));
    for (const row of rows) {
      console.log(
        tableRow([
          row.scenario,
          row.requests,
          row.failed,
          fmt(row.p50),
          fmt(row.p99),
          fmt(row.max),
          fmt(row.guardP50),
          fmt(row.guardP99),
          row.refreshes,
          fmt(row.refreshMs),
        ]),
      );
    }
    const added = rows[1]!.p99 - rows[0]!.p99;
    const addedByGuard = rows[1]!.guardP99 - rows[0]!.guardP99;
    const verdict = (ms: number) => `target <= ${ADDED_P99_TARGET_MS} ms: ${ms <= ADDED_P99_TARGET_MS ? 'met' : 'NOT met'}`;
    console.log(`\n- p99 added by back-to-back refreshes, queries answered by the store: ${added.toFixed(1)} ms (${verdict(added)})`);
    console.log(
      `- p99 added by back-to-back refreshes, the guard alone (403 before the store): ${addedByGuard.toFixed(1)} ms (${verdict(addedByGuard)}); ` +
        'the difference is the store answering the CONSTRUCT while it answers the queries',
    );
    if (STORE === 'oxigraph') {
      console.log(
        "- the lab's Oxigraph is the npm (WASM) server, which answers one query at a time: while it computes a refresh's CONSTRUCT " +
          "(the read above) every query waits for it, so the first figure is the store's; BENCH_STORE=virtuoso runs the same on a store that answers in parallel",
      );
    }
    const same = runScenario<UnchangedResult>(import.meta.url, 'unchanged', base);
    console.log(
      `- a refresh that changes nothing: ${same.reads} CONSTRUCT read(s) of the one source (target 1: ${same.reads === 1 ? 'met' : 'NOT met'}), ` +
        `${same.swapped ? 'set swapped' : 'no swap'} (unchanged reloads +${same.unchanged}), plan-cache hit rate ${(same.hitRateBefore * 100).toFixed(1)} % before, ` +
        `${(same.hitRateAfter * 100).toFixed(1)} % after, ${same.missesAfter} misses after (target: unchanged, no flush: ${!same.swapped && same.missesAfter === 0 ? 'met' : 'NOT met'})\n`,
    );
  } catch (error) {
    console.log(`failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    process.exitCode = 1;
  } finally {
    await emptyStore(run);
  }
}

await main();
