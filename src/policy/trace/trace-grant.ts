// Explains one caller's grant for an operator, `check --why`: per graph, the policies that give it and the facts and rules behind each (on the command line's thread).

import { DataFactory, type Quad, type Term } from 'n3';
import type { Caller } from '../../auth/caller.js';
import { GUARD, guard, isSkolemIri, skolemIri, XSD_STRING } from '../../vocabulary.js';
import { principalKey } from '../principal-index.js';
import { classifyRules, type HornRule } from '../rules/classify-rules.js';
import { readRuleFile } from '../rules/read-rule-file.js';
import { forwardChain, type Closure } from '../rules/forward-chain.js';
import { templateGives, type GraphTemplate, type TemplateValues } from '../compile-graph-template.js';
import { grantFor, restrictionsIn, type GraphRestriction } from '../grant.js';
import type { CompiledPolicy, PolicyLimits, PolicySet, Principal } from '../policy-set.js';

/** Triples that entered a load from one place: a policy file (its path), a rule file's facts, or a fact source. */
export interface FactGroup {
  readonly origin: string;
  readonly quads: readonly Quad[];
}

/** One link of a chain: a triple and what put it in the closure. Each triple is explained once; later it is `shownAbove`. */
export type TraceStep =
  | { readonly triple: string; readonly fact: string }
  | { readonly triple: string; readonly rule: TracedRule; readonly from: readonly TraceStep[] }
  | { readonly triple: string; readonly listedUnder: string; readonly from: readonly TraceStep[] }
  | { readonly triple: string; readonly template: string; readonly from: readonly TraceStep[] }
  | { readonly triple: string; readonly eye: readonly string[] }
  | { readonly triple: string; readonly shownAbove: true };

/** A rule, as an operator finds it: its file, its number there (from 1) and its text. */
export interface TracedRule {
  readonly file: string;
  readonly number: number;
  readonly text: string;
}

/** Why one policy gives one graph to the caller. */
export interface TracedPolicy {
  readonly policy: string;
  readonly file: string;
  /** The principal of the caller through which the policy applies (`Everyone`, `<iri>`, `group "name"`, ...). */
  readonly appliesAs: string;
  readonly applies: TraceStep;
  readonly grants: TraceStep;
}

/** One kind of limit a caller gets: the value in force and the policies that set that value. */
export interface TracedLimit {
  readonly kind: keyof PolicyLimits;
  readonly value: number;
  readonly policies: readonly string[];
}

/** The whole explanation of one caller's grant. */
export interface GrantTrace {
  readonly agent: string;
  readonly groups: readonly string[];
  readonly authenticated: boolean;
  /** The policies that apply, in order of listing. */
  readonly policies: readonly string[];
  /**
   * The caller's limits (docs/policies.md, "Limits per caller"): per kind some policy sets, the largest value and the
   * policies that set it, in order of listing; a kind no policy sets is absent (it does not limit the caller).
   */
  readonly limits: readonly TracedLimit[];
  /**
   * Every granted graph, sorted, with the policies that grant it (by name, by prefix, or by a
   * template this caller fills) and the restrictions that apply to the caller there.
   */
  readonly graphs: readonly {
    readonly graph: string;
    readonly policies: readonly TracedPolicy[];
    readonly restrictions: readonly GraphRestriction[];
  }[];
}

/**
 * Explains `caller`'s grant under `set`. The facts and rule files must be those the set was
 * loaded from. The rule files inside the forward chainer's fragment run again here with
 * tracing on (forwardChain's `trace`); a triple only EYE derives is named as EYE's, without a
 * chain; a graph listed from the store under a `guard:readGraphPrefix` says so. Each triple is
 * explained where it first appears and named `shownAbove` later, so a long hierarchy is
 * printed once, not once per graph.
 */
