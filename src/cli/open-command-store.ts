// The store a command reads at load time (fact sources, prefix listings): the upstream, or the embedded store, opened on first use.

import type { GuardConfig } from '../config/read-config.js';
import type { EmbeddedStore } from '../embedded/start-embedded-store.js';
import type { PolicySetSources } from '../policy/load/policy-set-sources.js';
import { loadSources, startConfiguredEmbeddedStore } from '../server/load-sources.js';
import { createUpstream, nameOf, type Upstream } from '../upstream/create-upstream.js';

/** A command's way to the store, and what its loads read. */
export interface CommandStore {
  /** Opens the store on the first query: a configuration that never asks it starts nothing. */
  readonly upstream: Upstream;
  /** The files and the store, as `serve` loads them (loadSources). */
  readonly sources: PolicySetSources;
  /** Opens the store now: without an upstream, starts the embedded store and loads `embedded.data`, as serve does at start. */
  open(): Promise<void>;
  /** Closes the connections and stops the embedded store, when opened. */
  close(): Promise<void>;
}

/**
 * The store as `serve` reaches it: the configured upstream with its headers and timeoutMs, or,
 * without one, the embedded store loaded with `embedded.data` (started only when a load asks
 * it something, since starting it loads the data).
 */
export function openCommandStore(config: GuardConfig): CommandStore {
  let opened: Promise<{ upstream: Upstream; embedded: EmbeddedStore | undefined }> | undefined;
  const open = () =>
    (opened ??= (async () => {
      const embedded = await startConfiguredEmbeddedStore(config, () => undefined);
      const url = config.upstream ?? embedded?.queryUrl ?? '';
      return { upstream: createUpstream({ url, headers: config.upstreamHeaders, timeoutMs: config.timeoutMs }), embedded };
    })());
  const close = async () => {
    // A store that failed to open has nothing to close; its error went to whoever opened it.
    const store = await opened?.catch(() => undefined);
    if (store === undefined) return;
    const { upstream, embedded } = store;
    await upstream.close();
    await embedded?.stop();
  };
  const upstream: Upstream = {
    send: async (outgoing, options) => (await open()).upstream.send(outgoing, options),
    store: config.upstream === undefined ? 'the embedded store' : nameOf(new URL(config.upstream)),
    close,
  };
  return { upstream, sources: loadSources(config, upstream), open: async () => void (await open()), close };
}
