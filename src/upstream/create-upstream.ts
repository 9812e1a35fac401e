// Sends the guard's rewritten query to the one configured store and hands back its streamed answer.
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Client, Pool, type Dispatcher } from 'undici';
import { GuardError } from '../guard-error.js';
import { headerValue } from '../header-value.js';
import { OWN_VERSION } from '../own-version.js';
import { encodeQueryForm } from '../url-encoded-form.js';

/** How to reach the store. */
export interface UpstreamOptions {
  /** The store's SPARQL query endpoint, used as given (path and query string included). */
  url: string;
  /** Added to every upstream request, e.g. the store's Basic credential. */
  headers: Readonly<Record<string, string>>;
  /** Bounds the wait for the store's response headers and every idle gap in its body. */
  timeoutMs: number;
  /** Told the kind of every failed exchange but the caller's own abort (for the metrics). */
  onFailure?: (kind: Exclude<UpstreamFailureKind, 'aborted'>) => void;
  /** Told each time a query is sent again on a fresh connection, and why (for the metrics). */
  onRetry?: (reason: RetryReason) => void;
}

/**
 * Why a query was sent a second time: the store reset (`reset`) or closed (`closed`) the
 * connection before any byte of its answer arrived, as a store does to a keep-alive connection
 * it finds idle for too long at the moment the guard reuses it.
 */
export type RetryReason = 'reset' | 'closed';

/** The store's answer: status and the headers the guard passes on, body still streaming. */
export interface UpstreamResponse {
  status: number;
  contentType: string | undefined;
  /** The store's Content-Encoding, if it sent one although asked for none: the bytes are passed on so labelled. */
  contentEncoding?: string | undefined;
  /** The store's Cache-Control, if it sent one. */
  cacheControl: string | undefined;
  /** The store's Content-Length, when it sent one: the body is exactly that many bytes. */
  contentLength: number | undefined;
  /** The store's Server header (what it says it is), if it sent one. */
  server: string | undefined;
  /**
   * Why the store says its answer may lack rows, in the guard's words (`time-limit`, `row-limit`,
   * comma-separated), or undefined: read from the store's own headers, which are not passed on.
   */
  partial?: string | undefined;
  /** The exchange's time-out (the pool's, or the caller's tier): what the guard may wait for the store. */
  readonly timeoutMs: number;
  /**
   * Streamed, never buffered. A failure after the headers (idle gap longer than timeoutMs,
   * connection reset, client abort) destroys it with a GuardError whose message is one line.
   */
  body: Readable;
  /**
   * The whole body, when all of it has already arrived and nothing has been read from `body`
   * (a small answer that came in the same network read as its headers); then `body` ends
   * empty. Otherwise undefined, and `body` is untouched. Lets the server send headers and
   * body in one write instead of streaming.
   */
  takeWhole(): Buffer | undefined;
}

/** A listener of AbortLike: a function, or an object whose handleEvent is called. */
export type AbortListener = (() => void) | { handleEvent(): void };

/**
 * What the guard needs of a cancellation: the members of an AbortSignal it reads. An
 * AbortSignal is one; so is a lighter object that a request makes instead of an
 * AbortController (an EventTarget) when only its client's going away can cancel it. The
 * listener runs at most once.
 */
export interface AbortLike {
  readonly aborted: boolean;
  /** Why it aborted; an UpstreamError here is the error the exchange fails with. */
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once: true }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}

/** What `send` forwards: a Plan is one; the guard's own queries give their text alone. */
export interface Outgoing {
  /** The query text. */
  readonly query: string;
  /** The form body already encoded, when the caller has it: exactly encodeQueryForm(query), in one part or several. */
  readonly formParts?: Buffer | readonly Buffer[];
}

/** How `send` forwards a query. */
export interface SendOptions {
  /** The Accept header sent to the store. */
  readonly accept: string;
  /** Cancels the exchange: the caller went away, or a bounded check ran out of time. */
  readonly signal: AbortLike;
  /** When given and below the pool's timeoutMs, replaces it for this request (a caller's timeout tier). */
  readonly timeoutMs?: number | undefined;
  /**
   * Called exactly once, when the exchange with the store is over: its answer arrived to the
   * last byte, or it failed, or the guard ended it (the connection to the store is then closed,
   * or the request never left the pool); also when send refuses at once because `signal` had
   * already fired (nothing is sent then).
   */
  readonly onEnd?: (() => void) | undefined;
  /** The W3C trace context of this request (`traceparent`, and `tracestate` when the caller sent one), after the configured headers. */
  readonly traceHeaders?: TraceHeaders | undefined;
}

