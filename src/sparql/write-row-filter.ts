// Writes, per request, the filter that holds a triple pattern to the caller's view of the graph it is read in: columns and row rules.

import type { Caller } from '../auth/caller.js';
import { GuardError } from '../guard-error.js';
import { NOT_IN_IRI } from '../iri.js';
import type { Columns, GraphView } from '../policy/policy-set.js';
import type { RowRule, RuleTerm } from '../policy/policy-set.js';
import { XSD_STRING } from '../vocabulary.js';
import { existsTest } from './exists-test.js';

/** The row rules of the active graph (SPARQL 1.1 §18.6): one graph, or a default graph merging several. */
export type RowContext =
  | { readonly kind: 'one'; readonly graph: string; readonly view: GraphView }
  | { readonly kind: 'merge'; readonly graphs: readonly MergedGraph[] };

/** One graph of a default graph that merges graphs with different views: its view, or its hidden paths. */
export interface MergedGraph {
  readonly iri: string;
  readonly view: GraphView | undefined;
  readonly hidden: ReadonlySet<string> | undefined;
}

/** A triple pattern of a BGP as the row filter writes it: a part null is a blank node (it cannot be named in a filter). */
export interface RowTriple {
  readonly subject: string | null;
  /** `?p` or `<iri>`. */
  readonly predicate: string;
  /** The predicate's IRI, when it is one. */
  readonly iri: string | undefined;
  readonly object: string | null;
}

/** What the caller brings to a row rule: the values bound to `?agent`, `?group` and `?claim_NAME`. */
export type RowValues = Pick<Caller, 'agent' | 'groups' | 'authenticated' | 'claims'>;

/**
 * How a row rule is checked (config `rowChecks`, docs/design/sparql.md, "Rows and columns"): `join`, a join
 * against a `SELECT DISTINCT` of the rows the rules allow, right on every store of the lab; `exists`, a
 * `FILTER(EXISTS)` per solution, which Oxigraph and Jena evaluate as a look-up per solution and Virtuoso 7.2
 * drops inside an OPTIONAL.
 */
export type RowCheckForm = 'join' | 'exists';

/** A condition that always holds: no filter is needed. */
const TRUE = '';
/** A condition that never holds. */
const FALSE = null;
type Condition = string | null;

export const ROW_BLANK_NODE = 'a blank node cannot be checked against row rules (guard:rowPattern): write a variable in its place';

/**
 * The checks after a BGP read in `context` (empty when every triple is visible as it is): per triple
 * pattern (s p o), s and p must be in the caller's view (docs/policies.md, "Rows and columns"). A
 * variable subject whose rules the triple's predicate does not choose between is joined against a
 * `SELECT DISTINCT` of the rows the rules allow (`form` join); the other checks, and every check of the
 * form `exists`, are filters (docs/design/sparql.md, "Rows and columns": Virtuoso drops a FILTER(EXISTS)
 * inside an OPTIONAL). `written` holds the checks already written in the BGP's group, which hold this BGP
 * too: every check is a filter or a join with a set on variables the group binds, so writing it twice
 * in one group changes nothing and it is left out.
 */
export function writeRowFilter(
  triples: readonly RowTriple[],
  context: RowContext,
  values: RowValues | undefined,
  prefix: string,
  form: RowCheckForm,
  written = new Set<string>(),
  fold?: RowFold,
): string {
  let out = '';
  const add = (piece: string): void => {
    if (written.has(piece)) return;
    written.add(piece);
    out += piece === fold?.target ? fold.folded : piece;
  };
  const joins =
    form === 'join' && context.kind === 'one' ? triples.map((triple) => rowJoin(context.view, context.graph, triple, values, prefix)) : [];
  // A constant subject's rows are one yes or no: one join per subject and rules holds the whole BGP to it.
  const carried = new Set(joins.flatMap((join) => (join?.carrier !== undefined && join.key !== undefined ? [join.key] : [])));
  const joined = new Set<string>();
  for (const [index, triple] of triples.entries()) {
    const join = joins[index];
    // A constant subject folded into the group's join of a variable subject (planRowFold): its columns only.
    if (join?.key !== undefined && fold?.keys.has(join.key) === true) {
      if (join.filter !== undefined) add(join.filter);
      continue;
    }
    if (join !== undefined && (join.carrier !== undefined || (join.key !== undefined && carried.has(join.key)))) {
      if (join.filter !== undefined) add(join.filter);
      if (join.carrier !== undefined && (join.key === undefined || !joined.has(join.key))) {
        if (join.key !== undefined) joined.add(join.key);
        add(join.carrier);
      }
      continue;
    }
    const condition =
      context.kind === 'one'
        ? viewCondition(context.view, context.graph, triple, values, prefix)
        : mergedCondition(context.graphs, triple, values, prefix);
    if (condition === TRUE) continue;
    add(` FILTER(${condition ?? '1 = 0'})`);
  }
  return out;
}

