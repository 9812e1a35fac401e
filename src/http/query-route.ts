// The query and explain routes: read -> identify -> grant -> plan, then the plan forwarded to the store and its answer streamed back, or explained.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../auth/caller.js';
import type { CallerOrPromise, RequestHeaders } from '../auth/identify-caller.js';
import { errorKind, GuardError } from '../guard-error.js';
import { headerValue } from '../header-value.js';
import type { GuardMetrics } from '../metrics/create-metrics.js';
import { sortedGraphs, summariseViews } from '../policy/grant.js';
import type { Grant } from '../policy/policy-set.js';
import type { Plan } from '../sparql/plan.js';
import { namesUpdate, updateRefusal } from '../sparql/prepare-query.js';
import type { QueryRequest } from '../sparql/query-request.js';
import { UpstreamError, type AbortLike, type Upstream, type UpstreamResponse } from '../upstream/create-upstream.js';
import { ClientGone } from './client-gone.js';
import { endCut } from './end-cut.js';
import { composeCacheControl } from './cache-control.js';
import { chooseAccept } from './choose-accept.js';
import { chooseEndpointView, type EndpointView } from './choose-endpoint-view.js';
import type { createCorsHeaders } from './cors.js';
import { describeService } from './describe-service.js';
import { readQueryRequest } from './read-query-request.js';
import { refuseForStore } from './refuse-for-store.js';
import { translateStoreError } from './translate-store-error.js';
import { PARTIAL_HEADER, secondsSince, upstreamFailureOf, type PoliciesInForce } from './request-state.js';

/** What the pipeline up to the plan gives: the caller, its grant and the plan. */
interface Planned {
  readonly caller: Caller;
  readonly grant: Grant;
  readonly plan: Plan;
}

/** The methods of the query and explain paths, for `Allow`. */
export const ALLOW_QUERY = 'GET, POST, OPTIONS';

/** The pipeline steps and services the query and explain routes call, one per concept. */
export interface QueryServices {
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
  readonly plan: (request: QueryRequest, grant: Grant, caller: Caller) => Plan;
  readonly upstream: Upstream;
  /**
   * Undefined when queries may go to the store now; else a promise that resolves when they
   * may, or rejects with GuardError (a store that ignores FROM / FROM NAMED gets no query:
   * docs/design/upstream.md). Absent: every query may go.
   */
  readonly admitQuery?: (signal: AbortLike) => Promise<void> | undefined;
  /** The store's Server header as the dataset check found it (refuseForStore); absent: unknown. */
  readonly storeServer?: () => string | undefined;
  /** Records requests and queries for Prometheus; absent when metrics are off. */
  readonly metrics?: GuardMetrics;
  /** Writes one structured log line (a store's error text, for the operator). */
  readonly log?: (entry: Readonly<Record<string, unknown>>) => void;
  /**
   * The policy set in force, its digest and facts generation, read right after `grant` (in the
   * same turn, so it is the set that gave the grant) for the audit record; absent: not recorded.
   */
  readonly policiesInForce?: () => PoliciesInForce | undefined;
}

/** What the routes need from the app that assembles them. */
export interface QueryRouteOptions {
  /** The query path (config `path`). */
  readonly path: string;
  /** Serves the query page (config `ui`), or undefined when the page is off. */
  readonly queryPage: ((reply: FastifyReply) => FastifyReply) | undefined;
  /** The CORS headers of a preflight. */
  readonly cors: ReturnType<typeof createCorsHeaders>;
  /** Longest time a streamed answer may wait for the client to read more. */
  readonly sendIdleMs: number;
  /** Config `explain`: only then may a store's error text, which can quote the rewrite, reach the caller. */
  readonly explain: boolean;
  /**
   * Counts one more query of `agent` in flight, or throws GuardError 429 past `max`; returns
   * the function that ends the count (guard:maxConcurrent).
   */
  readonly enterConcurrency: (agent: string, max: number | undefined) => () => void;
}

