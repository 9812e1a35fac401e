// Runs Horn rules over triples with the N3.Reasoner of the n3 package, as the loader did before its own forward chainer, and returns the closure.

import { DataFactory, Reasoner, Store, type Quad, type Term } from 'n3';
import type { HornRule } from '../../src/policy/rules/classify-rules.js';
import { skolemIri } from '../../src/vocabulary.js';

/**
 * A store of every triple of `quads` and `facts` plus every triple the rules derive
 * from them, to the fixpoint. Blank nodes of the input become the same reserved IRIs that
 * writeN3p hands EYE, so both engines derive, and refuse, the same terms.
 *
 * N3.Reasoner (n3 2.13) links a rule's conclusion to another rule's premise only
 * where a conclusion variable meets a premise variable: a premise constant that
 * only a conclusion variable can produce is missed after the first pass. When
 * the rules have such a pair, reasoning repeats until nothing new comes out.
 */
export function runN3Reasoner(quads: readonly Quad[], rules: readonly HornRule[], facts: readonly Quad[]): Store {
  const store = new Store();
  store.addQuads(quads.map(skolemize));
  store.addQuads([...facts]);
  const reasoner = new Reasoner(store);
  const input = rules.map(({ premise, conclusion }) => ({ premise: [...premise], conclusion: [...conclusion] }));
  const repeat = missesLinks(rules);
  for (let size = -1; size !== store.size;) {
    size = store.size;
    reasoner.reason(input);
    if (!repeat) break;
  }
  return store;
}

function skolemize(quad: Quad): Quad {
  const { subject, predicate, object } = quad;
  if (subject.termType !== 'BlankNode' && object.termType !== 'BlankNode' && quad.graph.termType === 'DefaultGraph') return quad;
  const named = <T extends Term>(term: T) => (term.termType === 'BlankNode' ? DataFactory.namedNode(skolemIri(term.value)) : term);
  return DataFactory.quad(named(subject) as Quad['subject'], predicate, named(object) as Quad['object']);
}

/** True when some conclusion has a variable where a premise it could otherwise feed has a constant. */
function missesLinks(rules: readonly HornRule[]): boolean {
  const conclusions = rules.flatMap((rule) => rule.conclusion);
  const premises = rules.flatMap((rule) => rule.premise);
  const positions = ['subject', 'predicate', 'object'] as const;
  return premises.some((premise) =>
    conclusions.some((conclusion) => {
      let constantMeetsVariable = false;
      for (const position of positions) {
        const p = premise[position];
        const c = conclusion[position];
        if (p.termType === 'Variable' || (c.termType !== 'Variable' && p.equals(c))) continue;
        if (c.termType !== 'Variable') return false;
        constantMeetsVariable = true;
      }
      return constantMeetsVariable;
    }),
  );
}
