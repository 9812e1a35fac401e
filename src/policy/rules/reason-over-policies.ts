// Runs the N3 rules over the policy triples, in the forward chainer or EYE per rule file, and returns the derived targeting triples (on the policy worker).

import type { SwiplEye } from 'eyereasoner';
import { Parser, type Quad } from 'n3';
import { classifyRules, derivedPredicates, premisePredicates, type HornRule, type RuleReading } from './classify-rules.js';
import { GUARD, guard } from '../../vocabulary.js';
import { policyLoadError } from '../policy-load-error.js';
import { forwardChain, type Closure } from './forward-chain.js';
import { derivedTriples, type DerivedTriples } from './derived-triples.js';
import { writeN3p } from './write-n3p.js';
import { checkVocabulary } from '../check-vocabulary.js';
import { readRuleFile } from './read-rule-file.js';
import { checkRuleConclusions } from './check-rule-conclusions.js';

/** The engine that ran a rule file: the forward chainer with copy rules only, the forward chainer (forwardChain), or EYE. */
export type Engine = 'copy' | 'chain' | 'eye';

/** Which engine ran one rule file, and why it was not the forward chainer when it was EYE. */
export interface RuleFileRun {
  readonly file: string;
  readonly engine: Engine;
  /** For EYE: the construct outside the Horn fragment, or the EYE file whose conclusions it reads. */
  readonly reason?: string;
}

/** One engine's run over the files it was given. */
export interface EngineRun {
  readonly engine: Engine;
  readonly files: readonly string[];
  readonly ms: number;
  readonly inputTriples: number;
}

/** What the rules produced and what it cost. */
export interface Reasoning {
  /** Every `guard:appliesTo` and `guard:grantsGraph` triple the rules entail, stated ones included (duplicates possible). */
  readonly derived: DerivedTriples;
  /** Triples handed to EYE after dropping those no rule can read (0 when EYE did not run). */
  readonly inputTriples: number;
  /** Wall time inside EYE (load, reasoning, output), milliseconds. */
  readonly eyeMs: number;
  /** Wall time of the rest (reading rules, the forward chainer, N3P, parsing the output), milliseconds. */
  readonly otherMs: number;
  /** Per rule file, in the order given: the engine that ran it. */
  readonly files: readonly RuleFileRun[];
  /** Per engine that ran, in order: its files and time. */
  readonly stages: readonly EngineRun[];
  /** The classification of each rule file, for the warnings of `check`. */
  readonly readings: readonly RuleReading[];
}

/** `eye` runs every rule file in EYE (the reference the differential test compares against); `auto` picks per file. */
export type EngineChoice = 'auto' | 'eye';

/** The question put to EYE: only the derived vocabulary, nothing else (EYE `--query`). */
const QUERY = `@prefix guard: <${GUARD}>.
{ ?policy guard:appliesTo ?principal } => { ?policy guard:appliesTo ?principal }.
{ ?policy guard:grantsGraph ?graph } => { ?policy guard:grantsGraph ?graph }.
`;

type EyeModule = Awaited<ReturnType<typeof SwiplEye>>;
interface Eye {
  readonly module: EyeModule;
  readonly errors: string[];
}

let nextEye: Promise<Eye> | undefined;

/**
 * Starts instantiating the EYE WebAssembly module ahead of need (about 0.2 s),
 * so a load does not wait for it. Each run needs a fresh module: EYE keeps
 * the facts of a run in the Prolog database.
 */
export function warmEye(): void {
  nextEye ??= createEye();
}

/**
 * EYE's package (SWI-Prolog as WebAssembly, inlined: about 0.14 s to import) is imported at the
 * first load that needs it, not with this module: a load of copy rules alone, `check` and the
 * guard's start never pay for it.
 */
const eyeReasoner = (): Promise<typeof import('eyereasoner')> => import('eyereasoner');