/** The handlers of the query path and of `{path}/explain`. */
export interface QueryRoute {
  /** GET / POST {path}: the endpoint's page or description, or a query forwarded to the store. */
  readonly query: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** GET / POST {path}/explain: the plan as JSON, never sent to the store. */
  readonly explain: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** OPTIONS on either path: the CORS preflight. */
  readonly preflight: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** True for a request on the query path that is a query (not the page or the service description). */
  readonly isQuery: (request: FastifyRequest) => boolean;
}

/** Creates the handlers; the app registers them on its paths. */
export function createQueryRoute(options: QueryRouteOptions, services: QueryServices): QueryRoute {
  const credentialHeaders = new Set(services.credentialHeaders);
  const { queryPage } = options;

  /** Identifies the caller (GuardError 401 for bad credentials) and records its agent for the log. */
  const identify = async (request: FastifyRequest): Promise<Caller> => {
    const found = services.identifyCaller(credentialHeadersOf(request.raw.rawHeaders, credentialHeaders));
    // A JWT is verified asynchronously; an API key or trusted headers answer at once.
    const caller = found instanceof Promise ? await found : found;
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

  /**
   * The pipeline up to the plan: read -> identify -> grant -> plan. A promise only when there
   * is something to wait for (a JWT to verify, or the agent of a refused request for its log
   * line); an API key or trusted headers plan at once.
   */
  const planRequest = (request: FastifyRequest): Planned | Promise<Planned> => {
    let queryRequest: QueryRequest;
    try {
      queryRequest = readQueryRequest(rawQueryRequest(request));
    } catch (error) {
      // The refusal stands as it is; the log still names a caller whose credentials are valid.
      return identifyQuietly(request).then((agent) => {
        request.agent = agent;
        throw error;
      });
    }
    // An update is refused whoever sends it, as the update parameter and media type are above: a
    // refusal of the caller (401, 403, 503) on an update's text becomes the update's 403.
    const asUpdate = (error: unknown): never => {
      throw error instanceof GuardError && namesUpdate(queryRequest.query) ? updateRefusal() : error;
    };
    let found: CallerOrPromise;
    try {
      found = services.identifyCaller(credentialHeadersOf(request.raw.rawHeaders, credentialHeaders));
    } catch (error) {
      return asUpdate(error);
    }
    if (found instanceof Promise) return found.then((caller) => planFor(request, queryRequest, caller, asUpdate), asUpdate);
    return planFor(request, queryRequest, found, asUpdate);
  };
  const planFor = (request: FastifyRequest, queryRequest: QueryRequest, caller: Caller, asUpdate: (error: unknown) => never): Planned => {
    let grant: Grant;
    try {
      grant = grantFor(request, caller);
    } catch (error) {
      return asUpdate(error);
    }
    const plan = services.plan(queryRequest, grant, caller);
    request.plan = plan;
    return { caller, grant, plan };
  };
  /** The caller's grant, with the caller, the grant and the set in force recorded on the request. */
  const grantFor = (request: FastifyRequest, caller: Caller): Grant => {
    request.agent = caller.agent;
    request.caller = caller;
    const grant = services.grant(caller);
    request.grant = grant;
    request.policiesInForce = services.policiesInForce?.();
    return grant;
  };

  // GET {path} with no query string is the endpoint itself (SPARQL 1.1 Service Description,
  // section 2): the page for a browser, the description for a client that names RDF.
  const endpointViews: readonly EndpointView[] = [
    'text/turtle',
    'application/n-triples',
    'application/ld+json',
    ...(queryPage === undefined ? [] : ['text/html' as const]),
  ];
  const endpointViewOf = (request: FastifyRequest): EndpointView | undefined =>
    request.method === 'GET' && request.url === options.path
      ? chooseEndpointView(headerValue(request.headers.accept), endpointViews)
      : undefined;

  /** The service description in the caller's name: identify -> grant -> describe (same 401 / 403 as a query). */
  const describe = async (request: FastifyRequest, reply: FastifyReply, view: Exclude<EndpointView, 'text/html'>) => {
    request.operation = 'service-description';
    const caller = await identify(request);
    const grant = grantFor(request, caller);
    // Turtle and JSON-LD name the endpoint by the document's own URL (right behind any proxy);
    // N-Triples has no relative IRIs, so it is built from the Host header.
    const endpoint = view === 'application/n-triples' ? absoluteEndpoint(request, options.path) : '';
    const graphs = sortedGraphs(grant);
    reply.header('content-type', `${view}; charset=utf-8`);
    return describeService(
      {
        endpoint,
        agent: caller.agent,
        groups: caller.groups,
        graphs,
        hiddenByGraph: grant.hiddenByGraph,
        ...(grant.views !== undefined && { views: grant.views }),
      },
      view,
    );
  };

  const query = async (request: FastifyRequest, reply: FastifyReply) => {
    const view = endpointViewOf(request);
    if (view === 'text/html' && queryPage !== undefined) return queryPage(reply);
    if (view !== undefined && view !== 'text/html') return describe(request, reply, view);
    request.operation = 'query';
    // Watches the client from the start: one that leaves while its credentials are checked
    // (a JWT verified, the issuer's keys fetched) or its query waits is never forwarded.
    const clientGone = new ClientGone(reply.raw);
    const planned = planRequest(request);
    const { grant, plan, caller } = planned instanceof Promise ? await planned : planned;
    if (clientGone.aborted) throw clientGoneError();
    // The caller's limits (docs/design/policy.md, "Limits per caller"). The count lasts from here
    // until the store's answer has ended or been aborted, not until the client's response
    // closes: a client that leaves early does not free its slot while the store still works.
    const leave = options.enterConcurrency(caller.agent, grant.limits?.maxConcurrent);
    return forward(plan, request, reply, clientGone, leave, services, options, grant.limits?.timeoutMs);
  };

  const explain = async (request: FastifyRequest, reply: FastifyReply) => {
    request.operation = 'explain';
    const planned = planRequest(request);
    const { caller, grant, plan } = planned instanceof Promise ? await planned : planned;
    reply.header('content-type', 'application/json; charset=utf-8');
    return {
      agent: caller.agent,
      groups: caller.groups,
      policies: grant.policies.map((iri) => `<${iri}>`),
      // The graphs the caller's identity filled in (guard:readGraphTemplate), when any.
      ...(grant.templateGraphs !== undefined && { templateGraphs: grant.templateGraphs.map((iri) => `<${iri}>`) }),
      // The columns and row rules of each graph that has them, by policy (the query holds them too).
      ...(grant.views !== undefined && grant.views.size > 0 && { views: summariseViews(grant.views) }),
      // The contract's rewritten query, with the granted graphs as FROM clauses; in the graph-filter form
      // (datasetForm) the text sent differs, and is shown too.
      query: plan.clausesQuery ?? plan.query,
      ...(plan.clausesQuery !== undefined && { forwarded: plan.query }),
      form: plan.form,
    };
  };

  const preflight = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.code(204).headers(options.cors.preflight(headerValue(request.headers.origin)));
    reply.header('allow', ALLOW_QUERY);
    return reply.send();
  };

  const isQuery = (request: FastifyRequest): boolean => request.routeOptions.url === options.path && endpointViewOf(request) === undefined;

  return { query, explain, preflight, isQuery };
}

