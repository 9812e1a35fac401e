// Writes the blank nodes of EXISTS and NOT EXISTS patterns as fresh variables, which every store parses.

import { freshVariableNamer } from './fresh-variable-namer.js';
import type { Term } from './tree-shapes.js';
import { walkQuery, type TreeNode } from './walk-query.js';

/**
 * Replaces, in place, each blank node of the patterns under an EXISTS or NOT EXISTS with a fresh
 * variable, one per label across the query. The meaning stays: a blank node of a pattern is a
 * variable that nothing projects (§18.3), EXISTS only asks whether a solution exists (§18.6), and
 * its variables never leave it. A label is one BGP's (§4.1.4, checkBlankNodeScope refused a label
 * in two BGPs before), and a BGP may be several of sparqljs's blocks with FILTERs between them, so
 * one name per label keeps those blocks joined on it.
 *
 * Why: the guard writes `[]` and `( … )` back as labels (`_:g_0`), and Oxigraph 0.5's parser refuses
 * a labelled blank node inside EXISTS within the arguments of REGEX, SUBSTR or REPLACE
 * (`FILTER(REGEX(STR(EXISTS { _:b <p> 1 }), "a"))`), a query it takes as the caller wrote it; a
 * variable it takes. Sub-selects inside EXISTS keep their blank nodes: a `SELECT *` or `DISTINCT`
 * there would project or tell apart a variable where the blank node is neither.
 */
export function nameExistsBlankNodes(tree: unknown): void {
  let name: ((base: string) => string) | undefined;
  const names = new Map<string, Term>();
  const variableFor = (label: string): Term => {
    let variable = names.get(label);
    if (variable === undefined) {
      name ??= freshVariableNamer(tree);
      names.set(label, (variable = { termType: 'Variable', value: name('blank') }));
    }
    return variable;
  };
  walkQuery(tree, {
    enter(node) {
      if (node['type'] !== 'operation' || (node['operator'] !== 'exists' && node['operator'] !== 'notexists')) return;
      walkQuery(node['args'], {
        // A sub-select's blank nodes stay (above); EXISTS inside it is reached by the outer walk.
        enter: (inner: TreeNode) => inner['type'] !== 'query',
        term: (term) => (term.termType === 'BlankNode' && typeof term.value === 'string' ? variableFor(term.value) : undefined),
      });
    },
  });
}
