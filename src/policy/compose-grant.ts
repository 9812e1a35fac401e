// Builds the Grant of a list of policies: their IRIs, the union of their graphs, and the hidden paths per graph.

import type { Grant } from './grant.js';
import type { CompiledPolicy, PolicyLimits } from './policy-set.js';

/**
 * `policies` must be in order of listing and without duplicates. Hidden paths
 * per graph are the intersection of the hidePath sets of the policies that
 * grant that graph (DESIGN section 3): a policy granting the graph without
 * hiding p lifts p. Graphs left with nothing hidden are absent.
 */
export function composeGrant(policies: readonly CompiledPolicy[]): Grant {
  const graphs = new Set<string>();
  const hidden = new Map<string, Set<string>>();
  for (const policy of policies) {
    for (const graph of policy.graphs) {
      const sofar = hidden.get(graph);
      if (!graphs.has(graph)) {
        graphs.add(graph);
        hidden.set(graph, new Set(policy.hidePaths));
      } else if (sofar !== undefined && sofar.size > 0) {
        for (const path of sofar) if (!policy.hidePaths.includes(path)) sofar.delete(path);
      }
    }
  }
  for (const [graph, paths] of hidden) if (paths.size === 0) hidden.delete(graph);
  const limits: { -readonly [K in keyof PolicyLimits]: number } = {};
  for (const policy of policies) {
    for (const [kind, value] of Object.entries(policy.limits) as [keyof PolicyLimits, number][]) {
      limits[kind] = Math.max(limits[kind] ?? 0, value);
    }
  }
  return Object.freeze({
    limits: Object.freeze(limits),
    policies: Object.freeze(policies.map((policy) => policy.iri)),
    graphs,
    hiddenByGraph: hidden,
  });
}