async function createEye(): Promise<Eye> {
  const errors: string[] = [];
  const { SwiplEye: createModule } = await eyeReasoner();
  const module = await createModule({ print: () => undefined, printErr: (line: string) => errors.push(line) });
  return { module, errors };
}

const TARGET_PREDICATES = new Set<string>([guard.appliesTo, guard.grantsGraph]);

/**
 * Runs the rule files over the policy triples and returns what they entail,
 * as EYE would running all of them together (docs/design/policy.md, "Two engines").
 * Each file is classified by reading it (classifyRules): a file inside
 * the Horn fragment runs in the forward chainer (forwardChain), labelled `copy`
 * when it holds only copy rules (the shipped rules), unless an EYE file's
 * conclusions feed it; every other file runs in EYE, after the chainer, with
 * the chainer's closure as facts. A rule file that cannot be read, or any error EYE reports, fails the
 * load: fail closed. `readText` gives a rule file's text (from disk by default).
 */
export async function reasonOverPolicies(
  quads: readonly Quad[],
  ruleFiles: readonly string[],
  choice: EngineChoice = 'auto',
  readText: (file: string) => Promise<string> = readRuleFile,
): Promise<Reasoning> {
  const started = performance.now();
  const texts = await Promise.all(ruleFiles.map((file) => readText(file)));
  texts.forEach((text, index) => checkRuleVocabulary(text, ruleFiles[index] ?? ''));
  const readings = texts.map(classifyRules);
  checkRuleConclusions(readings, ruleFiles);
  const inEye = planEngines(readings, choice);

  const files: RuleFileRun[] = ruleFiles.map((file, index) => {
    const why = inEye[index];
    if (why !== undefined) return { file, engine: 'eye', reason: why };
    const reading = readings[index];
    const copies = reading?.fragment === true && reading.facts.length === 0 ? readCopyRules(reading.rules) : undefined;
    return { file, engine: copies === undefined ? 'chain' : 'copy' };
  });
  const stages: EngineRun[] = [];

  // Stage 1: the fragment files no EYE file feeds, to their closure.
  const first = files.flatMap((run, index) => (run.engine === 'eye' ? [] : [index]));
  const eyeIndexes = files.flatMap((run, index) => (run.engine === 'eye' ? [index] : []));
  const eyeTexts = eyeIndexes.map((index) => texts[index] ?? '');
  const eyeNeeds = eyeIndexes.length === 0 ? new Set<string>() : predicatesUsed(eyeTexts);
  let closure: readonly Quad[] = quads;
  let chained: Closure | undefined;
  if (first.length > 0) {
    const stageStarted = performance.now();
    const fragment = first.map((index) => readings[index]).filter((reading) => reading?.fragment === true);
    const rules = fragment.flatMap((reading) => reading.rules);
    const facts = fragment.flatMap((reading) => reading.facts);
    const copies = first.every((index) => files[index]?.engine === 'copy');
    const reads = premisePredicates({ fragment: true, rules, facts });
    // Only what these rules or the EYE files read, and the targets themselves, go in.
    const keep = ({ predicate }: Quad) =>
      reads === 'any' ||
      eyeNeeds === 'all' ||
      reads.has(predicate.value) ||
      eyeNeeds.has(predicate.value) ||
      TARGET_PREDICATES.has(predicate.value);
    const input = quads.filter(keep);
    chained = forwardChain([...input, ...facts], rules);
    // Without EYE after it, the targets are read out as numbers (the closure may be a million triples).
    if (eyeIndexes.length > 0) closure = chained.quads();
    stages.push({
      engine: copies ? 'copy' : 'chain',
      files: first.map((index) => ruleFiles[index] ?? ''),
      ms: performance.now() - stageStarted,
      inputTriples: input.length,
    });
  }
  if (eyeIndexes.length === 0) {
    const derived: DerivedTriples =
      chained === undefined
        ? derivedTriples(quads)
        : { terms: chained.terms, appliesTo: chained.pairsOf(guard.appliesTo), grantsGraph: chained.pairsOf(guard.grantsGraph) };
    return { derived, inputTriples: 0, eyeMs: 0, otherMs: performance.now() - started, files, stages, readings };
  }

  // Stage 2: EYE with its files, over the policy triples and what stage 1 derived.
  const eyeFiles = eyeIndexes.map((index) => ruleFiles[index] ?? '');
  const input =
    eyeNeeds === 'all'
      ? closure
      : closure.filter((quad) => eyeNeeds.has(quad.predicate.value) || TARGET_PREDICATES.has(quad.predicate.value));
  const { derived, eyeMs } = await runEye(input, eyeTexts, eyeFiles);
  stages.push({ engine: 'eye', files: eyeFiles, ms: eyeMs, inputTriples: input.length });
  return { derived, inputTriples: input.length, eyeMs, otherMs: performance.now() - started - eyeMs, files, stages, readings };
}

