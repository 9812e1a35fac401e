// The one error type of the service: an HTTP status, a stable code and a one-line message.

/** Statuses the guard itself answers with (500 only for its own bugs). Anything else comes from the store. */
export type GuardStatus = 400 | 401 | 403 | 404 | 405 | 408 | 413 | 415 | 429 | 431 | 500 | 502 | 503;

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
  unauthenticated: 401,
  forbidden: 403,
  update: 403,
  service: 403,
  hidden_path: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  header_too_large: 431,
  internal_error: 500,
  upstream_failed: 502,
  not_ready: 503,
  store_ignores_from: 503,
  issuer_unavailable: 503,
  too_many_connections: 503,
} as const satisfies Record<string, GuardStatus>;

/** A stable name of a refusal or failure (snake_case); see GUARD_CODES. */
export type GuardCode = keyof typeof GUARD_CODES;

/** The response header that carries the code of an error the guard answers. */
export const ERROR_CODE_HEADER = 'sparql-guard-error';

/** The code an error without one is given: the general code of its status. */
const CODE_OF_STATUS: Readonly<Record<GuardStatus, GuardCode>> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
  431: 'header_too_large',
  500: 'internal_error',
  502: 'upstream_failed',
  503: 'not_ready',
};

/**
 * A refusal or failure that the service reports to the caller as `text/plain`.
 * The message is one line; it says what was refused and why, and never echoes
 * query text, keys or header values.
 */
export class GuardError extends Error {
  override readonly name = 'GuardError';
  /** What was refused, for programs: metrics, logs and clients match on it. */
  readonly code: GuardCode;
  /** Extra response headers, such as `WWW-Authenticate` or `Allow`. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: GuardStatus, code: GuardCode, message: string, headers?: Readonly<Record<string, string>>);
  /** @deprecated Give the code: `new GuardError(status, code, message, headers?)`; this form takes its status's general code. */
  constructor(status: GuardStatus, message: string, headers?: Readonly<Record<string, string>>);
  constructor(
    readonly status: GuardStatus,
    codeOrMessage: string,
    messageOrHeaders?: string | Readonly<Record<string, string>>,
    headers: Readonly<Record<string, string>> = {},
  ) {
    const coded = typeof messageOrHeaders === 'string';
    super((coded ? messageOrHeaders : codeOrMessage).replace(/[\r\n]+/g, ' '));
    this.code = coded ? (codeOrMessage as GuardCode) : CODE_OF_STATUS[status];
    this.headers = coded ? headers : (messageOrHeaders ?? {});
  }
}

/** What a failure was, for a log line: a GuardError's own message, other errors only by code or kind, never their data. */
export function errorKind(error: unknown): string {
  if (error instanceof GuardError) return error.message;
  if (error instanceof Error) return (error as { code?: string }).code ?? error.name;
  return typeof error;
}
