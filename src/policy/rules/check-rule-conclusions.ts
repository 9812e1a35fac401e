// Refuses a rule whose conclusion the loader could only drop: a blank node or an unbound variable in a targeting triple, or a policy declared by a rule (on the policy worker).

import type { Term } from 'n3';
import type { RuleReading } from './classify-rules.js';
import { guard, RDF_TYPE } from '../../vocabulary.js';
import { policyLoadError } from '../policy-load-error.js';
import { summarise } from './warn-about-rules.js';

/**
 * Reads every rule of every file N3.js can read and throws PolicyLoadError, naming the file and
 * the rule, for a conclusion that could never be loaded as written: `guard:appliesTo` or
 * `guard:grantsGraph` with a blank node (`[]`) or a variable the premise does not bind (both
 * existentials, which EYE derives as fresh blank nodes and the load would drop unseen, where the
 * Turtle's `guard:agent _:x` fails), and `a guard:Policy` (policies are declared in policy files
 * and sources with `policies: true` only; a derived declaration would be ignored).
 */
export function checkRuleConclusions(readings: readonly RuleReading[], ruleFiles: readonly string[]): void {
  readings.forEach((reading, index) => {
    const file = ruleFiles[index] ?? '';
    (reading.rules ?? []).forEach((rule, ruleIndex) => {
      const bound = new Set<string>();
      for (const quad of rule.premise) {
        for (const term of [quad.subject, quad.predicate, quad.object]) if (term.termType === 'Variable') bound.add(term.value);
      }
      const existential = (term: Term) => term.termType === 'BlankNode' || (term.termType === 'Variable' && !bound.has(term.value));
      const fail = (reason: string): never => {
        throw policyLoadError(`rule ${ruleIndex + 1} (${summarise(rule)}) ${reason}`, file);
      };
      for (const { subject, predicate, object } of rule.conclusion) {
        if (predicate.termType !== 'NamedNode') continue;
        const name =
          predicate.value === guard.appliesTo ? 'guard:appliesTo' : predicate.value === guard.grantsGraph ? 'guard:grantsGraph' : undefined;
        if (name !== undefined && existential(subject)) {
          fail(`derives ${name} for ${blankOrUnbound(subject)}, never a declared guard:Policy (bind the policy in the premise)`);
        }
        if (name !== undefined && existential(object)) {
          const kind = name === 'guard:appliesTo' ? 'a principal must be an agent IRI or a group name' : 'a graph must be an IRI';
          fail(`derives ${name} ${blankOrUnbound(object)}, but ${kind} (bind it in the premise)`);
        }
        if (predicate.value === RDF_TYPE && object.termType === 'NamedNode' && object.value === guard.Policy) {
          fail(
            'declares a guard:Policy, which the loader never reads from rules (declare policies in a policy file, or a fact source with "policies": true; rules derive guard:appliesTo and guard:grantsGraph for them)',
          );
        }
      }
    });
  });
}

function blankOrUnbound(term: Term): string {
  return term.termType === 'Variable' ? `?${term.value}, unbound by the premise (a blank node to N3)` : 'a blank node';
}