export async function traceGrant(
  set: PolicySet,
  caller: Caller,
  facts: readonly FactGroup[],
  ruleFiles: readonly string[],
): Promise<GrantTrace> {
  const grant = grantFor(set, caller);
  const summary = { agent: caller.agent, groups: [...caller.groups], authenticated: caller.authenticated };
  if (grant === undefined) return { ...summary, policies: [], limits: [], graphs: [] };

  const rules: { rule: HornRule; traced: TracedRule }[] = [];
  const eyeFiles: string[] = [];
  const groups: FactGroup[] = [...facts];
  for (const file of ruleFiles) {
    const text = await readRuleFile(file);
    const reading = classifyRules(text);
    if (!reading.fragment) {
      eyeFiles.push(file);
      continue;
    }
    reading.rules.forEach((rule, index) => rules.push({ rule, traced: { file, number: index + 1, text: ruleText(rule) } }));
    if (reading.facts.length > 0) groups.push({ origin: file, quads: reading.facts });
  }
  const origins = new Map<string, string>();
  for (const { origin, quads } of groups) {
    for (const quad of quads) {
      const key = tripleKey(quad.subject, quad.predicate, quad.object);
      if (!origins.has(key)) origins.set(key, origin);
    }
  }
  const closure = forwardChain(
    groups.flatMap((group) => group.quads),
    rules.map(({ rule }) => rule),
    { trace: true },
  );
  const explain = createExplainer(closure, origins, rules, eyeFiles);

  const policies = set.policies.filter((policy) => grant.policies.includes(policy.iri));
  const values: TemplateValues = { agent: caller.authenticated ? caller.agent : undefined, groups: caller.groups, claims: caller.claims };
  const templateOf = (policy: CompiledPolicy, graph: string) =>
    grant.templateGraphs?.includes(graph) === true
      ? policy.graphTemplates.find((template) => templateGives(template, values, graph))
      : undefined;
  const graphs = [...grant.graphs].sort().map((graph) => ({
    graph,
    policies: policies
      .filter((policy) => policy.graphs.includes(graph) || templateOf(policy, graph) !== undefined)
      .map((policy): TracedPolicy => {
        const principal = policy.principals.find((candidate) => matches(candidate, caller)) ?? { kind: 'everyone' };
        const policyTerm = DataFactory.namedNode(policy.iri);
        return {
          policy: policy.iri,
          file: policy.file,
          appliesAs: principalKey(principal),
          applies: explain(policyTerm, DataFactory.namedNode(guard.appliesTo), principalTerm(principal)),
          grants: explainGrant(explain, policy, graph, templateOf(policy, graph)),
        };
      }),
    restrictions: restrictionsIn(grant, graph),
  }));
  return { ...summary, policies: policies.map((policy) => policy.iri), limits: limitsOf(grant.limits, policies), graphs };
}

const LIMIT_KINDS: readonly (keyof PolicyLimits)[] = ['timeoutMs', 'resultLimit', 'maxConcurrent'];

/** Per kind in force, its value and the policies (of those that apply) that set exactly it: the largest wins. */
function limitsOf(limits: PolicyLimits | undefined, policies: readonly CompiledPolicy[]): TracedLimit[] {
  return LIMIT_KINDS.flatMap((kind) => {
    const value = limits?.[kind];
    if (value === undefined) return [];
    return [{ kind, value, policies: policies.filter((policy) => policy.limits[kind] === value).map((policy) => policy.iri) }];
  });
}

type Explain = (subject: Quad['subject'], predicate: Quad['predicate'], object: Quad['object']) => TraceStep;

