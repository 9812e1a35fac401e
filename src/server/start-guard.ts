// Starts the whole service from a configuration: store, policies, pipeline, listener.

import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { authChallenge, createCallerIdentifier, credentialHeaderNames } from '../auth/identify-caller.js';
import type { GuardConfig } from '../config/read-config.js';
import { createMetrics } from '../metrics/create-metrics.js';
import { serveMetrics, type MetricsListener } from '../metrics/serve-metrics.js';
import { OWN_VERSION } from '../own-version.js';
import { createPolicyWorker } from '../policy/load/create-policy-worker.js';
import { createPlanner } from '../sparql/create-planner.js';
import { createDatasetGate } from '../upstream/check-dataset-support.js';
import { createUpstream } from '../upstream/create-upstream.js';
import { checkFactQueries } from './check-fact-queries.js';
import { createApp } from './create-app.js';
import { createAuditLog } from './create-audit-log.js';
import { createLogWriter, type LogLine } from './create-log-writer.js';
import { listenOrExplain } from './listen-problem.js';
import { loadSources, startConfiguredEmbeddedStore } from './load-sources.js';
import { createPolicyRefresh, type PolicyRefresh } from './create-policy-refresh.js';
import { createPolicyHolder, type PolicyHolder } from './policy-holder.js';
import { createReadiness, type Readiness } from './readiness.js';
import { watchPolicies, type PolicyWatch } from './watch-policies.js';

/** A running guard. */
export interface RunningGuard {
  /** Base URL to reach the guard from this host, e.g. `http://127.0.0.1:8080` (loopback when bound to every address). */
  readonly url: string;
  /**
   * The address and port really bound, e.g. `0.0.0.0:8080` (every IPv4 address), `[::]:8080`,
   * `127.0.0.1:8080`: what the `listening` line names, so an operator sees the exposure.
   */
  readonly address: string;
  /** Closes the audit file and opens its path again (SIGHUP, after a rotation); nothing without one. */
  reopenAudit(): void;
  /** Base URL of the metrics listener (scrape at `${metricsUrl}/metrics`); undefined without one. */
  readonly metricsUrl: string | undefined;
  /** The store's query URL (the embedded store's when no upstream is configured). */
  readonly upstreamUrl: string;
  readonly policies: PolicyHolder;
  /** Readiness beyond the policies: `startDraining` turns /readyz to 503 (close() does it first). */
  readonly readiness: Readiness;
  /**
   * Loads the policy and rule files and reads every fact source again and swaps the new set
   * in; on failure logs one line naming the file or source and the reason and keeps the
   * previous set. Resolves true when the new set is in force (or the same table was derived
   * again: then nothing is swapped). Calls during a reload are merged into one more reload
   * after it, so the files read last are always the ones in force.
   */
  reload(): Promise<boolean>;
  /**
   * Graceful shutdown (docs/design/server.md, "Shutdown"): /readyz turns 503 at once and every answer
   * closes its connection; the guard keeps serving for `drainMs` (idle keep-alive connections
   * stay open until their next answer or the drain's end), then stops accepting, lets requests in flight finish for up to `graceMs`, cuts
   * the connections still open, and closes the store connections (and the embedded store).
   * It resolves as soon as nothing is in flight. Defaults: the config's `shutdown`. Calling it
   * again returns the same promise.
   */
  close(timing?: Partial<GuardConfig['shutdown']>): Promise<void>;
}

/** Bound of the start-up and /healthz dataset checks: a slow store must not hold the start back long. */
const DATASET_CHECK_TIMEOUT_MS = 3000;
/** Age after which the dataset check runs again (on /healthz, or in the background of a query). */
const DATASET_RECHECK_MS = 30_000;

export type { LogLine };

/** The process's one writer of standard output log lines, batched (see createLogWriter). */
const stdoutWriter = createLogWriter((text) => process.stdout.write(text));
let flushesOnExit = false;

/**
 * One JSON line per event on standard output (docs/design/server.md, "Logging"). Request lines go
 * out in batches; whatever is still buffered is written when the process exits (process.exit,
 * or an uncaught error), where writes to files and pipes are synchronous.
 */
export const logToStdout: LogLine = (entry) => {
  flushOnExit();
  stdoutWriter.log(entry);
};

/** The writer of audit records for `audit.file` "-": the same batches as the log lines, so neither splits the other. */
const auditToStdout = {
  stdout: (fields: string) => (flushOnExit(), stdoutWriter.logText(fields)),
  flushStdout: () => stdoutWriter.flush(),
};

