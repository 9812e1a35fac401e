// Refuses a blank-node label used in two basic graph patterns of one query (SPARQL 1.1 §4.1.4).

import { GuardError } from '../guard-error.js';
import type { Term } from './tree-shapes.js';
import { walkQuery } from './walk-query.js';

/**
 * SPARQL 1.1 §4.1.4: "the same blank node label cannot be used in two different basic graph
 * patterns in the same query", which sparqljs does not check. Triples separated only by FILTERs
 * are one BGP (§18.2.2); any other element starts another. Only written labels (`_:x`, which
 * sparqljs names `e_x`) are compared. Throws GuardError 400.
 */
export function checkBlankNodeScope(tree: unknown): void {
  const owner = new Map<string, number>();
  let scopes = 0;
  const claim = (bgp: Record<string, unknown>, scope: number): void => {
    for (const triple of (bgp['triples'] as ({ subject?: Partial<Term>; object?: Partial<Term> } | null)[] | undefined) ?? []) {
      for (const t of [triple?.subject, triple?.object]) {
        if (t?.termType !== 'BlankNode' || typeof t.value !== 'string' || !t.value.startsWith('e_')) continue;
        const first = owner.get(t.value);
        if (first === undefined) owner.set(t.value, scope);
        else if (first !== scope) {
          throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: a blank node label is used in two basic graph patterns');
        }
      }
    }
  };
  /** A list of group elements: consecutive BGPs with only FILTERs between them share a scope. */
  const visitElements = (elements: readonly unknown[], eachOwnScope: boolean): void => {
    let scope = ++scopes;
    for (const element of elements) {
      const record = element as Record<string, unknown> | null;
      if (typeof record !== 'object' || record === null) continue;
      if (record['type'] === 'bgp') {
        if (eachOwnScope) scope = ++scopes;
        claim(record, scope);
        continue;
      }
      visit(record);
      if (record['type'] !== 'filter' || eachOwnScope) scope = ++scopes;
    }
  };
  const visit = (node: unknown): void =>
    walkQuery(node, {
      enter(record) {
        // A BGP outside a list of group elements (an EXISTS argument): a pattern of its own.
        if (record['type'] === 'bgp') {
          claim(record, ++scopes);
          return false;
        }
        for (const key of Object.keys(record)) {
          if (key === 'template') continue;
          const value = record[key];
          if ((key === 'where' || key === 'patterns') && Array.isArray(value)) visitElements(value, record['type'] === 'union');
          else visit(value);
        }
        return false; // the fields are walked above, group element lists by visitElements
      },
    });
  visit(tree);
}