/** The W3C trace context headers of one forwarded query (https://www.w3.org/TR/trace-context/). */
export interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** A keep-alive connection pool to the store. */
export interface Upstream {
  /**
   * POSTs `query=<text>` (application/x-www-form-urlencoded; charset=UTF-8) with Accept, the
   * configured headers and a User-Agent, and nothing else. Throws GuardError 502 when the store
   * cannot be reached or sends no response headers within timeoutMs, and GuardError 502
   * `upstream request aborted by the client` when the signal fires first.
   */
  send(outgoing: Outgoing, options: SendOptions): Promise<UpstreamResponse>;
  /** The store's URL as logs name it: without userinfo and without query string (either may hold a secret). */
  readonly store: string;
  /** Waits for requests in flight, then closes every connection. */
  close(): Promise<void>;
}

/** What went wrong, in the words the guard uses; the caller's status (502) is decided here. */
type Failure =
  | 'refused'
  | 'dns'
  | 'tls'
  | 'unreachable'
  | 'connect-timeout'
  | 'headers-timeout'
  | 'body-timeout'
  | 'reset'
  | 'closed'
  | 'protocol'
  | 'interim'
  | 'cut'
  | 'cut-reset'
  | 'cut-protocol'
  | 'aborted'
  | 'failed';

/**
 * The kind of an upstream failure, for the metrics: the store refused or could not be
 * reached, sent nothing in time, reset the connection before answering, cut an answer under
 * way; `aborted` when the guard's caller went away, `failed` for anything else.
 */
export type UpstreamFailureKind = 'refused' | 'timeout' | 'reset' | 'cut' | 'aborted' | 'failed';

/**
 * The cause of an upstream failure, for the log: the connection was refused, the host name did
 * not resolve, TLS failed, no route, a time-out, the store reset or closed the connection, or its
 * answer was not HTTP; `aborted` when the guard's caller went away, `failed` for anything else.
 */
export type UpstreamCause = 'refused' | 'dns' | 'tls' | 'unreachable' | 'timeout' | 'reset' | 'closed' | 'protocol' | 'aborted' | 'failed';

/** Each failure's kind (metrics) and cause (log). */
const FAILURES: Readonly<Record<Failure, readonly [UpstreamFailureKind, UpstreamCause]>> = {
  refused: ['refused', 'refused'],
  dns: ['refused', 'dns'],
  tls: ['refused', 'tls'],
  unreachable: ['refused', 'unreachable'],
  'connect-timeout': ['refused', 'timeout'],
  'headers-timeout': ['timeout', 'timeout'],
  'body-timeout': ['timeout', 'timeout'],
  reset: ['reset', 'reset'],
  closed: ['reset', 'closed'],
  protocol: ['failed', 'protocol'],
  interim: ['failed', 'protocol'],
  cut: ['cut', 'closed'],
  'cut-reset': ['cut', 'reset'],
  'cut-protocol': ['cut', 'protocol'],
  aborted: ['aborted', 'aborted'],
  failed: ['failed', 'failed'],
};

/** A failure of the store (always 502): a GuardError whose `kind` and `failureCause` say what happened. */
export class UpstreamError extends GuardError {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    /** What happened on the wire, for the log (the caller's line names it in words). */
    readonly failureCause: UpstreamCause = kind === 'timeout' ? 'timeout' : kind === 'aborted' ? 'aborted' : 'failed',
  ) {
    super(502, 'upstream_failed', message);
  }
}

function isParts(body: Buffer | readonly Buffer[] | undefined): body is readonly Buffer[] {
  return Array.isArray(body);
}

function lengthOf(parts: readonly Buffer[]): number {
  let bytes = 0;
  for (const part of parts) bytes += part.length;
  return bytes;
}

/**
 * Foreign errors translated by `code` where they enter (undici codes, then the system's).
 * Anything unlisted is a plain `failed`, so an unknown error can never leak its text.
 */
