// Runs the N3 rules over the policy triples in EYE and returns the derived targeting triples.

import { readFile } from 'node:fs/promises';
import { queryOnce, SwiplEye } from 'eyereasoner';
import { DataFactory, Parser, type Quad } from 'n3';
import { guard } from './guard-terms.js';
import { policyLoadError } from './policy-load-error.js';
import { writeN3p } from './write-n3p.js';

/** What one EYE run produced and what it cost. */
export interface Reasoning {
  /** Every derived `guard:appliesTo` and `guard:grantsGraph` triple (duplicates possible). */
  readonly derived: readonly Quad[];
  /** Triples handed to EYE after dropping those no rule can read. */
  readonly inputTriples: number;
  /** Wall time inside EYE (load, reasoning, output), milliseconds. */
  readonly eyeMs: number;
  /** Wall time of the rest (reading rules, writing N3P, parsing the output), milliseconds. */
  readonly otherMs: number;
}

/** The question put to EYE: only the derived vocabulary, nothing else (EYE `--query`). */
const QUERY = `@prefix guard: <https://w3id.org/sparql-guard#>.
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

function createEye(): Promise<Eye> {
  const errors: string[] = [];
  return SwiplEye({ print: () => undefined, printErr: (line: string) => errors.push(line) }).then((module) => ({ module, errors }));
}

/**
 * Runs the rule files over the policy triples and returns what they derive. A
 * file made only of copy rules (`{ ?s p ?o } => { ?s q ?o }`, as the shipped
 * rules are) is applied here directly: that is all EYE would do with it, and
 * EYE in WebAssembly needs about 1.5 s just to load the triples of 10,000
 * policies. Any other rule file goes to EYE with the copy rules, the copied
 * triples and the triples its rules mention, so the result is EYE's. A rule file
 * that EYE cannot read, or any error EYE reports, fails the load: fail closed.
 */
export async function reasonOverPolicies(quads: readonly Quad[], ruleFiles: readonly string[]): Promise<Reasoning> {
  const started = performance.now();
  const rules = await Promise.all(ruleFiles.map(readRuleFile));
  const copyRules = rules.map(readCopyRules);
  const copied = applyCopyRules(quads, copyRules.flatMap((list) => list ?? []));
  const eyeRules = rules.filter((_, index) => copyRules[index] === undefined);
  if (eyeRules.length === 0) {
    const derived = copied.filter((quad) => quad.predicate.value === guard.appliesTo || quad.predicate.value === guard.grantsGraph);
    return { derived, inputTriples: 0, eyeMs: 0, otherMs: performance.now() - started };
  }

  // The copy rules go to EYE as well, for triples that the other rules derive; the
  // triples they read are already copied, so only what the other rules mention goes in.
  const needed = predicatesUsed(eyeRules);
  const input = [...(needed === 'all' ? quads : quads.filter((quad) => needed.has(quad.predicate.value))), ...copied];
  const data = writeN3p(input);

  const eye = await (nextEye ?? createEye());
  nextEye = undefined;
  const { module, errors } = eye;
  module.FS.writeFile('data.n3p', data);
  rules.forEach((text, index) => module.FS.writeFile(`rule-${index}.n3`, text));
  module.FS.writeFile('query.n3', QUERY);
  const args = ['--nope', '--quiet', '--no-qnames', '--no-distinct-output', '--output', 'out.n3', '--n3p', 'data.n3p'];
  args.push(...rules.map((_, index) => `rule-${index}.n3`), '--query', 'query.n3');

  const eyeStarted = performance.now();
  let output = '';
  try {
    queryOnce(module, 'main', args);
    output = module.FS.readFile('out.n3', { encoding: 'utf8' });
  } catch (error) {
    errors.push(error instanceof Error ? error.message : String(error));
  }
  const eyeMs = performance.now() - eyeStarted;
  if (errors.length > 0) throw eyeFailure(errors, ruleFiles);

  let derived: Quad[];
  try {
    derived = new Parser({ format: 'text/n3' }).parse(output);
  } catch (error) {
    throw policyLoadError(`the rules derived output that is not plain triples (${(error as Error).message})`, ruleFiles.join(', '));
  }
  return { derived, inputTriples: input.length, eyeMs, otherMs: performance.now() - started - eyeMs };
}

/** A rule that copies every `?s from ?o` triple as `?s to ?o`. */
interface CopyRule {
  readonly from: string;
  readonly to: string;
}

const LOG_IMPLIES = 'http://www.w3.org/2000/10/swap/log#implies';

/**
 * The copy rules of a rule file, or undefined when the file holds anything else
 * (a fact, a rule with more than one triple on a side, a constant, a variable
 * predicate, a built-in...). N3.js turns `<=` into `=>` with the sides swapped.
 */
function readCopyRules(text: string): CopyRule[] | undefined {
  let quads: Quad[];
  try {
    quads = new Parser({ format: 'text/n3' }).parse(text);
  } catch {
    return undefined;
  }
  const byFormula = new Map<string, Quad[]>();
  const implications: Quad[] = [];
  for (const quad of quads) {
    if (quad.graph.termType === 'DefaultGraph') implications.push(quad);
    else byFormula.set(quad.graph.value, [...(byFormula.get(quad.graph.value) ?? []), quad]);
  }
  const copies: CopyRule[] = [];
  for (const { subject, predicate, object } of implications) {
    if (predicate.value !== LOG_IMPLIES || subject.termType !== 'BlankNode' || object.termType !== 'BlankNode') return undefined;
    const [body, ...moreBody] = byFormula.get(subject.value) ?? [];
    const [head, ...moreHead] = byFormula.get(object.value) ?? [];
    byFormula.delete(subject.value);
    byFormula.delete(object.value);
    if (body === undefined || head === undefined || moreBody.length > 0 || moreHead.length > 0) return undefined;
    const variables = [body.subject, body.object, head.subject, head.object];
    if (variables.some((term) => term.termType !== 'Variable')) return undefined;
    if (body.subject.value === body.object.value || !body.subject.equals(head.subject) || !body.object.equals(head.object)) return undefined;
    if (body.predicate.termType !== 'NamedNode' || head.predicate.termType !== 'NamedNode') return undefined;
    copies.push({ from: body.predicate.value, to: head.predicate.value });
  }
  // A formula that is no rule's side (a quoted graph in a fact) is more than copying.
  return byFormula.size === 0 ? copies : undefined;
}

/** Applies copy rules until nothing new comes out (a chain p -> q -> r copies p to r). */
function applyCopyRules(quads: readonly Quad[], rules: readonly CopyRule[]): Quad[] {
  if (rules.length === 0) return [];
  const targets = new Map<string, Set<string>>();
  for (const { from, to } of rules) targets.set(from, (targets.get(from) ?? new Set()).add(to));
  const seen = new Set<string>();
  const copied: Quad[] = [];
  let frontier: readonly Quad[] = quads;
  while (frontier.length > 0) {
    const next: Quad[] = [];
    for (const { subject, predicate, object } of frontier) {
      for (const to of targets.get(predicate.value) ?? []) {
        const copy = DataFactory.quad(subject, DataFactory.namedNode(to), object);
        const key = `${subject.id} ${to} ${object.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        copied.push(copy);
        next.push(copy);
      }
    }
    frontier = next;
  }
  return copied;
}

async function readRuleFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw policyLoadError(`rule file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'read error'})`, file);
  }
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
  const parts = line.split('**').map((part) => part.trim()).filter((part) => part !== '' && part !== 'ERROR');
  const index = /rule-(\d+)\.n3/.exec(line)?.[1];
  const file = index === undefined ? undefined : ruleFiles[Number(index)];
  let what = (parts.length > 1 ? parts.slice(1).join(' ') : (parts[0] ?? line)).replace(/\($/, '');
  if (what === 'inference_fuse') what = 'inference_fuse (a rule concluded false)';
  return policyLoadError(`rule file fails in EYE: ${what}`, file ?? ruleFiles.join(', '));
}
