// `sparql-guard check`: loads configuration, policies and rules as `serve` would, and lists what each principal gets.

import { once } from 'node:events';
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
  if (values.json === true) {
    // JSON.stringify's own layout (two spaces), with the listing written in pieces: under rules it is a hundred megabytes.
    const head = JSON.stringify({ ...summary, engines, warnings: stats.warnings, principals: [] }, null, 2);
    if (set.listing.entries.length === 0) await write([`${head}\n`]);
    else await write(jsonListing(head.slice(0, head.length - '[]\n}'.length), set));
  } else {
    await write(text(summary, set, engines, stats.warnings));
  }
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

/**
 * Writes the pieces to stdout in chunks of about a megabyte, waiting whenever the stream asks to.
 * A reader that stops early (`check | head`) closes the pipe: the rest is dropped and the command
 * still exits 0, as when the output went out in one write.
 */
async function write(pieces: Iterable<string>): Promise<void> {
  let closed = false;
  const onError = () => {
    closed = true;
  };
  process.stdout.on('error', onError);
  /** Writes one chunk; false once the stream is gone. */
  const flush = async (chunk: string): Promise<boolean> => {
    if (closed) return false;
    if (!process.stdout.write(chunk)) {
      try {
        await once(process.stdout, 'drain');
      } catch {
        return false;
      }
    }
    return !closed;
  };
  try {
    let chunk = '';
    for (const piece of pieces) {
      chunk += piece;
      if (chunk.length < CHUNK_CHARACTERS) continue;
      if (!(await flush(chunk))) return;
      chunk = '';
    }
    if (chunk !== '') await flush(chunk);
  } finally {
    process.stdout.off('error', onError);
  }
}

const CHUNK_CHARACTERS = 1 << 20;

/**
 * Per principal, in order of its first policy: the policies that name it and their graphs, each
 * IRI written (`<iri>`, through `format`) once however many principals list it.
 */
function* listing(set: PolicySet, format: (iri: string) => string) {
  const { graphs, entries } = set.listing;
  const graphTexts = graphs.map((graph) => format(`<${graph}>`));
  const policyTexts = set.policies.map((policy) => format(`<${policy.iri}>`));
  for (const entry of entries) {
    const listedGraphs = new Array<string>(entry.graphs.length);
    for (let at = 0; at < listedGraphs.length; at += 1) listedGraphs[at] = graphTexts[entry.graphs[at] as number] as string;
    yield { label: entry.label, policies: entry.policies.map((policy) => policyTexts[policy.order] as string), graphs: listedGraphs };
  }
}

/** The listing as JSON.stringify(…, null, 2) lays out the `principals` member, after `head` (everything before its value). */
function* jsonListing(head: string, set: PolicySet) {
  const array = (items: readonly string[]) => (items.length === 0 ? '[]' : `[\n        ${items.join(',\n        ')}\n      ]`);
  yield `${head}[`;
  let separator = '\n';
  for (const entry of listing(set, (iri) => JSON.stringify(iri))) {
    yield `${separator}    {\n      "principal": ${JSON.stringify(entry.label)},\n      "policies": ${array(entry.policies)},\n      "graphs": ${array(entry.graphs)}\n    }`;
    separator = ',\n';
  }
  yield '\n  ]\n}\n';
}

function* text(
  summary: { config: string | null; policyFiles: number; ruleFiles: number; policies: number },
  set: PolicySet,
  engines: ReturnType<typeof engineRuns>,
  warnings: readonly string[],
) {
  const lines = [
    `ok: ${summary.policies} policies from ${summary.policyFiles} policy file(s), ${summary.ruleFiles} rule file(s); config ${summary.config ?? '(defaults)'}`,
  ];
  for (const run of engines) {
    for (const { file, reason } of run.files) lines.push(`rules: ${run.engine} ran ${file}${reason === undefined ? '' : ` (${reason})`}`);
    lines.push(`rules: ${run.engine} took ${run.ms} ms over ${run.inputTriples} triples for ${run.files.length} file(s)`);
  }
  for (const warning of warnings) lines.push(`warning: ${warning}`);
  yield `${lines.join('\n')}\n`;
  for (const entry of listing(set, (iri) => iri)) {
    yield `${entry.label}\n  policies: ${entry.policies.join(' ')}\n  graphs:   ${entry.graphs.join(' ') || '(none)'}\n`;
  }
  // The listing is per principal; a caller's grant is a union of several of them (docs/design.md#vocabulary).
  yield 'a caller gets the union of Everyone, AuthenticatedAgent (when authenticated), its agent IRI and its groups\n';
}
