// Builds the fastify application: routes, the query pipeline, CORS, errors and the request log.

import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Caller } from '../auth/caller.js';
import type { CallerOrPromise, RequestHeaders } from '../auth/identify-caller.js';
import { GuardError } from '../guard-error.js';
import { headerValue } from '../header-value.js';
import { composeCacheControl, PRIVATE_NO_STORE } from '../http/cache-control.js';
import { chooseAccept } from '../http/choose-accept.js';
import { chooseEndpointView, type EndpointView } from '../http/choose-endpoint-view.js';
import { createCorsHeaders } from '../http/cors.js';
import { describeService } from '../http/describe-service.js';
import { serveQueryPage } from '../http/serve-query-page.js';
import type { QueryRequest } from '../sparql/query-request.js';
import { readQueryRequest } from '../http/read-query-request.js';
import { renderError } from '../http/render-error.js';
import { translateHttpError } from '../http/translate-http-error.js';
import type { GuardMetrics, QueryOutcome } from '../metrics/create-metrics.js';
import type { Grant } from '../policy/grant.js';
import type { Plan } from '../sparql/plan.js';
import { UpstreamError, type Upstream } from '../upstream/create-upstream.js';
import { queryOutcomeOf } from './query-outcome-of.js';
import { createConcurrencyLimiter } from './create-concurrency-limiter.js';

/** Request body limit of SPEC "Limits": larger bodies get 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Bounds on what a client controls (GuardConfig `http`, and `timeoutMs` for a slow reader). */
export interface ClientLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  /** Longest time a streamed answer may wait for the client to read more. */
  readonly sendIdleMs: number;
}

/** Limits of a guard configured with defaults (GuardConfig `http`, `timeoutMs`). */
export const DEFAULT_CLIENT_LIMITS: ClientLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 10_000,
  maxConnections: 400,
  sendIdleMs: 60_000,
};

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
}

/**
 * How a request ended, in its log line: answered to the end; the client went away first; the
 * store cut the answer; a time bound ran out (the client's or the store's); the shutdown's
 * grace ran out.
 */
export type RequestOutcome = 'completed' | 'client-closed' | 'upstream-cut' | 'timeout' | 'shutdown-cut';

/** The pipeline steps and services the routes call, one per concept. */
export interface GuardServices {
  /**
   * Headers -> Caller (a promise when a JWT is verified), or GuardError 401 (503 when the
   * issuer's keys cannot be fetched). It is given the `credentialHeaders` only, every copy of each.
   */
  readonly identifyCaller: (headers: RequestHeaders) => CallerOrPromise;
  /** Lower-case names of the headers that carry credentials (for Vary, and all identifyCaller reads). */
  readonly credentialHeaders: readonly string[];
  /** Caller -> Grant under the policy set in force, or GuardError 401/403/503. */
  readonly grant: (caller: Caller) => Grant;
  /** (QueryRequest, Grant) -> Plan, or GuardError 400/403. */
  readonly plan: (request: QueryRequest, grant: Grant) => Plan;
  readonly upstream: Upstream;
  /** Undefined once the policies are loaded; otherwise why /healthz (liveness) answers 503. */
  readonly notReadyReason: () => string | undefined;
  /** True once the shutdown began: /readyz answers 503 while queries are still served. Absent: never. */
  readonly draining?: () => boolean;
  /**
   * Resolves when queries may go to the store, else throws GuardError (issue 5: a store that
   * ignores FROM / FROM NAMED gets no query). Absent: every query may go.
   */
  readonly admitQuery?: (signal: AbortSignal) => Promise<void>;
  /** For /readyz: why the store gets no queries, or undefined; may check the store again. */
  readonly upstreamProblem?: () => Promise<string | undefined>;
  /** Writes one structured log line. */
  readonly log: (entry: Readonly<Record<string, unknown>>) => void;
  /** Records requests and queries for Prometheus; absent when metrics are off. */
  readonly metrics?: GuardMetrics;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Agent IRI once identified, for the request log. */
    agent: string | undefined;
    /** Why the request ended early, when the guard knows better than "the client went away". */
    outcome: RequestOutcome | undefined;
    /** The one-line message of a 5xx the guard answered or a cut it made, for the request log. */
    failure: string | undefined;
    /** How a request on the query path ended, for the metrics. */
    queryOutcome: QueryOutcome | undefined;
    /** Ends this request's count of its agent's queries in flight (guard:maxConcurrent), if counted. */
    leaveConcurrency: (() => void) | undefined;
  }
  interface FastifyInstance {
    /** Cuts every connection, logging the requests still under way as `shutdown-cut`. */
    cutAllConnections(): void;
  }
}

