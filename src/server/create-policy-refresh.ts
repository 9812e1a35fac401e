// Loads the policy set again on demand (SIGHUP, file changes) and on each fact source's schedule: one load at a time, swapped whole.

import type { PoliciesInForce } from '../http/request-state.js';
import type { FactsInForce, GuardMetrics } from '../metrics/create-metrics.js';
import { factOrigin } from '../policy/store-reads/fact-origin.js';
import { fetchPolicyInputs, type PolicyInputs } from '../policy/store-reads/fetch-policy-inputs.js';
import { isPrefixListingFailure } from '../policy/store-reads/list-prefix-graphs.js';
import type { PolicyWorker } from '../policy/load/create-policy-worker.js';
import type { FileTexts } from '../policy/load/worker-messages.js';
import { reloadPolicySet } from '../policy/load/load-policy-set.js';
import type { PolicySetSources } from '../policy/load/policy-set-sources.js';
import { PolicyLoadError } from '../policy/policy-load-error.js';
import type { Upstream } from '../upstream/create-upstream.js';
import type { LogLine } from './create-log-writer.js';
import type { PolicyHolder } from './policy-holder.js';

/** The reloads of one guard. */
export interface PolicyRefresh {
  /**
   * The first load. Resolves true once a set is in force; false when a fact source could not
   * be read or its answer was refused (logged; the guard has no set, so it answers 503, and the
   * load is tried again every `min(refreshMs, 5 s)`). Rejects with the PolicyLoadError of a
   * policy or rule file, as a start always did.
   */
  start(): Promise<boolean>;
  /**
   * Reads the files and every fact source again and swaps the new set in; on failure logs one
   * line and keeps the set in force. Resolves true when the files and facts read are in force
   * (swapped, or the same table as before). Calls during a load are merged into one more load.
   */
  reload(): Promise<boolean>;
  /** True while no set is in force because a fact source could not be read (the start goes on trying). */
  waitingForFacts(): boolean;
  /** The answers in force, for the metrics. */
  factsInForce(): readonly FactsInForce[];
  /** The set in force, its digest and the generation of its facts (for audit records); undefined before the first load. */
  version(): PoliciesInForce | undefined;
  /** Stops the schedules (a load under way still ends). */
  close(): void;
}

/** What a refresh works with. */
export interface PolicyRefreshOptions {
  readonly sources: PolicySetSources;
  readonly upstream: Upstream;
  /** The guard's policy worker, which runs every load of this refresh (the guard closes it). */
  readonly worker: PolicyWorker;
  readonly policies: PolicyHolder;
  readonly log: LogLine;
  readonly metrics?: GuardMetrics;
  /** Called after a new set is swapped in (not after an unchanged refresh). */
  readonly onSwapped: () => void;
}

/** The timer of the prefix listing among the sources' timers (no source name is empty). */
const PREFIX_SCHEDULE = '';

/** The longest wait before a failed source is read again. */
const RETRY_MS = 5000;

/**
 * One load at a time: a request while one runs is served by a single further load once it ends,
 * which reads the union of what was asked (every source for a reload, one for its schedule), so a
 * burst of SIGHUPs, file events and schedules costs at most two loads. A load whose rules derive
 * the table in force again (equal digests) swaps nothing: the grants computed under the set in
 * force, and every cache built on them, stay; only the freshness moves. Requests in flight keep
 * the grant they computed; the swap is one assignment.
 */
