// Expands fixed-length property paths (sequences, inverses, alternatives) into triple patterns and unions as SPARQL 1.1 §18.4 and §18.5 translate them, and names a BGP's blank nodes with fresh variables, so row and column rules can test each step and each subject.

import { GuardError } from '../guard-error.js';
import { freshVariableNamer } from './fresh-variable-namer.js';
import { inScopeVariables } from './in-scope-variables.js';
import type { PathNode, Term } from './tree-shapes.js';

export const STAR_WITHOUT_VARIABLES =
  'SELECT * with no variable over a property path or a blank node cannot be held to row or column rules (they become variables of their own); name a variable';
export const COUNT_DISTINCT_STAR =
  'COUNT(DISTINCT *) over a property path or a blank node cannot be held to row or column rules (they become variables of their own); count DISTINCT the variables you mean';

/** A triple pattern of a BGP as sparqljs gives it: a path or a term in predicate position. */
interface TriplePattern {
  readonly subject: Term;
  readonly predicate: Term | PathNode;
  readonly object: Term;
}

/** What a path becomes: triple patterns, and unions (each branch a list of pieces) joined with them. */
type Piece = { readonly triple: TriplePattern } | { readonly union: readonly (readonly Piece[])[] };

type Tree = Record<string, unknown>;

/**
 * A copy of `root` with every fixed-length path step written as a triple pattern (docs/design/sparql.md,
 * "Fixed-length paths under rows and columns"): `X p/q Y` as `X p ?v . ?v q Y` with a fresh `?v`, `X ^p Y`
 * as `Y p X`, `X p|q Y` as `{ X p Y } UNION { X q Y }` (a union of solutions, duplicates kept, §18.5).
 * Paths of variable length and negated property sets stay as they are, at the ends the expansion gives them.
 * Each blank node of a BGP becomes a fresh variable (namedBlankNodes), so a row rule can name it.
 * A `SELECT *` above an expansion projects the variables in scope before it, so no fresh variable is
 * projected. Undefined when the query has no such path or blank node; a GuardError (403) for a
 * `SELECT *` with no variable to project, or a `COUNT(DISTINCT *)` over fresh variables. `root` is not changed; terms are shared, never changed.
 */
export function expandFixedPaths(root: Tree): Tree | GuardError | undefined {
  if (!holdsExpandable(root)) return undefined;
  const name = freshVariableNamer(root);
  const fresh = (): Term => ({ termType: 'Variable', value: name('path') });
  // One name per label for the whole query: sparqljs splits a BGP at each FILTER into blocks that are one BGP (§18.2.2).
  const blankNames = new Map<string, Term>();
  let refused: string | undefined;
  const copy = (value: unknown): unknown => {
    if (Array.isArray(value)) return spliced(value.map(copy));
    if (typeof value !== 'object' || value === null || 'termType' in value) return value;
    const node = value as Tree;
    const out: Tree = {};
    // A UNION branch or an operand of EXISTS that became several patterns is one group again.
    const wrapped = node['type'] === 'union' ? 'patterns' : node['type'] === 'operation' ? 'args' : undefined;
    for (const [key, field] of Object.entries(node)) {
      out[key] = key === wrapped && Array.isArray(field) ? field.map((item) => asOne(copy(item))) : copy(field);
    }
    if (node['type'] === 'query' && holdsExpandable(node['where'])) {
      if (isStar(node['variables'])) {
        const names = inScopeVariables([...((node['where'] as unknown[] | undefined) ?? []), ...trailingValues(node)]);
        if (names.length === 0) refused = STAR_WITHOUT_VARIABLES;
        out['variables'] = names.map((variable) => ({ termType: 'Variable', value: variable.slice(1) }));
      }
      // DISTINCT * over the fresh variables would count solutions the query's own variables do not tell apart.
      if (countsDistinctStar(node['variables']) || countsDistinctStar(node['having']) || countsDistinctStar(node['order']))
        refused = COUNT_DISTINCT_STAR;
    }
    if (node['type'] === 'bgp') return expandBgp(namedBlankNodes(out['triples'] as TriplePattern[], blankNames, name), fresh);
    return out;
  };
  const expanded = copy(root) as Tree;
  return refused !== undefined ? new GuardError(403, 'forbidden', refused) : expanded;
}

/**
 * The triple patterns of one block of a BGP with each blank node written as a variable, one per label
 * (`names`, shared by every block of the query): a blank node of a pattern is a variable that is not
 * projected (§18.3: each instance mapping a solution, so the multiplicities stay). A label is scoped to
 * its BGP (§4.1.4), and a BGP may be several of sparqljs's blocks with FILTERs between them, as
 * `_:a ?p ?v FILTER(true) [] ?q _:a`: one name per label across the query keeps those blocks joined on
 * it, and checkBlankNodeScope has already refused a label in two BGPs, so no two BGPs share a name.
 * (sparqljs labels each `[]` afresh, `g_<n>`, apart from every written `_:x`, `e_x`.)
 */
function namedBlankNodes(triples: readonly TriplePattern[], names: Map<string, Term>, name: (base: string) => string): TriplePattern[] {
  const named = (term: Term): Term => {
    if (term.termType !== 'BlankNode') return term;
    let variable = names.get(term.value);
    if (variable === undefined) names.set(term.value, (variable = { termType: 'Variable', value: name('blank') }));
    return variable;
  };
  return triples.map(({ subject, predicate, object }) => ({ subject: named(subject), predicate, object: named(object) }));
}

