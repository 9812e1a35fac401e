// Checks that the store honours FROM / FROM NAMED (and suits the configured row checks), and keeps queries away from a store that does not.

import { GuardError } from '../guard-error.js';
import { EMPTY_GRAPH } from '../vocabulary.js';
import { UpstreamError, type AbortLike, type Upstream } from './create-upstream.js';

/** The configured row checks (config `rowChecks`, written by the rewrite in sparql/write-row-filter.ts). */
export type RowChecks = 'join' | 'exists';

/** The configured dataset form (config `datasetForm`, written by sparql/graph-filter-form.ts). */
export type DatasetFormSetting = 'auto' | 'clauses' | 'graph-filters';

/** What one check found out about the store. */
export type DatasetSupport =
  /**
   * `server`: the store's Server header, which names the store's faults the guard works around (refuse-for-store.ts);
   * `graphFilters`: the dataset goes in the graph-filter form (wantsGraphFilters), the store having held a GRAPH to its filter.
   */
  | { readonly kind: 'honoured'; readonly server?: string | undefined; readonly graphFilters: boolean }
  /**
   * The store answered, and its answer shows it reads outside the dataset the guard names, or it is a
   * store the configured row checks would leak on; `fix` says what the operator does about it.
   */
  | { readonly kind: 'ignored'; readonly reason: string; readonly fix: string }
  /** No verdict (store unreachable, slow, or an answer that could not be read); `error` says why. */
  | { readonly kind: 'unverified'; readonly error: GuardError };

/**
 * Dataset of the probe: the reserved graph that no policy may grant and no store holds. A store
 * that honours SPARQL 1.1 section 13.2 sees an empty default graph and no named graph; one that
 * ignores the clauses (Oxigraph with union-default-graph, for one) sees its data.
 */
const EMPTY_DATASET = `FROM <${EMPTY_GRAPH}>\nFROM NAMED <${EMPTY_GRAPH}>\n`;
const PROBE_EMPTY = `ASK\n${EMPTY_DATASET}WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }`;
/**
 * The graph-filter form's own probe, without a dataset: a GRAPH held by a sameTerm filter to the reserved graph
 * must find nothing. A store that finds data there reads past the filter the form's safety rests on.
 */
const PROBE_FILTER = `ASK WHERE { GRAPH ?g { ?s ?p ?o } FILTER(sameTerm(?g, <${EMPTY_GRAPH}>)) }`;
/** Control: the empty group pattern has one solution whatever the dataset; false means we cannot read the answer. */
const PROBE_CONTROL = `ASK\n${EMPTY_DATASET}WHERE { }`;
const ACCEPT = 'application/sparql-results+json, application/sparql-results+xml;q=0.9';
/** An ASK answer is a few hundred bytes; a store that sends more is not answering the probe. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Sends two ASK queries with the reserved empty dataset: `ASK {}` must be true (the answer
 * is readable) and an ASK for any triple must be false (the dataset clauses are honoured).
 * A store holding no data at all passes whatever it does with dataset clauses: there is
 * nothing it could leak yet, and the recheck on /healthz catches it once data arrives.
 * Where the dataset would go as graph filters (`datasetForm`, wantsGraphFilters), a third ASK
 * must be false too: a store that reads past the filter is refused when the config fixed the
 * form, and gets the clauses with "auto".
 */