/** Sends the plan upstream and streams the store's answer back (the store's status, type and body pass on). */
async function forward(
  plan: Plan,
  request: FastifyRequest,
  reply: FastifyReply,
  clientGone: ClientGone,
  leave: () => void,
  services: QueryServices,
  { sendIdleMs, explain }: QueryRouteOptions,
  timeoutMs: number | undefined,
) {
  const socket = request.raw.socket;
  // The store's time is bounded by timeoutMs upstream; the client's connection may be silent meanwhile.
  setIdleBound(socket, 0);
  const accept = chooseAccept(headerValue(request.headers.accept), plan.defaultAccept);
  // Awaited only when there is something to wait for: no promise per query otherwise.
  const admitting = services.admitQuery?.(clientGone);
  if (admitting !== undefined) {
    try {
      await admitting;
    } catch (error) {
      leave();
      throw error;
    }
  }
  // After the admission: the check that admits a query is the one that names the store.
  const refused = refuseForStore(plan, services.storeServer?.());
  if (refused !== undefined) {
    leave();
    throw refused;
  }
  const metrics = services.metrics;
  metrics?.guardTime(secondsSince(request));
  const sent = performance.now();
  // A client that goes away aborts the upstream request and closes its connection
  // (docs/design/http.md); one already gone is refused here, unsent. The count ends with the exchange.
  if (!clientGone.aborted) request.forwardedAt = sent;
  const answer = await services.upstream.send(plan, {
    accept,
    signal: clientGone,
    timeoutMs,
    onEnd: leave,
    traceHeaders: request.trace.headers,
  });
  const storeMs = performance.now() - sent;
  request.storeMs = storeMs;
  metrics?.upstreamTime(storeMs / 1000);
  // A store's error is answered in the guard's shape with the store's status: its text may quote
  // the forwarded query (the granted graphs, hidden predicates), so it goes to the log, and to
  // the caller only where explain is on. A redirection (3xx) is no answer either: its body and
  // its Location (the store's own address) stay here too; the guard never follows one.
  if (answer.status >= 300) {
    const text = await readStoreText(answer);
    services.log?.({
      event: 'store-error',
      store: services.upstream.store,
      status: answer.status,
      agent: request.agent ?? null,
      text: loggedStoreText(text),
    });
    throw translateStoreError(answer.status, text, plan, { explain });
  }
  request.queryOutcome = 'answered';
  // From here the client must keep reading: a reader silent for sendIdleMs is cut.
  setIdleBound(socket, sendIdleMs);
  reply.code(answer.status);
  reply.header('cache-control', composeCacheControl(answer.cacheControl));
  // The store's own headers stay here (Virtuoso's X-SQL-Message and X-Exec-DB-Activity count
  // what it scanned, over graphs the caller cannot read); only the fact that rows may be missing passes.
  if (answer.partial !== undefined) {
    reply.header(PARTIAL_HEADER, answer.partial);
    request.partial = answer.partial;
  }
  // Asked for none, a store that still used a coding: its bytes are passed on named as they are.
  if (answer.contentEncoding !== undefined && answer.contentEncoding.toLowerCase() !== 'identity') {
    reply.header('content-encoding', answer.contentEncoding);
  }
  if (answer.contentType !== undefined) {
    reply.header('content-type', answer.contentType);
    // A small answer that arrived whole goes out with its headers in one write, not as a
    // one-chunk stream (a write for headers and chunk, another for the last chunk).
    // Without a Content-Type it streams: fastify would label a Buffer application/octet-stream.
    const whole = answer.takeWhole();
    if (whole !== undefined) return reply.send(whole);
  }
  answer.body.once('error', (error) => {
    if (clientGone.aborted) return;
    const kind = error instanceof UpstreamError ? error.kind : 'failed';
    request.outcome = kind === 'timeout' ? 'timeout' : kind === 'aborted' ? 'client-closed' : 'upstream-cut';
    request.failure = errorKind(error);
    request.upstreamFailure = upstreamFailureOf(error, services.upstream.store);
    // An answer framed by the close must not end in a clean close (fastify's): it would look whole.
    if (reply.raw.headersSent) endCut(reply.raw, socket);
  });
  // The store's length passes on, so a fixed-size answer is not re-framed as chunks; the body
  // is passed on byte for byte (the guard asks for no Content-Encoding and changes nothing); a
  // coding the store used all the same is named, so the caller is not handed gzip as JSON.
  if (answer.contentLength !== undefined) reply.header('content-length', String(answer.contentLength));
  return reply.send(answer.body);
}