/**
 * Whether a triple with a variable predicate read in `graph` is checked by a filter holding a rule's
 * EXISTS for this caller (the join cannot hold it: the policies show different columns, one for a rule's
 * rows). In front of Virtuoso such a check beside a caller's EXISTS, NOT EXISTS or MINUS is refused
 * (Plan.existsBesideNegation); `check --why` names the graphs where it may be.
 */
export function checksVariablePredicateWithExists(view: GraphView, graph: string, values: RowValues): boolean {
  const triple: RowTriple = { subject: '?s', predicate: '?p', iri: undefined, object: '?o' };
  if (rowJoin(view, graph, triple, values, 'check_') !== undefined) return false;
  return viewCondition(view, graph, triple, values, 'check_')?.includes('NOT EXISTS') === true;
}

/**
 * The set a row check joins: one solution per value of `variable` where `where` holds, a `SELECT DISTINCT`
 * with `OFFSET 0`. Without the slice, Jena 4.5 (ARQ) runs a join whose right side is a DISTINCT sub-select
 * as a sequence, feeding the left's solutions through the DISTINCT, so equal solutions of the caller's
 * pattern (a UNION, a VALUES with UNDEF, a sub-select projecting some variables) came back once: less
 * than the view. A slice is joined as written. A `GROUP BY` in its place Virtuoso 7.2 answers wrongly
 * inside a NOT EXISTS of a sub-select (docs/design/sparql.md, "Rows and columns").
 */
function rowSet(variable: string, where: string): string {
  return ` { SELECT DISTINCT ${variable} WHERE { ${where} } OFFSET 0 }`;
}

/** A triple's check as a join: a column filter, and the join that holds its subject to the rows the rules allow. */
interface RowJoin {
  /** ` FILTER(...)` on a variable predicate, or undefined when the columns show the triple as it is. */
  readonly filter: string | undefined;
  /** The join, or undefined when the triple cannot carry one (a constant subject with no variable of its own). */
  readonly carrier: string | undefined;
  /** For a constant subject: the subject and its rules, equal for the triples one join holds. */
  readonly key: string | undefined;
  /** The rules' pattern for the subject (the WHERE of a variable subject's join), when some rule may hold. */
  readonly where?: string;
}

/**
 * A group's constant subjects checked inside the join of one of its variable subjects: the join's set of
 * rows, crossed with each constant's rules, is the same set when every constant's rules hold and empty
 * when one's do not, which is what the constant's own join did to the group (docs/design/sparql.md,
 * "Rows and columns"). One sub-select where there were several: Virtuoso 7.2 plans each new text's
 * sub-selects anew (BSBM Q5 15.3 ms to 9.9, Q2 18.9 to 9.7, view 5.9-6.0).
 */
export interface RowFold {
  /** The variable subject's join as writeRowFilter writes it alone. */
  readonly target: string;
  /** The same join with the constant subjects' rules in it, written in its place. */
  readonly folded: string;
  /** The constant subjects (with their rules) whose checks the folded join holds. */
  readonly keys: ReadonlySet<string>;
}

/**
 * The fold of a group whose BGPs (`bgps`, in text order) check constant subjects and at least one
 * variable subject by joins, or undefined. Each constant's rules are written after a prefix of their own
 * (`<prefix>c<n>_`), so that no variable of theirs meets one of the join's; a constant whose prefix the
 * join's text already holds keeps its own join.
 */
