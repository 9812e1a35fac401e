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
 * Replaces, anywhere in `root`, each BGP with a triple pattern whose subject is a literal and whose
 * predicate starts with a forward step on every way through it (an IRI, a variable, `p|q`, `!p`, `p/q`)
 * by a group with no solution that keeps the BGP's variables in scope. An RDF triple's subject is an IRI
 * or a blank node (RDF 1.1 §3.1), so such a pattern matches nothing and the BGP has no solution in any
 * dataset (SPARQL 1.1 §18.3); a path that may start at a literal stays as written (an inverse step, a
 * zero-length path, §18.5). Safe for a cached shape: a literal
 * is a slot of its own class (lex-query-shape.ts), so every filling has a literal there. Called after
 * the hidden paths are marked, so a predicate the BGP names is still named (a hidden one refused).
 * Why: Virtuoso 7.2.5 takes such a pattern for one solution whatever the data (`ASK { "a" ?p ?o }`
 * true over an empty dataset, `COUNT(*)` 1, `EXISTS` true, a `MINUS` of it removing every row; the same
 * for `"a" (p|q) ?o` and `"a" !p ?o`) and does so even beside `FILTER(1 = 0)` in its group
 * (docs/design/sparql.md).
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

/** A BGP holding a triple pattern whose subject is a literal and whose predicate, an IRI, a variable or a path, cannot start there. */
function matchesNothing(node: unknown): boolean {
  const bgp = node as { type?: unknown; triples?: unknown } | null;
  if (typeof bgp !== 'object' || bgp === null || bgp.type !== 'bgp' || !Array.isArray(bgp.triples)) return false;
  return (bgp.triples as { subject?: { termType?: unknown }; predicate?: unknown }[]).some(
    (triple) => triple.subject?.termType === 'Literal' && !mayStartAtLiteral(triple.predicate),
  );
}

/** A path node of the tree (sparqljs): its operator and operands. */
interface PathNode {
  readonly type: 'path';
  readonly pathType: string;
  readonly items: readonly unknown[];
}

function asPath(value: unknown): PathNode | undefined {
  const path = value as Partial<PathNode> | null;
  return typeof path === 'object' && path !== null && path.type === 'path' && Array.isArray(path.items) ? (path as PathNode) : undefined;
}

/**
 * Whether `predicate` may match starting at a literal (its subject end, §18.4-18.5): false only where every way
 * through it begins with a forward step, whose triple would have the literal as subject. A zero-length path (`*`,
 * `?`) matches at the literal itself; an inverse step starts at a triple's object, which may be a literal.
 */
function mayStartAtLiteral(predicate: unknown): boolean {
  const path = asPath(predicate);
  if (path === undefined) return false; // an IRI or a variable: one forward step
  switch (path.pathType) {
    case '^':
      return mayEndAtLiteral(path.items[0]);
    case '/':
      return mayStartAtLiteral(path.items[0]);
    case '|':
      return path.items.some(mayStartAtLiteral);
    case '+':
      return mayStartAtLiteral(path.items[0]);
    case '!':
      // A negated set matches forward through the IRIs it does not name and backward through its `^` members.
      return negatedMembers(path).some((member) => asPath(member)?.pathType === '^');
    default:
      return true; // `*`, `?` and anything else: kept as written
  }
}

/** Whether `predicate` may match ending at a literal (its object end): false only where every way through it ends with an inverse step. */
function mayEndAtLiteral(predicate: unknown): boolean {
  const path = asPath(predicate);
  if (path === undefined) return true;
  switch (path.pathType) {
    case '^':
      return mayStartAtLiteral(path.items[0]);
    case '/':
      return mayEndAtLiteral(path.items[path.items.length - 1]);
    case '|':
      return path.items.some(mayEndAtLiteral);
    case '+':
      return mayEndAtLiteral(path.items[0]);
    case '!':
      return negatedMembers(path).some((member) => asPath(member)?.pathType !== '^');
    default:
      return true;
  }
}

/** The members of a negated property set: `!a` has one, `!(a|^b)` an alternative of them (§9.1, [95]-[96]). */
function negatedMembers(path: PathNode): readonly unknown[] {
  const inner = asPath(path.items[0]);
  return inner?.pathType === '|' ? inner.items : path.items;
}
