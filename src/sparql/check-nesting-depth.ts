// Refuses queries nested deeper than the configured limit, by one linear scan before the parser runs.

import { GuardError } from '../guard-error.js';
import type { TextRegion } from './split-query-text.js';

/**
 * Throws GuardError 400 when the open brackets `{`, `(`, `[` in code nest deeper than `maxDepth`:
 * stores, the recursive parser and the generator all crash on deep nesting, so this runs first.
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
