// Fills a prepared query's slots for one caller: set operations on graph and predicate IRIs and string joins, nothing else.

import { GuardError } from '../guard-error.js';
import { NOT_IN_IRI } from '../iri.js';
import type { Grant } from '../policy/grant.js';
import { EMPTY_GRAPH } from '../vocabulary.js';
import type { Plan } from './plan.js';
import type { PreparedQuery, TemplatePart } from './prepared-query.js';

/** The caller's hidden predicates, written the three ways the slots need them. */
export interface HiddenText {
  /** For `NOT IN (…)`: `<h1>, <h2>`. */
  readonly list: string;
  /** Forward members to append to a negated set: `|<h1>|<h2>`. */
  readonly forward: string;
  /** Inverse members to append to a negated set: `|^<h1>|^<h2>`. */
  readonly inverse: string;
}

const NO_CONSTANTS: readonly string[] = [];


/** The refusal of a path that can match zero steps with blank nodes at both ends, while something is hidden. */
export const BLANK_ZERO_LENGTH = 'a zero-length path between blank nodes cannot be checked for hidden paths (name a variable at one end)';

/**
 * The LIMIT that ends the query: the smaller of the query's own and the caller's result cap
 * (docs/design.md, "Limits per caller"); nothing when neither is set.
 */
function limitClause(limit: PreparedQuery['limit'], cap: number | undefined): string {
  if (limit.kind !== 'outer') {
    if (limit.kind === 'none' || cap === undefined) return '';
    throw new GuardError(403, `a query ending in a VALUES clause cannot be held to this caller's result limit of ${cap}; move the VALUES block into WHERE`);
  }
  const effective = limit.limit === undefined ? cap : cap === undefined ? limit.limit : Math.min(limit.limit, cap);
  return effective === undefined ? '' : `\nLIMIT ${effective}`;
}

/**
 * DESIGN section 5: effective default = requested default (or all granted)
 * ∩ granted, the same for named; both FROM and FROM NAMED always present, an
 * empty set written as the reserved EMPTY_GRAPH; `GRAPH <iri>` outside the
 * effective named graphs becomes its group with no solution, and `GRAPH ?var`
 * around a `*` / `+` path one branch per effective named graph (UNION).
 * Requested graphs keep request order, "all granted" is sorted, so output is
 * deterministic.
 *
 * DESIGN section 3: the hidden predicates of this request are the union of
 * the hidden sets of the graphs of its effective dataset (default and named).
 * A query naming one of them in predicate position is refused (403, without
 * saying which); otherwise the hidden IRIs fill the filter and negated-set
 * slots, and the zero-length slots keep paths of length zero on nodes of
 * visible triples; a zero-length path between two blank nodes is refused
 * (403). With nothing hidden those slots write nothing.
 */
export function applyGrant(prepared: PreparedQuery, grant: Grant, constants: readonly string[] = NO_CONSTANTS): Plan {
  const granted = grant.graphs;
  const all = prepared.requestedDefault === null || prepared.requestedNamed === null ? sortedGraphs(grant) : undefined;
  const defaults = prepared.requestedDefault ?? all ?? [];
  const named = prepared.requestedNamed ?? all ?? [];
  const dataset = clauses('FROM <', defaults, granted) + clauses('FROM NAMED <', named, granted);
  let hidden: HiddenText | undefined;
  if (grant.hiddenByGraph.size > 0) {
    const paths = hiddenPaths(prepared, grant, defaults, named);
    if (paths !== undefined) {
      for (const iri of prepared.namedPredicates) {
        if (paths.has(iri)) throw new GuardError(403, 'the query uses a hidden path');
      }
      if (prepared.blankZeroLength) throw new GuardError(403, BLANK_ZERO_LENGTH);
      if (prepared.hasHiddenSlots) hidden = hiddenTextOf(paths);
    }
  }
  return {
    query: fillTemplate(prepared.parts, dataset, granted, named, hidden, constants) + limitClause(prepared.limit, grant.limits?.resultLimit),
    form: prepared.form,
    defaultAccept: prepared.defaultAccept,
  };
}

/**
 * Writes the template: `keep` decides GRAPH slots (the granted set: kept when
 * requested and granted; true or false: all kept or all removed, for checks),
 * `named` lists the candidate named graphs a `GRAPH ?var` slot expands over
 * (the requested ones, or all granted; those `keep` keeps are written),
 * `hidden` fills the hidden-path slots (undefined: nothing hidden),
 * `constants` the constant slots (the request's constants as generated).
 */
