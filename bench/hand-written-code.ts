// Benchmark (h): the code still written by hand for speed beside the library it would be replaced by: the forward chainer (forwardChain vs N3.Reasoner); the undici dispatch handler is (k), bench/upstream-client.ts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser, type Quad } from 'n3';
import { classifyRules, premisePredicates, type HornRule } from '../src/policy/rules/classify-rules.js';
import { forwardChain } from '../src/policy/rules/forward-chain.js';
import { shippedRuleFiles } from '../src/policy/rules/shipped-rule-files.js';
import { guard } from '../src/vocabulary.js';
import { generatePolicySet, organisationShape } from '../test/helpers/generate-policy-set.js';
import { runN3Reasoner } from './_util/run-n3-reasoner.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';
import { percentile } from './_util/percentile.js';

/**
 * The rule engines of the Horn fragment, each from the loader's input (the policy triples the
 * rules read, and the rules and facts of the shipped and example rule files) to the closure.
 */
const RULE_ENGINES = {
  forwardChain: (input: RuleInput) => forwardChain([...input.quads, ...input.facts], input.rules),
  'N3.Reasoner (n3 Store)': (input: RuleInput) => runN3Reasoner(input.quads, input.rules, input.facts),
} as const;

interface RuleInput {
  readonly quads: readonly Quad[];
  readonly rules: readonly HornRule[];
  readonly facts: readonly Quad[];
}

/** The organisation of `n` policies with the three example rule files, as the loader hands it to the engine. */
function ruleInput(n: number): RuleInput {
  const { policyTurtle, hierarchyN3 } = generatePolicySet(organisationShape(n));
  const files = [
    ...shippedRuleFiles(),
    ...['group-hierarchy.n3', 'group-membership.n3', 'graph-collections.n3'].map((name) => join('rules/examples', name)),
  ];
  const readings = [...files.map((file) => readFileSync(file, 'utf8')), hierarchyN3].map(classifyRules);
  const rules = readings.flatMap((reading) => reading.rules ?? []);
  const facts = readings.flatMap((reading) => reading.facts ?? []);
  const reads = premisePredicates({ fragment: true, rules, facts });
  const targets = new Set<string>([guard.appliesTo, guard.grantsGraph]);
  const quads = new Parser()
    .parse(policyTurtle)
    .filter(({ predicate }) => reads === 'any' || reads.has(predicate.value) || targets.has(predicate.value));
  return { quads, rules, facts };
}

/** The closure as sorted N3.js ids, to compare engines. */
function closureIds(quads: Iterable<Quad>): string[] {
  return [...quads].map(({ subject, predicate, object }) => `${subject.id} ${predicate.id} ${object.id}`).sort();
}

interface Result {
  readonly input: string;
  readonly alternative: string;
  /** Per run: median and p99, in ns. */
  readonly p50Ns: number;
  readonly p99Ns: number;
  /** CPU time (user + system) per run, in ns. */
  readonly cpuNs: number;
  readonly runs: number;
}

function scenario(policies: number, alternative: string): Result {
  const rules = ruleInput(policies);
  const run = RULE_ENGINES[alternative as keyof typeof RULE_ENGINES];
  // Checked first: both engines give the same closure.
  const ours = closureIds(forwardChain([...rules.quads, ...rules.facts], rules.rules).quads());
  const theirs = closureIds(runN3Reasoner(rules.quads, rules.rules, rules.facts).getQuads(null, null, null, null));
  if (ours.length !== theirs.length || ours.some((id, index) => id !== theirs[index])) {
    throw new Error(`forwardChain gives ${ours.length} triples, N3.Reasoner ${theirs.length}, for ${policies} policies`);
  }
  const runs = policies >= 10_000 ? 3 : 10;
  run(rules);
  const perRun: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < runs; i += 1) {
    const started = process.hrtime.bigint();
    run(rules);
    perRun.push(Number(process.hrtime.bigint() - started));
  }
  const cpu = process.cpuUsage(cpuBefore);
  perRun.sort((a, b) => a - b);
  return {
    input: `organisation ${policies.toLocaleString('en')} policies, ${ours.length.toLocaleString('en')} triples in the closure`,
    alternative,
    p50Ns: percentile(perRun, 50),
    p99Ns: percentile(perRun, 99),
    cpuNs: ((cpu.user + cpu.system) * 1000) / runs,
    runs,
  };
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(scenario(Number(args[0]), args[1]!)));
    return;
  }
  console.log('### (h) Hand-written code beside the libraries\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    'Horn rules to their closure: the organisation (500 groups per 10,000 policies, 9 levels, a quarter members, a third collections) with the shipped and the three example rule files, the triples the loader hands the engine; each alternative in a fresh process, one warm-up run, then 10 runs (3 at 10,000); per run, in ms; the closures checked equal first\n',
  );
  console.log(tableHeader(['input', 'alternative', 'p50 ms/run', 'p99 ms/run', 'CPU ms/run', 'CPU vs ours', 'runs'], 'llrrrrr'));
  for (const policies of [1_000, 10_000]) {
    let ours: Result | undefined;
    for (const alternative of Object.keys(RULE_ENGINES)) {
      const r = runScenario<Result>(import.meta.url, String(policies), alternative);
      ours ??= r;
      const ms = (ns: number): string => (ns / 1e6).toFixed(0);
      console.log(
        tableRow([r.input, alternative, ms(r.p50Ns), ms(r.p99Ns), ms(r.cpuNs), `${(r.cpuNs / ours.cpuNs).toFixed(2)} x`, r.runs]),
      );
    }
  }
  console.log(`\nload: ${describeLoad()} at the end\n`);
}

await main();