/** Connections open beyond `maxConnections` that are still accepted, to be answered 503 and closed. */
const REFUSAL_ROOM = 64;

const ALLOW_QUERY = 'GET, POST, OPTIONS';

/** Creates the application (not listening); `listen` is the caller's business. */
export function createApp(options: AppOptions, services: GuardServices): FastifyInstance {
  const limits = options.limits ?? DEFAULT_CLIENT_LIMITS;
  /** The request under way on each connection, and how a connection ended when the guard ended it. */
  const current = new WeakMap<Socket, FastifyRequest>();
  const answers = new WeakMap<FastifyRequest, FastifyReply>();
  const endedBy = new WeakMap<Socket, { outcome: RequestOutcome; status: number; failure: string }>();
  let cutting = false;

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
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => {
      // Errors of node's HTTP parser and its time bounds (SPEC "Errors": one line of text/plain).
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, message] = clientErrorAnswer(error.code, limits);
      endConnection(socket, status === 408 ? 'timeout' : 'completed', status, message);
    },
  });

  /**
   * Ends a connection the guard gives up on: answers `status` with `message` as one line when
   * no answer has started on it, then destroys it. The request under way is logged with
   * `outcome` by its close listener; a connection without one gets its own line here.
   */
  const endConnection = (socket: Socket, outcome: RequestOutcome, status: number, message: string): void => {
    const request = current.get(socket);
    const response = request === undefined ? undefined : answers.get(request)?.raw;
    const answerStarted = response?.headersSent === true;
    if (socket.writable && !answerStarted) socket.write(rawErrorResponse(status, message));
    if (request === undefined) {
      services.log({ method: null, path: null, agent: null, status, outcome, bytes: socket.bytesWritten, error: message });
    } else {
      endedBy.set(socket, { outcome, status: answerStarted ? response!.statusCode : status, failure: message });
    }
    socket.destroy();
  };

  // A connection silent for longer than its bound: a slow body, a client that stopped reading.
  app.server.on('timeout', (socket: Socket) => {
    const request = current.get(socket);
    if (request === undefined) return void socket.destroy(); // idle between requests
    endConnection(socket, 'timeout', 408, `the connection was silent for more than ${socket.timeout ?? limits.idleTimeoutMs} ms`);
  });

  // Connections past maxConnections get one 503 and are closed; past REFUSAL_ROOM more, node drops them.
  let openConnections = 0;
  const overLimit = new WeakSet<Socket>();
  app.server.maxConnections = limits.maxConnections + REFUSAL_ROOM;
  app.server.on('connection', (socket: Socket) => {
    openConnections += 1;
    if (openConnections > limits.maxConnections) overLimit.add(socket);
    socket.once('close', () => (openConnections -= 1));
  });

  app.decorate('cutAllConnections', () => {
    cutting = true;
    app.server.closeAllConnections();
  });
  const cors = createCorsHeaders({
    ...options.cors,
    trustedHeaders: services.credentialHeaders.filter((name) => name !== 'authorization' && name !== 'x-api-key'),
  });
  const vary = ['Origin', 'Accept', ...services.credentialHeaders].join(', ');
  const credentialHeaders = new Set(services.credentialHeaders);
  const explainPath = `${options.path}/explain`;
  const concurrency = createConcurrencyLimiter();
  const allowByPath = new Map<string, string>([
    [options.path, ALLOW_QUERY],
    ['/healthz', 'GET'],
    ['/readyz', 'GET'],
  ]);
  if (options.explain) allowByPath.set(explainPath, ALLOW_QUERY);

  app.decorateRequest('agent', undefined);
  app.decorateRequest('outcome', undefined);
  app.decorateRequest('failure', undefined);
  app.decorateRequest('queryOutcome', undefined);

  const metrics = services.metrics;
  if (metrics !== undefined) {
    // 'close' fires however the response ends (sent whole, cut, or the client gone), where
    // onResponse only sees the finished ones, so the in-flight gauge always comes back down.
    app.addHook('onRequest', (request, reply, done) => {
      metrics.requestStarted();
      reply.raw.once('close', () => {
        metrics.requestEnded(request.method, request.routeOptions.url ?? '', reply.statusCode, reply.elapsedTime / 1000);
        if (request.queryOutcome !== undefined) metrics.queryEnded(request.queryOutcome);
      });
      done();
    });
  }
  app.decorateRequest('leaveConcurrency', undefined);

  // Every body reaches readQueryRequest as raw bytes, so that it, not fastify, decides
  // between 403 (update), 415 and 400, in the order DESIGN section 5 requires.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  // Hooks in callback style: an async hook costs a promise per request and hook.
  // Every request gets exactly one log line, written when its response closes, however it ended.
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket;
    const bytesBefore = socket.bytesWritten;
    const started = performance.now();
    current.set(socket, request);
    answers.set(request, reply);
    reply.raw.once('close', () => {
      request.leaveConcurrency?.();
      if (current.get(socket) === request) current.delete(socket);
      const ended = endedBy.get(socket);
      const finished = reply.raw.writableFinished;
      const outcome: RequestOutcome = finished
        ? 'completed'
        : cutting
          ? 'shutdown-cut'
          : (ended?.outcome ?? request.outcome ?? 'client-closed');
      const failure = ended?.failure ?? request.failure;
      services.log({
        method: request.method,
        path: pathOf(request.url),
        agent: request.agent ?? null,
        status: finished || ended === undefined ? reply.statusCode : ended.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        outcome,
        bytes: socket.bytesWritten - bytesBefore,
        ...(failure !== undefined && { error: failure }),
      });
      // The next request on this keep-alive connection starts with the idle bound again.
      if (!socket.destroyed) socket.setTimeout(limits.idleTimeoutMs);
    });
    if (overLimit.has(socket)) {
      reply.header('connection', 'close');
      void renderError(reply, new GuardError(503, `too many open connections (limit ${limits.maxConnections}): try again later`));
      return;
    }
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    // Once the shutdown began, every answer closes its connection, so clients reconnect elsewhere.
    if (services.draining?.() === true) reply.header('connection', 'close');
    reply.headers(cors.response(headerValue(request.headers.origin)));
    reply.header('vary', vary);
    // Answers from the store got composeCacheControl already; every other answer is the guard's.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', PRIVATE_NO_STORE);
    done(null, payload);
  });

  /** Identifies the caller (GuardError 401 for bad credentials) and records its agent for the log. */
  const identify = async (request: FastifyRequest): Promise<Caller> => {
    const caller = await services.identifyCaller(credentialHeadersOf(request.raw.rawHeaders, credentialHeaders));
    request.agent = caller.agent;
    return caller;
  };
  /** The agent of valid credentials, or undefined: for the log of a request refused before identification. */
  const identifyQuietly = async (request: FastifyRequest): Promise<string | undefined> => {
    try {
      return (await services.identifyCaller(credentialHeadersOf(request.raw.rawHeaders, credentialHeaders))).agent;
    } catch {
      return undefined;
    }
  };

  /** The pipeline up to the plan: read -> identify -> grant -> plan (STYLE habit 1). */
  const planRequest = async (request: FastifyRequest): Promise<{ caller: Caller; grant: Grant; plan: Plan }> => {
    let queryRequest: QueryRequest;
    try {
      queryRequest = readQueryRequest(rawQueryRequest(request));
    } catch (error) {
      // The refusal stands as it is; the log still names a caller whose credentials are valid.
      request.agent = await identifyQuietly(request);
      throw error;
    }
    const caller = await identify(request);
    const grant = services.grant(caller);
    const plan = services.plan(queryRequest, grant);
    return { caller, grant, plan };
  };

  // GET {path} with no query string is the endpoint itself (SPARQL 1.1 Service Description,
  // section 2): the page for a browser, the description for a client that names RDF.
  const queryPage = options.ui ? serveQueryPage(app, options.path) : undefined;
  const endpointViews: readonly EndpointView[] = ['text/turtle', 'application/n-triples', 'application/ld+json', ...(options.ui ? ['text/html' as const] : [])];
  const endpointViewOf = (request: FastifyRequest): EndpointView | undefined =>
    request.method === 'GET' && request.url === options.path
      ? chooseEndpointView(headerValue(request.headers.accept), endpointViews)
      : undefined;

  /** The service description in the caller's name: identify -> grant -> describe (same 401 / 403 as a query). */
  const describe = async (request: FastifyRequest, reply: FastifyReply, view: Exclude<EndpointView, 'text/html'>) => {
    const caller = await identify(request);
    const grant = services.grant(caller);
    // Turtle and JSON-LD name the endpoint by the document's own URL (right behind any proxy);
    // N-Triples has no relative IRIs, so it is built from the Host header.
    const endpoint = view === 'application/n-triples' ? absoluteEndpoint(request, options.path) : '';
    const graphs = [...grant.graphs].sort();
    reply.header('content-type', `${view}; charset=utf-8`);
    return describeService({ endpoint, agent: caller.agent, groups: caller.groups, graphs }, view);
  };

  const query = async (request: FastifyRequest, reply: FastifyReply) => {
    const view = endpointViewOf(request);
    if (view === 'text/html' && queryPage !== undefined) return queryPage(reply);
    if (view !== undefined && view !== 'text/html') return describe(request, reply, view);
    const { caller, grant, plan } = await planRequest(request);
    // The caller's limits (docs/design.md, "Limits per caller"). Its count ends where every
    // request's end is logged (the close listener of onRequest), however the request ended.
    const leave = concurrency.enter(caller.agent, grant.limits?.maxConcurrent);
    if (reply.raw.closed) leave();
    else request.leaveConcurrency = leave;
    return forward(plan, request, reply, services, limits.sendIdleMs, grant.limits?.timeoutMs);
  };

  const explain = async (request: FastifyRequest, reply: FastifyReply) => {
    const { caller, grant, plan } = await planRequest(request);
    reply.header('content-type', 'application/json; charset=utf-8');
    return {
      agent: caller.agent,
      groups: caller.groups,
      policies: grant.policies.map((iri) => `<${iri}>`),
      query: plan.query,
      form: plan.form,
    };
  };

  const preflight = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.code(204).headers(cors.preflight(headerValue(request.headers.origin)));
    reply.header('allow', ALLOW_QUERY);
    return reply.send();
  };

  app.route({ method: ['GET', 'POST'], url: options.path, handler: query });
  app.route({ method: 'OPTIONS', url: options.path, handler: preflight });
  if (options.explain) {
    app.route({ method: ['GET', 'POST'], url: explainPath, handler: explain });
    app.route({ method: 'OPTIONS', url: explainPath, handler: preflight });
  }
  if (options.ui) {
    allowByPath.set('/', 'GET');
    app.get('/', async (_request, reply) => reply.redirect(options.path, 302));
  }
  // Liveness (SPEC "GET /healthz"): the process itself, never the store, so that a store
  // outage does not make an orchestrator restart every guard.
  app.get('/healthz', async (_request, reply) => probeAnswer(reply, services.notReadyReason()));
  // Readiness: whether this instance should get traffic now (docs/design.md, "Probes").
  app.get('/readyz', async (_request, reply) => {
    const reason =
      services.notReadyReason() ??
      (services.draining?.() === true ? 'draining: the guard is shutting down' : undefined) ??
      (await services.upstreamProblem?.());
    return probeAnswer(reply, reason);
  });

  // fastify answers an unrouted method with 404 by itself; SPEC wants 405 on known paths.
  app.setNotFoundHandler(async (request, reply) => {
    const allow = allowByPath.get(pathOf(request.url));
    const error =
      allow === undefined
        ? new GuardError(404, 'not found')
        : new GuardError(405, `method ${request.method} is not allowed here`, { allow });
    return renderError(reply, error);
  });

  app.setErrorHandler(async (error, request, reply) => {
    const guardError = error instanceof GuardError ? error : translateHttpError(error);
    // A query, not the service description or the page served at the same path.
    if (request.routeOptions.url === options.path && endpointViewOf(request) === undefined) {
      request.queryOutcome = guardError === undefined ? 'internal_error' : queryOutcomeOf(guardError);
    }
    if (guardError === undefined) {
      // A bug of ours: log what kind of failure it was, never request data.
      services.log({ event: 'internal-error', path: pathOf(request.url), error: errorKind(error) });
      return renderError(reply, new GuardError(500, 'internal error'));
    }
    if (guardError.status >= 500) request.failure = guardError.message;
    return renderError(reply, guardError);
  });

  return app;
}

