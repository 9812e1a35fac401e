// The forwarded query in the graph-filter form (config `datasetForm` "graph-filters"): no dataset
// clause, every triple pattern inside a GRAPH whose name is held to the dataset by a filter.
//
// A store reads a query without FROM or FROM NAMED over all of its graphs, so this form is safe
// only when no triple pattern stands outside a held GRAPH: the rewrite below makes it so, and
// checkHeld, which walks every node of the result whatever its kind, refuses the text otherwise.
// Where the form cannot say what the query says, the plan keeps its dataset clauses
// (docs/design/sparql.md, "The dataset as graph filters").

import { encodeQueryForm } from '../url-encoded-form.js';
import { freshVariablePrefix } from './fresh-variable-namer.js';
import { inScopeVariables } from './in-scope-variables.js';
import { parseQuery } from './parse-query.js';
import type { Plan } from './plan.js';
import { generateWithHooks, namedNode } from './sparqljs-internals.js';
import type { Term } from './tree-shapes.js';
import { walkQuery, type TreeNode } from './walk-query.js';

/** How the forwarded query names its dataset (config `datasetForm`). */
export type DatasetForm = 'clauses' | 'graph-filters';

/**
 * The most graphs (FROM and FROM NAMED together) a plan may name to be sent in the graph-filter
 * form: each triple pattern carries a test per graph, so a larger dataset keeps its clauses.
 */
export const MAX_GRAPH_FILTER_GRAPHS = 32;

/** Why a query keeps its dataset clauses. */
class KeepClauses extends Error {}

type Node = TreeNode & { type?: unknown };

/**
 * `plan` with its query in the graph-filter form, or `plan` itself where that form cannot express
 * it: a property path where a triple pattern reads the default graph (a path may cross the graphs
 * of the merge, which a GRAPH per step cannot), a GRAPH holding no triple pattern (Virtuoso refuses
 * its test), a `*` it cannot spell out (projectInScope), more
 * than {@link MAX_GRAPH_FILTER_GRAPHS} graphs, or a node this rewrite does not know.
 */
export function inGraphFilterForm(plan: Plan): Plan {
  const { default: defaults, named } = plan.dataset;
  if (defaults.length + named.length > MAX_GRAPH_FILTER_GRAPHS) return plan;
  const query = graphFilterText(plan.query, defaults, named);
  if (query === undefined) return plan;
  const formBody = encodeQueryForm(query);
  return { ...plan, query, clausesQuery: plan.query, formBody, formParts: [formBody], formBytes: formBody.length };
}

/**
 * `text` (a query the guard generated, with dataset clauses naming `defaults` and `named`) in the
 * graph-filter form, or undefined where it keeps its clauses.
 */