/** Bytes of a store's error answer read: its message is at the start. */
const MAX_STORE_TEXT_BYTES = 64 * 1024;
/**
 * Bytes of a store's error text in its log line, as written (JSON-escaped UTF-8): the line stays
 * within one atomic write of the log (4096 bytes). Counted in characters, 3,000 CJK characters
 * wrote 9 KB and 3,000 control characters 18 KB.
 */
const MAX_LOGGED_BYTES = 3_000;

/** The longest start of `text` whose JSON string takes at most MAX_LOGGED_BYTES. */
export function loggedStoreText(text: string): string {
  const fits = (length: number) => Buffer.byteLength(JSON.stringify(text.slice(0, length))) <= MAX_LOGGED_BYTES;
  if (fits(text.length)) return text;
  // Binary search on the length: at most 64 KiB of text (MAX_STORE_TEXT_BYTES), 17 steps.
  let low = 0;
  let high = Math.min(text.length, MAX_LOGGED_BYTES);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle - 1;
  }
  return text.slice(0, low);
}

/**
 * The start of a store's error answer as text (what arrived of it, should the store cut it),
 * read for at most the exchange's time-out: the body's bound is only on its idle gaps, and a
 * store dripping its error held the caller for as long as it dripped.
 */
async function readStoreText(answer: UpstreamResponse): Promise<string> {
  const whole = answer.takeWhole();
  if (whole !== undefined) return whole.subarray(0, MAX_STORE_TEXT_BYTES).toString('utf8');
  const chunks: Buffer[] = [];
  let bytes = 0;
  const deadline = setTimeout(() => answer.body.destroy(), answer.timeoutMs);
  try {
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= MAX_STORE_TEXT_BYTES) break;
    }
  } catch {
    // Cut by the store or a deadline: what arrived is all there is.
  } finally {
    clearTimeout(deadline);
  }
  answer.body.destroy();
  return Buffer.concat(chunks, bytes).subarray(0, MAX_STORE_TEXT_BYTES).toString('utf8');
}

