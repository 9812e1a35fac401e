// What the guard records on each request beside fastify's own: its agent and how it ended, for the request log and the metrics.

import type { FastifyInstance } from 'fastify';
import type { Caller } from '../auth/caller.js';
import type { Grant } from '../policy/policy-set.js';
import type { PolicySet } from '../policy/policy-set.js';
import type { Plan } from '../sparql/plan.js';
import type { ErrorCode } from '../guard-error.js';
import type { QueryOutcome } from '../metrics/create-metrics.js';
import { headerValue } from '../header-value.js';
import { UpstreamError, type UpstreamCause } from '../upstream/create-upstream.js';
import { readTraceContext, type TraceContext } from './read-trace-context.js';

/**
 * The response header that names a 200 the store says may lack rows: `time-limit` (stopped at
 * its time limit, an anytime answer), `row-limit` (at its row cap), `incomplete` (another
 * warning of the store's); comma-separated (docs/design/http.md).
 */
export const PARTIAL_HEADER = 'sparql-guard-partial';

/** The response header that carries the request id (and, from a trusted front proxy, the request header). */
export const REQUEST_ID_HEADER = 'x-request-id';
/** A request id the guard takes from a front proxy: 1 to 128 characters, none that needs escaping anywhere. */
const REQUEST_ID = /^[A-Za-z0-9._~:@/+=-]{1,128}$/;

/**
 * How a request ended, in its log line: answered to the end; the client went away first; the
 * store cut the answer; a time bound ran out (the client's or the store's); the shutdown's
 * grace ran out.
 */
export type RequestOutcome = 'completed' | 'client-closed' | 'upstream-cut' | 'timeout' | 'shutdown-cut';

/** A failed exchange with the store, as the request log names it. */
export interface UpstreamFailure {
  /** The store's URL without userinfo or query string. */
  readonly store: string;
  readonly cause: UpstreamCause;
}

/** The log's record of an upstream failure, or undefined for any other error (and for the caller's own abort). */
export function upstreamFailureOf(error: unknown, store: string): UpstreamFailure | undefined {
  if (!(error instanceof UpstreamError) || error.kind === 'aborted') return undefined;
  return { store, cause: error.failureCause };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Agent IRI once identified, for the request log. */
    agent: string | undefined;
    /** Why the request ended early, when the guard knows better than "the client went away". */
    outcome: RequestOutcome | undefined;
    /** The one-line message of a 5xx the guard answered or a cut it made, for the request log. */
    failure: string | undefined;
    /** The code of the error the guard answered, for the request log. */
    errorCode: ErrorCode | undefined;
    /** Which store failed and how (refused, dns, tls, reset, timeout, ...), for the request log; undefined when none did. */
    upstreamFailure: UpstreamFailure | undefined;
    /** How a request on the query path ended, for the metrics. */
    queryOutcome: QueryOutcome | undefined;
    /** performance.now() when the request arrived: the one start of its log line, metrics and audit record. */
    startedAt: number;
    /** The request's trace (the caller's continued, or a new one) and the guard's span in it. */
    trace: TraceContext;
    /** The request's id: a trusted front proxy's X-Request-Id, else the guard's span id. Sent back as X-Request-Id. */
    requestId: string;
    /** What the request asked for, once the route knows (for the audit record). */
    operation: Operation | undefined;
    /** The identified caller, its grant and the set that gave it, and the plan: what the audit record tells. */
    caller: Caller | undefined;
    grant: Grant | undefined;
    policiesInForce: PoliciesInForce | undefined;
    plan: Plan | undefined;
    /** Why the store says its answer may lack rows (PARTIAL_HEADER's value), for the request log; undefined when it says nothing. */
    partial: string | undefined;
    /** Milliseconds from sending the query to the store's response headers; undefined when nothing was sent. */
    storeMs: number | undefined;
    /**
     * performance.now() when the query was handed to the store's connection pool (the store may have run it: the audit
     * record's decision, and its store time when no response headers came); undefined when it was not.
     */
    forwardedAt: number | undefined;
  }
}

/** What a request on the query or explain path asked for (its audit record's `operation`). */
export type Operation = 'query' | 'explain' | 'service-description';

/** The policy set a request was granted under: the set itself, its digest and the generation of its facts. */
export interface PoliciesInForce {
  readonly set: PolicySet;
  /** sha256 of the compiled table (and of the prefix listing, after a `+`). */
  readonly policyDigest: string;
  /** How many loads have read the store's facts, the one of this set included (0 without fact sources). */
  readonly factsGeneration: number;
}

/**
 * Declares the fields above on every request of `app` (fastify wants them declared once, up
 * front) and fills the start, the trace and the request id in the app's first hook.
 * `trustRequestId`: take a valid X-Request-Id from the request (only behind a front proxy that
 * sets it and replaces the client's).
 */
export function decorateRequestState(app: FastifyInstance, trustRequestId = false): void {
  app.decorateRequest('agent', undefined);
  app.decorateRequest('outcome', undefined);
  app.decorateRequest('failure', undefined);
  app.decorateRequest('errorCode', undefined);
  app.decorateRequest('upstreamFailure', undefined);
  app.decorateRequest('queryOutcome', undefined);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('trace', undefined as unknown as TraceContext);
  app.decorateRequest('requestId', '');
  app.decorateRequest('operation', undefined);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('grant', undefined);
  app.decorateRequest('policiesInForce', undefined);
  app.decorateRequest('plan', undefined);
  app.decorateRequest('storeMs', undefined);
  app.decorateRequest('partial', undefined);
  app.decorateRequest('forwardedAt', undefined);
  // The first hook: every later one measures from here. fastify's reply.elapsedTime is not
  // used: it is 0 unless the app has a logger or an onResponse hook.
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = performance.now();
    const { headers } = request;
    // A header sent twice is no trace context (node joins a repeated tracestate with commas, as it
    // should, and a repeated traceparent too: a later version's extra fields would take in the second).
    const traceparent = headers.traceparent;
    const once = typeof traceparent === 'string' && (!traceparent.includes(',') || copiesOf(request.raw.rawHeaders, 'traceparent') === 1);
    request.trace = readTraceContext(once ? traceparent : undefined, headerValue(headers.tracestate));
    const offered = trustRequestId ? headers[REQUEST_ID_HEADER] : undefined;
    request.requestId = typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : request.trace.spanId;
    reply.header(REQUEST_ID_HEADER, request.requestId);
    done();
  });
}

/** How many times the header `name` (lower case) came in the raw header list. */
function copiesOf(rawHeaders: readonly string[], name: string): number {
  let copies = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) copies += 1;
  return copies;
}

/** Seconds since `request` arrived. */
export function secondsSince(request: { readonly startedAt: number }): number {
  return (performance.now() - request.startedAt) / 1000;
}
