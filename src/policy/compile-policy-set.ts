// Compiles the validated policies into the frozen look-up table that grantFor reads.

import { principalKey } from './attach-derivations.js';
import { composeGrant, mergeInOrder } from './grant.js';
import type { EngineRun, RuleFileRun } from './reason-over-policies.js';
import type { CompiledPolicy, PolicySet, Principal, PrincipalEntry } from './policy-set.js';

/** What a load cost, for logs and the benchmark. */
export interface LoadStats {
  readonly policyCount: number;
  /** Triples handed to EYE. */
  readonly eyeInputTriples: number;
  /** Reading, parsing and validating the Turtle, milliseconds. */
  readonly readMs: number;
  /** Inside EYE, milliseconds. */
  readonly eyeMs: number;
  /** Everything else in the worker (N3P, output parsing, checks of derived triples), milliseconds. */
  readonly otherMs: number;
  /** Building the table on the calling thread, milliseconds. */
  readonly compileMs: number;
  /** Per rule file, the engine that ran it (and why EYE, when EYE). */
  readonly ruleRuns: readonly RuleFileRun[];
  /** Per engine that ran: its files, time and input. */
  readonly stages: readonly EngineRun[];
  /** Lines about rules that cannot fire, derive what is ignored or refused, or cost the square of the policies. */
  readonly warnings: readonly string[];
  /** Size of the worker thread's V8 heap when the load finished, bytes. */
  readonly workerHeapBytes: number;
}

/**
 * Indexes `policies` (in order of listing) by principal and precomputes the
 * grants of the callers that only Everyone / AuthenticatedAgent match, the
 * common case. Everything returned is frozen, `policies` in place: hand it
 * objects no one else holds.
 */
export function compilePolicySet(policies: readonly CompiledPolicy[]): PolicySet {
  // The policies come fresh from the worker (a structured clone), so they are frozen in place:
  // copying half a million principals would cost more than the rest of the table.
  const frozen = policies.map((policy) => {
    for (const principal of policy.principals) Object.freeze(principal);
    Object.freeze(policy.principals);
    Object.freeze(policy.graphs);
    Object.freeze(policy.hidePaths);
    return Object.freeze(policy);
  });

  const everyone: CompiledPolicy[] = [];
  const authenticated: CompiledPolicy[] = [];
  const agents = new Map<string, CompiledPolicy[]>();
  const groups = new Map<string, CompiledPolicy[]>();
  const push = <K>(map: Map<K, CompiledPolicy[]>, key: K, policy: CompiledPolicy) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [policy]);
    else list.push(policy);
  };

  for (const policy of frozen) {
    for (const principal of policy.principals) {
      if (principal.kind === 'everyone') everyone.push(policy);
      else if (principal.kind === 'authenticated') authenticated.push(policy);
      else if (principal.kind === 'agent') push(agents, principal.agent, policy);
      else push(groups, principal.group, policy);
    }
  }

  const freezeLists = (map: Map<string, CompiledPolicy[]>) => {
    for (const list of map.values()) Object.freeze(list);
    return map;
  };
  const everyoneAndAuthenticated = mergeInOrder([everyone, authenticated]);
  // The listing per principal serves operator tools only: built when first read, not at every reload.
  let principals: readonly PrincipalEntry[] | undefined;

  return Object.freeze({
    policies: Object.freeze(frozen),
    get principals() {
      return (principals ??= listPrincipals(frozen));
    },
    lookup: Object.freeze({
      everyone: Object.freeze(everyone),
      authenticated: Object.freeze(authenticated),
      agents: freezeLists(agents),
      groups: freezeLists(groups),
      everyoneGrant: everyone.length > 0 ? composeGrant(everyone) : undefined,
      authenticatedGrant: everyoneAndAuthenticated.length > 0 ? composeGrant(everyoneAndAuthenticated) : undefined,
    }),
  });
}

/** Every principal with its policies, in order of its first policy, and the union of their graphs. */
function listPrincipals(policies: readonly CompiledPolicy[]): readonly PrincipalEntry[] {
  // A principal object is usually shared by all its policies (the worker interns them): label each once.
  const labels = new Map<Principal, string>();
  const entries = new Map<string, { principal: Principal; label: string; policies: CompiledPolicy[] }>();
  for (const policy of policies) {
    for (const principal of policy.principals) {
      let label = labels.get(principal);
      if (label === undefined) labels.set(principal, (label = principalKey(principal)));
      const known = entries.get(label);
      if (known === undefined) entries.set(label, { principal, label, policies: [policy] });
      else known.policies.push(policy);
    }
  }
  // A member of a deep group has hundreds of policies: unions run over graph numbers in sorted order, not strings.
  const sorted = [...new Set(policies.flatMap((policy) => policy.graphs))].sort();
  const number = new Map(sorted.map((graph, index) => [graph, index]));
  const numbersOf = new Map<CompiledPolicy, Int32Array>();
  const seenIn = new Int32Array(sorted.length).fill(-1);
  const listed = [...entries.values()].map(({ principal, label, policies: list }, entry) => {
    const union: number[] = [];
    for (const policy of list) {
      let numbers = numbersOf.get(policy);
      if (numbers === undefined) numbersOf.set(policy, (numbers = Int32Array.from(policy.graphs, (graph) => number.get(graph) ?? 0)));
      for (const graph of numbers) {
        if (seenIn[graph] === entry) continue;
        seenIn[graph] = entry;
        union.push(graph);
      }
    }
    const graphs = Array.from(Int32Array.from(union).sort(), (graph) => sorted[graph] ?? '');
    return Object.freeze({ principal, label, policies: Object.freeze(list), graphs: Object.freeze(graphs) });
  });
  return Object.freeze(listed);
}
