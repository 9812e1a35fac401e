// Refuses what the SPARQL 1.1 grammar lets through but its scope (§18.2.1) and grouping (§11.4, §18.2.4.1) rules forbid.

import { GuardError } from '../guard-error.js';
import { inScopeVariables } from './in-scope-variables.js';

type Node = Record<string, unknown>;

/** The rules, as the one line of a refusal names them; parseQuery words sparqljs's own refusals of the same rules alike. */
export const SCOPE_RULES = {
  bind: 'BIND assigns a variable already in scope in its group (§18.2.1)',
  selectAs: 'a SELECT expression assigns a variable already in scope (§18.2.1)',
  groupAs: 'GROUP BY assigns a variable already in scope (§18.2.1)',
  ungrouped: 'a projected variable is neither grouped on nor inside an aggregate (§11.4)',
  ungroupedInExpression:
    'a SELECT expression uses a variable that is not grouped on, not inside an aggregate and not assigned by an earlier SELECT expression (§11.4)',
  star: 'SELECT * or DESCRIBE * in a query with aggregates or GROUP BY (§11.4)',
  repeatedValuesVariable: 'a VALUES clause names a variable twice (§10.2)',
  misplacedAggregate: 'an aggregate outside SELECT expressions, HAVING and ORDER BY, or inside another aggregate (§18.2.4.1)',
} as const;

/**
 * Walks every query level of a parsed query (the query, its sub-selects, the patterns of EXISTS)
 * and throws GuardError 400 `parse` with the rule broken, for:
 * - BIND assigning a variable in scope from the earlier elements of its group (§18.2.1, §10.1);
 * - `(expr AS ?v)` in SELECT with ?v in scope at that point: bound by the WHERE clause (or, in an
 *   aggregate query, by a group key), by the trailing VALUES, or by an earlier SELECT expression (§18.2.1);
 * - `GROUP BY (expr AS ?v)` with ?v in scope in the WHERE clause or assigned by an earlier key
 *   (Extend of a bound variable, §18.2.4.1, §18.5);
 * - in an aggregate query (GROUP BY, or an aggregate in SELECT, HAVING or ORDER BY): SELECT * or DESCRIBE *, or a
 *   projected variable (SELECT or DESCRIBE) that is no group key `?v` or `(expr AS ?v)`, or a variable
 *   of a SELECT expression outside every aggregate that is neither a group key nor assigned by an
 *   earlier SELECT expression (§11.4, as SPARQL 1.2 words the restriction and W3C's
 *   `sparql12/grouping/select-variable-reuse` evaluates it);
 * - an aggregate outside SELECT expressions, HAVING and ORDER BY, or inside another aggregate (§18.2.4.1).
 * What sparqljs checks already is refused there first; this covers every aggregate, not only COUNT, and
 * every query level. A call of an extension function may be a custom aggregate (§18.2.4.1): its
 * arguments are not checked against the grouping, and it does not make a query an aggregate query;
 * one written with DISTINCT is one for certain, and is placed as an aggregate.
 */
export function checkVariableScope(tree: unknown): void {
  checkLevel(tree as Node);
}

function refuse(rule: string): never {
  throw new GuardError(400, 'parse', `query is not valid SPARQL 1.1: ${rule}`);
}

/** One query level: its WHERE clause, its expressions, then its projection against its grouping. */
function checkLevel(query: Node): void {
  checkGroup(list(query['where']));
  const selected = list(query['variables']) as Node[];
  const group = list(query['group']) as Node[];
  for (const item of selected) if (isBinding(item)) visitExpression(item['expression'], true);
  for (const key of group) visitExpression(key['expression'], false);
  for (const condition of list(query['having'])) visitExpression(condition, true);
  for (const order of list(query['order']) as Node[]) visitExpression(order['expression'], true);

  const grouped = group.length > 0 || [...aggregationScope(query)].some(hasAggregate);
  const whereScope = new Set(inScopeVariables(list(query['where'])));
  const keys = new Set<string>();
  for (const key of group) {
    const alias = key['variable'] as Node | undefined;
    if (alias !== undefined) {
      const name = variableName(alias);
      if (whereScope.has(name) || keys.has(name)) refuse(SCOPE_RULES.groupAs);
      keys.add(name);
    } else if (isVariable(key['expression'])) keys.add(variableName(key['expression'] as Node));
  }

  // §18.2.1: in scope where a SELECT expression assigns are the WHERE clause's variables, or after
  // grouping only the group keys (§18.2.4.1), then the trailing VALUES (§18.2.4.3), then each earlier assignment.
  const selectScope = grouped ? new Set(keys) : whereScope;
  for (const row of list(query['values']) as Node[]) for (const name of Object.keys(row)) selectScope.add(name.replace(/^\$/, '?'));
  for (const item of selected) {
    if (!isBinding(item)) continue;
    const name = variableName(item['variable'] as Node);
    if (selectScope.has(name)) refuse(SCOPE_RULES.selectAs);
    selectScope.add(name);
  }

  if (!grouped) return;
  // §11.4: an aggregate query projects aggregates, constants, its group keys and what an earlier
  // SELECT expression of the same clause assigned (the restriction as SPARQL 1.2 words it).
  const assigned = new Set<string>();
  for (const item of selected) {
    if (isBinding(item)) {
      for (const name of ungroupedVariables(item['expression'])) {
        if (!keys.has(name) && !assigned.has(name)) refuse(SCOPE_RULES.ungroupedInExpression);
      }
      assigned.add(variableName(item['variable'] as Node));
    } else if (isVariable(item)) {
      if (!keys.has(variableName(item))) refuse(SCOPE_RULES.ungrouped);
    } else if (item['termType'] === 'Wildcard') {
      refuse(SCOPE_RULES.star);
    }
  }
}

