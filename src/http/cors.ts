// CORS headers: the guard answers cross-origin requests itself (SPEC "What the service does", item 6).

/** Headers a browser may send on a query (DESIGN section 6). */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, X-API-Key';
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Creates the function that gives the CORS headers of one response: the request's
 * Origin echoed back when it is allowed (any origin unless `corsOrigins` lists them).
 */
export function createCorsHeaders(corsOrigins: readonly string[] | undefined) {
  const allowed = corsOrigins === undefined ? undefined : new Set(corsOrigins);
  const isAllowed = (origin: string): boolean => allowed === undefined || allowed.has(origin);

  return {
    /** The Access-Control-Allow-Origin of any response to a request carrying `origin`, or undefined for none. */
    allowOrigin(origin: string | undefined): string | undefined {
      return origin !== undefined && isAllowed(origin) ? origin : undefined;
    },
    /** Headers of the 204 answer to a preflight (OPTIONS) request. */
    preflight(origin: string | undefined): Record<string, string> {
      if (origin === undefined || !isAllowed(origin)) return {};
      return {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
      };
    },
  };
}