function flushOnExit(): void {
  if (!flushesOnExit) {
    flushesOnExit = true;
    process.once('exit', stdoutWriter.flush);
  }
}

/** Options of {@link startGuard}. */
export interface StartOptions {
  /**
   * Listen only once the first policy set is loaded. A cluster worker does: its listener
   * joins the shared port, and a worker listening early would take connections it can only
   * answer 503. A lone process listens first so that /healthz answers 503 meanwhile.
   */
  readonly listenWhenLoaded?: boolean;
}

/**
 * Starts the guard: the embedded store when no upstream is configured, the listener
 * (so /healthz answers 503 meanwhile; after the policies with `listenWhenLoaded`), then the
 * first policy set. A policy set that fails to load at start rejects with its one-line
 * error, after closing everything.
 */
export async function startGuard(config: GuardConfig, log: LogLine = logToStdout, start: StartOptions = {}): Promise<RunningGuard> {
  checkFactQueries(config);
  // Opened first: a file that cannot be opened stops the start before anything else runs.
  const audit = config.audit === undefined ? undefined : createAuditLog(config.audit, { ...auditToStdout, log });
  const embedded = await startConfiguredEmbeddedStore(config, log);
  const upstreamUrl = config.upstream ?? embedded!.queryUrl;
  // A cluster worker records metrics for the primary's scrape; it never listens for scrapes itself.
  const metrics = config.metrics === undefined ? undefined : createMetrics(OWN_VERSION);
  const upstream = createUpstream({
    url: upstreamUrl,
    headers: config.upstreamHeaders,
    timeoutMs: config.timeoutMs,
    ...(metrics !== undefined && {
      onFailure: (kind) => metrics.upstreamFailed(kind),
      onRetry: (reason) => metrics.upstreamRetried(reason),
    }),
  });
  // A store that ignores FROM / FROM NAMED, or that rowChecks "exists" would leak on, must never get a query.
  const datasetGate = createDatasetGate(upstream, {
    checkTimeoutMs: Math.min(config.timeoutMs, DATASET_CHECK_TIMEOUT_MS),
    recheckMs: DATASET_RECHECK_MS,
    log,
    rowChecks: config.rowChecks,
    datasetForm: config.datasetForm,
  });
  const planner = createPlanner({
    baseIri: config.baseIri,
    maxQueryDepth: config.maxQueryDepth,
    planCache: config.planCache,
    allowedFunctions: config.allowedFunctions,
    rowChecks: config.rowChecks,
    // "auto" follows the store the dataset check found (wantsGraphFilters); a fixed form is fixed.
    datasetForm: config.datasetForm === 'auto' ? () => (datasetGate.graphFilters() ? 'graph-filters' : 'clauses') : config.datasetForm,
  });
  const policies = createPolicyHolder(authChallenge(config.auth));
  const readiness = createReadiness();
  const identifyCaller = createCallerIdentifier(config.auth);
  const sources = loadSources(config, upstream);
  // This guard's own policy worker: another guard in the process has its own, and closing one leaves the other's.
  const policyWorker = createPolicyWorker();
  // A new policy set also starts a new memory of matched API keys (docs/design/auth.md#identity).
  const refresh: PolicyRefresh = createPolicyRefresh({
    sources,
    upstream,
    worker: policyWorker,
    policies,
    log,
    ...(metrics !== undefined && { metrics }),
    onSwapped: () => identifyCaller.forgetKeys(),
  });
  const app = createApp(
    {
      path: config.path,
      explain: config.explain,
      cors: config.cors,
      ui: config.ui,
      limits: { ...config.http, sendIdleMs: config.timeoutMs },
      trustRequestId: config.trustRequestId,
    },
    {
      identifyCaller,
      credentialHeaders: credentialHeaderNames(config.auth),
      grant: (caller) => policies.grant(caller),
      plan: (request, grant, caller) => planner.plan(request, grant, caller),
      upstream,
      admitQuery: (signal) => datasetGate.admit(signal),
      storeServer: () => datasetGate.server(),
      upstreamProblem: () => datasetGate.problem(),
      // Liveness stays 200 while a fact source keeps the first load waiting: the process is
      // alive and reads again; a restart would not bring the store back.
      notReadyReason: () => (policies.current() === undefined && !refresh.waitingForFacts() ? 'policies are not loaded yet' : undefined),
      policiesProblem: () => policies.unusableReason() || undefined,
      draining: () => readiness.draining,
      log,
      ...(metrics !== undefined && { metrics }),
      ...(audit !== undefined && { audit, policiesInForce: () => refresh.version() }),
    },
  );
  metrics?.watch({
    planCache: () => planner.cacheStats(),
    policies: () => policies.current()?.policies.length ?? 0,
    datasetCheck: () => datasetGate.verdict(),
    factsInForce: () => refresh.factsInForce(),
  });
  let metricsListener: MetricsListener | undefined;

  let watcher: PolicyWatch | undefined;
  let closing: Promise<void> | undefined;
  const shutDown = async ({ drainMs, graceMs }: GuardConfig['shutdown']): Promise<void> => {
    // From now on /readyz is 503 and every answer says `Connection: close` (createApp's onSend).
    readiness.startDraining();
    watcher?.close();
    refresh.close();
    datasetGate.close();
    // Keep serving while load balancers notice /readyz; new connections are still answered. Idle
    // keep-alive connections stay open meanwhile: closing one races with a request the peer may
    // be sending on it, and a load balancer that reuses connections passes that close on to its
    // client as a failed request. Their next answer closes them; the rest close after the drain.
    if (app.server.listening && drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
    // app.close() stops accepting and closes idle connections; a busy one closes after its
    // answer. It resolves when the last connection has closed. A response that outlives the
    // grace period (a huge or stalled stream) is cut, and logged `shutdown-cut`: its client
    // sees a truncated body, and forward() aborts the upstream request.
    const idle = setInterval(() => app.server.closeIdleConnections(), 100);
    const cut = setTimeout(() => app.cutAllConnections(), graceMs);
    try {
      await app.close();
    } finally {
      clearInterval(idle);
      clearTimeout(cut);
    }
    await metricsListener?.close();
    await policyWorker.close();
    await upstream.close();
    await embedded?.stop();
    audit?.close();
  };
  const close = (timing: Partial<GuardConfig['shutdown']> = {}): Promise<void> => (closing ??= shutDown({ ...config.shutdown, ...timing }));

  const queryAddress = { host: config.host, port: config.port, portKey: 'port', hostKey: 'host' };
  try {
    if (start.listenWhenLoaded !== true) await listenOrExplain(queryAddress, () => app.listen({ port: config.port, host: config.host }));
    if (metrics !== undefined && config.metrics !== undefined && !cluster.isWorker) {
      const { metrics: metricsConfig } = config;
      metricsListener = await listenOrExplain({ ...metricsConfig, portKey: 'metrics.port', hostKey: 'metrics.host' }, () =>
        serveMetrics({ ...metricsConfig, scrape: metrics.scrape, contentType: metrics.contentType, log }),
      );
      log({ event: 'metrics-listening', address: metricsListener.address, url: `${metricsListener.url}/metrics` });
    }
    // A fact source the store cannot answer yet leaves the guard without a set (503) while
    // the refresh tries again: it never serves a set built without its facts.
    const [, support] = await Promise.all([refresh.start(), datasetGate.start()]);
    if (support.kind === 'ignored') {
      throw new Error(`${support.reason}; refusing to serve ${upstreamUrl}: ${support.fix}`);
    }
    if (support.kind === 'unverified') log({ event: 'upstream-dataset-check', verdict: 'unverified', reason: support.error.message });
    if (start.listenWhenLoaded === true) await listenOrExplain(queryAddress, () => app.listen({ port: config.port, host: config.host }));
  } catch (error) {
    // It never served a query: nothing for a load balancer to drain.
    await close({ drainMs: 0 });
    throw error;
  }

  const reload = () => refresh.reload();
  if (config.watchPolicies) {
    watcher = watchPolicies({
      files: [...sources.policyFiles, ...sources.ruleFiles],
      onChange: (file) => {
        log({ event: 'policies-changed', file });
        void reload();
      },
      onError: (folder, reason) =>
        log({
          event: 'policies-watch-failed',
          folder,
          error: reason,
          message: 'changes in this folder go unseen until it is back (the guard keeps looking for it); SIGHUP still reloads',
        }),
      onResumed: (folder) => log({ event: 'policies-watch-resumed', folder }),
    });
  }

  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${address.port}`,
    address: `${host}:${address.port}`,
    metricsUrl: metricsListener?.url,
    upstreamUrl,
    policies,
    readiness,
    reload,
    reopenAudit: () => audit?.reopen(),
    close,
  };
}
