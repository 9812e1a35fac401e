// Translates fastify's own request errors, by code, into the guard's one error type.

import { GuardError } from '../guard-error.js';

/** fastify error code -> what the caller is told: a table, matched by code. */
const BY_CODE: Readonly<Record<string, GuardError>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: new GuardError(413, 'too_large', 'request body is larger than 1 MiB'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: new GuardError(415, 'unsupported_media_type', 'unsupported Content-Type'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: new GuardError(400, 'bad_request', 'Content-Length does not match the body'),
  FST_ERR_CTP_INVALID_TYPE: new GuardError(400, 'bad_request', 'invalid Content-Type header'),
  FST_ERR_BAD_URL: new GuardError(400, 'bad_request', 'malformed URL'),
  FST_ERR_ASYNC_CONSTRAINT: new GuardError(400, 'bad_request', 'bad request'),
};

/**
 * The GuardError for an error fastify raised while reading the request, or undefined
 * when the error is not a known request error (then it is a bug of ours).
 */
export function translateHttpError(error: unknown): GuardError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code in BY_CODE) return BY_CODE[code];
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return new GuardError(400, 'bad_request', 'bad request');
  return undefined;
}
