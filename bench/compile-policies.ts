// Benchmark: loading N policies (Turtle -> rules on the worker -> compiled table), with and without EYE, cold and warm, with where the time goes.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { grantFor } from '../src/policy/grant-for.js';
import { loadPolicySetWithStats } from '../src/policy/load-policy-set.js';
import { shippedRuleFiles } from '../src/policy/shipped-rule-files.js';
import { runScenario, scenarioArguments } from './fresh-process.js';
import { describeMachine } from './describe-machine.js';

const SIZES = [10, 1_000, 10_000];
const BUDGET_MS = 2_000;

/**
 * A realistic policy file: every policy has a label and a comment, targets an
 * agent, a group, AuthenticatedAgent or Everyone, grants one to three graphs,
 * and one in five hides a path.
 */
function policyTurtle(count: number): string {
  const lines = ['@prefix guard: <https://w3id.org/sparql-guard#>.', '@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#>.', '@prefix ex: <https://example.org/>.'];
  for (let i = 0; i < count; i += 1) {
    const target = [`guard:agent ex:agent-${i}`, `guard:group "team-${i % 50}"`, 'guard:agent guard:AuthenticatedAgent', 'guard:agent guard:Everyone'][i % 4 === 3 && i % 100 !== 3 ? 0 : i % 4];
    const graphs = Array.from({ length: 1 + (i % 3) }, (_, k) => `ex:graph-${(i + k * 7) % 2000}`).join(', ');
    const hide = i % 5 === 0 ? '; guard:hidePath ex:salary' : '';
    lines.push(`ex:policy-${i} a guard:Policy; rdfs:label "Policy ${i}"; rdfs:comment "Benchmark policy number ${i}."; ${target}; guard:readGraph ${graphs}${hide}.`);
  }
  return `${lines.join('\n')}\n`;
}

/** `copy`: the shipped rules only (applied as copy rules, no EYE); `eye`: plus an operator rule, so EYE runs over everything. */
type Mode = 'copy' | 'eye';

/** An operator rule that derives nothing but is not a copy rule: the load goes through EYE. */
const NO_OP_RULE = '@prefix ex: <https://example.org/>.\n{ ?x ex:neverUsed ?y. ?y ex:neverUsed ?x } => { ?x ex:neverDerived ?y }.\n';

interface Row {
  mode: Mode;
  n: number;
  run: 'cold' | 'warm';
  wallMs: number;
  readMs: number;
  eyeMs: number;
  otherMs: number;
  compileMs: number;
  eyeTriples: number;
}

/** One scenario in this (fresh) process: a cold load, then a warm one (EYE module already instantiated). */
async function scenario(mode: Mode, n: number): Promise<Row[]> {
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-'));
  try {
    const file = join(folder, 'policies.ttl');
    await writeFile(file, policyTurtle(n));
    const ruleFiles = shippedRuleFiles();
    if (mode === 'eye') {
      ruleFiles.push(join(folder, 'no-op.n3'));
      await writeFile(join(folder, 'no-op.n3'), NO_OP_RULE);
    }
    const rows: Row[] = [];
    for (const run of ['cold', 'warm'] as const) {
      const started = performance.now();
      const { set, stats } = await loadPolicySetWithStats({ policyFiles: [file], ruleFiles });
      const wallMs = performance.now() - started;
      // Check the output before trusting the time.
      if (set.policies.length !== n) throw new Error(`expected ${n} policies, got ${set.policies.length}`);
      const grant = grantFor(set, { agent: 'https://example.org/agent-0', groups: ['team-1'], authenticated: true });
      if (!grant?.policies.includes('https://example.org/policy-0')) throw new Error('policy-0 does not apply to agent-0');
      rows.push({ mode, n, run, wallMs, readMs: stats.readMs, eyeMs: stats.eyeMs, otherMs: stats.otherMs, compileMs: stats.compileMs, eyeTriples: stats.eyeInputTriples });
      // Let the worker instantiate the next EYE module, as it would between reloads.
      await new Promise((done) => setTimeout(done, 1_000));
    }
    return rows;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(await scenario(args[0] as Mode, Number(args[1]))));
    return;
  }
  console.log(`machine: ${describeMachine()}`);
  console.log('each N in a fresh process; cold = first load (worker start + EYE instantiation), warm = next load\n');
  console.log('copy = shipped rules only, applied as copy rules without EYE; eye = plus one operator rule, so EYE loads every triple the rules need\n');
  const header = ['rules', 'N', 'run', 'wall ms', 'read+validate ms', 'EYE ms', 'other worker ms', 'compile ms', 'triples to EYE', 'budget'];
  console.log(header.join(' | '));
  for (const [mode, n] of (['copy', 'eye'] as const).flatMap((mode) => SIZES.map((n) => [mode, n] as const))) {
    for (const row of runScenario<Row[]>(import.meta.url, mode, String(n))) {
      const fmt = (ms: number) => ms.toFixed(0);
      const verdict = row.n === 10_000 ? (row.wallMs <= BUDGET_MS ? 'ok (<= 2 s)' : 'OVER 2 s') : '';
      console.log([row.mode, row.n, row.run, fmt(row.wallMs), fmt(row.readMs), fmt(row.eyeMs), fmt(row.otherMs), fmt(row.compileMs), row.eyeTriples, verdict].join(' | '));
    }
  }
}

await main();
