// RFC 3986 reference resolution (5.2.2, with dot-segment removal 5.2.4) of relative IRIs; absolute IRIs stay as written.

import { hasScheme } from '../iri.js';

/** RFC 3986 appendix B: scheme, authority, path, query, fragment of a URI reference. */
const REFERENCE = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;

/**
 * Resolves the relative IRI `reference` against the absolute IRI `base`
 * (RFC 3986 5.2.2, which removes dot segments from merged paths). An absolute
 * `reference` is returned byte for byte: SPARQL 1.1 §4.1.1 resolves relative
 * IRIs only and performs no normalisation, and IRIs compare as strings
 * (W3C test normalization-2). Callers check that `base` is absolute.
 */
export function resolveIri(reference: string, base: string): string {
  if (hasScheme(reference)) return reference;
  // The pattern matches every string.
  const [, , rAuthority, rPath = '', rQuery, rFragment] = REFERENCE.exec(reference)!;
  const [, bScheme, bAuthority, bPath = '', bQuery] = REFERENCE.exec(base)!;
  if (rAuthority !== undefined) {
    return recompose(bScheme, rAuthority, removeDotSegments(rPath), rQuery, rFragment);
  }
  if (rPath === '') {
    return recompose(bScheme, bAuthority, bPath, rQuery ?? bQuery, rFragment);
  }
  const merged = rPath.startsWith('/') ? rPath : mergePaths(bAuthority, bPath, rPath);
  return recompose(bScheme, bAuthority, removeDotSegments(merged), rQuery, rFragment);
}

/**
 * The absolute IRI `iri` with dot segments removed from its path (RFC 3986
 * 5.2.2, first branch), as a store that normalises IRIs (Jena) reads it. Not
 * applied to the query (see resolveIri); used to find IRIs that such a store
 * would take for another one.
 */
export function normaliseIri(iri: string): string {
  // Fast path: most IRIs hold no "." or ".." segment at all.
  if (!iri.includes('/.') && !/^[^/?#]*:\.\.?(?:[/?#]|$)/.test(iri)) return iri;
  const [, scheme, authority, path = '', query, fragment] = REFERENCE.exec(iri)!;
  return recompose(scheme, authority, removeDotSegments(path), query, fragment);
}

/** RFC 3986 5.2.3. */
function mergePaths(baseAuthority: string | undefined, basePath: string, path: string): string {
  if (baseAuthority !== undefined && basePath === '') return '/' + path;
  return basePath.slice(0, basePath.lastIndexOf('/') + 1) + path;
}

/** RFC 3986 5.2.4, step by step on the input buffer as the RFC writes it (rules A to E). */
function removeDotSegments(path: string): string {
  if (!path.includes('.')) return path;
  let input = path;
  let output = '';
  while (input.length > 0) {
    if (input.startsWith('../') || input.startsWith('./')) input = input.slice(input.indexOf('/') + 1);
    else if (input.startsWith('/./') || input === '/.') input = '/' + input.slice(3);
    else if (input.startsWith('/../') || input === '/..') {
      input = '/' + input.slice(4);
      output = output.slice(0, Math.max(0, output.lastIndexOf('/')));
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const end = next === -1 ? input.length : next;
      output += input.slice(0, end);
      input = input.slice(end);
    }
  }
  return output;
}

/** RFC 3986 5.3. */
function recompose(
  scheme: string | undefined,
  authority: string | undefined,
  path: string,
  query: string | undefined,
  fragment: string | undefined,
): string {
  let result = scheme !== undefined ? scheme + ':' : '';
  if (authority !== undefined) result += '//' + authority;
  result += path;
  if (query !== undefined) result += '?' + query;
  if (fragment !== undefined) result += '#' + fragment;
  return result;
}