/** A client gone before its query was forwarded: the query is not sent (the answer reaches nobody). */
function clientGoneError(): UpstreamError {
  return new UpstreamError('aborted', 'the client went away before its query was forwarded');
}

/**
 * Sets how long the connection may be silent. Only a live socket has the bound: a destroyed
 * one needs none, and the stand-in socket of fastify's `inject` has no timers.
 */
export function setIdleBound(socket: { destroyed?: boolean; setTimeout?: (ms: number) => unknown }, ms: number): void {
  if (socket.destroyed === false) socket.setTimeout?.(ms);
}

/**
 * The credential headers of a request with every copy of each, read from the raw header list
 * (request.headers keeps only the first Authorization, and two credentials under one name are
 * ambiguous), without building arrays for every other header as node's headersDistinct does.
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
    // node keeps the first of two Content-Types; which one a proxy in front read is unknown.
    contentType: request.method === 'POST' ? onlyValue(request.raw.rawHeaders, 'Content-Type') : undefined,
    body: Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : undefined,
    contentEncoding: headerValue(request.headers['content-encoding']),
    transferEncoding: headerValue(request.headers['transfer-encoding']),
  };
}

/** The one value of a header that may not repeat (RFC 9110 section 5.3), undefined when absent; 400 when repeated. */
function onlyValue(rawHeaders: readonly string[], name: string): string | undefined {
  const lowerName = name.toLowerCase();
  let value: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length !== name.length || rawHeaders[i]!.toLowerCase() !== lowerName) continue;
    if (value !== undefined) throw new GuardError(400, 'bad_request', `the ${name} header was given more than once`);
    value = rawHeaders[i + 1]!;
  }
  return value;
}

/** `http://{Host}{path}`; a Host that is not a host name (and port) is refused rather than echoed. */
function absoluteEndpoint(request: FastifyRequest, path: string): string {
  const host = headerValue(request.headers.host) ?? '';
  if (!/^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(host)) {
    throw new GuardError(400, 'bad_request', 'the Host header is not a host name: ask for text/turtle or application/ld+json instead');
  }
  return `${request.protocol}://${host}${path}`;
}
