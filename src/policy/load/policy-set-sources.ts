// Names the files one policy load reads, from the configuration: the same list for serve, reload, check and explain (on the serving thread).

import type { FactSource } from '../store-reads/fetch-fact-source.js';
import type { StoreQuery } from '../store-reads/list-prefix-graphs.js';
import { shippedRuleFiles } from '../rules/shipped-rule-files.js';

/** Absolute paths of the files one load reads. */
export interface PolicySetSources {
  readonly policyFiles: readonly string[];
  /** Shipped `rules/*.n3` first (`shippedRuleFiles()`), then the operator's config `rules`. */
  readonly ruleFiles: readonly string[];
  /** Config `facts`: the sources whose answers (PolicyInputs) join the policy files; none when absent. */
  readonly facts?: readonly FactSource[];
  /**
   * The store, for the load's own queries (the graphs under each `guard:readGraphPrefix`).
   * Without it a policy set holding a prefix fails to load.
   */
  readonly storeQuery?: StoreQuery;
  /** The most graphs one `guard:readGraphPrefix` may grant (config `maxPrefixGraphs`); more fails the load. */
  readonly maxPrefixGraphs?: number;
  /** How often a set holding a `guard:readGraphPrefix` is loaded again to list the graphs anew (config `prefixRefreshMs`). */
  readonly prefixRefreshMs?: number;
}

/**
 * The policy files in order of listing, the rule files (the shipped `rules/*.n3` first, then
 * the operator's config `rules`) and the fact sources of config `facts`.
 */
export function policySetSources(config: {
  readonly policies: readonly string[];
  readonly rules: readonly string[];
  readonly facts?: readonly FactSource[];
}): PolicySetSources {
  return { policyFiles: [...config.policies], ruleFiles: [...shippedRuleFiles(), ...config.rules], facts: [...(config.facts ?? [])] };
}
