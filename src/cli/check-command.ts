// `sparql-guard check`: loads configuration, policies and rules as `serve` would, and lists what each principal gets.

import { parseArgs } from 'node:util';
import { createCallerIdentifier } from '../auth/identify-caller.js';
import { loadPolicySet } from '../policy/load-policy-set.js';
import { policySetSources } from '../policy/policy-set-sources.js';
import type { PolicySet } from '../policy/policy-set.js';
import { readCommandConfig } from './read-command-config.js';

export const CHECK_USAGE = `usage: sparql-guard check [--config FILE] [--json]
  loads the configuration (--config, else GUARD_CONFIG, else the demo), the policies and the rules
  exactly as serve does, and prints for each principal the policies that name it and the graphs they grant;
  exits 1 with the error line when anything is wrong`;

/**
 * Runs the command; returns the exit code. A bad configuration, policy or rule
 * file throws (ConfigError, PolicyLoadError) and the dispatcher prints its line.
 */
export async function checkCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: { config?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args: [...args], options: { config: { type: 'string' }, json: { type: 'boolean' } } }));
  } catch (error) {
    process.stderr.write(`sparql-guard check: ${(error as Error).message}\n${CHECK_USAGE}\n`);
    return 2;
  }
  const config = readCommandConfig(env, values.config);
  // Compiled as serve compiles it, so a problem serve would meet here is met here too.
  createCallerIdentifier(config.auth);
  const sources = policySetSources(config);
  const set = await loadPolicySet(sources);
  const summary = {
    config: config.configFile ?? null,
    policyFiles: sources.policyFiles.length,
    ruleFiles: sources.ruleFiles.length,
    policies: set.policies.length,
  };
  process.stdout.write(values.json === true ? `${JSON.stringify({ ...summary, principals: listing(set) }, null, 2)}\n` : text(summary, set));
  return 0;
}

/** Per principal, in order of its first policy: the policies that name it and their graphs. */
function listing(set: PolicySet) {
  return set.principals.map((entry) => ({
    principal: entry.label,
    policies: entry.policies.map((policy) => `<${policy.iri}>`),
    graphs: entry.graphs.map((graph) => `<${graph}>`),
  }));
}

function text(summary: { config: string | null; policyFiles: number; ruleFiles: number; policies: number }, set: PolicySet): string {
  const lines = [
    `ok: ${summary.policies} policies from ${summary.policyFiles} policy file(s), ${summary.ruleFiles} rule file(s); config ${summary.config ?? '(defaults)'}`,
  ];
  for (const entry of listing(set)) {
    lines.push(entry.principal, `  policies: ${entry.policies.join(' ')}`, `  graphs:   ${entry.graphs.join(' ') || '(none)'}`);
  }
  // The listing is per principal; a caller's grant is a union of several of them (DESIGN section 3).
  lines.push('a caller gets the union of Everyone, AuthenticatedAgent (when authenticated), its agent IRI and its groups');
  return `${lines.join('\n')}\n`;
}