export function fillTemplate(
  parts: readonly TemplatePart[],
  dataset: string,
  keep: ReadonlySet<string> | boolean,
  named: readonly string[],
  hidden: HiddenText | undefined,
  constants: readonly string[] = NO_CONSTANTS,
): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (part.kind === 'constant') {
      const constant = constants[part.index];
      if (constant === undefined) throw new GuardError(500, 'a constant slot has no value');
      out += constant;
    }
    else if (part.kind === 'dataset') out += dataset;
    else if (part.kind === 'graph') {
      // An effective named graph is requested (or all are) and granted.
      const kept = typeof keep === 'boolean' ? keep : part.requested && keep.has(part.iri);
      out += kept ? fillTemplate(part.kept, dataset, keep, named, hidden, constants) : part.removed;
    } else if (part.kind === 'graph-variable') {
      // The body does not depend on the graph: written once, repeated per branch.
      const body = fillTemplate(part.body, dataset, keep, named, hidden, constants);
      let branches = '';
      for (const graph of named) {
        if (typeof keep === 'boolean' ? !keep : !keep.has(graph)) continue;
        branches += (branches === '' ? '{ GRAPH <' : '\nUNION\n{ GRAPH <') + graph + '> ' + body + ' VALUES ' + part.variable + ' { <' + graph + '> } }';
      }
      out += branches === '' ? part.removed : branches;
    } else if (hidden === undefined) {
      if (part.kind === 'negated-set') out += part.plain;
    } else if (part.kind === 'hidden-filter') {
      for (const variable of part.variables) out += ` FILTER(${variable} NOT IN (${hidden.list}))`;
    } else if (part.kind === 'zero-length') {
      for (const end of part.ends) out += zeroLengthFilter(part, end, hidden.list);
    } else {
      out += '!(' + part.members + (part.forward ? hidden.forward : '') + (part.inverse ? hidden.inverse : '') + ')';
    }
  }
  return out;
}

/** The filter a ZeroLengthSlot writes for one end: it must be a node of a visible triple of the active graph. */
export function zeroLengthFilter(
  slot: { readonly subject: string; readonly predicate: string; readonly object: string },
  end: string,
  list: string,
): string {
  const { subject, predicate, object } = slot;
  return ` FILTER EXISTS { { ${end} ${predicate} ${object} } UNION { ${subject} ${predicate} ${end} } FILTER(${predicate} NOT IN (${list})) }`;
}

/** Writes sorted hidden IRIs the three ways; refuses one that cannot be written as an IRIREF. */
export function hiddenText(sorted: readonly string[]): HiddenText {
  let list = '';
  let forward = '';
  let inverse = '';
  for (const iri of sorted) {
    // Policies are trusted, but a query must never carry text the guard cannot vouch for.
    if (NOT_IN_IRI.test(iri)) throw new GuardError(500, 'a hidden path of the policies is not a valid IRI');
    list += (list === '' ? '<' : ', <') + iri + '>';
    forward += '|<' + iri + '>';
    inverse += '|^<' + iri + '>';
  }
  return { list, forward, inverse };
}

/**
 * The union of the hidden sets of the effective graphs, or undefined when it
 * is empty. Without a requested dataset the effective graphs are all granted
 * ones: then it is the union of every hidden set of the grant, remembered per
 * grant (the policy set hands out the same grant object again).
 */
function hiddenPaths(prepared: PreparedQuery, grant: Grant, defaults: readonly string[], named: readonly string[]): ReadonlySet<string> | undefined {
  const byGraph = grant.hiddenByGraph;
  const allGranted = prepared.requestedDefault === null && prepared.requestedNamed === null;
  let union = allGranted ? unionByGrant.get(byGraph) : undefined;
  if (union === undefined) {
    const found = new Set<string>();
    const add = (graph: string): void => {
      const paths = grant.graphs.has(graph) ? byGraph.get(graph) : undefined;
      if (paths !== undefined) for (const path of paths) found.add(path);
    };
    if (allGranted) for (const graph of byGraph.keys()) add(graph);
    else {
      for (const graph of defaults) add(graph);
      for (const graph of named) add(graph);
    }
    union = found;
    if (allGranted) unionByGrant.set(byGraph, union);
  }
  return union.size === 0 ? undefined : union;
}

/** The union of all hidden sets of a grant, remembered per grant (see sortedBySet). */
const unionByGrant = new WeakMap<ReadonlyMap<string, ReadonlySet<string>>, ReadonlySet<string>>();

/** The written hidden list, remembered per hidden set (the cached unions above come back as the same object). */
const textBySet = new WeakMap<ReadonlySet<string>, HiddenText>();

function hiddenTextOf(paths: ReadonlySet<string>): HiddenText {
  let text = textBySet.get(paths);
  if (text === undefined) {
    text = hiddenText([...paths].sort());
    textBySet.set(paths, text);
  }
  return text;
}

function clauses(prefix: string, graphs: readonly string[], granted: ReadonlySet<string>): string {
  let out = '';
  for (const graph of graphs) if (granted.has(graph)) out += prefix + graph + '>\n';
  return out === '' ? prefix + EMPTY_GRAPH + '>\n' : out;
}

/** Sorted granted graphs, remembered per grant set (policy look-up may hand out the same set again). */
const sortedBySet = new WeakMap<ReadonlySet<string>, readonly string[]>();

function sortedGraphs(grant: Grant): readonly string[] {
  let sorted = sortedBySet.get(grant.graphs);
  if (sorted === undefined) {
    sorted = [...grant.graphs].sort();
    sortedBySet.set(grant.graphs, sorted);
  }
  return sorted;
}
