// Names for the variables the guard adds to a query, none of which the query uses.

import { walkQuery } from './walk-query.js';

/**
 * A namer of fresh variables for `tree`: `base`, else `base1`, `base2`, …,
 * skipping every variable name the query uses anywhere (VALUES rows
 * included) and every name given before, so an added variable never
 * captures one of the query's.
 */
export function freshVariableNamer(tree: unknown): (base: string) => string {
  const taken = takenNames(tree);
  return (base) => {
    let name = base;
    for (let i = 1; taken.has(name); i++) name = `${base}${i}`;
    taken.add(name);
    return name;
  };
}

/**
 * A prefix no variable name of `tree` starts with (`base_`, else `base1_`, …): names written
 * after it never capture one of the query's, whatever follows it.
 */
export function freshVariablePrefix(tree: unknown, base: string): string {
  const taken = [...takenNames(tree)];
  let prefix = base + '_';
  for (let i = 1; taken.some((name) => name.startsWith(prefix)); i++) prefix = `${base}${i}_`;
  return prefix;
}

/** Every variable name the query uses anywhere, VALUES rows included. */
function takenNames(tree: unknown): Set<string> {
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
  return taken;
}
