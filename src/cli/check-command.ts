// `sparql-guard check`: loads configuration, policies and rules as `serve` would, and lists what each principal gets.

import { parseArgs } from 'node:util';
import { createCallerIdentifier } from '../auth/identify-caller.js';
import { loadPolicySetWithStats } from '../policy/load-policy-set.js';
import type { LoadStats } from '../policy/compile-policy-set.js';
import { policySetSources } from '../policy/policy-set-sources.js';
import type { PolicySet } from '../policy/policy-set.js';
import { readCommandConfig } from './read-command-config.js';

export const CHECK_USAGE = `usage: sparql-guard check [--config FILE] [--json]
  loads the configuration (--config, else GUARD_CONFIG, else the demo), the policies and the rules
  exactly as serve does, and prints which engine ran each rule file and its time, warnings about
  the rules, and for each principal the policies that name it and the graphs they grant; exits 1 with the error line when anything is wrong`;

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
  const { set, stats } = await loadPolicySetWithStats(sources);
  const summary = {
    config: config.configFile ?? null,
    policyFiles: sources.policyFiles.length,
    ruleFiles: sources.ruleFiles.length,
    policies: set.policies.length,
  };
  const engines = engineRuns(stats);
  process.stdout.write(
    values.json === true
      ? `${JSON.stringify({ ...summary, engines, warnings: stats.warnings, principals: listing(set) }, null, 2)}\n`
      : text(summary, set, engines, stats.warnings),
  );
  return 0;
}

const ENGINE_NAMES = { copy: 'copy rules (applied directly)', chain: 'forward chainer', eye: 'EYE' } as const;

/** Per engine that ran, in order: its time and files, each EYE file with the reason it is not the forward chainer's. */
function engineRuns(stats: LoadStats) {
  return stats.stages.map((stage) => ({
    engine: ENGINE_NAMES[stage.engine],
    ms: Math.round(stage.ms),
    inputTriples: stage.inputTriples,
    files: stage.files.map((file) => {
      const reason = stats.ruleRuns.find((run) => run.file === file)?.reason;
      return reason === undefined ? { file } : { file, reason };
    }),
  }));
}

/** Per principal, in order of its first policy: the policies that name it and their graphs. */
function listing(set: PolicySet) {
  // Under rules a member of a deep group lists hundreds of policies and graphs: write each IRI once.
  const written = new Map<string, string>();
  const iri = (value: string) => {
    let text = written.get(value);
    if (text === undefined) written.set(value, (text = `<${value}>`));
    return text;
  };
  return set.principals.map((entry) => ({
    principal: entry.label,
    policies: entry.policies.map((policy) => iri(policy.iri)),
    graphs: entry.graphs.map(iri),
  }));
}

function text(
  summary: { config: string | null; policyFiles: number; ruleFiles: number; policies: number },
  set: PolicySet,
  engines: ReturnType<typeof engineRuns>,
  warnings: readonly string[],
): string {
  const lines = [
    `ok: ${summary.policies} policies from ${summary.policyFiles} policy file(s), ${summary.ruleFiles} rule file(s); config ${summary.config ?? '(defaults)'}`,
  ];
  for (const run of engines) {
    for (const { file, reason } of run.files) lines.push(`rules: ${run.engine} ran ${file}${reason === undefined ? '' : ` (${reason})`}`);
    lines.push(`rules: ${run.engine} took ${run.ms} ms over ${run.inputTriples} triples for ${run.files.length} file(s)`);
  }
  for (const warning of warnings) lines.push(`warning: ${warning}`);
  for (const entry of listing(set)) {
    lines.push(entry.principal, `  policies: ${entry.policies.join(' ')}`, `  graphs:   ${entry.graphs.join(' ') || '(none)'}`);
  }
  // The listing is per principal; a caller's grant is a union of several of them (docs/design.md#vocabulary).
  lines.push('a caller gets the union of Everyone, AuthenticatedAgent (when authenticated), its agent IRI and its groups');
  return `${lines.join('\n')}\n`;
}
