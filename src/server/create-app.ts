// Assembles the fastify application: the connection tracker, CORS, the query route, probes, 404 / 405 and the one error handler.

import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { DEFAULT_CONFIG } from '../config/read-config.js';
import { errorKind, GuardError, StoreError } from '../guard-error.js';
import { PRIVATE_NO_STORE } from '../http/cache-control.js';
import { chooseEndpointView } from '../http/choose-endpoint-view.js';
import { createCorsHeaders } from '../http/cors.js';
import { headerValue } from '../header-value.js';
import { escapeMalformedPath, pathOf } from '../http/path-of.js';
import { ALLOW_QUERY, createQueryRoute, type QueryServices } from '../http/query-route.js';
import { decorateRequestState, upstreamFailureOf } from '../http/request-state.js';
import { serveQueryPage } from '../http/serve-query-page.js';
import { renderError } from '../http/render-error.js';
import { translateHttpError } from '../http/translate-http-error.js';
import type { AuditLog } from './create-audit-log.js';
import { createConcurrencyLimiter } from './create-concurrency-limiter.js';
import { createConnectionTracker, type ClientLimits } from './create-connection-tracker.js';

export type { RequestOutcome } from '../http/request-state.js';
export type { ClientLimits } from './create-connection-tracker.js';

/** Request body limit: larger bodies get 413 (README, "Errors"). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Limits of a guard configured with defaults (the configuration's `http` and `timeoutMs`). */
export const DEFAULT_CLIENT_LIMITS: ClientLimits = { ...DEFAULT_CONFIG.http, sendIdleMs: DEFAULT_CONFIG.timeoutMs };

/** The settings of the HTTP surface (a subset of GuardConfig). */
export interface AppOptions {
  readonly path: string;
  readonly explain: boolean;
  /** Config `cors`: allowed origins (undefined = any) and whether credentials are allowed. */
  readonly cors: { readonly origins: readonly string[] | undefined; readonly credentials: boolean };
  /** Config `ui`: serve the query page at GET {path} to browsers, and redirect / there. */
  readonly ui: boolean;
  /** Default DEFAULT_CLIENT_LIMITS. */
  readonly limits?: ClientLimits;
  /** Config `trustRequestId`: keep a front proxy's X-Request-Id (default false: every request gets its own). */
  readonly trustRequestId?: boolean;
}

/** The pipeline steps and services the app calls: the query route's, the probes' and the log. */
export interface GuardServices extends QueryServices {
  /** Undefined once the policies are loaded; otherwise why /healthz (liveness) answers 503. */
  readonly notReadyReason: () => string | undefined;
  /**
   * For /readyz (not /healthz): why the policy set in force may not be used, or undefined: none
   * loaded yet, or facts older than a source's maxStaleMs. Absent: notReadyReason alone.
   */
  readonly policiesProblem?: () => string | undefined;
  /** True once the shutdown began: /readyz answers 503 while queries are still served. Absent: never. */
  readonly draining?: () => boolean;
  /** For /readyz: why the store gets no queries, or undefined; may check the store again. */
  readonly upstreamProblem?: () => Promise<string | undefined>;
  /** Writes one structured log line. */
  readonly log: (entry: Readonly<Record<string, unknown>>) => void;
  /** Writes the audit record of each request on the query and explain paths; absent when audit records are off. */
  readonly audit?: Pick<AuditLog, 'record'>;
}