const FAILURE_BY_CODE: Readonly<Record<string, Failure>> = {
  ECONNREFUSED: 'refused',
  ECONNRESET: 'cut-reset',
  EPIPE: 'cut-reset',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  EAI_NONAME: 'dns',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EHOSTDOWN: 'unreachable',
  ENETDOWN: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
  ETIMEDOUT: 'connect-timeout',
  UND_ERR_CONNECT_TIMEOUT: 'connect-timeout',
  UND_ERR_SOCKET: 'cut',
  UND_ERR_CLOSED: 'cut',
  UND_ERR_DESTROYED: 'cut',
  UND_ERR_HEADERS_TIMEOUT: 'headers-timeout',
  UND_ERR_BODY_TIMEOUT: 'body-timeout',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'cut-protocol',
  UND_ERR_HEADERS_OVERFLOW: 'cut-protocol',
  UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE: 'cut-protocol',
  UND_ERR_INFO: 'cut-protocol',
  UND_ERR_ABORTED: 'aborted',
  ABORT_ERR: 'aborted',
};

/** Codes of a failed TLS handshake or certificate check (node's and OpenSSL's). */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH|ERR_OSSL_)/;
/** llhttp's codes: the store's answer is not HTTP/1.1. */
const PROTOCOL_CODE = /^HPE_/;

/** Before any byte of an answer, a cut is a reset or close of a request that was never answered. */
const BEFORE_ANSWER: Partial<Readonly<Record<Failure, Failure>>> = { cut: 'closed', 'cut-reset': 'reset', 'cut-protocol': 'protocol' };

/** The User-Agent of every request to the store. */
const USER_AGENT = `sparql-guard/${OWN_VERSION}`;

/**
 * Bytes the body buffers before undici stops reading the socket (backpressure). 64 KiB, as
 * undici's own body and node's file streams: a small answer fits whole, so it can be taken
 * in one piece (takeWhole), and a large one moves in socket-read-sized chunks.
 */
const BODY_HIGH_WATER_MARK = 64 * 1024;

/** Timeout tiers whose messages are kept; more distinct tiers still work, each built per request. */
const MAX_TIMEOUT_TIERS = 64;

function createShared(timeoutMs: number, options: UpstreamOptions, sendAgain: Shared['sendAgain']): Shared {
  return {
    timeoutMs,
    onFailure: options.onFailure,
    onRetry: options.onRetry,
    sendAgain,
    messages: {
      refused: 'upstream unreachable (connection refused)',
      dns: 'upstream unreachable (host name not found)',
      tls: 'upstream unreachable (TLS handshake failed)',
      unreachable: 'upstream unreachable (no route to the host)',
      'connect-timeout': `upstream unreachable (no connection within ${timeoutMs} ms)`,
      'headers-timeout': `upstream did not answer within ${timeoutMs} ms`,
      'body-timeout': `upstream went silent for more than ${timeoutMs} ms`,
      reset: 'upstream reset the connection before answering',
      closed: 'upstream closed the connection before answering',
      protocol: 'upstream answered with malformed HTTP',
      interim: 'upstream sent an interim answer the guard cannot take (100 Continue unasked, or 101)',
      cut: 'upstream closed the connection',
      'cut-reset': 'upstream reset the connection mid-answer',
      'cut-protocol': 'upstream sent a malformed answer',
      aborted: 'upstream request aborted by the client',
      failed: 'upstream request failed',
    },
  };
}

/** What every exchange of one pool (or one timeout tier) shares: computed once in createUpstream. */
interface Shared {
  readonly timeoutMs: number;
  readonly messages: Readonly<Record<Failure, string>>;
  readonly onFailure: ((kind: Exclude<UpstreamFailureKind, 'aborted'>) => void) | undefined;
  readonly onRetry: ((reason: RetryReason) => void) | undefined;
  /** Dispatches a request again, on a fresh connection. */
  readonly sendAgain: (request: Dispatcher.DispatchOptions, exchange: Exchange) => void;
}

/**
 * Idle time of a pooled connection when the store gives no `Keep-Alive: timeout=` hint: below
 * the shortest idle time of the usual servers (Node's 5 s; Jetty's 30 s, Virtuoso's longer).
 */
const KEEP_ALIVE_MS = 4_000;
/**
 * When the store gives a hint, a connection is dropped this long before the store would drop
 * it (undici's own margin), so it is never reused in the last seconds of its life.
 */
