// The group with no solution the guard writes in place of a pattern that can match nothing: a GRAPH of a graph not granted, a BGP with a literal subject.

import { inScopeVariables } from './in-scope-variables.js';
import { parseQuery } from './parse-query.js';

/**
 * A group with no solution that keeps `variables` in scope (SPARQL 1.1 §18.2.1): one row of UNDEF
 * under a false filter, not an empty VALUES block (docs/design/sparql.md, "GRAPH of an ungranted IRI").
 */
export function emptyGroup(variables: readonly string[]): string {
  if (variables.length === 0) return '{ FILTER(1 = 0) }';
  if (variables.length === 1) return `{ VALUES ${variables[0]} { UNDEF } FILTER(1 = 0) }`;
  return `{ VALUES (${variables.join(' ')}) { (${variables.map(() => 'UNDEF').join(' ')}) } FILTER(1 = 0) }`;
}

/** emptyGroup as a node of the tree (parsed: the form the generator writes back as it is). */
function emptyGroupNode(variables: readonly string[]): unknown {
  const query = parseQuery(`SELECT * WHERE { ${emptyGroup(variables)} }`) as { where?: unknown[] };
  return query.where?.[0];
}

/**
 * Replaces, anywhere in `root`, each BGP with a triple pattern whose subject is a literal (and whose
 * predicate is an IRI or a variable, not a path) by a group with no solution that keeps the BGP's
 * variables in scope. An RDF triple's subject is an IRI or a blank node (RDF 1.1 §3.1), so such a
 * pattern matches nothing and the BGP has no solution in any dataset (SPARQL 1.1 §18.3); a path stays
 * as written (a zero-length path from a literal matches it, §18.5). Safe for a cached shape: a literal
 * is a slot of its own class (lex-query-shape.ts), so every filling has a literal there. Called after
 * the hidden paths are marked, so a predicate the BGP names is still named (a hidden one refused).
 * Why: Virtuoso 7.2.5 takes such a pattern for one solution whatever the data (`ASK { "a" ?p ?o }`
 * true over an empty dataset, `COUNT(*)` 1, `EXISTS` true, a `MINUS` of it removing every row) and
 * does so even beside `FILTER(1 = 0)` in its group (docs/design/sparql.md).
 */
export function emptyLiteralSubjects(root: unknown): void {
  visit(root);
}

function visit(value: unknown): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (matchesNothing(item)) value[i] = emptyGroupNode(inScopeVariables([item]));
      else visit(item);
    }
    return;
  }
  if (typeof value !== 'object' || value === null || 'termType' in value) return;
  for (const field of Object.values(value)) visit(field);
}

/** A BGP holding a triple pattern whose subject is a literal and whose predicate is no path. */
function matchesNothing(node: unknown): boolean {
  const bgp = node as { type?: unknown; triples?: unknown } | null;
  if (typeof bgp !== 'object' || bgp === null || bgp.type !== 'bgp' || !Array.isArray(bgp.triples)) return false;
  return (bgp.triples as { subject?: { termType?: unknown }; predicate?: { type?: unknown } }[]).some(
    (triple) => triple.subject?.termType === 'Literal' && triple.predicate?.type !== 'path',
  );
}
