// What GET {path} without a query answers: the query page, the service description, or nothing.

/** A representation of the endpoint itself, by media type. */
export type EndpointView = 'text/html' | 'text/turtle' | 'application/n-triples' | 'application/ld+json';

/** The service description's media types first: on equal preference a client that names RDF gets RDF. */
const OFFERED: readonly EndpointView[] = ['text/turtle', 'application/n-triples', 'application/ld+json', 'text/html'];

/**
 * The view a request for the endpoint itself prefers (RFC 9110 section 12.5.1): the offered
 * type the Accept header names with the highest q above 0. Wildcards (`*\/*`, `text/*`) do not
 * count, so a client that does not name a type (curl, a SPARQL client sending `*\/*`) keeps the
 * protocol's answer to a missing query. Undefined when no offered type is named.
 */
export function chooseEndpointView(accept: string | undefined, offered: readonly EndpointView[] = OFFERED): EndpointView | undefined {
  if (accept === undefined) return undefined;
  let best: EndpointView | undefined;
  let bestQ = 0;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const rank = offered.indexOf(type.trim().toLowerCase() as EndpointView);
    if (rank < 0) continue;
    const q = qualityOf(params);
    if (q > bestQ || (q === bestQ && q > 0 && rank < bestRank)) [best, bestQ, bestRank] = [offered[rank], q, rank];
  }
  return best;
}

/** The q parameter (RFC 9110 section 12.4.2), 1 when absent, 0 when malformed. */
function qualityOf(params: readonly string[]): number {
  for (const param of params) {
    const [name = '', value = ''] = param.split('=');
    if (name.trim().toLowerCase() !== 'q') continue;
    return /^\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/.test(value) ? Number(value) : 0;
  }
  return 1;
}