const KEEP_ALIVE_MARGIN_MS = 2_000;
/**
 * undici's own header and body time-outs run on its coarse timers (a tick of about 500 ms), which
 * fire up to a tick early: with 800 ms, a store silent for 600 ms between chunks was cut as "went
 * silent for more than 800 ms", and one answering after 620 ms "did not answer within 800 ms".
 * The guard keeps both bounds with its own timers; undici's, this much later, only back them up.
 */
const UNDICI_TIMER_SLACK_MS = 1_000;

/**
 * The reason handed to undici when the guard itself ends an exchange (deadline, caller gone,
 * consumer gone). undici only passes it back to onResponseError, which ignores a settled
 * exchange; one instance, so ending an exchange builds no stack trace.
 */
const ENDED_BY_GUARD = Object.assign(new Error('ended by the guard'), { code: 'UND_ERR_ABORTED' });

/**
 * Creates the pool to one store. Everything constant (origin, path, header set) is computed
 * here, so a request only adds its Accept and body.
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  const { timeoutMs } = options;
  const url = new URL(options.url);
  // Userinfo in the URL is not sent: the credential belongs in `headers` (config refuses it).
  const path = `${url.pathname}${url.search}`;
  // undici's defaults otherwise: as many connections as requests in flight (no queueing behind
  // a slow answer), one request per connection at a time (no pipelining: a slow query would
  // hold up the ones behind it), keep-alive between requests.
  const connection = {
    headersTimeout: timeoutMs + UNDICI_TIMER_SLACK_MS,
    bodyTimeout: timeoutMs + UNDICI_TIMER_SLACK_MS,
    connectTimeout: timeoutMs,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS,
  };
  const pool = new Pool(url.origin, connection);
  // A query whose pooled connection the store closed under it goes once more on a connection
  // of its own, never on another pooled one (which may be just as stale), closed after it.
  const sendAgain = (request: Dispatcher.DispatchOptions, exchange: Exchange): void => {
    const client = new Client(url.origin, connection);
    client.dispatch(request, exchange);
    client.close().catch(ignore);
  };
  // Lower-cased names so an operator's `Content-Type` cannot sit beside ours; the guard's own
  // Content-Type, Accept-Encoding and Accept always win, the operator may replace the User-Agent.
  const fixedHeaders: Record<string, string> = { 'user-agent': USER_AGENT };
  for (const [name, value] of Object.entries(options.headers)) fixedHeaders[name.toLowerCase()] = value;
  fixedHeaders['content-type'] = 'application/x-www-form-urlencoded; charset=UTF-8';
  // No Accept-Encoding lets a store choose any coding (RFC 9110 section 12.5.3), and the guard
  // passes bytes on as they come, to callers that may not read gzip: the store is asked for none.
  fixedHeaders['accept-encoding'] = 'identity';

  const shared = createShared(timeoutMs, options, sendAgain);
  // One Shared per timeout tier in use; tiers come from policies, so there are few.
  const sharedByTimeout = new Map<number, Shared>();
  const sharedFor = (tierMs: number | undefined): Shared => {
    if (tierMs === undefined || tierMs >= timeoutMs) return shared;
    let tier = sharedByTimeout.get(tierMs);
    if (tier === undefined) {
      tier = createShared(tierMs, options, sendAgain);
      if (sharedByTimeout.size < MAX_TIMEOUT_TIERS) sharedByTimeout.set(tierMs, tier);
    }
    return tier;
  };

  function send(outgoing: Outgoing, { accept, signal, timeoutMs: tierMs, onEnd, traceHeaders }: SendOptions): Promise<UpstreamResponse> {
    // A caller already gone is never forwarded.
    if (signal.aborted) {
      onEnd?.();
      return Promise.reject(abortError(shared, signal));
    }
    const formBody = outgoing.formParts;
    const tier = sharedFor(tierMs);
    const slack = tier.timeoutMs + UNDICI_TIMER_SLACK_MS;
    const own = tier.timeoutMs === timeoutMs ? {} : { headersTimeout: slack, bodyTimeout: slack };
    const many = isParts(formBody) && formBody.length > 1;
    const request: Dispatcher.DispatchOptions = {
      origin: url.origin,
      path,
      method: 'POST',
      // A body in parts is written part by part; its length keeps it out of chunked encoding.
      // One part is a body like any other (a Content-Length given for it cost the collector).
      headers: many
        ? { ...fixedHeaders, ...traceHeaders, accept, 'content-length': String(lengthOf(formBody)) }
        : { ...fixedHeaders, ...traceHeaders, accept },
      // undici writes any iterable of chunks (lib/core/request.js accepts util.isIterable); its
      // type declaration lists only single-chunk bodies and streams.
      body: many ? (formBody as unknown as Uint8Array) : isParts(formBody) ? formBody[0] : (formBody ?? encodeQueryForm(outgoing.query)),
      ...own,
    };
    const exchange = new Exchange(tier, signal, onEnd, request);
    pool.dispatch(request, exchange);
    return exchange.response;
  }

  return {
    send,
    store: nameOf(url),
    close: () => pool.close(),
  };
}

/**
 * One request to the store, as undici's dispatch handler, and once the headers are in, the
 * UpstreamResponse too. It owns the headers deadline, the caller's abort and the body, so
 * the store's bytes reach the consumer through at most one stream and every failure is
 * translated where it happens. A class, not closures: a request allocates one object; the
 * body stream only exists once someone asks for it, so a small answer taken whole
 * (takeWhole) never makes one.
 */
