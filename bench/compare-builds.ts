// Benchmark: two or more builds of the guard side by side in one run (before / after a change), their scenarios interleaved.

import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { percentile } from './_util/percentile.js';

/**
 * Usage: `node dist/bench/compare-builds.js <checkout> <checkout> ...`, each checkout built
 * (`npx tsc`) with its own node_modules; the first is the reference of the ratios. Every round
 * runs each scenario of each build in a fresh process, the builds in turn and in reverse order
 * in every other round, so that a machine whose speed drifts weighs on all builds alike.
 * BENCH_ROUNDS (default 3) rounds; BENCH_SCENARIOS picks scenarios (comma-separated).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ALL = ['guard-templated', 'guard-repeated', 'proxy-templated', 'proxy-repeated', 'medium', 'small'] as const;
type Scenario = (typeof ALL)[number];
const SCENARIOS = (process.env.BENCH_SCENARIOS?.split(',') ?? ALL) as readonly Scenario[];
/** Scenarios that do not depend on the build: run with the first build only. */
const SHARED = new Set<Scenario>(['proxy-templated', 'proxy-repeated']);

interface Figures {
  [figure: string]: number;
}

/** One scenario of one build in a fresh process: the load scenarios of the templated workload, or one size of the rewrite latency. */
function runOnce(checkout: string, scenario: Scenario): Figures {
  const bench = scenario === 'medium' || scenario === 'small' ? 'rewrite-latency.js' : 'templated-workload.js';
  const output = execFileSync(process.execPath, [join(checkout, 'dist', 'bench', bench), '--scenario', scenario], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: checkout,
  });
  const row = JSON.parse(output) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(row).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
}

function main(): void {
  const checkouts = process.argv.slice(2).map((path) => resolve(path));
  if (checkouts.length < 2) throw new Error('give two or more built checkouts, the reference first');
  console.log('### Builds side by side\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(`${ROUNDS} rounds; builds: ${checkouts.map((path, i) => `${String.fromCharCode(65 + i)} = ${path}`).join(', ')}\n`);
  const runs = new Map<string, Figures[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const scenario of SCENARIOS) {
      for (const checkout of SHARED.has(scenario) ? [checkouts[0]!] : order) {
        const key = `${scenario}\u0000${checkout}`;
        runs.set(key, [...(runs.get(key) ?? []), runOnce(checkout, scenario)]);
      }
    }
  }
  const median = (rows: readonly Figures[], figure: string) =>
    percentile(Float64Array.from(rows.map((row) => row[figure] ?? NaN)).sort(), 50);
  const figures: Record<string, readonly string[]> = {
    'guard-templated': ['requestsPerS', 'cpuUsPerRequest', 'p50Ms'],
    'guard-repeated': ['requestsPerS', 'cpuUsPerRequest', 'p50Ms'],
    'proxy-templated': ['requestsPerS', 'cpuUsPerRequest'],
    'proxy-repeated': ['requestsPerS', 'cpuUsPerRequest'],
    medium: ['coldP50Us', 'hitP50Us'],
    small: ['coldP50Us', 'hitP50Us'],
  };
  console.log(
    `| scenario | figure | ${checkouts.map((_, i) => String.fromCharCode(65 + i)).join(' | ')} | ${checkouts
      .slice(1)
      .map((_, i) => `${String.fromCharCode(66 + i)}/A`)
      .join(' | ')} |`,
  );
  console.log(
    `|---|---|${checkouts.map(() => '---:|').join('')}${checkouts
      .slice(1)
      .map(() => '---:|')
      .join('')}`,
  );
  for (const scenario of SCENARIOS) {
    for (const figure of figures[scenario] ?? []) {
      const values = (SHARED.has(scenario) ? [checkouts[0]!] : checkouts).map((checkout) =>
        median(runs.get(`${scenario}\u0000${checkout}`) ?? [], figure),
      );
      const ratios = values.slice(1).map((value) => (value / values[0]!).toFixed(3));
      console.log(
        `| ${scenario} | ${figure} | ${values.map((value) => value.toFixed(value < 10 ? 2 : 0)).join(' | ')} | ${ratios.join(' | ')} |`,
      );
    }
  }
  console.log(`\nload at the end: ${describeLoad()}`);
}

main();