/**
 * Per rule file, undefined when it runs outside EYE, else the reason it runs in EYE:
 * outside the fragment, or reading (directly or through other fragment files) a
 * predicate that an EYE file derives or states, which only a joint run sees.
 */
function planEngines(readings: readonly RuleReading[], choice: EngineChoice): (string | undefined)[] {
  const plan = readings.map((reading) =>
    choice === 'eye' ? 'every file in EYE (reference run)' : reading.fragment ? undefined : reading.reason,
  );
  /** Predicates EYE files derive or state; `any` once one derives a variable predicate or could not be read. */
  const fed = { any: false, predicates: new Set<string>() };
  const feed = (reading: RuleReading) => {
    const derives = derivedPredicates(reading);
    if (derives === 'any' || reading.facts === undefined) {
      fed.any = true;
      return;
    }
    for (const predicate of derives) fed.predicates.add(predicate);
    for (const fact of reading.facts) fed.predicates.add(fact.predicate.value);
  };
  readings.forEach((reading, index) => plan[index] !== undefined && feed(reading));
  for (let changed = true; changed;) {
    changed = false;
    for (const [index, reading] of readings.entries()) {
      if (plan[index] !== undefined) continue;
      const reads = premisePredicates(reading);
      const why =
        fed.any || (reads === 'any' && fed.predicates.size > 0)
          ? 'it may read what a rule in EYE derives'
          : reads === 'any'
            ? undefined
            : [...reads]
                .filter((predicate) => fed.predicates.has(predicate))
                .map((predicate) => `it reads <${predicate}>, which a rule in EYE derives`)[0];
      if (why === undefined) continue;
      plan[index] = why;
      feed(reading);
      changed = true;
    }
  }
  return plan;
}

async function runEye(
  input: readonly Quad[],
  texts: readonly string[],
  files: readonly string[],
): Promise<{ derived: DerivedTriples; eyeMs: number }> {
  const data = writeN3p(input);
  const [eye, { queryOnce }] = await Promise.all([nextEye ?? createEye(), eyeReasoner()]);
  nextEye = undefined;
  const { module, errors } = eye;
  module.FS.writeFile('data.n3p', data);
  texts.forEach((text, index) => module.FS.writeFile(`rule-${index}.n3`, text));
  module.FS.writeFile('query.n3', QUERY);
  const args = ['--nope', '--quiet', '--no-qnames', '--no-distinct-output', '--output', 'out.n3', '--n3p', 'data.n3p'];
  args.push(...texts.map((_, index) => `rule-${index}.n3`), '--query', 'query.n3');

  const eyeStarted = performance.now();
  let output = '';
  try {
    queryOnce(module, 'main', args);
    output = module.FS.readFile('out.n3', { encoding: 'utf8' });
  } catch (error) {
    errors.push(error instanceof Error ? error.message : String(error));
  }
  const eyeMs = performance.now() - eyeStarted;
  if (errors.length > 0) throw eyeFailure(errors, files);
  try {
    return { derived: derivedTriples(new Parser({ format: 'text/n3' }).parse(output)), eyeMs };
  } catch (error) {
    throw policyLoadError(`the rules derived output that is not plain triples (${(error as Error).message})`, files.join(', '));
  }
}

