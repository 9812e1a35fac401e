// Benchmark: query latency at a steady rate, with and without back-to-back reloads of 1,000 policies (EYE on the worker thread).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';
import { percentile } from './_util/percentile.js';
import { spawnServe, timedGet } from './_util/spawn-serve.js';

const POLICIES = 1_000;
/** Queries per second; BENCH_RATE overrides (a 2-core machine saturates near 200/s with EYE busy on a core). */
const RATE_PER_S = Number(process.env.BENCH_RATE ?? 100);
const DURATION_MS = 10_000;
const BIN = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const QUERY = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';

/** 1,000 policies: one for Everyone on the demo's public graph, the rest for agents and groups. */
function policyTurtle(): string {
  const lines = ['@prefix guard: <https://w3id.org/sparql-guard#>.', '@prefix ex: <https://example.org/>.'];
  lines.push('ex:policy-public a guard:Policy; guard:agent guard:Everyone; guard:readGraph <https://example.org/graphs/public>.');
  for (let i = 1; i < POLICIES; i += 1) {
    const target = i % 2 === 0 ? `guard:agent ex:agent-${i}` : `guard:group "team-${i % 50}"`;
    lines.push(`ex:policy-${i} a guard:Policy; ${target}; guard:readGraph ex:graph-${i % 300}, ex:graph-${(i * 7) % 300}.`);
  }
  return `${lines.join('\n')}\n`;
}

interface Result {
  scenario: string;
  requests: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  reloads: number;
  reloadMs: number;
}

/** `steady`: no reload; `reload`: back-to-back reloads with the shipped rules (no EYE); `reload-eye`: plus an operator rule, so every reload runs EYE on the worker. */
type Scenario = 'steady' | 'reload' | 'reload-eye';
const SCENARIOS: readonly Scenario[] = ['steady', 'reload', 'reload-eye'];
const LABELS: Record<Scenario, string> = {
  steady: 'no reload',
  reload: 'reloading 1,000 policies back to back (shipped rules)',
  'reload-eye': 'reloading 1,000 policies back to back (EYE on the worker)',
};

/** An operator rule that derives nothing but is not a copy rule: each load runs EYE. */
const NO_OP_RULE = '@prefix ex: <https://example.org/>.\n{ ?x ex:neverUsed ?y. ?y ex:neverUsed ?x } => { ?x ex:neverDerived ?y }.\n';

/** One scenario against a fresh guard process: steady queries, with reloads back to back unless `steady`. */
async function scenario(name: Scenario): Promise<Result> {
  const reloading = name !== 'steady';
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-reload-'));
  const policyFile = join(folder, 'policies.ttl');
  await writeFile(policyFile, policyTurtle());
  await writeFile(join(folder, 'no-op.n3'), NO_OP_RULE);
  const rules = name === 'reload-eye' ? [join(folder, 'no-op.n3')] : [];
  await writeFile(join(folder, 'guard.json'), JSON.stringify({ policies: [policyFile], rules, port: 0, host: '127.0.0.1' }));
  const { child, events, next } = spawnServe(BIN, join(folder, 'guard.json'));
  try {
    const url = String((await next(['listening'], 0)).url);
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    const target = `${url}/sparql?query=${encodeURIComponent(QUERY)}`;
    const once = () => timedGet(target, agent);

    // Check the answer before trusting the time: the count of the public graph, through the guard.
    const check = await once();
    if (check.status !== 200 || !/"n"/.test(check.body)) throw new Error(`unexpected answer ${check.status}`);
    for (let i = 0; i < 200; i += 1) await once(); // warm the plan cache, the pool and the JIT

    let reloads = 0;
    let reloadMs = 0;
    let running = true;
    const reloader = (async () => {
      while (reloading && running) {
        const from = events.length;
        child.kill('SIGHUP');
        const line = await next(['policies-reloaded'], from);
        reloads += 1;
        reloadMs += Number(line.durationMs);
      }
    })();

    const latencies: number[] = [];
    let failed = 0;
    const inFlight: Promise<void>[] = [];
    const started = performance.now();
    for (let sent = 0; performance.now() - started < DURATION_MS; sent += 1) {
      // Open loop: requests leave on schedule whatever the answers do, so a stall shows as latency.
      const due = started + (sent * 1000) / RATE_PER_S;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      inFlight.push(
        once().then(
          (answer) => {
            if (answer.status === 200) latencies.push(answer.ms);
            else failed += 1;
          },
          () => void (failed += 1),
        ),
      );
    }
    await Promise.all(inFlight);
    running = false;
    await reloader;
    agent.destroy();
    latencies.sort((a, b) => a - b);
    return {
      scenario: LABELS[name],
      requests: latencies.length + failed,
      failed,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? Number.NaN,
      reloads,
      reloadMs: reloads > 0 ? reloadMs / reloads : Number.NaN,
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
    process.stdout.write(JSON.stringify(await scenario(args[0] as Scenario)));
    return;
  }
  console.log('### (g) Reload latency: queries while the policies reload\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()}`);
  console.log(
    `${RATE_PER_S} queries/s for ${DURATION_MS / 1000} s against the embedded store; each scenario in a fresh process and a fresh guard\n`,
  );
  console.log(tableHeader(['scenario', 'requests', 'failed', 'p50 ms', 'p99 ms', 'max ms', 'reloads', 'mean reload ms'], 'lrrrrrrr'));
  const rows: Result[] = [];
  for (const name of SCENARIOS) {
    const row = runScenario<Result>(import.meta.url, name);
    rows.push(row);
    const fmt = (ms: number | null) => (ms === null || Number.isNaN(ms) ? '-' : ms.toFixed(1));
    console.log(
      tableRow([row.scenario, row.requests, row.failed, fmt(row.p50), fmt(row.p99), fmt(row.max), row.reloads, fmt(row.reloadMs)]),
    );
  }
  const [steady, ...reloads] = rows;
  console.log('');
  for (const reload of reloads) {
    if (steady === undefined) break;
    console.log(
      `- added by ${reload.scenario}: p50 ${(reload.p50 - steady.p50).toFixed(1)} ms, p99 ${(reload.p99 - steady.p99).toFixed(1)} ms`,
    );
  }
  console.log('');
}

await main();