/** The explanation of `policy guard:grantsGraph graph`: derived, else listed under one of the policy's prefixes, else a template this caller filled. */
function explainGrant(explain: Explain, policy: CompiledPolicy, graph: string, template: GraphTemplate | undefined): TraceStep {
  const subject = DataFactory.namedNode(policy.iri);
  if (template !== undefined && !policy.graphs.includes(graph)) {
    return {
      triple: `<${graph}> from guard:readGraphTemplate ${JSON.stringify(template.text)}, filled in for this caller`,
      template: template.text,
      from: [explain(subject, DataFactory.namedNode(guard.readGraphTemplate), DataFactory.literal(template.text))],
    };
  }
  const derived = explain(subject, DataFactory.namedNode(guard.grantsGraph), DataFactory.namedNode(graph));
  const prefix = policy.graphPrefixes.find((candidate) => graph.startsWith(candidate));
  if (prefix === undefined || !('eye' in derived)) return derived;
  return {
    triple: `<${graph}> listed by the store under guard:readGraphPrefix ${JSON.stringify(prefix)}`,
    listedUnder: prefix,
    from: [explain(subject, DataFactory.namedNode(guard.readGraphPrefix), DataFactory.literal(prefix))],
  };
}

/** Explains triples from the traced closure, each triple in full once. */
function createExplainer(
  closure: Closure,
  origins: ReadonlyMap<string, string>,
  rules: readonly { traced: TracedRule }[],
  eyeFiles: readonly string[],
): Explain {
  const shown = new Set<string>();
  const explain: Explain = (subject, predicate, object) => {
    const triple = tripleText(subject, predicate, object);
    const key = tripleKey(subject, predicate, object);
    if (shown.has(key)) return { triple, shownAbove: true };
    shown.add(key);
    const why = closure.justify(subject, predicate, object);
    if (why === undefined) return { triple, eye: eyeFiles };
    if (why.kind === 'stated') return { triple, fact: origins.get(key) ?? '(unknown origin)' };
    const rule = rules[why.rule]?.traced ?? { file: '', number: 0, text: '' };
    return { triple, rule, from: why.premises.map((premise) => explain(premise.subject, premise.predicate, premise.object)) };
  };
  return explain;
}

/** Whether the principal takes in this caller (as grantFor does). */
function matches(principal: Principal, caller: Caller): boolean {
  switch (principal.kind) {
    case 'everyone':
      return true;
    case 'authenticated':
      return caller.authenticated;
    case 'agent':
      return principal.agent === caller.agent;
    case 'group':
      return caller.groups.includes(principal.group);
  }
}

function principalTerm(principal: Principal): Quad['object'] {
  switch (principal.kind) {
    case 'everyone':
      return DataFactory.namedNode(guard.Everyone);
    case 'authenticated':
      return DataFactory.namedNode(guard.AuthenticatedAgent);
    case 'agent':
      return DataFactory.namedNode(principal.agent);
    case 'group':
      return DataFactory.literal(principal.group);
  }
}

/** The key of a triple as the closure numbers its terms: a blank node stands for its reserved IRI. */
function tripleKey(subject: Term, predicate: Term, object: Term): string {
  return [subject, predicate, object].map((term) => (term.termType === 'BlankNode' ? skolemIri(term.value) : term.id)).join(' ');
}

function tripleText(subject: Term, predicate: Term, object: Term): string {
  return `${termText(subject)} ${termText(predicate)} ${termText(object)}`;
}

/** A term as Turtle would write it, the guard's namespace as `guard:`. */
function termText(term: Term): string {
  switch (term.termType) {
    case 'NamedNode':
      if (isSkolemIri(term.value)) return '[]';
      return term.value.startsWith(GUARD) ? `guard:${term.value.slice(GUARD.length)}` : `<${term.value}>`;
    case 'BlankNode':
      return '[]';
    case 'Variable':
      return `?${term.value}`;
    case 'Literal':
      return `${JSON.stringify(term.value)}${term.language ? `@${term.language}` : term.datatype.value === XSD_STRING ? '' : `^^<${term.datatype.value}>`}`;
    default:
      return term.value;
  }
}

/** A rule as N3: `{ premise } => { conclusion }`. */
function ruleText({ premise, conclusion }: HornRule): string {
  const side = (quads: readonly Quad[]) => quads.map((quad) => tripleText(quad.subject, quad.predicate, quad.object)).join('. ');
  return `{ ${side(premise)} } => { ${side(conclusion)} }`;
}
