// The cached, caller-independent result of preparing one query: generated text segments and per-request slots.

import type { DatasetReach } from './find-dataset-reach.js';
import type { QueryForm, Plan } from './plan.js';

/**
 * One piece of a prepared query's text. Strings are emitted as they are;
 * slots are filled per request from the caller's grant: the dataset, GRAPH
 * elements (named, or variable around a `*` / `+` path), and the two places
 * hidden predicates go (docs/design.md#vocabulary).
 */
export type TemplatePart =
  string | DatasetSlot | GraphSlot | GraphVariableSlot | HiddenFilterSlot | NegatedSetSlot | ZeroLengthSlot | ConstantSlot;

/**
 * A constant of the query (a literal or an IRI the planner neither checks nor
 * rewrites), filled per request with that request's own constant as the
 * generator writes it (lexQueryShape), so one template serves every query of
 * the same shape (docs/design.md#plan-cache).
 */
export interface ConstantSlot {
  readonly kind: 'constant';
  /** The constant's number in text order (QueryShape.fill). */
  readonly index: number;
}

/** Where FROM / FROM NAMED go: between the query form and WHERE. */
export interface DatasetSlot {
  readonly kind: 'dataset';
}

/**
 * A `GRAPH <iri> { P }` element. `kept` is the generated GRAPH text (it may hold
 * nested slots); `removed` is the group with no solution over P's in-scope
 * variables (emptyGroup) that replaces it when `iri` is not an effective named graph.
 */
export interface GraphSlot {
  readonly kind: 'graph';
  readonly iri: string;
  /** False when a requested named-graph list leaves `iri` out, whatever is granted. */
  readonly requested: boolean;
  readonly kept: readonly TemplatePart[];
  readonly removed: string;
}

/**
 * A `GRAPH ?var { P }` element. SPARQL 1.1 §18.6 evaluates Graph(?var, P) as
 * exactly the union over the named graphs g of Join(eval(g, P), {?var -> g});
 * a VALUES join (not a BIND) keeps that meaning when P binds ?var itself.
 *
 * Written per request as one branch per effective named graph g, in dataset
 * order, `{ GRAPH <g> { P } VALUES ?var { <g> } }`, the branches joined by
 * UNION, P's hidden-path slots filled with g's hidden set, when `perGraph` (P
 * holds a `*` or `+` property path, findTransitiveGraphs: Virtuoso 7.2.5 walks
 * such paths across graphs outside FROM NAMED) or when the effective named
 * graphs hide different sets and P has hidden-path slots of its own (not only
 * inside a GRAPH nested in it): Oxigraph evaluates a sub-select inside
 * `GRAPH ?var` over all named graphs at once, so only a constant graph keeps
 * each graph's set to its own triples (docs/design.md, "Hidden sets are per
 * graph"). Otherwise `GRAPH ?var { P }` as written, filled for the set every
 * graph shares. With no effective named graph: `removed` when `perGraph`, as
 * for GraphSlot; else the element as written (FROM NAMED holds only the empty
 * reserved graph).
 */
export interface GraphVariableSlot {
  readonly kind: 'graph-variable';
  /** The graph variable as written (`?g`). */
  readonly variable: string;
  /** True for one branch per graph whatever is hidden (a `*` or `+` path in P). */
  readonly perGraph: boolean;
  /** True when the body holds hidden-path slots outside any GRAPH element nested in it. */
  readonly hiddenSlots: boolean;
  /** The generated group `{ P }` (it may hold nested slots), the same in every branch. */
  readonly body: readonly TemplatePart[];
  /** The group with no solution over the in-scope variables of the whole element, ?var included (emptyGroup). */
  readonly removed: string;
}

/**
 * Right after a basic graph pattern whose triple patterns have variable
 * predicates: one `FILTER(?p NOT IN (<h1>, <h2>))` per variable, in the BGP's
 * own group, so a hidden triple never binds. Nothing at all when the caller's
 * hidden set is empty.
 */
export interface HiddenFilterSlot {
  readonly kind: 'hidden-filter';
  /** Predicate variables as written (`?p`), each filtered once per group. */
  readonly variables: readonly string[];
  /**
   * The group's triple patterns with one of these predicate variables, as
   * written (`s ?p o`, its constants cut into ConstantSlots like the text
   * around it), with the predicate variable, for a default graph whose
   * graphs hide different sets: each triple must then be visible in one of
   * them (`FILTER(?p NOT IN (…) || EXISTS { GRAPH <g> { s ?p o } … })`, see
   * fillTemplate). Null when one of them has a blank node, which no filter
   * can name: refused (403) in that case only.
   */
  readonly triples: readonly { readonly predicate: string; readonly pattern: readonly TemplatePart[] }[] | null;
}

