// What the guard records on each request beside fastify's own: its agent and how it ended, for the request log and the metrics.

import type { FastifyInstance } from 'fastify';
import type { ErrorCode } from '../guard-error.js';
import type { QueryOutcome } from '../metrics/create-metrics.js';

/**
 * How a request ended, in its log line: answered to the end; the client went away first; the
 * store cut the answer; a time bound ran out (the client's or the store's); the shutdown's
 * grace ran out.
 */
export type RequestOutcome = 'completed' | 'client-closed' | 'upstream-cut' | 'timeout' | 'shutdown-cut';

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
    /** How a request on the query path ended, for the metrics. */
    queryOutcome: QueryOutcome | undefined;
    /** performance.now() when the request arrived: the one start of its log line, metrics and audit record. */
    startedAt: number;
  }
}

/** Declares the fields above on every request of `app` (fastify wants them declared once, up front). */
export function decorateRequestState(app: FastifyInstance): void {
  app.decorateRequest('agent', undefined);
  app.decorateRequest('outcome', undefined);
  app.decorateRequest('failure', undefined);
  app.decorateRequest('errorCode', undefined);
  app.decorateRequest('queryOutcome', undefined);
  app.decorateRequest('startedAt', 0);
  // The first hook: every later one measures from here. fastify's reply.elapsedTime is not
  // used: it is 0 unless the app has a logger or an onResponse hook.
  app.addHook('onRequest', (request, _reply, done) => {
    request.startedAt = performance.now();
    done();
  });
}

/** Seconds since `request` arrived. */
export function secondsSince(request: { readonly startedAt: number }): number {
  return (performance.now() - request.startedAt) / 1000;
}
