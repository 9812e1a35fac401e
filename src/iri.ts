// What the guard accepts as an absolute IRI: the scheme, the characters no IRI may hold, and the checks for policy and agent IRIs.

import { GUARD, isReservedIri, reservedIri } from './vocabulary.js';

/** RFC 3986 section 3.1: a scheme is a letter followed by letters, digits, `+`, `-` or `.`, then the colon. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * The characters no IRI the guard accepts may hold, one class for every check (query text,
 * protocol dataset, policies, agents, configuration): white space of any kind, the C0
 * controls, DEL and the C1 controls, and `<>"{}|^` backquote and backslash.
 *
 * The bidirectional formatting characters (BIDI_CONTROL) are refused as RFC 3987 section 4.1 asks.
 *
 * SPARQL 1.1 Query section 19.8 ([139] IRIREF) excludes the punctuation and U+0000-U+0020
 * but lets DEL and the C1 controls (U+007F-U+009F) through; RFC 3987 section 2.2 has no
 * production for any control (`ucschar` starts at U+00A0), and section 6.1 tells to avoid
 * look-alikes of space. Fail closed: an IRI must pass both readings, so the controls the
 * grammar lets through and the Unicode spaces are refused too (docs/design/sparql.md#iris).
 */
export const NOT_IN_IRI = /[\s\u0000-\u0020\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069<>"{}|^`\\]/u;

/**
 * The bidirectional formatting characters (ALM, LRM, RLM, LRE..RLO, LRI..PDI), part of NOT_IN_IRI:
 * RFC 3987 section 4.1 forbids them in IRIs, since they reorder what a person reads in a log or
 * a page. Kept apart for the message that names them.
 */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * Characters that show as nothing: zero-width space, non-joiner and joiner, word joiner, and
 * U+FEFF (zero-width no-break space, also in NOT_IN_IRI as white space). RFC 3987 allows them in
 * IRIs (the joiners shape some scripts and emoji), so queries and graph IRIs may hold them; an
 * agent IRI may not, since two agents that print alike must be one agent.
 */
const INVISIBLE = /[\u200b-\u200d\u2060\ufeff]/u;

/** RFC 3986 appendix B: the path of a URI reference (group 1). */
const PATH = /^(?:[^:/?#]+:)?(?:\/\/[^/?#]*)?([^?#]*)/;

/** True when `iri` starts with a scheme (an absolute IRI, possibly with a fragment). */
export function hasScheme(iri: string): boolean {
  return SCHEME.test(iri);
}

/** True when `iri` has a scheme, holds none of the characters in NOT_IN_IRI and is an IRI as RFC 3987 section 2.2 writes one. */
export function isAbsoluteIri(iri: string): boolean {
  return SCHEME.test(iri) && !NOT_IN_IRI.test(iri) && iriReferenceProblem(iri) === undefined;
}

// RFC 3987 section 2.2, the character classes of an IRI reference (as regular-expression class bodies).
const UCSCHAR =
  '\\u00a0-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\uffef\\u{10000}-\\u{1fffd}\\u{20000}-\\u{2fffd}\\u{30000}-\\u{3fffd}' +
  '\\u{40000}-\\u{4fffd}\\u{50000}-\\u{5fffd}\\u{60000}-\\u{6fffd}\\u{70000}-\\u{7fffd}\\u{80000}-\\u{8fffd}' +
  '\\u{90000}-\\u{9fffd}\\u{a0000}-\\u{afffd}\\u{b0000}-\\u{bfffd}\\u{c0000}-\\u{cfffd}\\u{d0000}-\\u{dfffd}\\u{e1000}-\\u{efffd}';
const IPRIVATE = '\\ue000-\\uf8ff\\u{f0000}-\\u{ffffd}\\u{100000}-\\u{10fffd}';
const IUNRESERVED = `A-Za-z0-9\\-._~${UCSCHAR}`;
const SUB_DELIMS = "!$&'()*+,;=";
const PCT_ENCODED = '%[0-9A-Fa-f]{2}';
/** `*( iunreserved / pct-encoded / sub-delims / extra )`, whole. */
const run = (extra: string): RegExp => new RegExp(`^(?:[${IUNRESERVED}${SUB_DELIMS}${extra}]|${PCT_ENCODED})*$`, 'u');
/** iuserinfo and ireg-name (`:` only in the user information). */
const USERINFO = run(':');
const REG_NAME = run('');
/** ipath-abempty, -absolute, -rootless, -noscheme and -empty: segments of ipchar joined by `/`. */
const IPATH = run(':@/');
const QUERY = run(`:@/?${IPRIVATE}`);
const FRAGMENT = run(':@/?');
const H16 = '[0-9A-Fa-f]{1,4}';
const DEC_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const LS32 = `(?:${H16}:${H16}|${DEC_OCTET}(?:\\.${DEC_OCTET}){3})`;
/** IP-literal's content: IPv6address (RFC 3986 section 3.2.2, its nine forms) or IPvFuture. */
const IP_LITERAL = new RegExp(
  '^(?:' +
    [
      `(?:${H16}:){6}${LS32}`,
      `::(?:${H16}:){5}${LS32}`,
      `(?:${H16})?::(?:${H16}:){4}${LS32}`,
      `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
      `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
      `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
      `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
      `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
      `(?:(?:${H16}:){0,6}${H16})?::`,
      `[vV][0-9A-Fa-f]+\\.[A-Za-z0-9\\-._~${SUB_DELIMS}:]+`,
    ].join('|') +
    ')$',
);
/** RFC 3986 appendix B: scheme, authority, path, query and fragment of any string. */
const REFERENCE_PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/su;

/**
 * Why `reference` is not an IRI reference as RFC 3987 section 2.2 defines one, or undefined when it
 * is. SPARQL 1.1 Query section 19.5 asks this of every IRIREF and every prefixed name after
 * expansion, beyond what the grammar's IRIREF ([139]) checks: a port of digits, a host without `:`,
 * `%` only before two hex digits, `[` and `]` only around an IP literal, no `#` in a fragment, a
 * scheme before any `:` of the first segment. Scheme-specific rules (RFC 3986 section 3's
 * "http" needing an authority, and the like) are not asked. The phrase never repeats the IRI.
 */
export function iriReferenceProblem(reference: string): string | undefined {
  // The pattern matches every string.
  const [, scheme, authority, path = '', query, fragment] = REFERENCE_PARTS.exec(reference)!;
  if (scheme !== undefined && !/^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme)) {
    return 'has a colon in its first segment without a scheme before it';
  }
  if (scheme === undefined && authority === undefined && /^[^/]*:/.test(path)) {
    return 'has a colon in its first segment without a scheme before it';
  }
  if (authority !== undefined) {
    const problem = authorityProblem(authority);
    if (problem !== undefined) return problem;
  }
  if (!IPATH.test(path)) return 'has a character its path may not hold unescaped, or a % not followed by two hex digits';
  if (query !== undefined && !QUERY.test(query)) {
    return 'has a character its query may not hold unescaped, or a % not followed by two hex digits';
  }
  if (fragment !== undefined && !FRAGMENT.test(fragment)) {
    return 'has a character its fragment may not hold unescaped (such as a second #), or a % not followed by two hex digits';
  }
  return undefined;
}

/** RFC 3987 iauthority: `[ iuserinfo "@" ] ihost [ ":" port ]`, ihost an IP literal in brackets or a registered name. */
function authorityProblem(authority: string): string | undefined {
  const at = authority.indexOf('@');
  const userinfo = at < 0 ? undefined : authority.slice(0, at);
  const hostPort = authority.slice(at + 1);
  if (userinfo !== undefined && !USERINFO.test(userinfo)) return 'has a character its user information may not hold unescaped';
  let port: string;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0 || !IP_LITERAL.test(hostPort.slice(1, close))) return 'has a host in brackets that is not an IP literal';
    port = hostPort.slice(close + 1);
  } else {
    const colon = hostPort.indexOf(':');
    const host = colon < 0 ? hostPort : hostPort.slice(0, colon);
    if (!REG_NAME.test(host)) return 'has a character its host may not hold unescaped';
    port = colon < 0 ? '' : hostPort.slice(colon);
  }
  if (port !== '' && !/^:[0-9]*$/.test(port)) return 'has a port that is not a number';
  return undefined;
}

/**
 * Why `value` is not an absolute IRI, as a phrase that repeats no value (`is not an absolute IRI`
 * is said by the caller): it lacks a scheme, holds a character no IRI holds (NOT_IN_IRI), or is no
 * IRI as RFC 3987 writes one. Undefined when isAbsoluteIri takes it.
 */
export function absoluteIriProblem(value: string): string | undefined {
  if (!SCHEME.test(value)) return 'it lacks a scheme such as https:';
  if (BIDI_CONTROL.test(value))
    return 'it holds a bidirectional formatting character (U+202E and its kind), which RFC 3987 forbids in IRIs';
  if (NOT_IN_IRI.test(value))
    return 'it holds white space, a control character or one of <>"{}|^`\\, which no IRI holds: percent-encode it';
  const problem = iriReferenceProblem(value);
  return problem === undefined ? undefined : `RFC 3987: it ${problem}`;
}

/**
 * The longest IRI a policy may grant or hide, in characters. Virtuoso 7.2 keeps an IRI of up to
 * 1,880 characters as written and stores a longer one as its first 1,847 characters and the MD5
 * of the rest (1,879 characters); written in a query, that short form names the long IRI's graph.
 * Below both lengths, no granted IRI is shortened, and none is the short form of another.
 */
export const MAX_GRANTED_IRI_LENGTH = 1800;

/**
 * The reason `iri` may not be a granted graph or a hidden path, or undefined
 * when it may. The planner compares graph and predicate IRIs as exact strings
 * and keeps the query's absolute IRIs byte for byte (SPARQL 1.1 §4.1.1), while
 * some stores remove dot segments (RFC 3986 5.2.4) when they read a query
 * (Jena): a granted `<a/../b>` would be written as is and read as `<b>`. So a
 * policy IRI must be an absolute IRI whose path holds no `.` or `..`
 * segment; then no other spelling the guard lets through names it on a store.
 */
export function iriSpliceProblem(iri: string): string | undefined {
  if (!isAbsoluteIri(iri)) {
    const problem = absoluteIriProblem(iri);
    return `is not a valid absolute SPARQL IRI${problem === undefined ? '' : ` (${problem})`}`;
  }
  if (hasDotSegment(iri)) return 'has dot segments (/./ or /../), which stores may normalise away';
  if (iri.length > MAX_GRANTED_IRI_LENGTH) {
    return `is longer than ${MAX_GRANTED_IRI_LENGTH} characters, and Virtuoso reads a longer IRI as a shorter one another IRI can spell`;
  }
  return undefined;
}

/** RFC 3987 iprivate: private-use characters, which an IRI may hold in its query part only. */
const PRIVATE_USE = new RegExp(`[${IPRIVATE}]`, 'u');

const ASCII_ONLY = /^[\u0000-\u007f]*$/;

/** Unicode's deprecated characters (U+0149, U+0673, U+0F77, U+0F79, U+17A3, U+17A4, U+206A-U+206F and three more). */
const DEPRECATED = /\p{Deprecated}/u;

/**
 * Why a store may refuse to read `iri` in a query text although RFC 3987 and the guard accept it,
 * as a phrase that repeats no IRI, or undefined. Jena 4.5 answers a query naming such an IRI with
 * 500 (Bad IRI: NOT_NFC, PRIVATE_USE_CHARACTER, DEPRECATED_UNICODE_CHARACTER) while it keeps one
 * from a bulk load; RFC 3987 section 5.3.2.2 asks for NFC. The test is NFC itself, a little wider
 * than Jena's; the deprecated characters are the ones Jena refused of every character the guard
 * takes in a path (a scan of the lab's Jena).
 */
export function storeReadingProblem(iri: string): string | undefined {
  // ASCII is NFC and holds neither kind of character: the common case costs one scan (a load judges every IRI).
  if (ASCII_ONLY.test(iri)) return undefined;
  if (iri.normalize('NFC') !== iri) {
    return 'is not in Unicode Normalization Form C (RFC 3987 section 5.3.2.2), and Jena refuses such an IRI in a query';
  }
  if (PRIVATE_USE.test(iri)) return 'holds a private-use character, and Jena refuses such an IRI in a query';
  if (DEPRECATED.test(iri)) return 'holds a deprecated Unicode character, and Jena refuses such an IRI in a query';
  return undefined;
}

/**
 * The reason `prefix` may not be a `guard:readGraphPrefix`, or undefined when it may: it must
 * be an IRI as iriSpliceProblem accepts one (so every graph it grants is written into queries
 * as it is read), name something after its scheme (`https://` alone would grant every https
 * graph), and end in `/` or `#`, so that `.../acme/` can never match `.../acme-evil/`. No prefix
 * may reach into the reserved `urn:x-sparql-guard:` IRIs, compared without case as isReservedIri
 * does.
 */
export function graphPrefixProblem(prefix: string): string | undefined {
  const problem = iriSpliceProblem(prefix);
  if (problem !== undefined) return problem;
  if (!prefix.endsWith('/') && !prefix.endsWith('#'))
    return 'does not end in / or # (so it could match a longer name: .../acme would match .../acme-evil)';
  if (/^[^:]*:[/#]*$/.test(prefix)) return 'names nothing after its scheme';
  const reserved = reservedIri('').toLowerCase();
  if (isReservedIri(prefix) || reserved.startsWith(prefix.toLowerCase()))
    return 'reaches into the IRIs reserved by the rewriter (urn:x-sparql-guard:)';
  return undefined;
}

/**
 * Returns why `iri` cannot be an agent IRI (docs/design/auth.md#identity), as a phrase that never
 * repeats the IRI, or undefined when it can: it must be absolute (have a scheme), hold none
 * of the characters in NOT_IN_IRI nor an invisible one, hold no dot segment in its path (so no claim or
 * header value can name, on a store that normalises, another agent), and lie outside the guard's own
 * namespace (so no caller can pose as `guard:Anonymous`, `guard:Everyone` or `guard:AuthenticatedAgent`).
 */
export function findAgentIriProblem(iri: string): string | undefined {
  if (!SCHEME.test(iri)) return 'is not an absolute IRI (it lacks a scheme such as https:)';
  if (BIDI_CONTROL.test(iri)) return 'holds a bidirectional formatting character (U+202E and its kind), which RFC 3987 forbids in IRIs';
  if (INVISIBLE.test(iri))
    return 'holds an invisible character (a zero-width space, joiner or word joiner), which would make it look like another agent';
  if (NOT_IN_IRI.test(iri)) return 'holds whitespace, a control character or one of <>"{}|^`\\';
  const problem = iriReferenceProblem(iri);
  if (problem !== undefined) return `is not an IRI as RFC 3987 writes one: it ${problem}`;
  // A row rule writes the agent into the query as it is (sparql/write-row-filter.ts), and a store
  // that removes dot segments (Jena) would read `.../users/../staff/root` as `.../staff/root`:
  // the rows of another agent. As for policy IRIs (iriSpliceProblem), no agent holds one.
  if (hasDotSegment(iri)) return 'has dot segments (/./ or /../), which stores may normalise away into another agent';
  if (iri.startsWith(GUARD)) return `lies in the reserved namespace ${GUARD}`;
  // A row rule writes the agent into the query too: as for granted IRIs, Virtuoso would read a
  // longer one's short form (MAX_GRANTED_IRI_LENGTH) as that agent, and match its rows.
  if (iri.length > MAX_GRANTED_IRI_LENGTH) {
    return `is longer than ${MAX_GRANTED_IRI_LENGTH} characters, and Virtuoso reads a longer IRI as a shorter one another IRI can spell`;
  }
  return undefined;
}

/** True when the path of `iri` holds a `.` or `..` segment (RFC 3986 section 5.2.4). */
function hasDotSegment(iri: string): boolean {
  const path = PATH.exec(iri)?.[1] ?? '';
  return path.split('/').some((segment) => segment === '.' || segment === '..');
}

/** Graph names a store reads as other graphs than the one named: Jena's `urn:x-arq:` names, RDF4J's (and Sesame's) `nil`. */
const STORE_ALIAS = /^urn:x-arq:/i;
const STORE_ALIASES: ReadonlySet<string> = new Set(['http://rdf4j.org/schema/rdf4j#nil', 'http://www.openrdf.org/schema/sesame#nil']);

/**
 * Why `iri` cannot be granted as a graph because a store reads it as other graphs, or undefined.
 * On Jena `urn:x-arq:UnionGraph` is every named graph of the store and `urn:x-arq:DefaultGraph`
 * its default graph; on RDF4J `rdf4j:nil` is the graph of triples without one. A template like
 * `urn:{claim.org}:{claim.project}` would otherwise give a caller whose claims are `x-arq` and
 * `UnionGraph` the whole store. The whole `urn:x-arq:` namespace is refused, in any case.
 */
export function storeAliasProblem(iri: string): string | undefined {
  if (STORE_ALIAS.test(iri)) return 'is a name Jena reads as other graphs of the store (urn:x-arq:)';
  if (STORE_ALIASES.has(iri)) return 'is a name RDF4J reads as the graph of triples without one (nil)';
  return undefined;
}
