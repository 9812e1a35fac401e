// Picks the targeting triples (guard:appliesTo, guard:grantsGraph) out of an engine's output, as term numbers (on the policy worker).

import type { Quad } from 'n3';
import { guard } from '../../vocabulary.js';
import type { ClosureTerm } from './forward-chain.js';

/**
 * The derived `guard:appliesTo` and `guard:grantsGraph` triples, as term numbers: each a flat
 * list of (subject, object) pairs, numbers indexing `terms` (duplicates allowed).
 */
export interface DerivedTriples {
  readonly terms: readonly ClosureTerm[];
  readonly appliesTo: readonly number[];
  readonly grantsGraph: readonly number[];
}

/** The targeting triples among `quads` (an engine's output), numbered: each distinct term once, by its N3.js id. */
export function derivedTriples(quads: Iterable<Quad>): DerivedTriples {
  const terms: ClosureTerm[] = [];
  const numbers = new Map<string, number>();
  const number = (term: ClosureTerm) => {
    let found = numbers.get(term.id);
    if (found === undefined) {
      found = terms.length;
      numbers.set(term.id, found);
      terms.push(term);
    }
    return found;
  };
  const appliesTo: number[] = [];
  const grantsGraph: number[] = [];
  for (const { subject, predicate, object } of quads) {
    const pairs = predicate.value === guard.appliesTo ? appliesTo : predicate.value === guard.grantsGraph ? grantsGraph : undefined;
    pairs?.push(number(subject as ClosureTerm), number(object as ClosureTerm));
  }
  return { terms, appliesTo, grantsGraph };
}
