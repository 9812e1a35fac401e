// Runs `workers` guard processes sharing one port (node:cluster): starts them, relays SIGHUP, stops them all on SIGTERM.

import cluster, { type Worker } from 'node:cluster';
import type { GuardConfig } from '../config/read-config.js';
import { createClusterScrape } from '../metrics/create-metrics.js';
import { serveMetrics, type MetricsListener } from '../metrics/serve-metrics.js';
import { listenOrExplain } from './listen-problem.js';
import { startConfiguredEmbeddedStore } from './load-sources.js';
import type { HeldSignals } from './hold-signals.js';
import type { LogLine } from './start-guard.js';

/** What a worker tells the primary over the cluster channel. */
export interface ClusterWorkerReport {
  readonly kind: 'ready';
  /** Base URL the worker listens on (the same for every worker). */
  readonly url: string;
  /** The address and port really bound, e.g. `0.0.0.0:8080` (RunningGuard.address). */
  readonly address: string;
}

/** How long the primary waits, after the workers' own grace period, before killing one that has not exited. */
const KILL_AFTER_GRACE_MS = 5_000;
/** Pause before replacing a worker that died, so a worker that dies at once cannot spin the CPU. */
const RESTART_DELAY_MS = 1_000;

/** In a worker: tells the primary this process listens with its policies loaded. */
export function reportReady(url: string, address: string): void {
  const report: ClusterWorkerReport = { kind: 'ready', url, address };
  cluster.worker?.send(report);
}

/** In a worker: the log writer with the worker's id on every line, so an operator can tell the processes apart. */
export function workerLog(log: LogLine): LogLine {
  const id = cluster.worker?.id;
  return id === undefined ? log : (entry) => log({ worker: id, ...entry });
}

/**
 * In the primary: forks `config.workers` processes that run `serve` again and share the
 * listening port. Without an upstream, ONE embedded store starts here and every worker gets
 * its URL (GUARD_UPSTREAM in the worker's environment), so all of them see the same data.
 * SIGHUP is relayed to every worker (each reloads its policies); SIGTERM or SIGINT stops
 * them all gracefully, then the store. `held` holds the signals that came before this ran. A worker that dies after start is replaced.
 * Resolves with the exit code: 0 after a shutdown, 1 when a worker failed to start (it
 * has printed its own one-line reason).
 */
export async function serveCluster(config: GuardConfig, env: NodeJS.ProcessEnv, log: LogLine, held: HeldSignals): Promise<number> {
  const workerEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) workerEnv[name] = value;

  // One store for all workers: they reach it through GUARD_UPSTREAM.
  const embedded = await startConfiguredEmbeddedStore(config, log);
  if (embedded !== undefined) workerEnv.GUARD_UPSTREAM = embedded.queryUrl;

  // One scrape of the primary sums every worker's metrics (the workers do not listen for scrapes).
  let metricsListener: MetricsListener | undefined;
  if (config.metrics !== undefined) {
    const { metrics } = config;
    metricsListener = await listenOrExplain({ ...metrics, portKey: 'metrics.port', hostKey: 'metrics.host' }, () =>
      serveMetrics({ ...metrics, ...createClusterScrape(), log }),
    );
    log({ event: 'metrics-listening', address: metricsListener.address, url: `${metricsListener.url}/metrics` });
  }

  let stopping = false;
  const ready = new Set<Worker>();
  let failedToStart: (() => void) | undefined;
  let allReady: (() => void) | undefined;
  let url = '';
  let address = '';

  const fork = (): void => {
    const worker = cluster.fork(workerEnv);
    worker.on('message', (report: ClusterWorkerReport) => {
      if (report?.kind !== 'ready') return;
      ready.add(worker);
      url = report.url;
      address = report.address;
      if (ready.size === config.workers) allReady?.();
    });
    worker.once('exit', (code, signal) => {
      const wasReady = ready.delete(worker);
      if (stopping) return;
      if (!wasReady && failedToStart !== undefined) {
        failedToStart();
        return;
      }
      log({ event: 'worker-exited', worker: worker.id, code, signal });
      setTimeout(() => {
        if (!stopping) fork();
      }, RESTART_DELAY_MS).unref();
    });
  };

  const stopAll = async (): Promise<void> => {
    stopping = true;
    const living = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && !worker.isDead());
    await Promise.all(
      living.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            // The worker drains, then finishes its requests in flight within the grace on its own.
            const { drainMs, graceMs } = config.shutdown;
            const kill = setTimeout(() => worker.process.kill('SIGKILL'), drainMs + graceMs + KILL_AFTER_GRACE_MS);
            worker.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            worker.process.kill('SIGTERM');
          }),
      ),
    );
    await metricsListener?.close();
    await embedded?.stop();
  };

  // Signals are taken from the start: a SIGTERM while the workers load their policies stops
  // them too, and a SIGHUP (whose default action would end the primary) reaches every worker.
  const relayReload = (): void => {
    log({ event: 'reload-requested', workers: ready.size });
    for (const worker of Object.values(cluster.workers ?? {})) if (worker !== undefined && !worker.isDead()) worker.process.kill('SIGHUP');
  };
  let requestStop: (signal: NodeJS.Signals) => void = () => {};
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => (requestStop = resolve));
  process.on('SIGHUP', relayReload);
  process.on('SIGTERM', requestStop);
  process.on('SIGINT', requestStop);
  const stopTakingSignals = (): void => {
    process.off('SIGHUP', relayReload);
    process.off('SIGTERM', requestStop);
    process.off('SIGINT', requestStop);
  };
  // Signals held since the top of serve (the embedded store's start included): a SIGHUP needs
  // nothing, since no worker has read the files yet; a SIGTERM or SIGINT stops before any fork.
  const stopBeforeStart = held.release().find((signal) => signal !== 'SIGHUP');
  if (stopBeforeStart !== undefined) {
    log({ event: 'shutdown', signal: stopBeforeStart, workers: 0 });
    stopTakingSignals();
    await stopAll();
    return 0;
  }

  const outcome = await Promise.race([
    new Promise<'ready' | 'failed'>((resolve) => {
      allReady = () => resolve('ready');
      failedToStart = () => resolve('failed');
      for (let i = 0; i < config.workers; i += 1) fork();
    }),
    stopRequested.then(() => 'stopped' as const),
  ]);
  failedToStart = undefined;
  allReady = undefined;
  if (outcome === 'ready') {
    log({ event: 'listening', address, url, path: config.path, workers: config.workers });
    const signal = await stopRequested;
    log({ event: 'shutdown', signal, workers: ready.size });
  }
  stopTakingSignals();
  await stopAll();
  return outcome === 'failed' ? 1 : 0;
}
