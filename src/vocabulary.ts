// The guard's own IRIs: the policy vocabulary (guard:), the rules' derived terms and the IRIs the rewriter reserves.

/**
 * Namespace of the policy vocabulary (docs/design/policy.md#vocabulary). Its IRIs name principals
 * of the guard itself, never a caller.
 */
export const GUARD = 'https://w3id.org/sparql-guard#';

/** Vocabulary IRIs that the policy loader reads or the shipped rules derive. */
export const guard = {
  Policy: `${GUARD}Policy`,
  agent: `${GUARD}agent`,
  group: `${GUARD}group`,
  readGraph: `${GUARD}readGraph`,
  /** A graph IRI per caller, from its identity (RFC 6570 simple expansion; docs/design/policy.md#vocabulary). */
  readGraphTemplate: `${GUARD}readGraphTemplate`,
  /** A graph IRI prefix (plain string literal): every graph of the store whose IRI starts with it, listed at each load. */
  readGraphPrefix: `${GUARD}readGraphPrefix`,
  hidePath: `${GUARD}hidePath`,
  /** Columns: a predicate the policy lets its callers read (an allow-list; docs/policies.md, "Rows and columns"). */
  readPath: `${GUARD}readPath`,
  /** Rows: a basic graph pattern over ?this (plain string literal) that a record must match to be read. */
  rowPattern: `${GUARD}rowPattern`,
  /** Rows: shorthand for the row pattern `?this a <C>`. */
  rowClass: `${GUARD}rowClass`,
  /** Rows: a graph the row rule reads (default: the granted graph itself). */
  rowData: `${GUARD}rowData`,
  /** Limits per caller (docs/design/policy.md, "Limits per caller"): positive integers. */
  timeoutMs: `${GUARD}timeoutMs`,
  resultLimit: `${GUARD}resultLimit`,
  maxConcurrent: `${GUARD}maxConcurrent`,
  AuthenticatedAgent: `${GUARD}AuthenticatedAgent`,
  Everyone: `${GUARD}Everyone`,
  Anonymous: `${GUARD}Anonymous`,
  /** Derived by rules: policy -> principal (agent IRI, AuthenticatedAgent, Everyone, or group name literal). */
  appliesTo: `${GUARD}appliesTo`,
  /** Derived by rules: policy -> graph IRI it grants for reading. */
  grantsGraph: `${GUARD}grantsGraph`,
} as const;

/**
 * Where a term of the vocabulary may stand: the object of `a`, a predicate, a principal; or
 * only in what the guard writes (the service description), never in a policy or rule.
 */
export type TermKind = 'class' | 'property' | 'principal' | 'description';

/**
 * Every term of the policy vocabulary, by local name, with its kind: the closed list that
 * policy and rule files are checked against (policy/check-vocabulary.ts) and that the
 * README's table of terms documents (but the description's terms, which no input may use). A guard: IRI that is not here fails the load.
 */
export const VOCABULARY_TERMS: Readonly<Record<string, TermKind>> = Object.freeze({
  Policy: 'class',
  agent: 'property',
  group: 'property',
  readGraph: 'property',
  readGraphPrefix: 'property',
  readGraphTemplate: 'property',
  hidePath: 'property',
  readPath: 'property',
  rowPattern: 'property',
  rowClass: 'property',
  rowData: 'property',
  timeoutMs: 'property',
  resultLimit: 'property',
  maxConcurrent: 'property',
  appliesTo: 'property',
  grantsGraph: 'property',
  AuthenticatedAgent: 'principal',
  Everyone: 'principal',
  Anonymous: 'principal',
  caller: 'description',
  rowsRestricted: 'description',
});

/** The agent IRI of a caller without credentials (`guard:Anonymous`). */
export const ANONYMOUS_AGENT = guard.Anonymous;

export const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
export const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';

/** Prefix of the IRIs the rewriter keeps for itself: no policy may grant one. */
const RESERVED_PREFIX = 'urn:x-sparql-guard:';

/**
 * The reserved IRI `urn:x-sparql-guard:<local>`. The rewriter writes these as graphs that
 * never exist (EMPTY_GRAPH) and as stand-ins while it checks a template (never sent to a
 * store); no policy may grant or hide one (isReservedIri).
 */
export function reservedIri(local: string): string {
  return `${RESERVED_PREFIX}${local}`;
}

/**
 * Written as FROM / FROM NAMED when a set of graphs is empty (docs/design/sparql.md#rewriting):
 * a graph that never exists and that no policy may grant.
 */
export const EMPTY_GRAPH = reservedIri('empty');

/**
 * Whether `iri` lies under the reserved prefix (`urn:x-sparql-guard:`, which EMPTY_GRAPH
 * uses). URN scheme and namespace are case-insensitive (RFC 8141 section 3.1), so the
 * check ignores case: fail closed on any spelling.
 */
export function isReservedIri(iri: string): boolean {
  return iri.slice(0, RESERVED_PREFIX.length).toLowerCase() === RESERVED_PREFIX;
}

/**
 * The IRI a blank node of the policy data stands for while the rules run (EYE skolemises
 * its input too). The prefix is reserved, so a blank node that reaches a derived graph or
 * principal is refused by validation rather than granted.
 */
export function skolemIri(label: string): string {
  return reservedIri(`bnode:${label}`);
}

/** Whether an IRI is one skolemIri made: the derived term was a blank node of the data. */
export function isSkolemIri(iri: string): boolean {
  return iri.startsWith(`${RESERVED_PREFIX}bnode:`);
}