export async function checkDatasetSupport(
  upstream: Upstream,
  signal: AbortLike,
  rowChecks: RowChecks = 'join',
  datasetForm: DatasetFormSetting = 'clauses',
): Promise<DatasetSupport> {
  try {
    const control = await ask(upstream, PROBE_CONTROL, signal);
    if (control.value !== true) {
      return { kind: 'unverified', error: new GuardError(502, 'upstream_failed', 'upstream gave no readable answer to the dataset check') };
    }
    // Virtuoso 7.2 drops a FILTER(EXISTS) inside an OPTIONAL (docs/design/sparql.md, "Rows and columns").
    if (rowChecks === 'exists' && saysVirtuoso(control.server)) {
      return {
        kind: 'ignored',
        reason: `the upstream store says it is Virtuoso (Server: ${control.server.slice(0, 80)}), which drops FILTER(EXISTS) inside OPTIONAL, the form of rowChecks "exists"`,
        fix: 'set rowChecks to "join"',
      };
    }
    if ((await ask(upstream, PROBE_EMPTY, signal)).value !== false) {
      return {
        kind: 'ignored',
        reason: 'the upstream store ignores FROM / FROM NAMED (an ASK over the reserved empty graph found data)',
        fix: 'make the store honour dataset clauses (no union default graph)',
      };
    }
    if (!wantsGraphFilters(datasetForm, control.server)) return { kind: 'honoured', server: control.server, graphFilters: false };
    if ((await ask(upstream, PROBE_FILTER, signal)).value === false)
      return { kind: 'honoured', server: control.server, graphFilters: true };
    if (datasetForm === 'auto') return { kind: 'honoured', server: control.server, graphFilters: false };
    return {
      kind: 'ignored',
      reason:
        'the upstream store reads past a sameTerm filter on GRAPH ?g (an ASK held to the reserved empty graph found data), the form of datasetForm "graph-filters"',
      fix: 'set datasetForm to "clauses"',
    };
  } catch (error) {
    // The store's own time-out and the check's bound are equal by default: whichever fires first,
    // the line names the check (under load the store's fired first, and the 502 named no check).
    if (error instanceof UpstreamError && error.kind === 'timeout' && !error.message.includes('dataset check')) {
      const message = error.message.replace('did not answer within', 'did not answer the dataset check within');
      return { kind: 'unverified', error: new UpstreamError('timeout', message, error.failureCause) };
    }
    if (error instanceof GuardError) return { kind: 'unverified', error };
    return { kind: 'unverified', error: new GuardError(502, 'upstream_failed', 'upstream dataset check failed') };
  }
}

/**
 * Whether a store's Server header says it is Virtuoso, the one store of the lab that names itself and
 * whose faults the guard works around (rowChecks "exists" refused here; refuse-for-store.ts; `check --why`).
 */
export function saysVirtuoso(server: string | undefined): server is string {
  return server !== undefined && /^\s*virtuoso\b/i.test(server);
}

/**
 * Whether config `datasetForm` sends the dataset as graph filters to a store with this Server header: "auto"
 * where the store says it is Virtuoso, whose plans for a FROM list of several graphs cost up to 9 x the
 * caller's view with six graphs (with graph filters at most 1.5 x), not elsewhere (on Jena the filters cost
 * up to 40 x): bench (j), docs/operations.md#a-few-graphs-what-the-list-costs-a-query.
 */
export function wantsGraphFilters(datasetForm: DatasetFormSetting, server: string | undefined): boolean {
  return datasetForm === 'graph-filters' || (datasetForm === 'auto' && saysVirtuoso(server));
}

/** Sends one ASK; true / false as answered, undefined when the answer is not a readable boolean; and the store's Server header. */
async function ask(
  upstream: Upstream,
  query: string,
  signal: AbortLike,
): Promise<{ readonly value: boolean | undefined; readonly server: string | undefined }> {
  const answer = await upstream.send({ query }, { accept: ACCEPT, signal });
  let text = '';
  for await (const chunk of answer.body) {
    text += String(chunk);
    if (text.length > MAX_ANSWER_BYTES) {
      answer.body.destroy();
      return { value: undefined, server: answer.server };
    }
  }
  if (answer.status !== 200) {
    throw new GuardError(502, 'upstream_failed', `upstream answered the dataset check with status ${answer.status}`);
  }
  // SPARQL 1.1 Query Results JSON Format section 3.3 / XML Format section 2.3.2.
  const match = /"boolean"\s*:\s*(true|false)\b|<boolean>\s*(true|false)\s*<\/boolean>/.exec(text);
  const value = match?.[1] ?? match?.[2];
  return { value: value === undefined ? undefined : value === 'true', server: answer.server };
}

