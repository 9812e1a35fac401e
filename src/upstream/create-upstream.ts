// Sends the guard's rewritten query to the one configured store and hands back its streamed answer.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { GuardError } from '../guard-error.js';

/** How to reach the store. */
export interface UpstreamOptions {
  /** The store's SPARQL query endpoint, used as given (path and query string included). */
  url: string;
  /** Added to every upstream request, e.g. the store's Basic credential. */
  headers: Readonly<Record<string, string>>;
  /** Bounds the wait for the store's response headers and every idle gap in its body. */
  timeoutMs: number;
}

/** The store's answer: status and the headers the guard passes on, body still streaming. */
export interface UpstreamResponse {
  status: number;
  contentType: string | undefined;
  /** The store's Cache-Control, if it sent one. */
  cacheControl: string | undefined;
  /**
   * Streamed, never buffered. A failure after the headers (idle gap longer than timeoutMs,
   * connection reset, client abort) destroys it with a GuardError whose message is one line.
   */
  body: Readable;
}

/** A keep-alive connection pool to the store. */
export interface Upstream {
  /**
   * POSTs `query=<text>` (application/x-www-form-urlencoded; charset=UTF-8) with Accept, the
   * configured headers and a User-Agent, and nothing else. Throws GuardError 502 when the store
   * cannot be reached or sends no response headers within timeoutMs, and GuardError 502
   * `upstream request aborted by the client` when `signal` fires first.
   */
  send(queryText: string, accept: string, signal: AbortSignal): Promise<UpstreamResponse>;
  /** Waits for requests in flight, then closes every connection. */
  close(): Promise<void>;
}

/** What went wrong, in the words the guard uses; the caller's status (502) is decided here. */
type Failure = 'unreachable' | 'headers-timeout' | 'body-timeout' | 'cut' | 'aborted' | 'failed';

/**
 * Foreign errors translated by `code` where they enter (undici codes, then the system's).
 * Anything unlisted is a plain `failed`, so an unknown error can never leak its text.
 */
const FAILURE_BY_CODE: Readonly<Record<string, Failure>> = {
  ECONNREFUSED: 'unreachable',
  ECONNRESET: 'cut',
  EPIPE: 'cut',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
  ETIMEDOUT: 'unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'unreachable',
  UND_ERR_SOCKET: 'cut',
  UND_ERR_CLOSED: 'cut',
  UND_ERR_DESTROYED: 'cut',
  UND_ERR_HEADERS_TIMEOUT: 'headers-timeout',
  UND_ERR_BODY_TIMEOUT: 'body-timeout',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'cut',
  UND_ERR_ABORTED: 'aborted',
  ABORT_ERR: 'aborted',
};

/** Package version for the User-Agent, read once from the nearest sparql-guard package.json. */
const USER_AGENT = `sparql-guard/${findOwnVersion()}`;

/**
 * Creates the pool to one store. Everything constant (origin, path, header set) is computed
 * here, so a request only adds its Accept and body.
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  const { timeoutMs } = options;
  const url = new URL(options.url);
  // Userinfo in the URL is not sent: the credential belongs in `headers` (config refuses it).
  const path = `${url.pathname}${url.search}`;
  const pool = new Pool(url.origin, {
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: timeoutMs,
  });
  // Lower-cased names so an operator's `Content-Type` cannot sit beside ours; the guard's own
  // Content-Type and Accept always win, the operator may replace the User-Agent.
  const fixedHeaders: Record<string, string> = { 'user-agent': USER_AGENT };
  for (const [name, value] of Object.entries(options.headers)) fixedHeaders[name.toLowerCase()] = value;
  fixedHeaders['content-type'] = 'application/x-www-form-urlencoded; charset=UTF-8';

  const messages: Readonly<Record<Failure, string>> = {
    unreachable: 'upstream unreachable',
    'headers-timeout': `upstream did not answer within ${timeoutMs} ms`,
    'body-timeout': `upstream went silent for more than ${timeoutMs} ms`,
    cut: 'upstream closed the connection',
    aborted: 'upstream request aborted by the client',
    failed: 'upstream request failed',
  };

  function translate(error: unknown, beforeHeaders: boolean): GuardError {
    const code = (error as { code?: unknown } | null)?.code;
    let failure: Failure = (typeof code === 'string' && FAILURE_BY_CODE[code]) || 'failed';
    // Before any byte of an answer, a reset is as good as a refusal: the store cannot be used.
    if (beforeHeaders && failure === 'cut') failure = 'unreachable';
    return new GuardError(502, messages[failure]);
  }

  async function send(queryText: string, accept: string, signal: AbortSignal): Promise<UpstreamResponse> {
    if (signal.aborted) throw new GuardError(502, messages.aborted);
    // One controller per request: the caller's abort and our own deadline both end up here.
    // undici's headersTimeout only starts once the request is written; this deadline also covers
    // connecting and waiting in the pool, so "no headers within timeoutMs" means exactly that.
    const controller = new AbortController();
    let timedOut = false;
    const onCallerAbort = (): void => controller.abort();
    signal.addEventListener('abort', onCallerAbort, { once: true });
    const deadline = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const release = (): void => signal.removeEventListener('abort', onCallerAbort);

    let response;
    try {
      response = await pool.request({
        origin: url.origin,
        path,
        method: 'POST',
        headers: { ...fixedHeaders, accept },
        body: new URLSearchParams({ query: queryText }).toString(),
        signal: controller.signal,
      });
    } catch (error) {
      release();
      if (timedOut) throw new GuardError(502, messages['headers-timeout']);
      if (signal.aborted) throw new GuardError(502, messages.aborted);
      throw translate(error, true);
    } finally {
      clearTimeout(deadline);
    }

    // Re-emit the body through a stream of our own, so failures after the headers reach the
    // server as one-line GuardErrors rather than undici's, and a consumer that goes away
    // (destroys `body`) frees the upstream connection.
    const source = response.body;
    const body = new PassThrough();
    source.on('error', (error) => body.destroy(signal.aborted ? new GuardError(502, messages.aborted) : translate(error, false)));
    body.on('close', () => {
      release();
      if (!source.destroyed) source.destroy();
    });
    source.pipe(body);

    return {
      status: response.statusCode,
      contentType: headerValue(response.headers['content-type']),
      cacheControl: headerValue(response.headers['cache-control']),
      body,
    };
  }

  return {
    send,
    close: () => pool.close(),
  };
}

/** undici gives repeated headers as arrays; HTTP allows joining them with commas (RFC 9110 5.3). */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Walks up from this file (src/ or dist/src/) to the package.json of sparql-guard. */
function findOwnVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'sparql-guard' && typeof pkg.version === 'string') return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}
