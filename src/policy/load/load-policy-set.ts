// Loads the policy files and rules into a frozen PolicySet (on the serving thread, which hands the heavy work to the policy worker).

import { createHash } from 'node:crypto';
import { compilePolicySet } from './compile-policy-set.js';
import { createPolicyWorker, type PolicyWorker } from './create-policy-worker.js';
import { NO_POLICY_INPUTS, type PolicyInputs } from '../store-reads/fetch-policy-inputs.js';
import { DEFAULT_MAX_PREFIX_GRAPHS, listPrefixGraphs, type PrefixListing } from '../store-reads/list-prefix-graphs.js';
import { PolicyLoadError } from '../policy-load-error.js';
import type { PolicySet } from '../policy-set.js';
import type { PolicySetSources } from './policy-set-sources.js';
import type { FileTexts, LoadStats, WorkerJob } from './worker-messages.js';
import type { EngineChoice } from '../rules/reason-over-policies.js';

/** A loaded set and what loading it cost. */
export interface LoadedPolicySet {
  readonly set: PolicySet;
  readonly stats: LoadStats;
  /**
   * sha256 of the compiled table, then `+` and the sha256 of the prefix listing when a policy has
   * a `guard:readGraphPrefix`: two loads with equal digests built the same set.
   */
  readonly digest: string;
  /** The policy and rule files' texts this load was built from. */
  readonly fileTexts: FileTexts;
}

/** A load that derived the table of `digest` again: nothing was compiled. */
export interface UnchangedPolicySet {
  readonly set: undefined;
  readonly stats: LoadStats;
  readonly digest: string;
  readonly fileTexts: FileTexts;
}

/** What `loadPolicySetWithStats` may be told besides the sources. */
export interface LoadOptions {
  /** `'eye'` runs every rule file in EYE (the reference of the differential test). */
  readonly engine?: EngineChoice;
  /** The fact sources' answers (fetchPolicyInputs); none when absent. */
  readonly inputs?: PolicyInputs;
  /** The guard's policy worker; absent: a worker of this load's own, closed when it ends. */
  readonly worker?: PolicyWorker;
  /** Texts to use instead of reading these files (a scheduled refresh: the set in force's); absent: every file is read. */
  readonly fileTexts?: FileTexts;
}

/**
 * Reads and validates the policy files, runs the rules (the forward chainer or EYE,
 * per rule file) on a worker thread, and compiles the result. Throws PolicyLoadError with a one-line
 * message naming file, policy and reason.
 */
export async function loadPolicySet(sources: PolicySetSources): Promise<PolicySet> {
  return (await loadPolicySetWithStats(sources)).set;
}

/**
 * `loadPolicySet` that also reports where the time went and which engine ran each rule
 * file (for `check`, reload logs and bench/). `engine: 'eye'` runs every rule file in
 * EYE: the reference that the differential test compares the chosen engines against.
 */
export async function loadPolicySetWithStats(sources: PolicySetSources, options: LoadOptions = {}): Promise<LoadedPolicySet> {
  return (await loadUnlessSame(sources, options, undefined)) as LoadedPolicySet;
}

/**
 * `loadPolicySetWithStats` for a refresh: when the rules derive the table whose digest is
 * `digestInForce` again, nothing is compiled and `set` is undefined (the caller keeps its set,
 * and every cache built on it). With `fileTexts`, the files are not read again: their texts are
 * those.
 */
export function reloadPolicySet(
  sources: PolicySetSources,
  inputs: PolicyInputs,
  digestInForce: string | undefined,
  worker: PolicyWorker,
  fileTexts?: FileTexts,
): Promise<LoadedPolicySet | UnchangedPolicySet> {
  return loadUnlessSame(sources, { inputs, worker, ...(fileTexts !== undefined && { fileTexts }) }, digestInForce);
}

async function loadUnlessSame(
  sources: PolicySetSources,
  options: LoadOptions,
  digestInForce: string | undefined,
): Promise<LoadedPolicySet | UnchangedPolicySet> {
  const inputs = options.inputs ?? NO_POLICY_INPUTS;
  const configs = new Map((sources.facts ?? []).map((source) => [source.name, source]));
  const facts = inputs.facts.map((fetched) => {
    const config = configs.get(fetched.name);
    if (config === undefined) throw new PolicyLoadError(`facts:${fetched.name}: no such fact source in the configuration`);
    return {
      name: fetched.name,
      contentType: fetched.contentType,
      body: fetched.body,
      fetchMs: fetched.fetchMs,
      maxTriples: config.maxTriples,
      policies: config.policies,
    };
  });
  const job: Omit<WorkerJob, 'id'> = {
    policyFiles: [...sources.policyFiles],
    ruleFiles: [...sources.ruleFiles],
    engine: options.engine ?? 'auto',
    facts,
    // A set in force built with a prefix listing (its digest has a `+` part) needs the table back
    // whatever the worker finds: its prefixes are listed again, and the listing may have changed.
    ...(digestInForce !== undefined && !digestInForce.includes('+') && { digestInForce }),
    ...(options.fileTexts !== undefined && { fileTexts: options.fileTexts }),
  };
  const worker = options.worker ?? createPolicyWorker();
  const reply = await worker.run(job).finally(() => (worker === options.worker ? undefined : worker.close()));
  if (!reply.ok) throw new PolicyLoadError(reply.message, reply.file, reply.policy);
  // The prefixes are known once the policy files are read: the store's graphs are listed now, in this load.
  // No table back means the table in force, which (its digest has no `+` part) holds no prefix.
  const prefixes = new Set(reply.policies?.graphPrefixes.flat() ?? []);
  let listing: PrefixListing | undefined;
  if (prefixes.size > 0) {
    if (sources.storeQuery === undefined) {
      throw new PolicyLoadError('guard:readGraphPrefix needs the store to list its graphs, and this load has no store');
    }
    listing = await listPrefixGraphs(sources.storeQuery, prefixes, sources.maxPrefixGraphs ?? DEFAULT_MAX_PREFIX_GRAPHS);
  }
  const started = performance.now();
  // The table is the worker's and the listed graphs: the digest covers both, so a graph added under a prefix is a change.
  const digest = listing === undefined ? reply.digest : `${reply.digest}+${digestOfListing(listing)}`;
  const set =
    reply.policies === undefined || digest === digestInForce ? undefined : await compilePolicySet(reply.policies, listing?.graphs);
  const stats: LoadStats = {
    ...reply.stats,
    compileMs: performance.now() - started,
    ...(listing !== undefined && {
      warnings: [...reply.stats.warnings, ...listing.skipped],
      prefixListing: { prefixes: prefixes.size, graphs: listing.graphCount, ms: listing.ms },
    }),
  };
  return { set, stats: Object.freeze(stats), digest, fileTexts: reply.fileTexts };
}

/** A digest of every prefix and the graphs listed under it. */
function digestOfListing(listing: PrefixListing): string {
  const hash = createHash('sha256');
  for (const prefix of [...listing.graphs.keys()].sort()) {
    hash.update(`\u0000${prefix}`);
    for (const graph of listing.graphs.get(prefix) ?? []) hash.update(`\u0001${graph}`);
  }
  return hash.digest('hex');
}
