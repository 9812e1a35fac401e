// What a load reads, for the guard and the commands alike: the files and the store (the upstream, or the embedded store started for it); apart from the guard's start, so `check` and `explain` load no HTTP server for it.

import type { GuardConfig } from '../config/read-config.js';
import { demoDataFile, startEmbeddedStore, type EmbeddedStore } from '../embedded/start-embedded-store.js';
import type { PolicySetSources } from '../policy/load/policy-set-sources.js';
import { policySetSources } from '../policy/load/policy-set-sources.js';
import type { Upstream } from '../upstream/create-upstream.js';
import { readStoreAnswer } from '../upstream/read-store-answer.js';
import type { LogLine } from './create-log-writer.js';

/**
 * Starts the embedded store (docs/design/embedded.md) when no upstream is configured: loaded
 * from `embedded.data`, else the demo data. Undefined when there is an upstream.
 */
export async function startConfiguredEmbeddedStore(config: GuardConfig, log: LogLine): Promise<EmbeddedStore | undefined> {
  if (config.upstream !== undefined) return undefined;
  const dataFiles = config.embedded.data.length > 0 ? config.embedded.data : [demoDataFile()];
  const embedded = await startEmbeddedStore({
    dataFiles,
    log: (level, message) => log({ event: 'embedded-store', level, message }),
    queryTimeoutMs: config.timeoutMs,
  });
  log({ event: 'embedded-store-started', files: dataFiles.length });
  return embedded;
}

/**
 * What every load of this guard reads: the files, and the store for the load's own queries
 * (the graphs under each guard:readGraphPrefix), through the one upstream pool with its
 * headers, each answer bounded by the config's timeoutMs as a whole.
 */
export function loadSources(config: GuardConfig, upstream: Upstream): PolicySetSources {
  return {
    ...policySetSources(config),
    storeQuery: async (queryText, accept, maxBytes) =>
      (await readStoreAnswer(upstream, queryText, { accept, maxBytes, timeoutMs: config.timeoutMs })).body.toString('utf8'),
    maxPrefixGraphs: config.maxPrefixGraphs,
    prefixRefreshMs: config.prefixRefreshMs,
  };
}
