// The one error type of the service: an HTTP status and a one-line message.

/** Statuses the guard itself answers with (500 only for its own bugs). Anything else comes from the store. */
export type GuardStatus = 400 | 401 | 403 | 404 | 405 | 408 | 413 | 415 | 429 | 431 | 500 | 502 | 503;

/**
 * A refusal or failure that the service reports to the caller as `text/plain`.
 * The message is one line; it says what was refused and why, and never echoes
 * query text, keys or header values.
 */
export class GuardError extends Error {
  override readonly name = 'GuardError';

  constructor(
    readonly status: GuardStatus,
    message: string,
    /** Extra response headers, such as `WWW-Authenticate` or `Allow`. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message.replace(/[\r\n]+/g, ' '));
  }
}

/** What a failure was, for a log line: a GuardError's own message, other errors only by code or kind, never their data. */
export function errorKind(error: unknown): string {
  if (error instanceof GuardError) return error.message;
  if (error instanceof Error) return (error as { code?: string }).code ?? error.name;
  return typeof error;
}