/** True when `COUNT(DISTINCT *)` occurs under `value`. */
function countsDistinctStar(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(countsDistinctStar);
  if (typeof value !== 'object' || value === null || 'termType' in value) return false;
  const node = value as Tree;
  if (node['type'] === 'aggregate' && node['distinct'] === true && (node['expression'] as Partial<Term>)?.termType === 'Wildcard')
    return true;
  return Object.values(node).some(countsDistinctStar);
}

/** A BGP with its paths expanded: the BGP alone, or a marker holding the BGP and the unions to join with it. */
function expandBgp(triples: readonly TriplePattern[], fresh: () => Term): Tree {
  const pieces = triples.flatMap((triple) => expandTriple(triple.subject, triple.predicate, triple.object, fresh));
  // Blank nodes are variables by now (namedBlankNodes): a union branch holding one joins with the rest of its BGP.
  return groupMembers(pieces);
}

/** The patterns of pieces: one BGP of their triples, then one union per union piece (a join, §18.2.2.5). */
function groupMembers(pieces: readonly Piece[]): Tree {
  const triples = pieces.flatMap((piece) => ('triple' in piece ? [piece.triple] : []));
  const unions = pieces.flatMap((piece) =>
    'union' in piece ? [{ type: 'union', patterns: piece.union.map((branch) => asOne(groupMembers(branch))) }] : [],
  );
  const bgp = { type: 'bgp', triples };
  return unions.length === 0 ? bgp : { [SPLICE]: triples.length === 0 ? unions : [bgp, ...unions] };
}

/** Marks a BGP that became several patterns of its group: spliced into the array holding it. */
const SPLICE = '\u0000splice';

/** An array of patterns with expanded BGPs spliced in (a union's branches and EXISTS operands are wrapped instead, see asOne). */
function spliced(items: unknown[]): unknown[] {
  if (!items.some((item) => typeof item === 'object' && item !== null && SPLICE in item)) return items;
  return items.flatMap((item) =>
    typeof item === 'object' && item !== null && SPLICE in item ? ((item as Tree)[SPLICE] as unknown[]) : [item],
  );
}

/**
 * One pattern: an expanded BGP that became several is wrapped in a group of its own; one that became
 * one pattern (an alternative's UNION) is that pattern, as sparqljs reads `{ P }` there (else the
 * round-trip check saw another tree and refused every query with `p|q` alone in a UNION branch or EXISTS).
 */
function asOne(item: unknown): unknown {
  if (typeof item !== 'object' || item === null || !(SPLICE in item)) return item;
  const patterns = (item as Tree)[SPLICE] as unknown[];
  return patterns.length === 1 ? patterns[0] : { type: 'group', patterns };
}

/** The pieces of `subject path object` (SPARQL 1.1 §18.4: link, inv, seq; §18.5: alt as a union). */
function expandTriple(subject: Term, predicate: Term | PathNode, object: Term, fresh: () => Term): Piece[] {
  if ('termType' in predicate || !isExpandable(predicate)) return [{ triple: { subject, predicate, object } }];
  const { pathType, items } = predicate;
  if (pathType === '^') {
    const [inner] = items;
    return inner === undefined ? [{ triple: { subject, predicate, object } }] : expandTriple(object, inner, subject, fresh);
  }
  if (pathType === '/') {
    const pieces: Piece[] = [];
    let from = subject;
    items.forEach((item, index) => {
      const to = index === items.length - 1 ? object : fresh();
      pieces.push(...expandTriple(from, item, to, fresh));
      from = to;
    });
    return pieces;
  }
  // `|`: a union of the branches' solutions; a branch that is a union itself adds its branches.
  const branches: Piece[][] = [];
  for (const item of items) {
    const branch = expandTriple(subject, item, object, fresh);
    const [only] = branch;
    if (branch.length === 1 && only !== undefined && 'union' in only) branches.push(...only.union.map((inner) => [...inner]));
    else branches.push(branch);
  }
  return [{ union: branches }];
}

/** A sequence, an alternative, or an inverse of a link or of such a path: written as triple patterns. */
function isExpandable(path: PathNode): boolean {
  if (path.pathType === '/' || path.pathType === '|') return true;
  if (path.pathType !== '^') return false;
  const [inner] = path.items;
  return inner !== undefined && ('termType' in inner || isExpandable(inner));
}

/** True when a triple pattern somewhere under `value` has an expandable path as its predicate, or a blank node. */
function holdsExpandable(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsExpandable);
  if (typeof value !== 'object' || value === null || 'termType' in value) return false;
  const node = value as Tree;
  if (node['type'] === 'bgp') {
    return (node['triples'] as TriplePattern[]).some(
      ({ subject, predicate, object }) =>
        subject.termType === 'BlankNode' || object.termType === 'BlankNode' || (!('termType' in predicate) && isExpandable(predicate)),
    );
  }
  return Object.values(node).some(holdsExpandable);
}

function isStar(variables: unknown): boolean {
  return Array.isArray(variables) && variables.some((term) => (term as Partial<Term>).termType === 'Wildcard');
}

/** A query's trailing VALUES clause as a pattern: its variables are in scope for `SELECT *` too (§18.2.4.1). */
function trailingValues(node: Tree): unknown[] {
  return node['values'] === undefined ? [] : [{ type: 'values', values: node['values'] }];
}
