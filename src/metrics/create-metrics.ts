// The guard's Prometheus metrics (prom-client): what the server records per request, and what is read at scrape time.

import cluster from 'node:cluster';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ErrorCode } from '../guard-error.js';
import type { RetryReason, UpstreamFailureKind } from '../upstream/create-upstream.js';

/**
 * How a query on the query path ended: answered by the store, the code of its refusal or failure,
 * or ended before any answer was sent: the client left, or the shutdown cut it.
 */
export type QueryOutcome = 'answered' | ErrorCode | 'client_closed' | 'shutdown_cut';

/** Values read when Prometheus scrapes, from the parts that own them. */
export interface ScrapedSources {
  /** The plan cache's counters and size (zeros when the cache is off). */
  readonly planCache: () => { readonly hits: number; readonly misses: number; readonly entries: number; readonly bytes: number };
  /** Policies in the set in force (0 before the first load). */
  readonly policies: () => number;
  /** The latest verdict of the store's dataset check. */
  readonly datasetCheck: () => 'honoured' | 'ignored' | 'unverified';
  /** The fact sources' answers the set in force was built from (none without config `facts`). */
  readonly factsInForce?: () => readonly FactsInForce[];
}

/** One fact source's answer in force, for the metrics. */
export interface FactsInForce {
  readonly name: string;
  readonly triples: number;
  readonly fetchMs: number;
  /** When its query was sent (Date.now()). */
  readonly fetchedAt: number;
}

/** What the server records; every method is cheap and allocates no labels object of its own. */
export interface GuardMetrics {
  requestStarted(): void;
  /** A response ended (sent whole, or cut): its route pattern ('' when none matched) and status. */
  requestEnded(method: string, route: string, statusCode: number, seconds: number): void;
  queryEnded(outcome: QueryOutcome): void;
  /** The guard's own time before the query went to the store (read, identify, grant, plan, check). */
  guardTime(seconds: number): void;
  /** Time from sending the query to the store's response headers. */
  upstreamTime(seconds: number): void;
  upstreamFailed(kind: UpstreamFailureKind): void;
  /** A query was sent to the store a second time, on a fresh connection. */
  upstreamRetried(reason: RetryReason): void;
  /**
   * A load of the policy set ended; the loads that would put the first set in force (the start's,
   * and its retries while a fact source or a prefix listing cannot be read) are not reloads.
   * `unchanged`: a reload that succeeded and derived the table in force again, so swapped
   * nothing (counted as a success, and as unchanged).
   */
  policiesLoaded(result: 'success' | 'failure' | 'unchanged', initial: boolean): void;
  /** A read of a fact source ended (`failure`: the store, the answer or its checks). */
  factsRead(source: string, result: 'success' | 'failure'): void;
  /** Binds the values read at scrape time; called once the parts exist. */
  watch(sources: ScrapedSources): void;
  /** The text of a scrape, in the Prometheus text format. */
  scrape(): Promise<string>;
  /** Content-Type of `scrape`'s text. */
  readonly contentType: string;
}

/** Latency buckets in seconds: 1 ms to 30 s (the guard's own time sits in the lowest ones). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const VERDICTS = ['honoured', 'ignored', 'unverified'] as const;
/** Methods kept as labels; any other is `other`, so a client cannot grow the label set. */
const KNOWN_METHODS = new Set(['GET', 'POST', 'OPTIONS', 'HEAD', 'PUT', 'DELETE', 'PATCH']);

/**
 * Creates the metrics of one guard process in a registry of its own (tests run several guards
 * in one process). In a cluster worker the registry is also the one that answers the primary's
 * AggregatorRegistry, so a scrape of the primary sums every worker.
 */
