// Walks a sparqljs tree depth-first, deciding once for every check and rewrite what counts as a node and what as a term.

import type { Term } from './tree-shapes.js';

/** A node of the sparqljs tree that is not a term, read loosely: sparqljs's types do not cover every shape it builds. */
export type TreeNode = Record<string, unknown>;

/** What a visitor may do at each node; every callback is optional. */
export interface QueryVisitor {
  /**
   * Called on a node before its fields, which it may change (the walk reads
   * the fields after). Returning false skips the node's fields and its `leave`.
   */
  enter?(node: TreeNode, root: unknown): boolean | void;
  /** Called on a node after its fields, in reverse order of `enter`. */
  leave?(node: TreeNode): void;
  /**
   * Called on every term (NamedNode, Variable, BlankNode, Literal, Wildcard,
   * Quad) wherever it stands; a returned value replaces the term in the tree.
   */
  term?(term: Term): unknown;
}

/**
 * Visits every object under `root` in field order: an object with a string `termType` is a term
 * (`visitor.term`), any other a node whose every field is walked, whatever its type (fail closed).
 */
export function walkQuery(root: unknown, visitor: QueryVisitor): void {
  /** `holder[key]` is where `value` stands, so a term can be replaced there. */
  const visit = (value: unknown, holder: unknown[] | TreeNode | undefined, key: number | string): void => {
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) visit(value[i], value, i);
      return;
    }
    const node = value as TreeNode;
    if (typeof node['termType'] === 'string') {
      const replacement = visitor.term?.(node as unknown as Term);
      if (replacement === undefined) return;
      if (holder === undefined) throw new Error('walkQuery cannot replace the root of a tree');
      (holder as Record<number | string, unknown>)[key] = replacement;
      return;
    }
    if (visitor.enter?.(node, root) === false) return;
    for (const name of Object.keys(node)) visit(node[name], node, name);
    visitor.leave?.(node);
  };
  visit(root, undefined, '');
}