/**
 * The elements of one group graph pattern, in order: a BIND may not assign a variable that the
 * elements before it put in scope (§18.2.1); FILTER and MINUS put none in scope.
 */
function checkGroup(elements: readonly unknown[]): void {
  const scope = new Set<string>();
  for (const element of elements) {
    const node = element as Node;
    if (node['type'] === 'bind' && scope.has(variableName(node['variable'] as Node))) {
      refuse(SCOPE_RULES.bind);
    }
    checkElement(node);
    if (elements.length > 1) for (const name of inScopeVariables([node])) scope.add(name);
  }
}

function checkElement(node: Node): void {
  switch (node['type']) {
    case 'bgp':
    case 'values':
      return;
    case 'group':
    case 'optional':
    case 'minus':
    case 'graph':
    case 'service':
      checkGroup(list(node['patterns']));
      return;
    case 'union':
      // Each branch is a group of its own; sparqljs unwraps a branch of one element.
      for (const branch of list(node['patterns'])) checkGroup([branch]);
      return;
    case 'filter':
    case 'bind':
      visitExpression(node['expression'], false);
      return;
    case 'query':
      checkLevel(node);
      return;
    default:
      refuse('unknown graph pattern');
  }
}

/**
 * An expression: aggregates only where `aggregatesAllowed` (a SELECT expression, HAVING, ORDER BY),
 * never one inside another; the pattern of EXISTS is checked as a group.
 */
function visitExpression(expression: unknown, aggregatesAllowed: boolean): void {
  if (typeof expression !== 'object' || expression === null) return;
  if (Array.isArray(expression)) {
    // The list of IN and NOT IN.
    for (const item of expression) visitExpression(item, aggregatesAllowed);
    return;
  }
  const node = expression as Node;
  if (typeof node['termType'] === 'string') return;
  switch (node['type']) {
    case 'aggregate':
      if (!aggregatesAllowed) refuse(SCOPE_RULES.misplacedAggregate);
      visitExpression(node['expression'], false);
      return;
    case 'operation':
      if (isExists(node)) checkGroup(list(node['args']));
      else for (const arg of list(node['args'])) visitExpression(arg, aggregatesAllowed);
      return;
    case 'functionCall':
      // `<f>(DISTINCT …)`: ArgList's DISTINCT makes the call a custom aggregate (§18.2.4.1), placed as one.
      if (node['distinct'] === true && !aggregatesAllowed) refuse(SCOPE_RULES.misplacedAggregate);
      for (const arg of list(node['args'])) visitExpression(arg, aggregatesAllowed && node['distinct'] !== true);
      return;
    default:
      refuse('unknown expression');
  }
}

/** The SELECT expressions, HAVING conditions and ORDER BY expressions: where aggregates make an aggregate query. */
function* aggregationScope(query: Node): Generator<unknown> {
  for (const item of list(query['variables']) as Node[]) if (isBinding(item)) yield item['expression'];
  yield* list(query['having']);
  for (const order of list(query['order']) as Node[]) yield order['expression'];
}

/** A built-in aggregate outside EXISTS patterns (§18.2.4.1: they are what groups a query). */
function hasAggregate(expression: unknown): boolean {
  const node = expression as Node | null;
  if (typeof node !== 'object' || node === null || typeof node['termType'] === 'string') return false;
  if (Array.isArray(node)) return node.some(hasAggregate);
  if (node['type'] === 'aggregate') return true;
  if (node['type'] === 'operation' && isExists(node)) return false;
  return list(node['args']).some(hasAggregate);
}

/** The variables of an expression outside aggregates, EXISTS patterns and extension function calls. */
function ungroupedVariables(expression: unknown, found: string[] = []): string[] {
  const node = expression as Node | null;
  if (typeof node !== 'object' || node === null) return found;
  if (Array.isArray(node)) for (const item of node) ungroupedVariables(item, found);
  else if (isVariable(node)) found.push(variableName(node));
  else if (node['type'] === 'operation' && !isExists(node)) for (const arg of list(node['args'])) ungroupedVariables(arg, found);
  return found;
}

function isExists(node: Node): boolean {
  return node['operator'] === 'exists' || node['operator'] === 'notexists';
}

function isBinding(item: Node): boolean {
  return item['expression'] !== undefined && item['variable'] !== undefined;
}

function isVariable(value: unknown): value is Node {
  return (value as Node | null)?.['termType'] === 'Variable';
}

function variableName(variable: Node): string {
  return '?' + String(variable['value']);
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}