export function planRowFold(
  bgps: readonly (readonly RowTriple[])[],
  context: RowContext,
  values: RowValues | undefined,
  prefix: string,
  form: RowCheckForm,
): RowFold | undefined {
  if (form !== 'join' || context.kind !== 'one') return undefined;
  let target: RowJoin | undefined;
  const constants = new Map<string, RowTriple>();
  for (const triples of bgps) {
    for (const triple of triples) {
      if (triple.subject === null || (target !== undefined && triple.subject.startsWith('?'))) continue;
      const join = rowJoin(context.view, context.graph, triple, values, prefix);
      if (join === undefined) continue;
      if (join.key !== undefined) {
        if (!constants.has(join.key)) constants.set(join.key, triple);
      } else if (target === undefined && join.where !== undefined) target = join;
    }
  }
  if (target?.where === undefined || target.carrier === undefined || constants.size === 0) return undefined;
  const keys = new Set<string>();
  let checks = '';
  for (const [key, triple] of constants) {
    const own = `${prefix}c${keys.size}_`;
    if (target.where.includes(`?${own}`)) continue;
    const where = rowJoin(context.view, context.graph, triple, values, own)?.where;
    if (where === undefined) continue;
    keys.add(key);
    checks += ` { ${where} }`;
  }
  if (keys.size === 0) return undefined;
  const subject = target.carrier.slice(' { SELECT DISTINCT '.length, target.carrier.indexOf(' WHERE '));
  return { target: target.carrier, folded: rowSet(subject, `${target.where}${checks}`), keys };
}

/**
 * The checks of (s p o) in `graph` as a filter on p and a join of ?s against the rows some rule allows
 * (for a constant s, of the triple's own variables against the triple under the rules): possible when no
 * policy without a row rule shows p by a test of the variable, and every policy whose rule may hold shows
 * p alike (an IRI p always). Undefined otherwise (the condition is then a filter).
 */
function rowJoin(view: GraphView, graph: string, triple: RowTriple, values: RowValues | undefined, prefix: string): RowJoin | undefined {
  const subject = triple.subject;
  if (subject === null) return undefined;
  if (view.open !== undefined) {
    const open = columnsCondition(view.open, triple);
    if (open === TRUE) return { filter: undefined, carrier: '', key: undefined };
    if (open !== FALSE) return undefined;
  }
  let shownAlike: Condition | undefined;
  const bodies: string[] = [];
  for (const { columns, rule } of view.rows) {
    const shown = columnsCondition(columns, triple);
    if (shown === FALSE) continue;
    const body = ruleBody(rule, graph, subject, values, prefix);
    if (body === FALSE) continue;
    if (shownAlike !== undefined && shownAlike !== shown) return undefined;
    shownAlike = shown;
    if (!bodies.includes(body)) bodies.push(body);
  }
  if (shownAlike === undefined) return { filter: undefined, carrier: ' FILTER(1 = 0)', key: undefined };
  const filter = shownAlike === TRUE ? undefined : ` FILTER(${shownAlike})`;
  const where = bodies.length === 1 ? (bodies[0] ?? '') : bodies.map((body) => `{ ${body} }`).join(' UNION ');
  if (subject.startsWith('?')) return { filter, carrier: rowSet(subject, where), key: undefined, where };
  // A constant subject: the triple itself with the rules, joined on one variable of its own (none new in
  // scope): every value the triple binds it to is in the set when a rule holds, and the set is empty when
  // none does. One variable, the predicate's where it is one (an IRI): joined on two, Virtuoso 7.2 took
  // 120-175 ms to plan each new text of BSBM Q11 that it plans in 10 (docs/design/sparql.md).
  const key = `${subject}\u0000${bodies.join('\u0000')}`;
  const own = [triple.predicate, triple.object ?? ''].find((term) => term.startsWith('?'));
  if (own === undefined || triple.object === null) return { filter, carrier: undefined, key, where };
  const carrier = rowSet(own, `${subject} ${triple.predicate} ${triple.object} . ${bodies.length === 1 ? `{ ${where} }` : where}`);
  return { filter, carrier, key, where };
}

