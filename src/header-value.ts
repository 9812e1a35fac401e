// One value of a request or response header, as node and undici give headers.

/**
 * The value of a header that node (request headers) or undici (response headers) may give
 * as an array when it is repeated; HTTP allows joining repeated values with commas
 * (RFC 9110 section 5.3).
 */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