export function createMetrics(version: string): GuardMetrics {
  const registry: Registry = cluster.isWorker ? (new AggregatorRegistry() as unknown as Registry) : new Registry();
  if (cluster.isWorker) AggregatorRegistry.setRegistries([registry]);
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  // Counters bumped per request are plain numbers here, handed to prom-client at scrape time:
  // a labelled inc costs a label check and a hash per call, a number costs nothing.
  const requestCounts = new Map<string, Tally<'method' | 'route' | 'status_code'>>();
  const queryCounts = new Map<string, Tally<'outcome'>>();
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status code.',
    labelNames: ['method', 'route', 'status_code'],
    registers,
    collect() {
      for (const tally of requestCounts.values()) report(this, tally);
    },
  });
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of its response, by method, route and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  new Counter({
    name: 'sparql_guard_queries_total',
    help: 'Queries on the query path by outcome: answered by the store, or the kind of refusal.',
    labelNames: ['outcome'],
    registers,
    collect() {
      for (const tally of queryCounts.values()) report(this, tally);
    },
  });
  const guardDuration = new Histogram({
    name: 'sparql_guard_guard_duration_seconds',
    help: "The guard's own time per forwarded query: reading, identification, grant, plan and the dataset gate.",
    buckets: DURATION_BUCKETS,
    registers,
  });
  const upstreamDuration = new Histogram({
    name: 'sparql_guard_upstream_duration_seconds',
    help: "Time from sending a query to the store until the store's response headers.",
    buckets: DURATION_BUCKETS,
    registers,
  });
  const upstreamFailures = new Counter({
    name: 'sparql_guard_upstream_failures_total',
    help: 'Requests to the store that failed, by kind: refused, timeout, reset, cut, failed.',
    labelNames: ['kind'],
    registers,
  });
  const upstreamRetries = new Counter({
    name: 'sparql_guard_upstream_retries_total',
    help: 'Queries sent to the store a second time, on a fresh connection, by reason: the store reset or closed the connection before any byte of its answer.',
    labelNames: ['reason'],
    registers,
  });
  // Exported at 0 from the start, so that a rate() or increase() sees the first retry.
  for (const reason of ['reset', 'closed']) upstreamRetries.inc({ reason }, 0);
  const reloads = new Counter({
    name: 'sparql_guard_policy_reloads_total',
    help: 'Policy reloads by result: success or failure (the previous set stays).',
    labelNames: ['result'],
    registers,
  });
  // Each result exported at 0 from the start, so that an increase() alert sees the first failure.
  for (const result of ['success', 'failure']) reloads.inc({ result }, 0);
  const unchangedReloads = new Counter({
    name: 'sparql_guard_policy_unchanged_reloads_total',
    help: 'Successful reloads (SIGHUP, file change, fact source schedule) that derived the table in force again and swapped nothing.',
    registers,
  });
  const lastReload = new Gauge({
    name: 'sparql_guard_policy_last_load_success_timestamp_seconds',
    help: 'Time of the last successful load of the policy set (at start or by a reload), in seconds since the Unix epoch.',
    aggregator: 'min',
    registers,
  });
  let inFlight = 0;
  new Gauge({
    name: 'sparql_guard_in_flight_requests',
    help: 'Requests being answered now.',
    registers,
    collect() {
      this.set(inFlight);
    },
  });
  new Gauge({
    name: 'sparql_guard_build_info',
    help: 'Always 1; the version of the running guard in a label.',
    labelNames: ['version'],
    aggregator: 'max',
    registers,
  }).set({ version }, 1);

  let sources: ScrapedSources | undefined;
  const planCacheSeen = { hits: 0, misses: 0 };
  // Counters read from the planner at scrape time: each scrape adds what changed since the last.
  const planHits = new Counter({
    name: 'sparql_guard_plan_cache_hits_total',
    help: 'Plan cache lookups that found a plan (or a cached refusal).',
    registers,
    collect() {
      const hits = sources?.planCache().hits ?? 0;
      this.inc(hits - planCacheSeen.hits);
      planCacheSeen.hits = hits;
    },
  });
  const planMisses = new Counter({
    name: 'sparql_guard_plan_cache_misses_total',
    help: 'Plan cache lookups that had to parse and prepare the query.',
    registers,
    collect() {
      const misses = sources?.planCache().misses ?? 0;
      this.inc(misses - planCacheSeen.misses);
      planCacheSeen.misses = misses;
    },
  });
  new Gauge({
    name: 'sparql_guard_plan_cache_entries',
    help: 'Plans (and refusals) held by the plan cache.',
    registers,
    collect() {
      this.set(sources?.planCache().entries ?? 0);
    },
  });
  new Gauge({
    name: 'sparql_guard_plan_cache_bytes',
    help: 'Estimated size of the plan cache in bytes (bounded by planCache.maxBytes).',
    registers,
    collect() {
      this.set(sources?.planCache().bytes ?? 0);
    },
  });
  new Gauge({
    name: 'sparql_guard_policies',
    help: 'Policies in the set in force (0 before the first load).',
    aggregator: 'max',
    registers,
    collect() {
      this.set(sources?.policies() ?? 0);
    },
  });
  new Gauge({
    name: 'sparql_guard_store_dataset_check',
    help: "Verdict of the store's dataset check: 1 for the verdict in force (honoured, ignored, unverified), 0 for the others.",
    labelNames: ['verdict'],
    aggregator: 'max',
    registers,
    collect() {
      const verdict = sources?.datasetCheck() ?? 'unverified';
      for (const each of VERDICTS) this.set({ verdict: each }, each === verdict ? 1 : 0);
    },
  });
  new Gauge({
    name: 'sparql_guard_fact_source_triples',
    help: 'Triples of each fact source in the set in force.',
    labelNames: ['source'],
    aggregator: 'max',
    registers,
    collect() {
      this.reset();
      for (const facts of sources?.factsInForce?.() ?? []) this.set({ source: facts.name }, facts.triples);
    },
  });
  new Gauge({
    name: 'sparql_guard_fact_source_read_seconds',
    help: "Time the store took to answer each fact source's query, for the answer in force.",
    labelNames: ['source'],
    aggregator: 'max',
    registers,
    collect() {
      this.reset();
      for (const facts of sources?.factsInForce?.() ?? []) this.set({ source: facts.name }, facts.fetchMs / 1000);
    },
  });
  new Gauge({
    name: 'sparql_guard_fact_source_age_seconds',
    help: 'Age of the facts in force of each source: time since its query was sent.',
    labelNames: ['source'],
    aggregator: 'max',
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const facts of sources?.factsInForce?.() ?? []) this.set({ source: facts.name }, (now - facts.fetchedAt) / 1000);
    },
  });
  const factReads = new Counter({
    name: 'sparql_guard_fact_source_reads_total',
    help: 'Reads of each fact source by how their load ended: success (in force, or the set in force derived again), or failure (store, answer or checks; the set in force stays); a read whose load failed for another reason counts in neither.',
    labelNames: ['source', 'result'],
    registers,
  });
  void planHits;
  void planMisses;

  // One tally (and labels object) per (method, route, status): a request allocates none.
  // Bounded: routes are the app's own patterns, methods are folded, statuses are few.
  const requestTally = (method: string, route: string, statusCode: number) => {
    const key = `${method} ${route} ${statusCode}`;
    let tally = requestCounts.get(key);
    if (tally === undefined) {
      const labels = { method: KNOWN_METHODS.has(method) ? method : 'other', route, status_code: String(statusCode) };
      tally = { labels, count: 0, reported: 0 };
      requestCounts.set(key, tally);
    }
    return tally;
  };
  const kindLabels = new Map<string, { kind: string }>();

  return {
    requestStarted: () => {
      inFlight += 1;
    },
    requestEnded(method, route, statusCode, seconds) {
      inFlight -= 1;
      const tally = requestTally(method, route === '' ? 'unmatched' : route, statusCode);
      tally.count += 1;
      durations.observe(tally.labels, seconds);
    },
    queryEnded(outcome) {
      let tally = queryCounts.get(outcome);
      if (tally === undefined) queryCounts.set(outcome, (tally = { labels: { outcome }, count: 0, reported: 0 }));
      tally.count += 1;
    },
    guardTime: (seconds) => guardDuration.observe(seconds),
    upstreamTime: (seconds) => upstreamDuration.observe(seconds),
    upstreamFailed(kind) {
      let labels = kindLabels.get(kind);
      if (labels === undefined) kindLabels.set(kind, (labels = { kind }));
      upstreamFailures.inc(labels);
    },
    upstreamRetried(reason) {
      upstreamRetries.inc({ reason });
    },
    policiesLoaded(result, initial) {
      if (!initial) reloads.inc({ result: result === 'failure' ? 'failure' : 'success' });
      if (!initial && result === 'unchanged') unchangedReloads.inc();
      if (result !== 'failure') lastReload.set(Date.now() / 1000);
    },
    factsRead(source, result) {
      factReads.inc({ source, result });
    },
    watch(next) {
      sources = next;
    },
    scrape: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

/** A counter's value for one label set, kept as numbers between scrapes. */
interface Tally<L extends string> {
  readonly labels: Record<L, string>;
  count: number;
  /** What the prom-client counter has been given so far. */
  reported: number;
}

/** Hands a tally's growth since the last scrape to its prom-client counter. */
function report<L extends string>(counter: Counter<L>, tally: Tally<L>): void {
  if (tally.count === tally.reported) return;
  counter.inc(tally.labels, tally.count - tally.reported);
  tally.reported = tally.count;
}

/**
 * In the primary of a cluster: the scrape that asks every worker for its metrics and sums
 * them (prom-client's AggregatorRegistry; each worker's registry answers it).
 */
export function createClusterScrape(): { scrape: () => Promise<string>; contentType: string } {
  const aggregator = new AggregatorRegistry();
  return { scrape: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}
