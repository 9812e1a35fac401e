// The cached, caller-independent result of preparing one query: generated text segments and per-request slots.

import type { QueryForm, Plan } from './plan.js';

/**
 * One piece of a prepared query's text. Strings are emitted as they are;
 * slots are filled per request from the caller's grant. Later slot kinds
 * (hidden-predicate filters beside variable-predicate patterns, DESCRIBE
 * rewriting) join this union without changing how the cache works.
 */
export type TemplatePart = string | DatasetSlot | GraphSlot;

/** Where FROM / FROM NAMED go: between the query form and WHERE. */
export interface DatasetSlot {
  readonly kind: 'dataset';
}

/**
 * A `GRAPH <iri> { P }` element. `kept` is the generated GRAPH text (it may hold
 * nested slots); `removed` is the empty inline-data block over P's in-scope
 * variables that replaces it when `iri` is not an effective named graph.
 */
export interface GraphSlot {
  readonly kind: 'graph';
  readonly iri: string;
  /** False when a requested named-graph list leaves `iri` out, whatever is granted. */
  readonly requested: boolean;
  readonly kept: readonly TemplatePart[];
  readonly removed: string;
}

/** A parsed, checked and serialised query, valid for every caller. */
export interface PreparedQuery {
  readonly form: QueryForm;
  readonly defaultAccept: Plan['defaultAccept'];
  /** Requested default graphs in request order, or null for "all granted" (DESIGN section 5). */
  readonly requestedDefault: readonly string[] | null;
  /** Requested named graphs in request order, or null for "all granted". */
  readonly requestedNamed: readonly string[] | null;
  readonly parts: readonly TemplatePart[];
  /** Approximate memory held, in bytes, for the plan cache's bound. */
  readonly sizeBytes: number;
}
