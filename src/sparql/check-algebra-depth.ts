// Refuses queries whose algebra would nest deeper than stores survive, however flat their text: one walk of the parse tree per prepared query.

import { GuardError } from '../guard-error.js';
import type { TreeNode } from './walk-query.js';

/** Algebra levels allowed per level of `maxQueryDepth` (64 gives 256): the weakest store, Oxigraph, dies from about 800. */
const ALGEBRA_LEVELS_PER_DEPTH = 4;

/** Levels one EXISTS or NOT EXISTS adds: Oxigraph evaluates its pattern with an evaluator of its own. */
const EXISTS_LEVELS = 4;

/** Members of an IN or NOT IN list that count as one level: Oxigraph evaluates the list as a chain. */
const IN_MEMBERS_PER_LEVEL = 16;

/** Triple patterns of one BGP that count as one level: Oxigraph joins them left-deep. */
const BGP_PATTERNS_PER_LEVEL = 2;

/** Throws GuardError 400 when {@link algebraDepth} exceeds `ALGEBRA_LEVELS_PER_DEPTH × maxQueryDepth`. */
export function checkAlgebraDepth(query: object, maxQueryDepth: number): void {
  const limit = ALGEBRA_LEVELS_PER_DEPTH * maxQueryDepth;
  if (algebraDepth(query, limit) > limit) {
    throw new GuardError(400, 'too_complex', `query is too complex: its algebra nests deeper than ${limit} levels`);
  }
}

/**
 * Height of the algebra a store builds from the query (SPARQL 1.1 §18.2), counted the way stores
 * nest it, binary operators left-deep (docs/design/sparql.md, "Algebra depth"): one level per group
 * element, UNION branch, path step or alternative, operator or call, projection expression,
 * GROUP BY / ORDER BY key and HAVING, per two triple patterns, per sixteen IN members, four per
 * EXISTS, plus the deepest part. Past `giveUpAbove` the walk stops and answers some greater number.
 */
export function algebraDepth(query: object, giveUpAbove = Number.POSITIVE_INFINITY): number {
  try {
    return queryDepth(query as Node, 0, giveUpAbove);
  } catch (error) {
    if (error instanceof DepthExceeded) return giveUpAbove + 1;
    throw error;
  }
}

/** This count recurses by node kind rather than walking every field: it refuses kinds it does not know and stops early. */
type Node = Readonly<TreeNode>;

/** Thrown inside the walk once the levels above a node pass the limit. */
class DepthExceeded extends Error {}

/** Each walker takes `above`, a lower bound of the levels above the node, and gives up once it passes `limit`. */
function enter(above: number, limit: number): void {
  if (above > limit) throw new DepthExceeded();
}

/** The deepest of `items` by `depth`, 0 for none: the "plus the deepest part" of every count. */
function deepest<T>(items: readonly T[], depth: (item: T) => number): number {
  let max = 0;
  for (const item of items) max = Math.max(max, depth(item));
  return max;
}

function queryDepth(query: Node, above: number, limit: number): number {
  enter(above, limit);
  const list = (key: string) => (query[key] as Node[] | undefined) ?? [];
  // Projection expressions, GROUP BY and ORDER BY keys, HAVING constraints: one level each.
  const expressions = [...list('variables').filter((item) => item['expression'] !== undefined), ...list('group'), ...list('order')].map(
    (item) => item['expression'] as unknown,
  );
  expressions.push(...list('having'));
  let levels = expressions.length;
  if (query['distinct'] === true || query['reduced'] === true) levels++;
  if (query['limit'] !== undefined || query['offset'] !== undefined) levels++;
  if (query['values'] !== undefined) levels++;
  const below = above + levels;
  const where = groupDepth((query['where'] as unknown[] | undefined) ?? [], below, limit);
  const expressionsDepth = deepest(expressions, (expression) => expressionDepth(expression, below, limit));
  return levels + Math.max(where, expressionsDepth);
}

function groupDepth(elements: readonly unknown[], above: number, limit: number): number {
  enter(above, limit);
  return elements.length + deepest(elements, (element) => patternDepth(element as Node, above + elements.length, limit));
}

/** A UNION branch or EXISTS argument: a group in the text, which sparqljs unwraps when it holds one BGP. */
function bracedDepth(pattern: Node, above: number, limit: number): number {
  return pattern['type'] === 'group' ? patternDepth(pattern, above, limit) : groupDepth([pattern], above, limit);
}

/** One element of a group. */
function patternDepth(pattern: Node, above: number, limit: number): number {
  enter(above, limit);
  switch (pattern['type']) {
    case 'bgp':
      return bgpDepth(pattern['triples'] as readonly Node[], above, limit);
    case 'group':
    case 'optional':
    case 'minus':
      return groupDepth(pattern['patterns'] as unknown[], above, limit);
    case 'graph':
    case 'service':
      return 1 + groupDepth(pattern['patterns'] as unknown[], above + 1, limit);
    case 'union': {
      const branches = pattern['patterns'] as readonly Node[];
      return branches.length + deepest(branches, (branch) => bracedDepth(branch, above + branches.length, limit));
    }
    case 'filter':
    case 'bind':
      return expressionDepth(pattern['expression'], above, limit);
    case 'values':
      return 0;
    case 'query':
      return queryDepth(pattern, above, limit);
    default:
      // Unknown to this walker, so unknown how stores nest it: refuse rather than guess.
      throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: unknown graph pattern');
  }
}

function bgpDepth(triples: readonly Node[], above: number, limit: number): number {
  const paths = triples.map((triple) => triple['predicate']).filter(isPath);
  const levels = Math.ceil(triples.length / BGP_PATTERNS_PER_LEVEL) + paths.length;
  return levels + deepest(paths, (path) => pathDepth(path, above + levels, limit));
}

function isPath(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && (value as Node)['type'] === 'path';
}

function pathDepth(path: Node, above: number, limit: number): number {
  enter(above, limit);
  const items = path['items'] as readonly unknown[];
  if (path['pathType'] === '!') return 1; // a flat set of IRIs, however many (§18.2.2.4 NPS)
  const levels = path['pathType'] === '/' || path['pathType'] === '|' ? items.length : 1;
  return levels + deepest(items.filter(isPath), (item) => pathDepth(item, above + levels, limit));
}

function expressionDepth(expression: unknown, above: number, limit: number): number {
  enter(above, limit);
  if (typeof expression !== 'object' || expression === null) return 0;
  const node = expression as Node;
  if (typeof node['termType'] === 'string') return 0;
  switch (node['type']) {
    case 'operation': {
      const operator = node['operator'];
      const args = node['args'] as readonly unknown[];
      if (operator === 'exists' || operator === 'notexists') {
        return EXISTS_LEVELS + bracedDepth(args[0] as Node, above + EXISTS_LEVELS, limit);
      }
      // An IN or NOT IN list is one argument holding the members.
      const members = (operator === 'in' || operator === 'notin') && Array.isArray(args[1]) ? (args[1] as readonly unknown[]) : undefined;
      const levels = 1 + (members === undefined ? 0 : Math.ceil(members.length / IN_MEMBERS_PER_LEVEL));
      const operands = members === undefined ? args : [args[0], ...members];
      return levels + deepest(operands, (operand) => expressionDepth(operand, above + levels, limit));
    }
    case 'functionCall':
      return 1 + deepest(node['args'] as readonly unknown[], (arg) => expressionDepth(arg, above + 1, limit));
    case 'aggregate':
      return 1 + expressionDepth(node['expression'], above + 1, limit);
    default:
      // Unknown to this walker, so unknown how stores nest it: refuse rather than guess.
      throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: unknown expression');
  }
}
