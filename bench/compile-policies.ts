// Benchmark: loading N policies (Turtle -> rules on the worker -> compiled table) with copy rules, N3.Reasoner and EYE, cold and warm, and an organisation-shaped set with the example rules.

import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadStats } from '../src/policy/compile-policy-set.js';
import { grantFor } from '../src/policy/grant-for.js';
import { loadPolicySetWithStats } from '../src/policy/load-policy-set.js';
import type { PolicySet } from '../src/policy/policy-set.js';
import { shippedRuleFiles } from '../src/policy/shipped-rule-files.js';
import { generatePolicySet, organisationShape } from '../test/helpers/generate-policy-set.js';
import { runScenario, scenarioArguments } from './fresh-process.js';
import { describeMachine } from './describe-machine.js';

const SIZES = [10, 1_000, 10_000];
const BUDGET_MS = 2_000;
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

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

/**
 * `copy`: the shipped rules only (applied as copies); `n3`: plus an operator rule inside
 * N3.Reasoner's fragment; `eye`: plus an operator rule with a built-in, so EYE runs.
 */
type Mode = 'copy' | 'n3' | 'eye';

/** Operator rules that derive nothing: one N3.Reasoner runs, one only EYE can (a log: built-in). */
const NO_OP_RULES: Record<Exclude<Mode, 'copy'>, string> = {
  n3: '@prefix ex: <https://example.org/>.\n{ ?x ex:neverUsed ?y. ?y ex:neverUsed ?x } => { ?x ex:neverDerived ?y }.\n',
  eye: '@prefix ex: <https://example.org/>.\n@prefix log: <http://www.w3.org/2000/10/swap/log#>.\n{ ?x ex:neverUsed ?y. ?y log:rawType log:Literal } => { ?x ex:neverDerived ?y }.\n',
};

interface Row {
  mode: Mode;
  n: number;
  run: 'cold' | 'warm';
  wallMs: number;
  readMs: number;
  reasonerMs: number;
  eyeMs: number;
  otherMs: number;
  compileMs: number;
  eyeTriples: number;
  derived: number;
  heapMb: number;
}

/** The example rule files, next to the shipped ones (found the same way, from any build folder). */
const EXAMPLE_RULES = ['group-hierarchy.n3', 'group-membership.n3', 'graph-collections.n3'].map((name) => join(dirname(shippedRuleFiles()[0] ?? ''), 'examples', name));

/** Derived appliesTo and grantsGraph triples kept in the table. */
const derivedCount = (set: PolicySet) => set.policies.reduce((sum, policy) => sum + policy.principals.length + policy.graphs.length, 0);

function row(mode: Mode, n: number, run: Row['run'], wallMs: number, set: PolicySet, stats: LoadStats): Row {
  const reasonerMs = stats.stages.filter((stage) => stage.engine !== 'eye').reduce((sum, stage) => sum + stage.ms, 0);
  return {
    mode, n, run, wallMs, readMs: stats.readMs, reasonerMs, eyeMs: stats.eyeMs, otherMs: stats.otherMs - reasonerMs, compileMs: stats.compileMs,
    eyeTriples: stats.eyeInputTriples, derived: derivedCount(set), heapMb: stats.workerHeapBytes / 2 ** 20,
  };
}