export function graphFilterText(text: string, defaults: readonly string[], named: readonly string[]): string | undefined {
  const root = parseQuery(text) as unknown as Node;
  const prefix = freshVariablePrefix(root, 'graph');
  let count = 0;
  /** Each filter the rewrite wrote, by the GRAPH it holds: checkHeld accepts no other pair. */
  const holds = new WeakMap<object, object>();
  const fresh = (): Term => ({ termType: 'Variable', value: `${prefix}${++count}` }) as Term;

  /** `GRAPH name { patterns }` in a group with the filter that holds `name` to `graphs`. */
  const held = (name: Term, patterns: Node[], graphs: readonly string[]): Node => {
    const graph: Node = { type: 'graph', name, patterns };
    const filter: Node = { type: 'filter', expression: oneOf(name, graphs) };
    holds.set(filter, graph);
    return { type: 'group', patterns: [graph, filter] };
  };

  const expression = (value: unknown, inDefault: boolean): void => {
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) expression(item, inDefault);
      return;
    }
    const node = value as Node;
    if (typeof node['termType'] === 'string') return;
    if (node.type === 'operation' && (node['operator'] === 'exists' || node['operator'] === 'notexists')) {
      const args = node['args'] as Node[];
      node['args'] = args.map((arg) => ({ type: 'group', patterns: patterns([arg], inDefault) }));
      return;
    }
    for (const key of Object.keys(node)) expression(node[key], inDefault);
  };

  /** A query's or sub-select's clauses, its WHERE evaluated in the default graph or not. */
  const select = (node: Node, inDefault: boolean): void => {
    if (inDefault) projectInScope(node);
    node['where'] = patterns((node['where'] as Node[] | undefined) ?? [], inDefault);
    for (const key of ['variables', 'group', 'having', 'order', 'values'] as const) expression(node[key], inDefault);
  };

  const patterns = (list: readonly Node[], inDefault: boolean): Node[] => {
    const out: Node[] = [];
    for (const pattern of list) {
      switch (pattern.type) {
        case 'bgp': {
          if (!inDefault) {
            out.push(pattern);
            break;
          }
          const variables = new Map<string, Term>();
          for (const triple of pattern['triples'] as Record<string, Term>[]) {
            const bgp = { type: 'bgp', triples: [blankNodesAsVariables(triple, variables, fresh)] };
            out.push(held(fresh(), [bgp], defaults));
          }
          break;
        }
        case 'graph': {
          const name = pattern['name'] as Term;
          // Virtuoso 7.2 refuses `GRAPH ?g { }` followed by a test of ?g (SP031); with clauses it matches no graph.
          if (!holdsTriple(pattern['patterns'])) throw new KeepClauses();
          const inner = patterns(pattern['patterns'] as Node[], false);
          if (name.termType === 'Variable') out.push(held(name, inner, named));
          else if (name.termType === 'NamedNode') out.push(held(name, inner, named.includes(name.value) ? [name.value] : []));
          else throw new KeepClauses();
          break;
        }
        case 'group':
        case 'optional':
        case 'minus':
          out.push({ ...pattern, patterns: patterns(pattern['patterns'] as Node[], inDefault) });
          break;
        case 'union':
          out.push({
            ...pattern,
            patterns: (pattern['patterns'] as Node[]).map((branch) => ({ type: 'group', patterns: patterns([branch], inDefault) })),
          });
          break;
        case 'filter':
        case 'bind':
          expression(pattern['expression'], inDefault);
          out.push(pattern);
          break;
        case 'values':
          out.push(pattern);
          break;
        case 'query':
          select(pattern, inDefault);
          out.push(pattern);
          break;
        default:
          throw new KeepClauses();
      }
    }
    return out;
  };

  try {
    if (!['SELECT', 'ASK', 'CONSTRUCT'].includes(root['queryType'] as string)) return undefined;
    select(root, true);
  } catch (error) {
    if (error instanceof KeepClauses) return undefined;
    throw error;
  }
  delete root['from'];
  checkHeld(root, new Set([...defaults, ...named]), holds);
  // sparqljs writes a NUL of a string raw (the text read `\u0000`; a SEPARATOR's too): valid SPARQL, but Virtuoso 7.2
  // ends the string there (SQ074). A NUL can stand only in a string, and `\u0000` is read as one wherever it stands
  // (SPARQL 1.1 section 19.2), so the form keeps the escape the clauses were sent with (write-row-filter.ts).
  return generateWithHooks(root, {
    dataset: () => '',
    graph: (pattern, write) => write.graph(pattern),
    bgp: (pattern, write) => write.bgp(pattern),
    entity: (value, write) => write.plainEntity(value),
  }).replaceAll('\u0000', '\\u0000');
}

/** Whether a triple pattern stands anywhere under `patterns`. */
function holdsTriple(patterns: unknown): boolean {
  let found = false;
  walkQuery(patterns, {
    enter(node) {
      if (node['type'] === 'bgp' && (node['triples'] as unknown[]).length > 0) found = true;
      return !found;
    },
  });
  return found;
}

/** `sameTerm(name, <g1>) || sameTerm(name, <g2>) || …`, false for no graph. */
function oneOf(name: Term, graphs: readonly string[]): unknown {
  if (graphs.length === 0)
    return { termType: 'Literal', value: 'false', language: '', datatype: namedNode('http://www.w3.org/2001/XMLSchema#boolean') };
  return graphs
    .map((graph): unknown => ({ type: 'operation', operator: 'sameterm', args: [name, namedNode(graph)] }))
    .reduce((either, or) => ({ type: 'operation', operator: '||', args: [either, or] }));
}