/** Sends the plan upstream and streams the store's answer back (SPEC response items 1-3). */
async function forward(
  plan: Plan,
  request: FastifyRequest,
  reply: FastifyReply,
  services: GuardServices,
  sendIdleMs: number,
  timeoutMs: number | undefined,
) {
  const abort = new AbortController();
  const socket = request.raw.socket;
  // The store's time is bounded by timeoutMs upstream; the client's connection may be silent meanwhile.
  socket.setTimeout(0);
  // A client that goes away aborts the upstream request (DESIGN section 6).
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const accept = chooseAccept(headerValue(request.headers.accept), plan.defaultAccept);
  await services.admitQuery?.(abort.signal);
  const metrics = services.metrics;
  metrics?.guardTime(reply.elapsedTime / 1000);
  const sent = metrics === undefined ? 0 : performance.now();
  const answer = await services.upstream.send(plan.query, accept, abort.signal, timeoutMs);
  metrics?.upstreamTime((performance.now() - sent) / 1000);
  request.queryOutcome = 'answered';
  // From here the client must keep reading: a reader silent for sendIdleMs is cut.
  if (!socket.destroyed) socket.setTimeout(sendIdleMs);
  reply.code(answer.status);
  reply.header('cache-control', composeCacheControl(answer.cacheControl));
  if (answer.contentType !== undefined) {
    reply.header('content-type', answer.contentType);
    // A small answer that arrived whole goes out with its headers in one write, not as a
    // one-chunk stream (a write for headers and chunk, another for the last chunk).
    // Without a Content-Type it streams: fastify would label a Buffer application/octet-stream.
    const whole = answer.takeWhole();
    if (whole !== undefined) return reply.send(whole);
  }
  answer.body.once('error', (error) => {
    if (abort.signal.aborted) return;
    const kind = error instanceof UpstreamError ? error.kind : 'failed';
    request.outcome = kind === 'timeout' ? 'timeout' : kind === 'aborted' ? 'client-closed' : 'upstream-cut';
    request.failure = errorKind(error);
  });
  // The store's length passes on, so a fixed-size answer is not re-framed as chunks; the body
  // is passed on byte for byte (the guard asks for no Content-Encoding and changes nothing).
  if (answer.contentLength !== undefined) reply.header('content-length', String(answer.contentLength));
  return reply.send(answer.body);
}

