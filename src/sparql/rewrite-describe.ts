// Rewrites a DESCRIBE query into the CONSTRUCT the guard sends instead: each described resource's outgoing triples.

import { inScopeVariables } from './in-scope-variables.js';
import { parseQuery } from './parse-query.js';
import type { Term } from './tree-shapes.js';
import { freshVariableNamer } from './fresh-variable-namer.js';

/** The fields of a parsed DESCRIBE query this rewrite reads (sparqljs shapes). */
interface DescribeTree {
  readonly variables: readonly Term[];
  readonly where?: unknown[];
  readonly group?: unknown;
  readonly having?: unknown;
  readonly order?: unknown;
  readonly limit?: number;
  readonly offset?: number;
  readonly values?: unknown;
}

const variable = (name: string): Term => ({ termType: 'Variable', value: name });

/** What follows WHERE in a query (solution modifiers and a trailing VALUES), kept with P. */
const SOLUTION_MODIFIERS = ['group', 'having', 'order', 'limit', 'offset', 'values'] as const;

/**
 * SPARQL 1.1 §16.4 leaves the description to the store, and stores disagree, so the guard fixes
 * it: a resource's outgoing triples in the effective default graph (docs/design/sparql.md#rewriting).
 *
 *     DESCRIBE <i1> ?v WHERE { P } ORDER BY … LIMIT n
 * becomes
 *     CONSTRUCT { ?r ?p ?o } WHERE {
 *       { VALUES ?r { <i1> } }
 *       UNION
 *       { SELECT DISTINCT (COALESCE(?v, "") AS ?r) WHERE {
 *           { SELECT ?v WHERE { P } ORDER BY … LIMIT n } } }
 *       FILTER(isIRI(?r) || isBlank(?r))
 *       ?r ?p ?o.
 *     }
 *
 * One union branch per described variable, keeping P's solution modifiers and VALUES; the filter
 * drops literals. It stands outside the branches: inside, beside P's sub-select, Virtuoso 7.2.5
 * dropped the FILTERs in P (a row check among them). Outside, it runs after the join with
 * `?r ?p ?o` (§18.2.2.6), which binds an unbound `?r` to every subject, so a branch turns an unbound
 * value into the literal "" (COALESCE), which the join matches to nothing and the filter drops.
 * `DESCRIBE *` describes P's in-scope variables (§16.4).
 */
export function rewriteDescribe(tree: DescribeTree): Record<string, unknown> {
  const name = freshVariableNamer(tree);
  const fresh = (base: string): Term => variable(name(base));
  const resource = fresh('describe_s');
  const predicate = fresh('describe_p');
  const object = fresh('describe_o');

  const iris = tree.variables.filter((term) => term.termType === 'NamedNode');
  const wildcard = tree.variables.some((term) => term.termType === 'Wildcard');
  // A variable named twice (`DESCRIBE ?v ?v`, `?v $v`: [11] allows it) is one branch: its sub-select would project it twice.
  const named = new Map(tree.variables.filter((term) => term.termType === 'Variable').map((term) => [term.value, term]));
  const described = wildcard ? inScopeVariables(tree.where ?? []).map((name) => variable(name.slice(1))) : [...named.values()];

  const sources: unknown[] = [];
  if (iris.length > 0) {
    sources.push({ type: 'values', values: iris.map((iri) => ({ [`?${resource.value}`]: iri })) });
  }
  for (const term of described) {
    // Each branch its own copy: the template builder marks the tree it writes, so a pattern shared by two
    // branches was held to the view in the first only (the second read the data unrestricted). A blank
    // node becomes a variable of the branch's own: one label in two branches is a label in two BGPs,
    // which SPARQL 1.1 refuses (§4.1.4), and a blank node of a pattern is a variable no SELECT
    // projects (§18.3; `SELECT *` leaves blank nodes out, and the branch keeps only the described one).
    const blanks = new Map<string, Term>();
    const blank = (label: string): Term => {
      const known = blanks.get(label);
      if (known !== undefined) return known;
      const named = fresh('describe_b');
      blanks.set(label, named);
      return named;
    };
    const copy = <T>(value: T): T => copyTree(value, blank);
    const solutions = {
      type: 'query',
      queryType: 'SELECT',
      variables: wildcard ? tree.variables.filter((t) => t.termType === 'Wildcard') : described,
      where: copy(tree.where ?? []),
      ...Object.fromEntries(SOLUTION_MODIFIERS.filter((key) => tree[key] !== undefined).map((key) => [key, copy(tree[key])])),
    };
    sources.push({
      type: 'query',
      queryType: 'SELECT',
      distinct: true,
      variables: [{ expression: orEmptyLiteral(term), variable: resource }],
      where: [{ type: 'group', patterns: [solutions] }],
    });
  }
  const isResource = {
    type: 'filter',
    expression: {
      type: 'operation',
      operator: '||',
      args: [
        { type: 'operation', operator: 'isiri', args: [resource] },
        { type: 'operation', operator: 'isblank', args: [resource] },
      ],
    },
  };

  const description = { type: 'bgp', triples: [{ subject: resource, predicate, object }] };
  const where: unknown[] = [];
  // Nothing to describe (`DESCRIBE *` without variables): an empty graph, not every triple.
  if (sources.length === 1) where.push(asGroupMember(sources[0]), isResource, description);
  else if (sources.length > 1) where.push({ type: 'union', patterns: sources }, isResource, description);
  return {
    type: 'query',
    queryType: 'CONSTRUCT',
    prefixes: {},
    template: sources.length === 0 ? [] : [{ subject: resource, predicate, object }],
    where,
  };
}

/** `COALESCE(term, "")`: an unbound value becomes a literal, which no triple has as subject. */
function orEmptyLiteral(term: Term): unknown {
  const query = parseQuery('SELECT (COALESCE(?v, "") AS ?r) WHERE {}') as { variables: { expression: { args: unknown[] } }[] };
  const expression = query.variables[0]!.expression;
  expression.args[0] = term;
  return expression;
}

/** A sub-select inside a group is written `{ SELECT … }`, which parses as a group holding it. */
function asGroupMember(pattern: unknown): unknown {
  return (pattern as { type?: unknown }).type === 'query' ? { type: 'group', patterns: [pattern] } : pattern;
}

/** A copy of a sparqljs subtree: every array and object new, terms (immutable) shared, each blank node the term `blank` gives for its label. */
function copyTree<T>(value: T, blank: (label: string) => Term): T {
  if (Array.isArray(value)) return value.map((item: unknown) => copyTree(item, blank)) as T;
  if (typeof value !== 'object' || value === null) return value;
  if ('termType' in value) {
    const term = value as unknown as Term;
    return term.termType === 'BlankNode' ? (blank(term.value) as T) : value;
  }
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, copyTree(field, blank)])) as T;
}