/** One scenario in this (fresh) process: a cold load, then a warm one (EYE module already instantiated). */
async function scenario(mode: Mode, n: number): Promise<Row[]> {
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-'));
  try {
    const file = join(folder, 'policies.ttl');
    await writeFile(file, policyTurtle(n));
    const ruleFiles = shippedRuleFiles();
    if (mode !== 'copy') {
      ruleFiles.push(join(folder, 'no-op.n3'));
      await writeFile(join(folder, 'no-op.n3'), NO_OP_RULES[mode]);
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
      const engines = stats.stages.map((stage) => stage.engine);
      if (!engines.includes(mode === 'copy' ? 'copy' : mode)) throw new Error(`${mode}: the load ran ${engines.join(', ')}`);
      rows.push(row(mode, n, run, wallMs, set, stats));
      // Let the worker instantiate the next EYE module, as it would between reloads.
      await new Promise((done) => setTimeout(done, 1_000));
    }
    return rows;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The organisation: `none` loads it with the shipped rules only, `rules` with the three example rule files and the hierarchy. */
type OrgRules = 'none' | 'rules';

interface OrgRow {
  rules: OrgRules;
  n: number;
  checkColdMs: number;
  loadColdMs: number;
  loadWarmMs: number;
  stages: string;
  derived: number;
  heapMb: number;
  maxRssMb: number;
}

/** `sparql-guard check --json` in a fresh process (node start, config, load, listing), its output drained. */
function timeCheck(configFile: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, [CLI, 'check', '--json', '--config', configFile], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`check failed: ${result.stderr.trim()}`);
  return ms;
}

async function organisation(rules: OrgRules, n: number): Promise<OrgRow> {
  const folder = await mkdtemp(join(tmpdir(), 'sparql-guard-bench-org-'));
  try {
    const { policyTurtle: turtle, hierarchyN3 } = generatePolicySet(organisationShape(n));
    const policies = join(folder, 'policies.ttl');
    const hierarchy = join(folder, 'hierarchy.n3');
    await writeFile(policies, turtle);
    await writeFile(hierarchy, hierarchyN3);
    const operatorRules = rules === 'rules' ? [...EXAMPLE_RULES, hierarchy] : [];
    const configFile = join(folder, 'guard.json');
    await writeFile(configFile, JSON.stringify({ upstream: 'http://127.0.0.1:1/sparql', policies: [policies], rules: operatorRules }));
    const checkColdMs = n <= 10_000 ? timeCheck(configFile) : Number.NaN;

    const times: number[] = [];
    let last: { set: PolicySet; stats: LoadStats } | undefined;
    for (let run = 0; run < 2; run += 1) {
      const started = performance.now();
      last = await loadPolicySetWithStats({ policyFiles: [policies], ruleFiles: [...shippedRuleFiles(), ...operatorRules] });
      times.push(performance.now() - started);
    }
    if (last === undefined) throw new Error('no load');
    const { set, stats } = last;
    // Check before trusting the time: a policy of a subgroup's parent reaches a member agent.
    if (set.policies.length !== n) throw new Error(`expected ${n} policies, got ${set.policies.length}`);
    if (rules === 'rules' && stats.stages.some((stage) => stage.engine === 'eye')) throw new Error('the example rules went to EYE');
    return {
      rules, n, checkColdMs, loadColdMs: times[0] ?? Number.NaN, loadWarmMs: times[1] ?? Number.NaN,
      stages: stats.stages.map((stage) => `${stage.engine} ${stage.ms.toFixed(0)} ms`).join(', '),
      derived: derivedCount(set), heapMb: stats.workerHeapBytes / 2 ** 20, maxRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Organisation sizes; BENCH_ORG_MAX=100000 adds the 100,000-policy load (several GB, minutes on a loaded machine). */
const ORG_SIZES = [1_000, 10_000, ...(Number(process.env.BENCH_ORG_MAX ?? 0) >= 100_000 ? [100_000] : [])];

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    const [kind, mode, n] = args;
    const result = kind === 'org' ? await organisation(mode as OrgRules, Number(n)) : await scenario(mode as Mode, Number(n));
    process.stdout.write(JSON.stringify(result));
    return;
  }
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${loadavg().map((value) => value.toFixed(2)).join(', ')} (1, 5, 15 min) at the start`);
  console.log('each N in a fresh process; cold = first load (worker start + EYE instantiation), warm = next load\n');
  console.log('copy = shipped rules only, applied as copies; n3 = plus one operator rule inside the fragment (N3.Reasoner); eye = plus one operator rule with a built-in (EYE loads every triple the rules need)\n');
  const header = ['rules', 'N', 'run', 'wall ms', 'read+validate ms', 'copy/N3 ms', 'EYE ms', 'other worker ms', 'compile ms', 'triples to EYE', 'derived', 'worker heap MB', 'budget'];
  console.log(header.join(' | '));
  const fmt = (ms: number) => (Number.isNaN(ms) ? '-' : ms.toFixed(0));
  for (const [mode, n] of (['copy', 'n3', 'eye'] as const).flatMap((mode) => SIZES.map((n) => [mode, n] as const))) {
    for (const r of runScenario<Row[]>(import.meta.url, 'flat', mode, String(n))) {
      const verdict = r.n === 10_000 ? (r.wallMs <= BUDGET_MS ? 'ok (<= 2 s)' : 'OVER 2 s') : '';
      console.log([r.mode, r.n, r.run, fmt(r.wallMs), fmt(r.readMs), fmt(r.reasonerMs), fmt(r.eyeMs), fmt(r.otherMs), fmt(r.compileMs), r.eyeTriples, r.derived, fmt(r.heapMb), verdict].join(' | '));
    }
  }

  console.log('\norganisation: 500 groups per 10,000 policies in a hierarchy 9 levels deep, 20 policies per group, a quarter of the agents members of a group in RDF, a third of the policies granting a collection of 25 graphs');
  console.log('none = shipped rules only; rules = plus rules/examples/group-hierarchy.n3, group-membership.n3, graph-collections.n3 and the hierarchy facts');
  console.log('check cold = `sparql-guard check --json` in a fresh process; load = loadPolicySetWithStats in one process, first and second load; RSS = the process peak\n');
  console.log(['rules', 'N', 'check cold ms', 'load cold ms', 'load warm ms', 'engines (warm)', 'derived', 'worker heap MB', 'peak RSS MB', 'target'].join(' | '));
  const byN = new Map<number, OrgRow>();
  for (const [rules, n] of ORG_SIZES.flatMap((n) => (['none', 'rules'] as const).map((rules) => [rules, n] as const))) {
    if (rules === 'none' && n > 10_000) continue;
    const r = runScenario<OrgRow>(import.meta.url, 'org', rules, String(n));
    if (rules === 'none') byN.set(n, r);
    const targets: string[] = [];
    const plain = byN.get(n);
    if (rules === 'rules' && n === 10_000 && plain !== undefined) {
      const ratio = r.checkColdMs / plain.checkColdMs;
      targets.push(`check cold ${ratio.toFixed(2)} x without rules (<= 2 x: ${ratio <= 2 ? 'met' : 'MISSED'})`);
      targets.push(`warm load <= 1 s: ${r.loadWarmMs <= 1_000 ? 'met' : 'MISSED'}`);
      targets.push(`${r.derived} derived, loaded within the 60 s limit (>= 500,000: ${r.derived >= 500_000 ? 'met' : 'fewer derived'})`);
    }
    if (rules === 'rules' && n === 100_000) targets.push(`<= 10 s: ${r.loadColdMs <= 10_000 ? 'met' : 'MISSED'}`);
    console.log([r.rules, r.n, fmt(r.checkColdMs), fmt(r.loadColdMs), fmt(r.loadWarmMs), r.stages, r.derived, fmt(r.heapMb), fmt(r.maxRssMb), targets.join('; ')].join(' | '));
  }
}

await main();
