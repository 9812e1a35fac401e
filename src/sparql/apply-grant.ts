// Fills a prepared query's slots for one caller: set operations on graph IRIs and string joins, nothing else.

import type { Grant } from '../policy/grant.js';
import type { Plan } from './plan.js';
import { EMPTY_GRAPH } from './prepare-query.js';
import type { PreparedQuery, TemplatePart } from './prepared-query.js';

/**
 * DESIGN section 5: effective default = requested default (or all granted)
 * ∩ granted, the same for named; both FROM and FROM NAMED always present, an
 * empty set written as the reserved EMPTY_GRAPH; `GRAPH <iri>` outside the
 * effective named graphs becomes its empty VALUES block. Requested graphs
 * keep request order, "all granted" is sorted, so output is deterministic.
 */
export function applyGrant(prepared: PreparedQuery, grant: Grant): Plan {
  const granted = grant.graphs;
  const all = prepared.requestedDefault === null || prepared.requestedNamed === null ? sortedGraphs(grant) : undefined;
  const dataset =
    clauses('FROM <', prepared.requestedDefault ?? all ?? [], granted) +
    clauses('FROM NAMED <', prepared.requestedNamed ?? all ?? [], granted);
  return {
    query: fill(prepared.parts, dataset, granted),
    form: prepared.form,
    defaultAccept: prepared.defaultAccept,
  };
  // DESCRIBE hardening and hidden-predicate filters (later tasks) add slot kinds that fill() handles here.
}

function clauses(prefix: string, graphs: readonly string[], granted: ReadonlySet<string>): string {
  let out = '';
  for (const graph of graphs) if (granted.has(graph)) out += prefix + graph + '>\n';
  return out === '' ? prefix + EMPTY_GRAPH + '>\n' : out;
}

function fill(parts: readonly TemplatePart[], dataset: string, granted: ReadonlySet<string>): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (part.kind === 'dataset') out += dataset;
    // An effective named graph is requested (or all are) and granted.
    else out += part.requested && granted.has(part.iri) ? fill(part.kept, dataset, granted) : part.removed;
  }
  return out;
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