class Exchange implements Dispatcher.DispatchHandler, UpstreamResponse {
  readonly response: Promise<UpstreamResponse>;
  status = 0;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  cacheControl: string | undefined;
  contentLength: number | undefined;
  server: string | undefined;
  partial: string | undefined;
  private resolve!: (response: UpstreamResponse) => void;
  private reject!: (error: UpstreamError) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private readonly deadline: NodeJS.Timeout;
  /** The bound on each silence of the body (timeoutMs), from the headers on; not while the guard paused the store. */
  private idle: NodeJS.Timeout | undefined;
  private paused = false;
  private headersReceived = false;
  /** Chunks that arrived before the body stream was asked for, and their size. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private complete = false;
  /** A failure after the headers, before the body stream was asked for: it gets it when made. */
  private failure: UpstreamError | undefined;
  private stream: UpstreamBody | undefined;
  /** The deadline of this request: the pool's, or the caller's tier. */
  get timeoutMs(): number {
    return this.shared.timeoutMs;
  }
  /** The exchange is over for the guard: failed, or the body was taken, read or destroyed. */
  private settled = false;
  private listening = true;
  /** A byte of the store's answer arrived (the status line began): from then on, never sent again. */
  private answerStarted = false;
  /** Sent a second time already. */
  private retried = false;

  constructor(
    private readonly shared: Shared,
    private readonly signal: AbortLike,
    /** Told once that the exchange with the store is over (SendOptions' `onEnd`). */
    private onEnd: (() => void) | undefined,
    /** What was dispatched, kept to send it once more. */
    private readonly request: Dispatcher.DispatchOptions,
  ) {
    this.response = new Promise<UpstreamResponse>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // undici's headersTimeout only starts once the request is written; this deadline also
    // covers connecting and waiting in the pool, so "no headers within timeoutMs" means exactly that.
    this.deadline = setTimeout(onDeadline, shared.timeoutMs, this);
    // `this` is the listener (handleEvent): the caller's abort needs no closure.
    signal.addEventListener('abort', this, { once: true });
  }

  get body(): Readable {
    if (this.stream !== undefined) return this.stream;
    const stream = new UpstreamBody(this);
    this.stream = stream;
    for (const chunk of this.pending) stream.push(chunk);
    this.pending = [];
    if (this.failure !== undefined) stream.destroy(this.failure);
    else if (this.complete) stream.finish();
    return stream;
  }

  takeWhole(): Buffer | undefined {
    if (this.stream !== undefined) return this.stream.takeWhole();
    if (!this.complete || this.failure !== undefined || this.settled) return undefined;
    this.settle();
    const whole = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    return whole;
  }

  /** The caller's signal fired. */
  handleEvent(): void {
    this.fail('aborted');
  }

