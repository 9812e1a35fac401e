// Refuses queries nested deeper than the configured limit, by one linear scan before the parser runs.

import { GuardError } from '../guard-error.js';
import type { TextRegion } from './split-query-text.js';

/**
 * Measures nesting as the depth of open brackets `{`, `(` and `[` in code
 * (outside IRIs, strings and comments). Every level docs/design.md#rewriting names
 * needs one: groups, sub-selects and EXISTS open a `{`, parenthesised
 * expressions, function arguments and path groups a `(`, blank-node property
 * lists a `[`. Real stores crash on deep nesting (Oxigraph at a few hundred
 * nested groups) and so would the recursive parser and generator, so this
 * runs before either. Throws GuardError 400 when the depth exceeds `maxDepth`.
 */
export function checkNestingDepth(text: string, regions: readonly TextRegion[], maxDepth: number): void {
  let depth = 0;
  for (const region of regions) {
    if (region.kind !== 'code') continue;
    for (let i = region.start; i < region.end; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x7b || c === 0x28 || c === 0x5b) {
        if (++depth > maxDepth) {
          throw new GuardError(400, 'too_complex', `query is nested deeper than the limit of ${maxDepth} levels`);
        }
      } else if (c === 0x7d || c === 0x29 || c === 0x5d) {
        depth--;
      } else if (c === 0x5c) {
        i++; // `\(` in a local name (PN_LOCAL_ESC) is no bracket
      }
    }
  }
}
