// What a policy load reads from the store, besides the files: every fact source's answer (on the serving thread).

import type { Upstream } from '../../upstream/create-upstream.js';
import { fetchFactSource, type FactSource, type FetchedFacts } from './fetch-fact-source.js';

/** The store's part of one load's input, in the order of config `facts`. */
export interface PolicyInputs {
  readonly facts: readonly FetchedFacts[];
}

/** A load without fact sources. */
export const NO_POLICY_INPUTS: PolicyInputs = Object.freeze({ facts: Object.freeze([]) });

/**
 * Reads the store's part of a load: every fact source of `sources` at once, or, given
 * `previous` (the inputs of the set in force) and `only`, just the sources named in `only`,
 * the others' answers taken from `previous`. Rejects with the first PolicyLoadError to occur:
 * a source that hangs does not hold back the failure of another (the reads still under way end
 * within their own timeoutMs, unseen).
 */
export async function fetchPolicyInputs(
  upstream: Upstream,
  sources: { readonly facts?: readonly FactSource[] },
  previous?: PolicyInputs,
  only?: ReadonlySet<string>,
): Promise<PolicyInputs> {
  const kept = new Map((previous?.facts ?? []).map((facts) => [facts.name, facts]));
  const reads = (sources.facts ?? []).map((source) => {
    const old = kept.get(source.name);
    return only !== undefined && !only.has(source.name) && old !== undefined ? Promise.resolve(old) : fetchFactSource(upstream, source);
  });
  for (const read of reads) read.catch(() => undefined);
  return { facts: await Promise.all(reads) };
}