  /** Ends the exchange for the guard's own reason: before the headers a rejection, after them a body error. */
  fail(failure: Failure): void {
    if (this.settled) return;
    const error =
      failure === 'aborted'
        ? abortError(this.shared, this.signal)
        : new UpstreamError(FAILURES[failure][0], this.shared.messages[failure], FAILURES[failure][1]);
    // The caller going away is no failure of the store; a bounded check's own deadline is.
    if (error.kind !== 'aborted') this.shared.onFailure?.(error.kind);
    if (this.stream !== undefined) return void this.stream.destroy(error);
    this.settle();
    // Aborting closes the connection to the store (or takes the request out of the pool's
    // queue; onRequestStart aborts one not yet started): the exchange is over for the store too.
    this.controller?.abort(ENDED_BY_GUARD);
    this.end();
    if (this.headersReceived) this.failure = error;
    else this.reject(error);
  }

  /** The exchange with the store is over: tells onEnd, once. */
  private end(): void {
    const onEnd = this.onEnd;
    if (onEnd === undefined) return;
    this.onEnd = undefined;
    onEnd();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Failed while waiting in the pool: end it as soon as undici lets us.
    if (this.settled) controller.abort(ENDED_BY_GUARD);
  }

  /** The first byte of the store's answer arrived (undici calls it as the parser meets the status line). */
  onResponseStarted(): void {
    this.answerStarted = true;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (this.settled) return controller.abort(ENDED_BY_GUARD);
    if (statusCode < 200) return; // 1xx: informational, the answer follows
    // llhttp takes any three digits; HTTP's codes end at 599 (RFC 9110 section 15), and no
    // caller could be sent another (fastify answered its own JSON 500 for it).
    if (statusCode > 599) return this.fail('protocol');
    clearTimeout(this.deadline);
    this.idle = setTimeout(onIdle, this.shared.timeoutMs, this);
    this.headersReceived = true;
    this.status = statusCode;
    this.contentType = headerValue(headers['content-type']);
    this.contentEncoding = headerValue(headers['content-encoding']);
    this.cacheControl = headerValue(headers['cache-control']);
    this.server = headerValue(headers.server);
    this.partial = partialOf(headers);
    const contentLength = headerValue(headers['content-length']);
    // undici has checked it is one decimal number (and drops it under Transfer-Encoding).
    this.contentLength = contentLength === undefined ? undefined : Number(contentLength);
    this.resolve(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.idle?.refresh();
    if (this.stream === undefined) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      // Nobody reads yet: stop the socket at the stream's own bound; making the stream resumes.
      if (this.pendingBytes >= BODY_HIGH_WATER_MARK) this.pause(controller);
      return;
    }
    // Backpressure: the consumer is slower than the store; _read resumes.
    if (!this.stream.push(chunk)) this.pause(controller);
  }

  private pause(controller: Dispatcher.DispatchController): void {
    this.paused = true;
    controller.pause();
  }

  /** The body was silent for timeoutMs: the store's fault unless the guard had paused it (as undici's own bound). */
  idleTimedOut(): void {
    if (!this.paused) this.fail('body-timeout');
  }

  onResponseEnd(): void {
    clearTimeout(this.idle);
    this.end();
    if (this.settled) return;
    this.complete = true;
    this.stopListening();
    this.stream?.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return this.end();
    if (this.signal.aborted) return this.fail('aborted');
    // A read query is idempotent whatever carries it: one the store dropped unanswered goes once
    // more (the deadline set at the start still bounds both tries). Never after a byte of an
    // answer, never twice, never when the store refused or timed out.
    const reason = this.answerStarted || this.retried ? undefined : retryReason(error);
    if (reason !== undefined) {
      this.retried = true;
      this.controller = undefined;
      this.shared.onRetry?.(reason);
      return this.shared.sendAgain(this.request, this);
    }
    this.fail(translate(error, !this.headersReceived));
  }

  /** The consumer wants more. */
  resume(): void {
    if (this.paused) {
      this.paused = false;
      this.idle?.refresh();
    }
    this.controller?.resume();
  }

  /** The body closed (read to the end, or destroyed by the consumer or by fail()). */
  bodyClosed(): void {
    this.settle();
    // A consumer that went away before the end frees the connection (undici closes it).
    if (!this.complete) this.controller?.abort(ENDED_BY_GUARD);
    this.end();
  }

  private settle(): void {
    this.settled = true;
    clearTimeout(this.deadline);
    clearTimeout(this.idle);
    this.stopListening();
  }

