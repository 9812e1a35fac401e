// Expands fixed-length property paths (sequences, inverses, alternatives) into triple patterns and unions as SPARQL 1.1 §18.4 and §18.5 translate them, so row and column rules can test each step.

import { GuardError } from '../guard-error.js';
import { freshVariableNamer } from './fresh-variable-namer.js';
import { inScopeVariables } from './in-scope-variables.js';
import type { PathNode, Term } from './tree-shapes.js';

export const STAR_WITHOUT_VARIABLES =
  'SELECT * over a property path with no variable cannot be held to row or column rules (the path is expanded into triple patterns); name a variable or write the steps as triple patterns';

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
 * A `SELECT *` above an expansion projects the variables in scope before it, so no fresh variable is
 * projected. Undefined when the query has no such path; a GuardError (403) for a `SELECT *` with no
 * variable to project. `root` is not changed; terms are shared, never changed.
 */
export function expandFixedPaths(root: Tree): Tree | GuardError | undefined {
  if (!holdsExpandable(root)) return undefined;
  const name = freshVariableNamer(root);
  const fresh = (): Term => ({ termType: 'Variable', value: name('path') });
  let refused = false;
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
    if (node['type'] === 'query' && isStar(node['variables']) && holdsExpandable(node['where'])) {
      const names = inScopeVariables([...((node['where'] as unknown[] | undefined) ?? []), ...trailingValues(node)]);
      if (names.length === 0) refused = true;
      out['variables'] = names.map((variable) => ({ termType: 'Variable', value: variable.slice(1) }));
    }
    if (node['type'] === 'bgp') return expandBgp(out['triples'] as TriplePattern[], fresh);
    return out;
  };
  const expanded = copy(root) as Tree;
  return refused ? new GuardError(403, 'forbidden', STAR_WITHOUT_VARIABLES) : expanded;
}

/** A BGP with its paths expanded: the BGP alone, or a marker holding the BGP and the unions to join with it. */
function expandBgp(triples: readonly TriplePattern[], fresh: () => Term): Tree {
  const pieces = triples.flatMap((triple) => expandTriple(triple.subject, triple.predicate, triple.object, fresh));
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

/** One pattern: an expanded BGP that became several is wrapped in a group of its own. */
function asOne(item: unknown): unknown {
  if (typeof item !== 'object' || item === null || !(SPLICE in item)) return item;
  return { type: 'group', patterns: (item as Tree)[SPLICE] };
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

/** True when a triple pattern somewhere under `value` has an expandable path as its predicate. */
function holdsExpandable(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsExpandable);
  if (typeof value !== 'object' || value === null || 'termType' in value) return false;
  const node = value as Tree;
  if (node['type'] === 'bgp') {
    return (node['triples'] as TriplePattern[]).some(({ predicate }) => !('termType' in predicate) && isExpandable(predicate));
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
