// The path of a request URL, without its query string.

/** `/sparql?query=...` -> `/sparql`. */
export function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart < 0 ? url : url.slice(0, queryStart);
}
