// Names the files one policy load reads, from the configuration: the same list for serve, reload, check and explain (on the serving thread).

import type { FactSourceConfig } from '../../config/read-config.js';
import type { PolicySetSources } from './load-policy-set.js';
import { shippedRuleFiles } from '../rules/shipped-rule-files.js';

/**
 * The policy files in order of listing, the rule files (the shipped `rules/*.n3` first, then
 * the operator's config `rules`) and the fact sources of config `facts`.
 */
export function policySetSources(config: {
  readonly policies: readonly string[];
  readonly rules: readonly string[];
  readonly facts?: readonly FactSourceConfig[];
}): PolicySetSources {
  return { policyFiles: [...config.policies], ruleFiles: [...shippedRuleFiles(), ...config.rules], facts: [...(config.facts ?? [])] };
}
