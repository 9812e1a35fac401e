// Reads the operator's rules against the policy data and says which ones will not do what they seem to, the warnings of `check` (on the policy worker).

import type { Quad, Term } from 'n3';
import { isBuiltIn, type HornRule, type RuleReading } from './classify-rules.js';
import { GUARD, guard, isReservedIri, RDF_TYPE, XSD_STRING } from '../../vocabulary.js';
import { iriSpliceProblem } from '../../iri.js';

/** Predicates whose triples grow with the number of policies. */
const POLICY_SIZED = new Set<string>([
  guard.agent,
  guard.group,
  guard.readGraph,
  guard.readGraphPrefix,
  guard.hidePath,
  guard.appliesTo,
  guard.grantsGraph,
  RDF_TYPE,
]);

/**
 * One line per problem found in the rule files (the shipped ones excepted), for the
 * operator: a rule that cannot fire (a premise predicate that no triple, fact or
 * conclusion has), a rule whose conclusions the loader ignores (a predicate no rule
 * reads but guard:appliesTo and guard:grantsGraph) or refuses (a constant graph or
 * principal that validation fails), and a rule whose cost grows with the square of the
 * policies (two premise patterns that share no variable, or two policy-sized patterns
 * joined only through their objects: two policies sharing a group or a graph).
 * Only rules N3.js can read are judged; nothing here changes what loads.
 */
export function warnAboutRules(
  quads: readonly Quad[],
  readings: readonly RuleReading[],
  ruleFiles: readonly string[],
  skip: ReadonlySet<string>,
): string[] {
  const stated = new Set<string>();
  for (const { predicate } of quads) stated.add(predicate.value);
  const derived = new Set<string>();
  const read = new Set<string>([guard.appliesTo, guard.grantsGraph]);
  let derivesAny = false;
  let readsAny = false;
  for (const reading of readings) {
    for (const fact of reading.facts ?? []) stated.add(fact.predicate.value);
    for (const rule of reading.rules ?? []) {
      for (const { predicate } of rule.conclusion) {
        if (predicate.termType === 'NamedNode') derived.add(predicate.value);
        else derivesAny = true;
      }
      for (const { predicate } of rule.premise) {
        if (predicate.termType === 'NamedNode') read.add(predicate.value);
        else readsAny = true;
      }
    }
  }

  const warnings: string[] = [];
  readings.forEach((reading, index) => {
    const file = ruleFiles[index] ?? '';
    if (skip.has(file)) return;
    (reading.rules ?? []).forEach((rule, ruleIndex) => {
      const where = `${file}: rule ${ruleIndex + 1} (${summarise(rule)})`;
      const missing = rule.premise.find(
        ({ predicate }) =>
          predicate.termType === 'NamedNode' &&
          !isBuiltIn(predicate.value) &&
          !stated.has(predicate.value) &&
          !derived.has(predicate.value) &&
          !derivesAny,
      );
      if (missing !== undefined) warnings.push(`${where} cannot fire: no triple, fact or rule has <${missing.predicate.value}>`);
      for (const { predicate, object } of rule.conclusion) {
        if (predicate.termType === 'NamedNode' && !readsAny && !read.has(predicate.value)) {
          warnings.push(
            `${where} derives <${predicate.value}>, which no rule reads: the loader keeps only guard:appliesTo and guard:grantsGraph`,
          );
        }
        const refused = refusal(predicate.value, object);
        if (refused !== undefined) warnings.push(`${where} derives a ${refused}: the load will be refused`);
      }
      const square = squareJoin(rule);
      if (square !== undefined) warnings.push(`${where} costs the square of the policies: ${square}`);
    });
  });
  return warnings;
}

/** Why validation would refuse a constant a conclusion states, if it would. */
function refusal(predicate: string, object: Term): string | undefined {
  if (object.termType === 'Variable') return undefined;
  if (predicate === guard.grantsGraph) {
    if (object.termType !== 'NamedNode') return 'graph that is not an IRI';
    if (isReservedIri(object.value)) return 'reserved graph IRI';
    if (iriSpliceProblem(object.value) !== undefined) return `graph IRI that ${iriSpliceProblem(object.value) ?? ''}`;
  }
  if (predicate === guard.appliesTo) {
    if (object.termType === 'NamedNode' && isReservedIri(object.value)) return 'reserved principal IRI';
    if (object.termType === 'Literal' && (object.datatype.value !== XSD_STRING || object.language !== '' || object.value === ''))
      return 'principal that is neither an IRI nor a group name';
  }
  return undefined;
}

/** The reason a premise's cost is quadratic in the policies, or undefined. */
function squareJoin(rule: HornRule): string | undefined {
  const patterns = rule.premise;
  for (let i = 0; i < patterns.length; i += 1) {
    for (let j = i + 1; j < patterns.length; j += 1) {
      const a = patterns[i];
      const b = patterns[j];
      if (a === undefined || b === undefined || !unbounded(a) || !unbounded(b)) continue;
      if (!connected(patterns, i, j)) return `${pattern(a)} and ${pattern(b)} share no variable (every pair is tried)`;
      const shared = variablesOf(a).filter((name) => variablesOf(b).includes(name));
      const throughObjects =
        shared.length > 0 && shared.every((name) => a.object.value === name && b.object.value === name && a.object.termType === 'Variable');
      const policySized = [a, b].every((quad) => quad.predicate.termType === 'NamedNode' && POLICY_SIZED.has(quad.predicate.value));
      if (throughObjects && policySized && !a.subject.equals(b.subject))
        return `${pattern(a)} and ${pattern(b)} join only on their objects (every two policies sharing one)`;
    }
  }
  return undefined;
}

/** A pattern with no constant subject or object: it matches every triple of its predicate. */
function unbounded(quad: Quad): boolean {
  return quad.subject.termType === 'Variable' && quad.object.termType === 'Variable';
}

function variablesOf(quad: Quad): string[] {
  return [quad.subject, quad.predicate, quad.object].filter((term) => term.termType === 'Variable').map((term) => term.value);
}

/** Whether patterns i and j are linked by shared variables, directly or through other patterns. */
function connected(patterns: readonly Quad[], i: number, j: number): boolean {
  const reached = new Set([i]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [k, quad] of patterns.entries()) {
      if (reached.has(k)) continue;
      const names = variablesOf(quad);
      if ([...reached].some((r) => variablesOf(patterns[r] as Quad).some((name) => names.includes(name)))) {
        reached.add(k);
        grew = true;
      }
    }
  }
  return reached.has(j);
}

/** A rule as one line of at most 120 characters, for messages. */
export function summarise(rule: HornRule): string {
  const side = (quads: readonly Quad[]) => quads.map(pattern).join('. ');
  const text = `{ ${side(rule.premise)} } => { ${side(rule.conclusion)} }`;
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function pattern(quad: Quad): string {
  const show = (term: Term) =>
    term.termType === 'Variable'
      ? `?${term.value}`
      : term.termType === 'BlankNode'
        ? '[]'
        : term.termType === 'NamedNode'
          ? term.value.startsWith(GUARD)
            ? `guard:${term.value.slice(GUARD.length)}`
            : `<${term.value}>`
          : JSON.stringify(term.value);
  return `${show(quad.subject)} ${show(quad.predicate)} ${show(quad.object)}`;
}