/** Whether a triple is visible in a default graph merging several: some graph holds it visibly, none holds it hidden. */
function mergedCondition(graphs: readonly MergedGraph[], triple: RowTriple, values: RowValues | undefined, prefix: string): Condition {
  const conditions = graphs.map(({ iri, view, hidden }) =>
    view !== undefined
      ? viewCondition(view, iri, triple, values, prefix)
      : columnsCondition({ allow: false, set: hidden ?? new Set() }, triple),
  );
  if (conditions.every((condition) => condition === TRUE)) return TRUE;
  if (triple.subject === null || triple.object === null) throw new GuardError(403, 'forbidden', ROW_BLANK_NODE);
  const pattern = `${triple.subject} ${triple.predicate} ${triple.object}`;
  // One pattern per check, its graph bound by VALUES: a UNION of GRAPH <g> branches with the same FILTER, or a
  // NOT EXISTS per graph, Virtuoso 7.2 answers wrongly (docs/design/sparql.md, "Rows and columns"). A rule's
  // variables are the prefix and a name starting with a letter or _, so the prefix and a digit is no one's.
  const graph = `?${prefix}0g`;
  const visible: string[] = [];
  const withheld: string[] = [];
  graphs.forEach(({ iri }, index) => {
    const condition = conditions[index] as Condition;
    const held = `${graph} = <${iri}>`;
    if (condition === TRUE) visible.push(held);
    else {
      if (condition !== FALSE) visible.push(`(${held} && ${condition})`);
      // A triple also held by a graph where it is hidden is withheld (docs/design/sparql.md, multiplicity).
      withheld.push(condition === FALSE ? held : `(${held} && !(${condition}))`);
    }
  });
  if (visible.length === 0) return FALSE;
  const among = (terms: readonly string[]) => {
    const iris = graphs.filter(({ iri }) => terms.some((term) => term.includes(`${graph} = <${iri}>`))).map(({ iri }) => `<${iri}>`);
    return `{ GRAPH ${graph} { ${pattern} } VALUES ${graph} { ${iris.join(' ')} } FILTER(${terms.join(' || ')}) }`;
  };
  return `${existsTest(among(visible))} && NOT EXISTS ${among(withheld)}`;
}

/**
 * Whether (s p o) of `graph` is in the view: the open columns show p, or some row policy shows p and its rule holds
 * for s. One policy's test is written as it reads (`p IN (…) && EXISTS { rule }`); an OR of several is written as
 * the negation of its negation, `!((p NOT IN (…) || NOT EXISTS { rule }) && …)`, NOT EXISTS only: the same test
 * (p is bound by the triple and every IN list holds IRIs, so no operand raises an error, §17.2), and Virtuoso 7.2.5
 * evaluates an OR whose operands hold an EXISTS wrongly in a group with another pattern (docs/design/sparql.md,
 * "An OR of row policies' tests").
 */
function viewCondition(view: GraphView, graph: string, triple: RowTriple, values: RowValues | undefined, prefix: string): Condition {
  const disjuncts: { readonly shown: string; readonly unshown: string; readonly rule: string | undefined }[] = [];
  if (view.open !== undefined) {
    const open = columnsCondition(view.open, triple);
    if (open === TRUE) return TRUE;
    if (open !== FALSE) disjuncts.push({ shown: open, unshown: columnsNegation(view.open, triple), rule: undefined });
  }
  for (const { columns, rule } of view.rows) {
    const shown = columnsCondition(columns, triple);
    if (shown === FALSE) continue;
    if (triple.subject === null) throw new GuardError(403, 'forbidden', ROW_BLANK_NODE);
    const body = ruleBody(rule, graph, triple.subject, values, prefix);
    if (body === FALSE) continue;
    disjuncts.push({ shown, unshown: shown === TRUE ? '' : columnsNegation(columns, triple), rule: `{ ${body} }` });
  }
  const [only] = disjuncts;
  if (only === undefined) return FALSE;
  if (disjuncts.length === 1) {
    if (only.rule === undefined) return only.shown;
    return only.shown === TRUE ? existsTest(only.rule) : `(${only.shown} && ${existsTest(only.rule)})`;
  }
  const negations = disjuncts.map(({ unshown, rule }) => {
    if (rule === undefined) return unshown;
    return unshown === '' ? `NOT EXISTS ${rule}` : `(${unshown} || NOT EXISTS ${rule})`;
  });
  return `!(${negations.join(' && ')})`;
}

