// The cached, caller-independent result of preparing one query: generated text segments and per-request slots.

import type { GuardError } from '../guard-error.js';
import type { DatasetReach } from './find-dataset-reach.js';
import type { QueryForm, Plan } from './plan.js';

/** One piece of a prepared query's text: a string as it is, or a slot filled per request (docs/design/sparql.md#rewriting). */
export type TemplatePart =
  string | DatasetSlot | GraphSlot | GraphVariableSlot | HiddenFilterSlot | NegatedSetSlot | ZeroLengthSlot | RowFilterSlot | ConstantSlot;

/** A constant the planner neither checks nor rewrites, filled with the request's own (docs/design/sparql.md#plan-cache). */
export interface ConstantSlot {
  readonly kind: 'constant';
  /** The constant's number in text order (QueryShape.fill). */
  readonly index: number;
}

/** Where FROM / FROM NAMED go: between the query form and WHERE. */
export interface DatasetSlot {
  readonly kind: 'dataset';
}

/** A `GRAPH <iri> { P }` element: `kept` as generated, or `removed` (emptyGroup) when `iri` is no effective named graph. */
export interface GraphSlot {
  readonly kind: 'graph';
  readonly iri: string;
  /** False when a requested named-graph list leaves `iri` out, whatever is granted. */
  readonly requested: boolean;
  readonly kept: readonly TemplatePart[];
  readonly removed: string;
}

/**
 * A `GRAPH ?var { P }` element, written per request either as it is or as one
 * branch `{ GRAPH <g> { P } VALUES ?var { <g> } }` (or `BIND(<g> AS ?var)`) per effective named graph g
 * joined by UNION (SPARQL 1.1 §18.6; fillGraphVariable decides which).
 */
export interface GraphVariableSlot {
  readonly kind: 'graph-variable';
  /** The graph variable as written (`?g`). */
  readonly variable: string;
  /** True for one branch per graph whatever is hidden (a `*` or `+` path in P). */
  readonly perGraph: boolean;
  /** True when a branch binds the variable with BIND, not VALUES (findGraphsToBind). */
  readonly bind: boolean;
  /** True when the body holds hidden-path slots outside any GRAPH element nested in it. */
  readonly hiddenSlots: boolean;
  /** The generated group `{ P }` (it may hold nested slots), the same in every branch. */
  readonly body: readonly TemplatePart[];
  /** The group with no solution over the in-scope variables of the whole element, ?var included (emptyGroup). */
  readonly removed: string;
}

/** After a BGP with variable predicates: `FILTER(?p NOT IN (<h1>, <h2>))` per variable, nothing when nothing is hidden. */
export interface HiddenFilterSlot {
  readonly kind: 'hidden-filter';
  /** Predicate variables as written (`?p`), each filtered once per group. */
  readonly variables: readonly string[];
  /**
   * The group's triple patterns with these predicates (`s ?p o`), for a default graph whose graphs
   * hide different sets (perGraphFilters); null when one has a blank node, refused (403) there only.
   */
  readonly triples: readonly { readonly predicate: string; readonly pattern: readonly TemplatePart[] }[] | null;
}

/** A negated property set (SPARQL 1.1 §9.1): the hidden IRIs join its members, in the directions it has. */
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
 * After a BGP with a path that can match zero steps (SPARQL 1.1 §18.4 binds its ends to any node):
 * per end, a FILTER EXISTS keeping only nodes of a visible triple (zeroLengthFilter); nothing when nothing is hidden.
 */
export interface ZeroLengthSlot {
  readonly kind: 'zero-length';
  /** One end of each such path as written (`?x`, `<c>`, `"c"`), once per group. */
  readonly ends: readonly string[];
  /** Fresh variables (`?…`) for the EXISTS pattern: no variable of the query has their names. */
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  /** Under row rules, the prefix the rules' own variables are written after (as RowFilterSlot's). */
  readonly prefix: string;
}

/**
 * After every BGP: per request, where the active graph has row rules (or lists columns while a default
 * graph merges graphs with different views), one filter per triple pattern holding it to the caller's
 * view (writeRowFilter); nothing elsewhere (docs/design/sparql.md, "Rows and columns").
 */
export interface RowFilterSlot {
  readonly kind: 'row-filter';
  /** A prefix no variable of the query starts with: the rules' own variables are written after it. */
  readonly prefix: string;
  /** The BGP's triple patterns whose predicate is an IRI or a variable; a part null is a blank node. */
  readonly triples: readonly {
    readonly subject: readonly TemplatePart[] | null;
    readonly predicate: string;
    readonly iri: string | undefined;
    readonly object: readonly TemplatePart[] | null;
  }[];
  /** The BGP's other property paths: refused where every policy granting the active graph restricts rows. */
  readonly paths: readonly { readonly variable: boolean; readonly members: readonly string[] }[];
  /**
   * The group graph pattern the BGP is an element of (numbered per query): a check written once in a
   * group holds every BGP of it, so a later slot of the group leaves out the checks an earlier one wrote.
   */
  readonly group: number;
  /** True for the group's first row filter slot in the text: it starts the group's written checks afresh. */
  readonly opens: boolean;
}

/** A parsed, checked and serialised query, valid for every caller. */
export interface PreparedQuery {
  readonly form: QueryForm;
  readonly defaultAccept: Plan['defaultAccept'];
  /** Requested default graphs in request order, or null for "all granted" (docs/design/sparql.md#rewriting). */
  readonly requestedDefault: readonly string[] | null;
  /** Requested named graphs in request order, or null for "all granted". */
  readonly requestedNamed: readonly string[] | null;
  readonly parts: readonly TemplatePart[];
  /** Which parts of the dataset the query can read (findDatasetReach). */
  readonly reach: DatasetReach;
  /** Every IRI named in predicate position (paths, negated sets, templates), sorted: a hidden one is refused (403). */
  readonly namedPredicates: readonly string[];
  /** The same IRIs (and their dot-segment-free forms) by where they are read (markHiddenPaths). */
  readonly namedIn: readonly (readonly [where: string, iris: readonly string[]])[];
  /** True when parts hold a HiddenFilterSlot, NegatedSetSlot or ZeroLengthSlot. */
  readonly hasHiddenSlots: boolean;
  /** True when parts hold a RowFilterSlot (the query has a BGP). */
  readonly hasRowSlots: boolean;
  /** True when the caller's query has an EXISTS, a NOT EXISTS or a MINUS anywhere (Plan.existsBesideNegation). */
  readonly negates: boolean;
  /** True when an expression of a SELECT clause (a projection or an aggregate's argument) holds an EXISTS or a NOT EXISTS (Plan.existsInProjection). */
  readonly existsInProjection: boolean;
  /** A zero-length path between blank nodes (`[] p* []`): refused (403) while anything is hidden. */
  readonly blankZeroLength: boolean;
  /** The outer LIMIT, written per request (a result cap may lower it): `none` for ASK, `fixed` after a trailing VALUES. */
  readonly limit: { readonly kind: 'outer'; readonly limit: number | undefined } | { readonly kind: 'none' | 'fixed' };
  /** Approximate memory held, in bytes, for the plan cache's bound. */
  readonly sizeBytes: number;
  /**
   * The same query with its fixed-length paths expanded into triple patterns (expandFixedPaths), filled
   * instead for a caller whose rows or columns restrict a graph the query reads; a GuardError when it
   * cannot be written (403). Absent when the query has no such path.
   */
  readonly expanded?: PreparedQuery | GuardError;
}
