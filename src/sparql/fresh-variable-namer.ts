// Names for the variables the guard adds to a query, none of which the query uses.

import { walkQuery } from './walk-query.js';

/**
 * A namer of fresh variables for `tree`: `base`, else `base1`, `base2`, …,
 * skipping every variable name the query uses anywhere (VALUES rows
 * included) and every name given before, so an added variable never
 * captures one of the query's.
 */
export function freshVariableNamer(tree: unknown): (base: string) => string {
  const taken = new Set<string>();
  walkQuery(tree, {
    enter(node) {
      for (const key of Object.keys(node)) if (key.startsWith('?') || key.startsWith('$')) taken.add(key.slice(1)); // VALUES rows
    },
    term(term) {
      if (term.termType === 'Variable' && typeof term.value === 'string') taken.add(term.value);
      return undefined;
    },
  });
  return (base) => {
    let name = base;
    for (let i = 1; taken.has(name); i++) name = `${base}${i}`;
    taken.add(name);
    return name;
  };
}