/** The negation of columnsCondition for a variable predicate the columns test (neither TRUE nor FALSE). */
function columnsNegation(columns: Columns, triple: RowTriple): string {
  return `${triple.predicate} ${columns.allow ? 'NOT IN' : 'IN'} (${iriList(columns.set)})`;
}

/** Whether `columns` show the triple's predicate: decided now for an IRI, a test of the variable otherwise. */
function columnsCondition(columns: Columns, triple: RowTriple): Condition {
  if (triple.iri !== undefined) return columns.allow === columns.set.has(triple.iri) ? TRUE : FALSE;
  if (!columns.allow && columns.set.size === 0) return TRUE;
  if (columns.allow && columns.set.size === 0) return FALSE;
  return `${triple.predicate} ${columns.allow ? 'IN' : 'NOT IN'} (${iriList(columns.set)})`;
}

/** The predicates of `set`, sorted, written for IN / NOT IN. */
export function iriList(set: ReadonlySet<string>): string {
  return [...set]
    .sort()
    .map((iri) => iriText(iri))
    .join(', ');
}

function iriText(iri: string): string {
  // Policies are trusted, but a query must never carry text the guard cannot vouch for.
  if (NOT_IN_IRI.test(iri)) throw new GuardError(500, 'internal_error', 'an IRI of the policies is not a valid IRI');
  return `<${iri}>`;
}

/** A rule written with one fresh prefix: text pieces between the places `?this` stands, and the caller values it reads. */
interface WrittenRule {
  /** Per triple pattern, its text split at `?this`. */
  readonly triples: readonly (readonly string[])[];
  /** The rule's own VALUES blocks, written, and the filter holding its typed literals to the same term (sameTypedLiteral, sameTerm). */
  readonly values: string;
  readonly agent: boolean;
  readonly group: boolean;
  /** The claim names the rule reads (`?claim_NAME`). */
  readonly claims: readonly string[];
  /** The variables its triple patterns name (each certainly bound where the pattern matches). */
  readonly inTriples: ReadonlySet<string>;
}

const writtenRules = new WeakMap<RowRule, Map<string, WrittenRule>>();

