// CORS headers: the guard answers cross-origin requests itself, so a reverse proxy in front only forwards (docs/design/http.md).

import { ERROR_CODE_HEADER } from '../guard-error.js';
import { PARTIAL_HEADER } from './request-state.js';

/** Headers a browser may send on a query (docs/design/http.md). */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'X-API-Key'];
/** Sent by some browser clients (jQuery-style XHR wrappers) together with credentials. */
const REQUESTED_WITH = 'X-Requested-With';
/** Response headers a script may read besides the CORS-safelisted ones: the 401 challenge, an error's code, a partial answer's reason. */
const EXPOSED_HEADERS = `WWW-Authenticate, ${ERROR_CODE_HEADER}, ${PARTIAL_HEADER}`;
const PREFLIGHT_MAX_AGE_S = 600;

/** The CORS settings (config `cors`) and the credential headers the guard reads. */
export interface CorsOptions {
  /** Allowed origins; undefined = any origin is echoed. */
  readonly origins: readonly string[] | undefined;
  /** Allow credentials (cookies, HTTP authentication) for the listed origins; never with any origin. */
  readonly credentials: boolean;
  /** Trusted identity header names (lower case), accepted in preflight when credentials are on. */
  readonly trustedHeaders: readonly string[];
}

/**
 * Creates the function that gives the CORS headers of one response: the request's
 * Origin echoed back when it is allowed (any origin unless `origins` lists them), with
 * Access-Control-Allow-Credentials when credentials are on (Fetch standard, CORS protocol).
 */
export function createCorsHeaders(options: CorsOptions) {
  const allowed = options.origins === undefined ? undefined : new Set(options.origins);
  // A list is required for credentials (read-config refuses the other case); checked again here.
  const credentials = options.credentials && allowed !== undefined;
  const isAllowed = (origin: string): boolean => allowed === undefined || allowed.has(origin);
  const allowHeaders = (credentials ? [...ALLOWED_HEADERS, REQUESTED_WITH, ...options.trustedHeaders] : ALLOWED_HEADERS).join(', ');

  return {
    /** The CORS headers of any response to a request carrying `origin` (none when not allowed). */
    response(origin: string | undefined): Record<string, string> {
      if (origin === undefined || !isAllowed(origin)) return {};
      const headers: Record<string, string> = {
        'access-control-allow-origin': origin,
        'access-control-expose-headers': EXPOSED_HEADERS,
      };
      if (credentials) headers['access-control-allow-credentials'] = 'true';
      return headers;
    },
    /** Headers of the 204 answer to a preflight (OPTIONS) request. */
    preflight(origin: string | undefined): Record<string, string> {
      if (origin === undefined || !isAllowed(origin)) return {};
      const headers: Record<string, string> = {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': allowHeaders,
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
      };
      if (credentials) headers['access-control-allow-credentials'] = 'true';
      return headers;
    },
  };
}