/** The gate between the planner and the store. */
export interface DatasetGate {
  /**
   * Runs the first check, bounded by `checkTimeoutMs`; the verdict as found. Unless the store
   * ignores dataset clauses (the start is refused), background rechecks follow while the
   * verdict is not "honoured".
   */
  start(): Promise<DatasetSupport>;
  /**
   * Undefined when queries may go to the store now (the store honours dataset clauses: no
   * promise to wait for); otherwise a promise that resolves when they may, or rejects with
   * GuardError 503 while the store is known to ignore dataset clauses, or the check's own 502
   * while it cannot be verified; an unverified store is checked again (with the request's
   * signal) before every query.
   */
  admit(signal: AbortLike): Promise<void> | undefined;
  /** For /readyz: why no query is forwarded, or undefined; checks again when the verdict is old. */
  problem(): Promise<string | undefined>;
  /** Stops the background rechecks (a check under way ends by its own bound). */
  close(): void;
  /** The verdict in force, without checking. */
  verdict(): DatasetSupport['kind'];
  /** The store's Server header as the check in force found it (undefined before a store is verified, or when it sends none). */
  server(): string | undefined;
  /** Whether the check in force sends the dataset as graph filters (false before a store is verified). */
  graphFilters(): boolean;
}

/** Options of {@link createDatasetGate}. */
export interface DatasetGateOptions {
  /** Bound of the start-up and /healthz checks (a query's own check is bounded by timeoutMs). */
  readonly checkTimeoutMs: number;
  /** Age after which /healthz checks again, and a query starts a background recheck. */
  readonly recheckMs: number;
  /** One structured line when the verdict changes. */
  readonly log: (entry: Readonly<Record<string, unknown>>) => void;
  /**
   * First pause before a background recheck while the verdict is not "honoured"; it doubles
   * after each check that changes nothing, up to `maxRetryMs`. Default 500 ms.
   */
  readonly retryMs?: number;
  /** Longest pause between background rechecks. Default 5000 ms. */
  readonly maxRetryMs?: number;
  /** The configured row checks (config `rowChecks`); "exists" refuses a store that says it is Virtuoso. Default join. */
  readonly rowChecks?: RowChecks;
  /** The configured dataset form (config `datasetForm`); default clauses. */
  readonly datasetForm?: DatasetFormSetting;
}

/**
 * Keeps the latest verdict. Only "honoured" lets queries through (fail closed); the
 * latest definite verdict wins, so a store restarted with union-default-graph is
 * caught by the next recheck, and an unreachable store does not undo a good verdict
 * (queries to it fail with 502 anyway).
 */
