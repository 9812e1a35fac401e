// The path of a request URL, without its query string.

/** `/sparql?query=...` -> `/sparql`. */
export function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart < 0 ? url : url.slice(0, queryStart);
}

/**
 * The URL with every `%` of its path written `%25` when the path's percent-encoding cannot be
 * decoded (`/x%ZZ`, `/x%C3`, `/x%`), else the URL itself. fastify's router answers such a path
 * with a JSON 400 of its own, before any hook: no one-line error, no code, no log line. Escaped,
 * the path is one no route has, and the not-found handler refuses it as malformed.
 */
export function escapeMalformedPath(url: string): string {
  const path = pathOf(url);
  if (!path.includes('%')) return url;
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    return `${path.replaceAll('%', '%25')}${url.slice(path.length)}`;
  }
}