  private stopListening(): void {
    if (!this.listening) return;
    this.listening = false;
    this.signal.removeEventListener('abort', this);
  }
}

/**
 * Why a store's answer may be incomplete, from the headers Virtuoso sends then (measured on
 * 7.2.5): `X-SQL-State: S1TAT` with an anytime query stopped at its time limit
 * (`MaxQueryExecutionTime`), and `X-SPARQL-MaxRows` when a SELECT's rows reached
 * `ResultSetMaxRows` (also when the answer has exactly that many). Any other X-SQL-State on an
 * answer is named `incomplete`. Undefined when neither is there (the common case: two look-ups).
 */
function partialOf(headers: IncomingHttpHeaders): string | undefined {
  const state = headers['x-sql-state'];
  const rows = headers['x-sparql-maxrows'];
  if (state === undefined && rows === undefined) return undefined;
  const time = state === undefined ? undefined : headerValue(state)?.trim().toUpperCase() === 'S1TAT' ? 'time-limit' : 'incomplete';
  if (rows === undefined) return time;
  return time === undefined ? 'row-limit' : `${time}, row-limit`;
}

function onDeadline(exchange: Exchange): void {
  exchange.fail('headers-timeout');
}

function onIdle(exchange: Exchange): void {
  exchange.idleTimedOut();
}

/** The store's body as it arrives: undici's chunks pushed straight in, no stream in between. */
class UpstreamBody extends Readable {
  private ended = false;

  constructor(private readonly exchange: Exchange) {
    super({ highWaterMark: BODY_HIGH_WATER_MARK });
    // A failure in the same network read as the headers destroys the body before send()'s
    // caller has run and attached its listeners; without one, that 'error' would end the process.
    this.on('error', ignore);
  }

  override _read(): void {
    this.exchange.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.exchange.bodyClosed();
    callback(error);
  }

  /** The store sent the last byte. */
  finish(): void {
    this.ended = true;
    this.push(null);
  }

  takeWhole(): Buffer | undefined {
    if (!this.ended || this.readableDidRead || this.destroyed) return undefined;
    // Everything is buffered: read() without a size returns all of it, then the stream ends.
    const whole = this.read() as Buffer | null;
    return whole ?? Buffer.alloc(0);
  }
}

function ignore(): void {}

/** A store's URL fit for a log line: scheme, host, port and path only. */
export function nameOf(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * The error of an exchange ended by its signal: the signal's own reason when that is an
 * UpstreamError (a bounded check that timed out says so), else the caller went away.
 */
function abortError(shared: Shared, signal: AbortLike): UpstreamError {
  return signal.reason instanceof UpstreamError ? signal.reason : new UpstreamError('aborted', shared.messages.aborted);
}

/**
 * Why a failed request may be sent again: the store reset or closed the connection (undici's
 * `other side closed`); undefined for every other failure (refused, timed out, a protocol error,
 * a pool being closed by the guard), whose second try would fail the same way or not be wanted.
 */
function retryReason(error: unknown): RetryReason | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
  if (code === 'UND_ERR_SOCKET') return 'closed';
  return undefined;
}

/**
 * A foreign error as a Failure. Before any byte of an answer, a connection the store closed or
 * reset is `closed` or `reset`, and a malformed answer `protocol`.
 */
function translate(error: unknown, beforeHeaders: boolean): Failure {
  const { code, name, message } = (error ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  // undici destroys the socket itself on a 100 Continue (it never sends Expect) or a 101 it did
  // not ask for, though RFC 9110 section 15.2 lets a server send a 1xx unasked: not the store's close.
  if (beforeHeaders && code === 'UND_ERR_SOCKET' && (message === 'bad response' || message === 'bad upgrade')) return 'interim';
  const failure: Failure =
    typeof code !== 'string'
      ? // undici's parser error has no code when the answer does not even start like HTTP.
        name === 'HTTPParserError'
        ? 'cut-protocol'
        : 'failed'
      : (FAILURE_BY_CODE[code] ?? (TLS_CODE.test(code) ? 'tls' : PROTOCOL_CODE.test(code) ? 'cut-protocol' : 'failed'));
  return (beforeHeaders && BEFORE_ANSWER[failure]) || failure;
}