function writtenRule(rule: RowRule, prefix: string): WrittenRule {
  let byPrefix = writtenRules.get(rule);
  if (byPrefix === undefined) writtenRules.set(rule, (byPrefix = new Map()));
  let written = byPrefix.get(prefix);
  if (written === undefined) {
    const variables = new Set<string>();
    const term = (value: RuleTerm | undefined): string => {
      if (value === undefined) return 'UNDEF';
      if (value.termType === 'Variable') {
        variables.add(value.value);
        return `?${prefix}${value.value}`;
      }
      if (value.termType === 'NamedNode') return iriText(value.value);
      return literalText(value.value, value.language, value.datatype) ?? internalLiteral();
    };
    // A typed literal stands in the pattern as a variable of its own (the prefix and a digit: no rule's name) held to
    // the same term by a filter (sameTypedLiteral).
    const checks: string[] = [];
    const fresh = (): string => `?${prefix}${checks.length + 1}t`;
    const triples = rule.triples.map(({ subject, predicate, object }) => {
      const pieces: string[] = [''];
      for (const [index, part] of [subject, predicate, object].entries()) {
        const space = index === 0 ? '' : ' ';
        if (part.termType === 'Variable' && part.value === 'this') {
          pieces[pieces.length - 1] += space;
          pieces.push('');
        } else if (isTypedLiteral(part)) {
          const variable = fresh();
          checks.push(sameTypedLiteral(variable, term(part)));
          pieces[pieces.length - 1] += space + variable;
        } else pieces[pieces.length - 1] += space + term(part);
      }
      return pieces;
    });
    const inTriples = new Set(variables);
    let values = '';
    for (const block of rule.values) {
      // A column with a typed literal that a triple pattern binds: each kind of its terms (literals without a
      // language tag, IRIs, literals with one) in a column of its own, and the filter holds the pattern's term to the
      // row's; none is left in the joined column, or Jena 4.5 tests the filter on the VALUES rows before the join
      // (the joined variable UNDEF there), losing them.
      const names: string[] = [];
      const cells: ((row: readonly (RuleTerm | undefined)[]) => string)[] = [];
      block.variables.forEach((name, column) => {
        const joined = term({ termType: 'Variable', value: name });
        const own = (row: readonly (RuleTerm | undefined)[]): RuleTerm | undefined => row[column];
        if (!inTriples.has(name) || !block.rows.some((row) => isTypedLiteral(own(row)))) {
          names.push(joined);
          cells.push((row) => term(own(row)));
          return;
        }
        const isLanguage = (cell: RuleTerm | undefined): boolean => cell?.termType === 'Literal' && cell.language !== '';
        const kinds: [(cell: RuleTerm | undefined) => boolean, (variable: string) => string][] = [
          [(cell) => cell?.termType === 'Literal' && cell.language === '', (variable) => sameTypedLiteral(joined, variable)],
          [(cell) => cell?.termType === 'NamedNode', (variable) => `isIRI(${joined}) && STR(${joined}) = STR(${variable})`],
          [isLanguage, (variable) => `isLiteral(${joined}) && ${languageText(joined)} = ${languageText(variable)}`],
        ];
        const parts: [string, (cell: RuleTerm | undefined) => boolean][] = [];
        for (const [holds, check] of kinds) {
          if (!block.rows.some((row) => holds(own(row)))) continue;
          const variable = fresh();
          checks.push(`(!BOUND(${variable}) || (${check(variable)}))`);
          parts.push([variable, holds]);
        }
        for (const [variable] of parts) names.push(variable);
        cells.push((row) => parts.map(([, holds]) => (holds(own(row)) ? term(own(row)) : 'UNDEF')).join(' '));
      });
      const rows = block.rows.map((row) => `(${cells.map((cell) => cell(row)).join(' ')})`);
      values += ` VALUES (${names.join(' ')}) { ${rows.join(' ')} }`;
    }
    if (checks.length > 0) values += ` FILTER(${checks.join(' && ')})`;
    written = {
      triples,
      values,
      agent: variables.has('agent'),
      group: variables.has('group'),
      claims: [...variables].filter((name) => name.startsWith('claim_')).map((name) => name.slice('claim_'.length)),
      inTriples,
    };
    byPrefix.set(prefix, written);
  }
  return written;
}

/** A literal with a datatype other than xsd:string (a language tag's is rdf:langString): a number, a date, a boolean, ... */
function isTypedLiteral(term: RuleTerm | undefined): boolean {
  return term?.termType === 'Literal' && term.language === '' && term.datatype !== '' && term.datatype !== XSD_STRING;
}

/**
 * Whether `variable` is the typed literal `literal` (its text): the same datatype and lexical form, each as the store
 * writes the literal it parsed (SPARQL 1.1 §12.3.1, a pattern's literal matches the same term). Written in the
 * pattern, Virtuoso 7.2.5 matches a number or a dateTime by value (`?s ex:level 1` holds for "1"^^xsd:double and
 * xsd:decimal, a dateTime for the same instant in another zone), and beside `?v = 1` or `?v IN (1)` it drops the
 * other tests of the filter (docs/design/sparql.md, "Rows and columns": a rule's typed literals).
 */
function sameTypedLiteral(variable: string, literal: string): string {
  return `DATATYPE(${variable}) = DATATYPE(${literal}) && STR(${variable}) = STR(${literal})`;
}

/** A literal with a language tag as one text, lexical form and tag: Virtuoso 7.2.5 answers `LANG(?a) = LANG(?b)` beside other tests with no row at all. */
function languageText(variable: string): string {
  return `CONCAT(STR(${variable}), "@", LANG(${variable}))`;
}

function internalLiteral(): never {
  throw new GuardError(500, 'internal_error', 'a literal of a row rule cannot be written');
}