export function createDatasetGate(upstream: Upstream, options: DatasetGateOptions): DatasetGate {
  const rowChecks = options.rowChecks ?? 'join';
  const datasetForm = options.datasetForm ?? 'clauses';
  let verdict: DatasetSupport = {
    kind: 'unverified',
    error: new GuardError(503, 'not_ready', 'the upstream store has not been checked yet'),
  };
  let checkedAt = 0;
  let running: Promise<DatasetSupport> | undefined;
  const firstRetryMs = options.retryMs ?? 500;
  const maxRetryMs = options.maxRetryMs ?? 5000;
  let retryMs = firstRetryMs;
  let retry: NodeJS.Timeout | undefined;
  // No background check before the first verdict is in the start's hands (a refused store stops the start).
  let closed = true;

  // While the verdict is not "honoured", check again in the background with backoff, so
  // /readyz follows the store within seconds even when no query arrives (a drained instance
  // behind a load balancer only gets probes).
  const scheduleRetry = (): void => {
    if (closed || retry !== undefined) return;
    if (verdict.kind === 'honoured') {
      retryMs = firstRetryMs;
      return;
    }
    retry = setTimeout(() => {
      retry = undefined;
      retryMs = Math.min(retryMs * 2, maxRetryMs);
      void bounded();
    }, retryMs);
    retry.unref();
  };

  const run = (signal: AbortLike): Promise<DatasetSupport> => {
    running ??= checkDatasetSupport(upstream, signal, rowChecks, datasetForm)
      .then((found) => {
        checkedAt = Date.now();
        if (found.kind !== 'unverified' || verdict.kind !== 'honoured') {
          if (found.kind !== verdict.kind || formOf(found) !== formOf(verdict)) {
            options.log({ event: 'upstream-dataset-check', verdict: found.kind, ...detail(found) });
          }
          verdict = found;
        }
        return found;
      })
      .finally(() => {
        running = undefined;
        scheduleRetry();
      });
    return running;
  };
  // The bound is an UpstreamError, so a store that never answers is reported as exactly that.
  const bounded = (): Promise<DatasetSupport> => {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new UpstreamError('timeout', `upstream did not answer the dataset check within ${options.checkTimeoutMs} ms`)),
      options.checkTimeoutMs,
    );
    return run(controller.signal).finally(() => clearTimeout(timer));
  };

  const admitWhenChecked = async (signal: AbortLike): Promise<void> => {
    if (verdict.kind === 'ignored') throw refusal(verdict.reason);
    // The check is shared by every request waiting on it, so it runs under its own bounded
    // signal: one client that goes away must not fail the others. This one stops waiting.
    const found = await abandonable(bounded(), signal);
    if (found.kind === 'ignored') throw refusal(found.reason);
    if (found.kind === 'unverified') throw found.error;
  };

  return {
    async start() {
      const found = await bounded();
      // A store refused at start stops the guard; otherwise the background checks begin.
      if (found.kind !== 'ignored') {
        closed = false;
        scheduleRetry();
      }
      return found;
    },
    admit(signal) {
      if (verdict.kind === 'honoured') {
        if (Date.now() - checkedAt >= options.recheckMs && running === undefined) void bounded();
        return undefined;
      }
      return admitWhenChecked(signal);
    },
    verdict: () => verdict.kind,
    server: () => (verdict.kind === 'honoured' ? verdict.server : undefined),
    graphFilters: () => verdict.kind === 'honoured' && verdict.graphFilters,

    async problem() {
      // A check already under way may have started before the store changed: wait, then judge its age.
      if (running !== undefined) await running;
      if (Date.now() - checkedAt >= options.recheckMs) await bounded();
      if (verdict.kind === 'honoured') return undefined;
      return verdict.kind === 'ignored' ? verdict.reason : `upstream not verified: ${verdict.error.message}`;
    },
    close() {
      closed = true;
      clearTimeout(retry);
      retry = undefined;
    },
  };
}

/** `promise`, or a 502 as soon as `signal` aborts (the work behind the promise goes on). */
function abandonable<T>(promise: Promise<T>, signal: AbortLike): Promise<T> {
  const gone = () => new UpstreamError('aborted', 'the client went away during the dataset check');
  if (signal.aborted) return Promise.reject(gone());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(gone());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function refusal(reason: string): GuardError {
  return new GuardError(503, 'store_ignores_from', `${reason}: no query is forwarded to it`);
}

function detail(found: DatasetSupport): Record<string, string> {
  if (found.kind === 'ignored') return { reason: found.reason };
  if (found.kind === 'unverified') return { reason: found.error.message };
  return { datasetForm: formOf(found) ?? 'clauses' };
}

/** The dataset form a verdict sends queries in; undefined when it sends none. */
function formOf(found: DatasetSupport): 'clauses' | 'graph-filters' | undefined {
  if (found.kind !== 'honoured') return undefined;
  return found.graphFilters ? 'graph-filters' : 'clauses';
}