/**
 * A `SELECT *` of `node` written as the variables it stands for, the in-scope variables of its WHERE
 * in order of first appearance: the graph variables the form adds would be listed by `*`. Throws
 * KeepClauses where that cannot be written (no variable, a VALUES after the query) and for
 * `COUNT(DISTINCT *)`, which counts distinct solutions, made more by the graph variables.
 */
function projectInScope(node: Node): void {
  const variables = node['variables'] as readonly { termType?: unknown }[] | undefined;
  if (variables?.some((v) => v.termType === 'Wildcard')) {
    const inScope = inScopeVariables((node['where'] as unknown[] | undefined) ?? []);
    if (inScope.length === 0 || node['values'] !== undefined) throw new KeepClauses();
    node['variables'] = inScope.map((name) => ({ termType: 'Variable', value: name.slice(1) }));
  }
  walkQuery(node['variables'] ?? [], {
    enter(inner) {
      if (
        inner['type'] === 'aggregate' &&
        inner['distinct'] === true &&
        (inner['expression'] as Term | undefined)?.termType === 'Wildcard'
      ) {
        throw new KeepClauses();
      }
    },
  });
}

/** `triple` with its blank nodes as variables (one per label in its BGP): a BGP split into one GRAPH per triple cannot share a blank node. */
function blankNodesAsVariables(triple: Record<string, Term>, variables: Map<string, Term>, fresh: () => Term): Record<string, Term> {
  const predicate = triple['predicate'] as unknown as { type?: unknown };
  if (predicate.type === 'path') throw new KeepClauses();
  const term = (value: Term): Term => {
    if (value.termType !== 'BlankNode') return value;
    let variable = variables.get(value.value);
    if (variable === undefined) variables.set(value.value, (variable = fresh()));
    return variable;
  };
  return { ...triple, subject: term(triple['subject'] as Term), object: term(triple['object'] as Term) };
}

/**
 * Throws unless every triple pattern of `root` stands inside a GRAPH, and every GRAPH is followed
 * by the filter that holds its name to graphs of `dataset` (whatever node holds it: the walk
 * visits every field of every node). The last word before the text leaves without a dataset.
 */
function checkHeld(root: Node, dataset: ReadonlySet<string>, holds: WeakMap<object, object>): void {
  let depth = 0;
  const heldGraphs = new Set<object>();
  walkQuery(root, {
    enter(node) {
      if (node['type'] === 'bgp' && depth === 0 && (node['triples'] as unknown[]).length > 0) {
        throw new Error('graph-filter form: a triple pattern outside a GRAPH');
      }
      if (node['type'] === 'path' && depth === 0) throw new Error('graph-filter form: a path outside a GRAPH');
      for (const key of ['patterns', 'where'] as const) {
        const list = node[key];
        if (!Array.isArray(list)) continue;
        list.forEach((item: Node, index: number) => {
          if (item?.type !== 'graph') return;
          const filter = list[index + 1] as Node | undefined;
          if (filter === undefined || holds.get(filter) !== item || !holdsTo(filter['expression'], (item['name'] as Term).value, dataset)) {
            throw new Error('graph-filter form: a GRAPH without its filter');
          }
          heldGraphs.add(item);
        });
      }
      if (node['type'] === 'graph') {
        if (!heldGraphs.has(node)) throw new Error('graph-filter form: a GRAPH without its filter');
        depth++;
      }
    },
    leave(node) {
      if (node['type'] === 'graph') depth--;
    },
  });
}

/** Whether `expression` is false, or an OR of `sameTerm(?name or <name>, <g>)` with every g in `dataset`. */
function holdsTo(expression: unknown, name: string, dataset: ReadonlySet<string>): boolean {
  const node = expression as { termType?: unknown; value?: unknown; type?: unknown; operator?: unknown; args?: readonly Term[] };
  if (node.termType === 'Literal') return node.value === 'false';
  if (node.type !== 'operation') return false;
  if (node.operator === '||') return (node.args ?? []).every((arg) => holdsTo(arg, name, dataset));
  const [held, graph] = node.args ?? [];
  return node.operator === 'sameterm' && held?.value === name && graph?.termType === 'NamedNode' && dataset.has(graph.value);
}
