// The one error type of the service: an HTTP status, a stable code and a one-line message.

/** Statuses the guard itself answers with (500 only for its own bugs). Anything else comes from the store. */
export type GuardStatus = 400 | 401 | 403 | 404 | 405 | 408 | 413 | 414 | 415 | 429 | 431 | 500 | 502 | 503;

/**
 * Every code the guard answers with, each with its one status: the one list. Metrics
 * (`outcome` label), log lines (`code`), the `sparql-guard-error` response header and
 * README.md#errors key on the code, never on the message, so a message may be reworded.
 */
export const GUARD_CODES = {
  parse: 400,
  bad_request: 400,
  too_complex: 400,
  function: 400,
  unsafe_rewrite: 400,
  limit_out_of_range: 400,
  credential_in_parameter: 400,
  unauthenticated: 401,
  forbidden: 403,
  update: 403,
  service: 403,
  hidden_path: 403,
  graph_template_value: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  too_many_requests: 429,
  header_too_large: 431,
  internal_error: 500,
  upstream_failed: 502,
  not_ready: 503,
  store_ignores_from: 503,
  issuer_unavailable: 503,
  stale_policies: 503,
  too_many_connections: 503,
} as const satisfies Record<string, GuardStatus>;

/**
 * Codes of an error the store answered, which the guard renders in its own shape (one line,
 * `sparql-guard-error`) with the store's status passed through unchanged: `store_refused` when
 * the store refused the query as forwarded for its cost, time, memory or size, or its answer's size; `store_error`
 * for any other error status of the store.
 */
export const STORE_ERROR_CODES = ['store_refused', 'store_error'] as const;

/** A code of an error the store answered; see STORE_ERROR_CODES. */
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

/** A stable name of a refusal or failure of the guard (snake_case); see GUARD_CODES. */
export type GuardCode = keyof typeof GUARD_CODES;

/** Every code an error response carries: the guard's own, or a store's error rendered by the guard. */
export type ErrorCode = GuardCode | StoreErrorCode;

/** The response header that carries the code of an error the guard answers. */
export const ERROR_CODE_HEADER = 'sparql-guard-error';

/**
 * A refusal or failure that the service reports to the caller as `text/plain`.
 * The message is one line; it says what was refused and why, and never echoes
 * query text, keys or header values.
 */
export class GuardError extends Error {
  override readonly name = 'GuardError';
  /** What was refused, for programs: metrics, logs and clients match on it. */
  readonly code: ErrorCode;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly status: GuardStatus,
    code: ErrorCode,
    message: string,
    /** Extra response headers, such as `WWW-Authenticate` or `Allow`. */
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(message.replace(/[\r\n]+/g, ' '));
    this.code = code;
    this.headers = headers;
  }
}

/**
 * An error status of the store (400 to 599) on a forwarded query, in the guard's shape: its
 * status is the store's, its message the guard's own one line, never the store's text.
 */
export class StoreError extends GuardError {
  /**
   * The message without the store's text, for the request log line, which never holds the query
   * (stores quote it); the store's text has a line of its own (`store-error`).
   */
  readonly logged: string;

  constructor(status: number, code: StoreErrorCode, message: string, logged: string = message) {
    // The status is the store's: passed through unchanged (README.md#errors).
    super(status as GuardStatus, code, message);
    this.logged = logged;
  }
}

/** What a failure was, for a log line: a GuardError's own message, other errors only by code or kind, never their data. */
export function errorKind(error: unknown): string {
  if (error instanceof GuardError) return error.message;
  if (error instanceof Error) return (error as { code?: string }).code ?? error.name;
  return typeof error;
}