/** A rule that copies every `?s from ?o` triple as `?s to ?o`. */
interface CopyRule {
  readonly from: string;
  readonly to: string;
}

/**
 * The rules as copy rules (`{ ?s p ?o } => { ?s q ?o }`, as the shipped rules are), or
 * undefined when any rule is more than that: `check` then names the stage `copy`.
 */
function readCopyRules(rules: readonly HornRule[]): CopyRule[] | undefined {
  const copies: CopyRule[] = [];
  for (const { premise, conclusion } of rules) {
    const [body, ...moreBody] = premise;
    const [head, ...moreHead] = conclusion;
    if (body === undefined || head === undefined || moreBody.length > 0 || moreHead.length > 0) return undefined;
    const variables = [body.subject, body.object, head.subject, head.object];
    if (variables.some((term) => term.termType !== 'Variable')) return undefined;
    if (body.subject.value === body.object.value || !body.subject.equals(head.subject) || !body.object.equals(head.object))
      return undefined;
    if (body.predicate.termType !== 'NamedNode' || head.predicate.termType !== 'NamedNode') return undefined;
    copies.push({ from: body.predicate.value, to: head.predicate.value });
  }
  return copies;
}

/**
 * Checks a rule file's IRIs against the closed vocabulary (checkVocabulary), formulas
 * included. A file N3.js cannot parse is left to EYE, which refuses it or reads it.
 */
function checkRuleVocabulary(text: string, file: string): void {
  let quads: Quad[];
  try {
    quads = new Parser({ format: 'text/n3' }).parse(text);
  } catch {
    return;
  }
  checkVocabulary(quads, file);
}

/**
 * The predicates any rule mentions: a triple with another predicate can match
 * no rule, so EYE need not load it (the labels, comments and hidden paths of
 * 10,000 policies). A variable in predicate position, or a file N3.js cannot
 * parse, means every triple goes in; EYE then judges the file itself.
 */
function predicatesUsed(rules: readonly string[]): Set<string> | 'all' {
  // Only what the rules name: 10,000 `a guard:Policy` triples would be a quarter of EYE's input
  // for no rule; a rule that uses `a` names rdf:type itself (N3.js expands it) and gets them.
  const used = new Set<string>();
  for (const text of rules) {
    let quads: Quad[];
    try {
      quads = new Parser({ format: 'text/n3' }).parse(text);
    } catch {
      return 'all';
    }
    // N3.js yields the triples inside formulas too (`{ ... } => { ... }`, log:collectAllIn lists, ...).
    for (const { predicate } of quads) {
      if (predicate.termType !== 'NamedNode') return 'all';
      used.add(predicate.value);
    }
  }
  return used;
}

/**
 * One line naming the rule file EYE blames. EYE writes `** ERROR ** <where> ** <what>`,
 * where <where> is the MEMFS copy `file:///rule-N.n3` for a syntax error, or an
 * internal predicate name (and a multi-line dump) for a failure while reasoning.
 */
function eyeFailure(errors: readonly string[], ruleFiles: readonly string[]) {
  const line = errors.find((text) => text.includes('** ERROR **')) ?? errors[0] ?? 'unknown error';
  const parts = line
    .split('**')
    .map((part) => part.trim())
    .filter((part) => part !== '' && part !== 'ERROR');
  const index = /rule-(\d+)\.n3/.exec(line)?.[1];
  const file = index === undefined ? undefined : ruleFiles[Number(index)];
  let what = (parts.length > 1 ? parts.slice(1).join(' ') : (parts[0] ?? line)).replace(/\($/, '');
  if (what === 'inference_fuse') what = 'inference_fuse (a rule concluded false)';
  return policyLoadError(`rule file fails in EYE: ${what}`, file ?? ruleFiles.join(', '));
}