/** Creates the application (not listening); `listen` is the caller's business. */
export function createApp(options: AppOptions, services: GuardServices): FastifyInstance {
  const limits = options.limits ?? DEFAULT_CLIENT_LIMITS;
  const connections = createConnectionTracker(limits, services.log, services.audit, services.metrics);

  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    exposeHeadRoutes: false,
    // During the shutdown, requests on connections still open are answered (with
    // `Connection: close`), not refused with fastify's JSON 503.
    return503OnClosing: false,
    // Socket silence while a request arrives and between keep-alive requests; the forwarding
    // lifts it while the store works and sets `sendIdleMs` while the answer streams.
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // node checks headersTimeout and requestTimeout every connectionsCheckingInterval (30 s by default).
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) },
    clientErrorHandler: connections.clientError,
    // A path whose percent-encoding cannot be decoded reaches the not-found handler (a 400 there),
    // not the router's own JSON answer, which no hook, log line or error code sees.
    rewriteUrl: (request) => escapeMalformedPath(request.url ?? '/'),
  });

  const cors = createCorsHeaders({
    ...options.cors,
    trustedHeaders: services.credentialHeaders.filter((name) => name !== 'authorization' && name !== 'x-api-key'),
  });
  const vary = ['Origin', 'Accept', ...services.credentialHeaders].join(', ');
  const explainPath = `${options.path}/explain`;
  const concurrency = createConcurrencyLimiter();
  const allowByPath = new Map<string, string>([
    [options.path, ALLOW_QUERY],
    ['/healthz', 'GET'],
    ['/readyz', 'GET'],
  ]);
  if (options.explain) allowByPath.set(explainPath, ALLOW_QUERY);

  decorateRequestState(app, options.trustRequestId);
  // A request on the query or explain path has an audit record however it ends, also when it
  // ends before its handler runs (a body over the limit: 413; a body too slow: 408; a
  // connection past maxConnections: 503). The handler refines it (the service description) or,
  // for the query page, clears it. GET {path} without a query string waits for the handler.
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (request.method === 'GET' || request.method === 'POST') {
      if (route === explainPath && options.explain) request.operation = 'explain';
      else if (route === options.path && !(request.method === 'GET' && request.url === options.path)) request.operation = 'query';
    }
    done();
  });

  // Every body reaches readQueryRequest as raw bytes, so that it, not fastify, decides
  // between 403 (update), 415 and 400, in the order docs/design/http.md gives.
  app.removeAllContentTypeParsers();
  const rawBody = (_request: unknown, body: Buffer, done: (error: null, body: Buffer) => void) => done(null, body);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, rawBody);
  // The same parser under the query bodies' own types: fastify remembers the parser of a
  // Content-Type it found by name, where the catch-all makes it parse the header on every request.
  app.addContentTypeParser(['application/x-www-form-urlencoded', 'application/sparql-query'], { parseAs: 'buffer' }, rawBody);

  // Every request gets exactly one log line, written when its response closes, however it ended.
  connections.attach(app);

  app.addHook('onSend', (request, reply, payload, done) => {
    // Once the shutdown began, every answer closes its connection, so clients reconnect elsewhere.
    if (services.draining?.() === true) reply.header('connection', 'close');
    reply.headers(cors.response(headerValue(request.headers.origin)));
    reply.header('vary', vary);
    // Answers from the store got composeCacheControl already; every other answer is the guard's.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', PRIVATE_NO_STORE);
    // An answer opened in a browser is a document of the origin that keeps the query page's key:
    // read as its own type only, and, but the page, with no script, no frame and no fetch of its
    // own (a store that answers text/html, as Virtuoso does to a browser, renders inert).
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', ANSWER_CSP);
    done(null, payload);
  });

  const route = createQueryRoute(
    {
      path: options.path,
      queryPage: options.ui ? serveQueryPage(app, options.path) : undefined,
      cors,
      sendIdleMs: limits.sendIdleMs,
      explain: options.explain,
      enterConcurrency: (agent, max) => concurrency.enter(agent, max),
    },
    services,
  );
  const { query, explain, preflight } = route;

  app.route({ method: ['GET', 'POST'], url: options.path, handler: query });
  app.route({ method: 'OPTIONS', url: options.path, handler: preflight });
  if (options.explain) {
    app.route({ method: ['GET', 'POST'], url: explainPath, handler: explain });
    app.route({ method: 'OPTIONS', url: explainPath, handler: preflight });
  }
  if (options.ui) {
    // A browser that names HTML is sent to the query page; to every other client `/` is the
    // unknown path the contract says it is (404).
    allowByPath.set('/', 'GET');
    app.get('/', async (request, reply) =>
      chooseEndpointView(headerValue(request.headers.accept), ['text/html']) === 'text/html'
        ? reply.redirect(options.path, 302)
        : renderError(reply, new GuardError(404, 'not_found', 'not found')),
    );
  }
  // Liveness: the process itself, never the store, so that a store
  // outage does not make an orchestrator restart every guard.
  app.get('/healthz', async (_request, reply) => probeAnswer(reply, services.notReadyReason()));
  // Readiness: whether this instance should get traffic now (docs/design/server.md, "Probes").
  app.get('/readyz', async (_request, reply) => {
    const reason =
      services.policiesProblem?.() ??
      services.notReadyReason() ??
      (services.draining?.() === true ? 'draining: the guard is shutting down' : undefined) ??
      (await services.upstreamProblem?.());
    return probeAnswer(reply, reason);
  });

  // fastify answers an unrouted method with 404 by itself; a known path answers 405 with Allow (docs/design/http.md).
  app.setNotFoundHandler(async (request, reply) => {
    // Only escapeMalformedPath changes a URL.
    if (request.originalUrl !== request.url) {
      return renderError(reply, new GuardError(400, 'bad_request', 'malformed URL: its path is not valid percent-encoding'));
    }
    const allow = allowByPath.get(pathOf(request.url));
    const error =
      allow === undefined
        ? new GuardError(404, 'not_found', 'not found')
        : new GuardError(405, 'method_not_allowed', `method ${request.method} is not allowed here`, { allow });
    return renderError(reply, error);
  });

  app.setErrorHandler(async (error, request, reply) => {
    const guardError = error instanceof GuardError ? error : translateHttpError(error);
    // A query, not the service description or the page served at the same path.
    if (route.isQuery(request)) {
      request.queryOutcome = guardError?.code ?? 'internal_error';
    }
    if (guardError === undefined) {
      // A bug of ours: log what kind of failure it was, never request data.
      services.log({ event: 'internal-error', path: pathOf(request.url), error: errorKind(error) });
      return renderError(reply, new GuardError(500, 'internal_error', 'internal error'));
    }
    // A store's text (with explain on, in the caller's line) stays out of the request log: it quotes the query.
    if (guardError.status >= 500) request.failure = guardError instanceof StoreError ? guardError.logged : guardError.message;
    // Which store failed and how, for the operator; the caller's line names only the kind.
    request.upstreamFailure = upstreamFailureOf(guardError, services.upstream.store);
    return renderError(reply, guardError);
  });

  return app;
}

/** The Content-Security-Policy of every answer but the query page's own. */
const ANSWER_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox";

/** A probe's answer: 200 `ok`, or 503 with the reason as one line. */
function probeAnswer(reply: FastifyReply, reason: string | undefined): FastifyReply {
  reply.header('content-type', 'text/plain; charset=utf-8');
  // The contract's body is `ok`, to the byte; a reason is a one-line message like every error.
  return reason === undefined ? reply.send('ok') : reply.code(503).send(`${reason}\n`);
}