/**
 * A negated property set (SPARQL 1.1 §9.1 `!iri`, `!(iri|^iri)`): the hidden
 * IRIs join its members, forward ones where it has forward members and
 * inverse ones where it has inverse members, so that it matches no hidden
 * triple and nothing it did not match before.
 */
export interface NegatedSetSlot {
  readonly kind: 'negated-set';
  /** The set as generated, used when the caller's hidden set is empty. */
  readonly plain: string;
  /** Its members without the `!(` `)`, such as `<a>|^<b>`. */
  readonly members: string;
  readonly forward: boolean;
  readonly inverse: boolean;
}

/**
 * Right after a basic graph pattern holding a property path that can match
 * zero steps (`p*`, `p?`, sequences and alternatives of them): a path of
 * length zero binds its ends to any node of the active graph (SPARQL 1.1
 * §18.4), objects of hidden triples included. Per end `e` (one per such
 * path: its constant end, else a variable end), `FILTER EXISTS { { e ?p ?o }
 * UNION { ?s ?p e } FILTER(?p NOT IN (<h1>, <h2>)) }` in the BGP's own group
 * keeps only nodes of some visible triple of the active graph: exactly the
 * nodes the redacted graph has. Every path of one step or more already ends
 * at such nodes, so nothing else is lost. Nothing at all when the caller's
 * hidden set is empty.
 */
export interface ZeroLengthSlot {
  readonly kind: 'zero-length';
  /** One end of each such path as written (`?x`, `<c>`, `"c"`), once per group. */
  readonly ends: readonly string[];
  /** Fresh variables (`?…`) for the EXISTS pattern: no variable of the query has their names. */
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
}

/** A parsed, checked and serialised query, valid for every caller. */
export interface PreparedQuery {
  readonly form: QueryForm;
  readonly defaultAccept: Plan['defaultAccept'];
  /** Requested default graphs in request order, or null for "all granted" (docs/design.md#rewriting). */
  readonly requestedDefault: readonly string[] | null;
  /** Requested named graphs in request order, or null for "all granted". */
  readonly requestedNamed: readonly string[] | null;
  readonly parts: readonly TemplatePart[];
  /**
   * Which parts of the dataset the query can read (findDatasetReach): the granted graphs
   * go into FROM only when it reads the default graph, into FROM NAMED only when it reads
   * named graphs; the other part holds the reserved empty graph.
   */
  readonly reach: DatasetReach;
  /**
   * Every IRI the query names in predicate position (triple patterns, any
   * property path member, negated sets included, CONSTRUCT templates), sorted:
   * one of them hidden for the caller refuses the query (403).
   */
  readonly namedPredicates: readonly string[];
  /**
   * The same IRIs (each with its dot-segment-free form) by where they are read:
   * IN_DEFAULT_GRAPH, IN_ANY_NAMED_GRAPH, IN_WHOLE_DATASET or a graph IRI
   * (mark-hidden-paths.ts). Each is checked against the hidden set of its own
   * place only (docs/design.md, "Hidden sets are per graph").
   */
  readonly namedIn: readonly (readonly [where: string, iris: readonly string[]])[];
  /** True when parts hold a HiddenFilterSlot, NegatedSetSlot or ZeroLengthSlot. */
  readonly hasHiddenSlots: boolean;
  /**
   * True when a path that can match zero steps has blank nodes at both ends
   * (`[] p* []`): no filter can name them, so the query is refused (403)
   * while the caller's hidden set is not empty.
   */
  readonly blankZeroLength: boolean;
  /**
   * The outer query's LIMIT, written per request so a caller's result cap can lower it:
   * `outer` = the text ends at the solution modifiers and LIMIT `limit` (if any) goes after
   * them; `none` = an ASK, which a cap does not concern; `fixed` = a trailing VALUES clause
   * ends the text, so no LIMIT can be added (a capped caller is refused).
   */
  readonly limit: { readonly kind: 'outer'; readonly limit: number | undefined } | { readonly kind: 'none' | 'fixed' };
  /** Approximate memory held, in bytes, for the plan cache's bound. */
  readonly sizeBytes: number;
}