/**
 * The rule's pattern over its data graphs with `?this` = `subject` and the caller's values bound, or
 * FALSE when the rule reads a value the caller does not have (it then matches nothing). A value
 * variable its triple patterns name is bound by `FILTER(?v IN (...))`, which Virtuoso tests on the
 * row it reads (a third less store time than VALUES on BSBM explore Q4, Q7, Q8), beside a test of
 * the term's kind: `isIRI` for the agent, the datatype xsd:string for a group or a claim (a language
 * tag's is rdf:langString, or an error; Virtuoso 7.2.5 answers `?v IN ("a") && LANG(?v) = ""` with
 * no row at all, though each holds alone). SPARQL 1.1's `=` (§17.3) holds between an IRI or a string and the same term only, but the
 * stores' does not: Jena's takes "a"^^xsd:token for "a", Virtuoso's "a"@en, "a"^^<dt> and the
 * string of an IRI for it, so the IN alone let a look-alike record into the view (Jena, in an
 * OPTIONAL: test/security/rows/value-terms.test.ts). Elsewhere (only the rule's own VALUES names
 * it) it is a VALUES block, a join of terms.
 */
function ruleBody(rule: RowRule, graph: string, subject: string, values: RowValues | undefined, prefix: string): Condition {
  const written = writtenRule(rule, prefix);
  const bind = (name: string, texts: readonly string[], kind: 'iri' | 'string'): string => {
    const variable = `?${prefix}${name}`;
    if (!written.inTriples.has(name)) return ` VALUES ${variable} { ${texts.join(' ')} }`;
    const term = kind === 'iri' ? `isIRI(${variable})` : `DATATYPE(${variable}) = <${XSD_STRING}>`;
    return ` FILTER(${variable} IN (${texts.join(', ')}) && ${term})`;
  };
  let bound = '';
  if (written.agent) {
    const agent = values?.authenticated === true && !NOT_IN_IRI.test(values.agent) ? values.agent : undefined;
    if (agent === undefined) return FALSE;
    bound += bind('agent', [`<${agent}>`], 'iri');
  }
  if (written.group) {
    const groups = (values?.groups ?? []).map((group) => literalText(group, '', XSD_STRING)).filter((text) => text !== undefined);
    if (groups.length === 0) return FALSE;
    bound += bind('group', groups, 'string');
  }
  for (const name of written.claims) {
    const claim = values?.claims?.get(name);
    const text = typeof claim === 'string' ? literalText(claim, '', XSD_STRING) : undefined;
    if (text === undefined) return FALSE;
    bound += bind(`claim_${name}`, [text], 'string');
  }
  const data = rule.data.length > 0 ? rule.data : [graph];
  const triples = written.triples.map((pieces) => pieces.join(subject));
  let body: string;
  if (data.length === 1) body = `GRAPH ${iriText(data[0] ?? '')} { ${triples.join(' . ')} }`;
  else {
    // Several data graphs are read as one merged graph: each triple pattern may match in any of them.
    body = triples.map((triple) => `{ ${data.map((iri) => `{ GRAPH ${iriText(iri)} { ${triple} } }`).join(' UNION ')} }`).join(' ');
  }
  return `${body}${written.values}${bound}`;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The escapes of a STRING_LITERAL2 (SPARQL 1.1 §19.8, [159]-[160]): the characters it cannot hold as they are, and
 * U+0000 as a codepoint escape (§19.2): Virtuoso 7.2.5 reads a query's text up to a NUL, so a caller whose group held
 * one got the store's "Unterminated SPARQL short double-quoted string" for every query its rules read.
 */
const ECHAR: Readonly<Record<string, string>> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\u0000': '\\u0000' };

/**
 * A literal as SPARQL text, the value exactly (a backslash written `\\`, a quote `\"`, LF `\n`, CR `\r`, NUL `\u0000`),
 * or undefined for a value holding a lone surrogate (it would reach the store as another character).
 * A store that decodes codepoint escapes before parsing (SPARQL 1.1 §19.2) may read the value's
 * `\\u0022` as `\"`: still an escaped quote inside the literal, so the pattern keeps its structure.
 */
export function literalText(value: string, language: string, datatype: string): string | undefined {
  if (LONE_SURROGATE.test(value)) return undefined;
  const quoted = '"' + value.replace(/[\\"\n\r\u0000]/g, (character) => ECHAR[character] ?? character) + '"';
  if (language !== '') return /^[a-zA-Z]+(-[a-zA-Z0-9]+)*$/.test(language) ? `${quoted}@${language}` : undefined;
  return datatype === XSD_STRING || datatype === '' ? quoted : `${quoted}^^${iriText(datatype)}`;
}