export function createPolicyRefresh(options: PolicyRefreshOptions): PolicyRefresh {
  const { sources, upstream, worker, policies, log, metrics } = options;
  const facts = sources.facts ?? [];
  const configByName = new Map(facts.map((source) => [source.name, source]));
  let inForce: PolicyInputs | undefined;
  let triplesInForce: readonly number[] = [];
  let digest: string | undefined;
  /** The files' texts the set in force was loaded from: a schedule reads the store again, not the files. */
  let textsInForce: FileTexts | undefined;
  let version: PoliciesInForce | undefined;
  let factsGeneration = 0;
  let closed = false;
  let waiting = false;
  const timers = new Map<string, NodeJS.Timeout>();

  type Wanted = 'all' | Set<string>;
  /** What asked for a load: the start, a reload (SIGHUP, a file change) or a source's schedule. */
  type Trigger = 'start' | 'reload' | 'schedule';
  let running: Promise<boolean> | undefined;
  let queued: { promise: Promise<boolean>; wanted: Wanted } | undefined;

  const schedule = (name: string, delayMs: number) => {
    clearTimeout(timers.get(name));
    if (closed) return;
    // The prefix listing's schedule reads no source again: the files and the listing only.
    const timer = setTimeout(() => void request(name === PREFIX_SCHEDULE ? new Set() : new Set([name])), delayMs);
    timer.unref();
    timers.set(name, timer);
  };
  const prefixRefreshMs = sources.prefixRefreshMs ?? 60_000;

  /** The end of the freshness of `inputs`: the first of its sources to pass its maxStaleMs. */
  const freshUntil = (inputs: PolicyInputs): number => {
    let until = Number.POSITIVE_INFINITY;
    for (const fetched of inputs.facts) {
      const maxStaleMs = configByName.get(fetched.name)?.maxStaleMs ?? 0;
      until = Math.min(until, fetched.fetchedAt + maxStaleMs);
    }
    return until;
  };

  const loadOnce = async (wanted: Wanted, trigger: Trigger): Promise<boolean> => {
    const first = trigger === 'start';
    // The lines of a load that would put the first set in force say load, not reload: the start's,
    // and the retries of a start whose fact source could not be read.
    const initial = policies.current() === undefined;
    const started = performance.now();
    // Without a set in force every source is read (there is nothing to keep).
    const reads = wanted === 'all' || inForce === undefined ? facts.map((source) => source.name) : [...wanted];
    try {
      const inputs = await fetchPolicyInputs(upstream, sources, inForce, wanted === 'all' ? undefined : new Set(reads));
      // Only the start and a reload (SIGHUP, a file change) read the files: a schedule builds on the
      // texts in force, so a file saved without either never takes effect on its own.
      const loaded = await reloadPolicySet(sources, inputs, digest, worker, trigger === 'schedule' ? textsInForce : undefined);
      const until = freshUntil(inputs);
      if (loaded.set === undefined) {
        policies.extend(until);
      } else {
        policies.replace(loaded.set, until);
        digest = loaded.digest;
        options.onSwapped();
      }
      // A generation per load that read the store's facts anew (0: no fact source).
      if (reads.length > 0) factsGeneration += 1;
      if (loaded.set !== undefined || version?.factsGeneration !== factsGeneration) {
        version = Object.freeze({ set: policies.current()!, policyDigest: digest ?? loaded.digest, factsGeneration });
      }
      inForce = inputs;
      textsInForce = loaded.fileTexts;
      waiting = false;
      policies.staleCause('source');
      triplesInForce = loaded.stats.facts.map((each) => each.triples);
      for (const name of reads) metrics?.factsRead(name, 'success');
      metrics?.policiesLoaded(loaded.set === undefined ? 'unchanged' : 'success', initial);
      // A scheduled refresh that changed nothing is no event (the metrics count it); a reload
      // the operator asked for always answers with a line.
      if (loaded.set !== undefined || trigger === 'reload') {
        log({
          event: initial ? 'policies-loaded' : 'policies-reloaded',
          policies: loaded.stats.policyCount,
          durationMs: Math.round(performance.now() - started),
          ...(!first && { trigger }),
          ...(loaded.set === undefined && { unchanged: true }),
          // What check prints as warnings (rules that derive nothing, listed graphs left out), bounded by the files and SKIPPED_NAMED.
          ...(loaded.stats.warnings.length > 0 && { warnings: loaded.stats.warnings }),
          ...(loaded.stats.facts.length > 0 && {
            facts: loaded.stats.facts.map((each) => ({ source: each.name, triples: each.triples, readMs: Math.round(each.fetchMs) })),
          }),
        });
      }
      for (const name of reads) schedule(name, configByName.get(name)?.refreshMs ?? RETRY_MS);
      // A set that grants graphs by prefix is listed again on its own schedule, sources or not.
      if (loaded.stats.prefixListing !== undefined) schedule(PREFIX_SCHEDULE, prefixRefreshMs);
      else clearTimeout(timers.get(PREFIX_SCHEDULE));
      return true;
    } catch (error) {
      const file = error instanceof PolicyLoadError ? error.file : undefined;
      const source = facts.find((each) => file === factOrigin(each.name));
      const listing = isPrefixListingFailure(error);
      // A policy or rule file that cannot be loaded at start stops the start, as without sources;
      // the store's part (a source, a prefix listing) is tried again.
      if (first && source === undefined && !listing) throw error;
      if (first) waiting = true;
      const message = error instanceof Error ? error.message : String(error);
      if (source !== undefined) metrics?.factsRead(source.name, 'failure');
      // Only a source's own failure means its facts were not read; else the stale refusal says the set could not be loaded.
      policies.staleCause(source !== undefined ? 'source' : 'load');
      metrics?.policiesLoaded('failure', initial);
      log({
        event: initial ? 'policies-load-failed' : 'policies-reload-failed',
        ...(file !== undefined && { file }),
        error: message.split('\n')[0] ?? '',
      });
      for (const name of reads) {
        const refreshMs = configByName.get(name)?.refreshMs ?? RETRY_MS;
        schedule(name, source !== undefined || inForce === undefined ? Math.min(refreshMs, RETRY_MS) : refreshMs);
      }
      if (listing) schedule(PREFIX_SCHEDULE, inForce === undefined ? Math.min(prefixRefreshMs, RETRY_MS) : prefixRefreshMs);
      return false;
    }
  };

  const run = (wanted: Wanted, trigger: Trigger): Promise<boolean> => {
    running = loadOnce(wanted, trigger).finally(() => {
      running = undefined;
    });
    return running;
  };

  const request = (wanted: Wanted): Promise<boolean> => {
    if (closed) return Promise.resolve(false);
    if (queued !== undefined) {
      if (wanted === 'all') queued.wanted = 'all';
      else if (queued.wanted !== 'all') for (const name of wanted) queued.wanted.add(name);
      return queued.promise;
    }
    if (running !== undefined) {
      const next: { promise: Promise<boolean>; wanted: Wanted } = { promise: Promise.resolve(false), wanted };
      next.promise = running.then(
        () => {
          queued = undefined;
          return run(next.wanted, next.wanted === 'all' ? 'reload' : 'schedule');
        },
        () => {
          queued = undefined;
          return run(next.wanted, next.wanted === 'all' ? 'reload' : 'schedule');
        },
      );
      queued = next;
      return next.promise;
    }
    return run(wanted, wanted === 'all' ? 'reload' : 'schedule');
  };

  return {
    start: () => run('all', 'start'),
    reload: () => request('all'),
    waitingForFacts: () => waiting,
    version: () => version,
    factsInForce: () =>
      (inForce?.facts ?? []).map((fetched, at) => ({
        name: fetched.name,
        triples: triplesInForce[at] ?? 0,
        fetchMs: fetched.fetchMs,
        fetchedAt: fetched.fetchedAt,
      })),
    close() {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
