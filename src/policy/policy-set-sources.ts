// Names the files one policy load reads, from the configuration: the same list for serve, reload, check and explain.

import type { PolicySetSources } from './load-policy-set.js';
import { shippedRuleFiles } from './shipped-rule-files.js';

/**
 * The policy files in order of listing, and the rule files: the shipped
 * `rules/*.n3` first, then the operator's config `rules`.
 */
export function policySetSources(config: { readonly policies: readonly string[]; readonly rules: readonly string[] }): PolicySetSources {
  return { policyFiles: [...config.policies], ruleFiles: [...shippedRuleFiles(), ...config.rules] };
}