/** Status and one-line message for an error of node's HTTP parser or its time bounds, by code. */
function clientErrorAnswer(code: string | undefined, limits: ClientLimits): [number, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, `the request did not arrive within ${limits.requestTimeoutMs} ms`];
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'request header section too large'];
  if (code === 'HPE_UNEXPECTED_CONTENT_LENGTH' || code === 'HPE_INVALID_CONTENT_LENGTH') {
    return [400, 'malformed HTTP request: invalid or repeated Content-Length'];
  }
  return [400, 'malformed HTTP request'];
}

/** A complete error response written straight to a socket (no response object exists for it). */
function rawErrorResponse(status: number, message: string): string {
  const body = `${message}\n`;
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    `content-type: text/plain; charset=utf-8\r\ncache-control: ${PRIVATE_NO_STORE}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/** A probe's answer: 200 `ok`, or 503 with the reason as one line. */
function probeAnswer(reply: FastifyReply, reason: string | undefined): FastifyReply {
  reply.header('content-type', 'text/plain; charset=utf-8');
  return reason === undefined ? reply.send('ok\n') : reply.code(503).send(`${reason}\n`);
}

/**
 * The credential headers of a request with every copy of each, as node's headersDistinct
 * gives them (request.headers keeps only the first Authorization, and two credentials under
 * one name are ambiguous), without building arrays for every other header as it does.
 */
function credentialHeadersOf(rawHeaders: readonly string[], names: ReadonlySet<string>): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!names.has(name)) continue;
    const values = found[name];
    if (values === undefined) found[name] = [rawHeaders[i + 1]!];
    else values.push(rawHeaders[i + 1]!);
  }
  return found;
}

function rawQueryRequest(request: FastifyRequest) {
  const queryStart = request.url.indexOf('?');
  return {
    method: request.method === 'POST' ? ('POST' as const) : ('GET' as const),
    search: queryStart < 0 ? '' : request.url.slice(queryStart + 1),
    contentType: headerValue(request.headers['content-type']),
    body: Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : undefined,
  };
}

/** `http://{Host}{path}`; a Host that is not a host name (and port) is refused rather than echoed. */
function absoluteEndpoint(request: FastifyRequest, path: string): string {
  const host = headerValue(request.headers.host) ?? '';
  if (!/^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(host)) {
    throw new GuardError(400, 'the Host header is not a host name: ask for text/turtle or application/ld+json instead');
  }
  return `${request.protocol}://${host}${path}`;
}

function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart < 0 ? url : url.slice(0, queryStart);
}

function errorKind(error: unknown): string {
  // A GuardError's message is one line without request data; other errors only by kind.
  if (error instanceof GuardError) return error.message;
  if (error instanceof Error) return (error as { code?: string }).code ?? error.name;
  return typeof error;
}
