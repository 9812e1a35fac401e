// Reads the SPARQL 1.1 Protocol query operation (section 2.1) out of an HTTP request, or refuses it.

import { isAscii } from 'node:buffer';
import { GuardError } from '../guard-error.js';
import { FormNotUtf8Error, parseForm, type FormParams } from '../url-encoded-form.js';
import type { QueryRequest } from '../sparql/query-request.js';

/** The parts of an HTTP request that the query operation is read from. */
export interface RawQueryRequest {
  readonly method: 'GET' | 'POST';
  /** The raw query string of the URL, without the leading `?` (may be empty). */
  readonly search: string;
  /** The Content-Type header, undefined when absent. */
  readonly contentType: string | undefined;
  /** The request body, undefined for GET or an empty body. */
  readonly body: Buffer | undefined;
  /** The Content-Encoding header; absent or undefined when the request has none. */
  readonly contentEncoding?: string | undefined;
  /** The Transfer-Encoding header; absent or undefined when the request has none. */
  readonly transferEncoding?: string | undefined;
}

const FORM = 'application/x-www-form-urlencoded';
const SPARQL_QUERY = 'application/sparql-query';
const SPARQL_UPDATE = 'application/sparql-update';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The names of US-ASCII in IANA's character set registry (its name, preferred MIME name and
 * aliases), lower case: a subset of UTF-8, read as UTF-8. `ascii` is no registered name (the
 * WHATWG Encoding Standard reads it as windows-1252) and stays 415.
 */
const US_ASCII: ReadonlySet<string> = new Set([
  'us-ascii',
  'ansi_x3.4-1968',
  'iso-ir-6',
  'ansi_x3.4-1986',
  'iso_646.irv:1991',
  'iso646-us',
  'us',
  'ibm367',
  'cp367',
  'csascii',
]);
const NONE: readonly string[] = [];

/**
 * Turns an HTTP request into a QueryRequest. Refusals, in this order: 403 for any
 * update (application/sparql-update, an `update` parameter), 400 for an `access_token`
 * parameter, 415 for a body under a content coding, an unsupported Content-Type or charset,
 * 400 for a missing, empty or repeated `query`, or a body or query string that is not UTF-8
 * (percent-escapes included).
 */
export function readQueryRequest(raw: RawQueryRequest): QueryRequest {
  // The query string's bytes (node gives the request line's bytes as latin1 characters).
  const urlParams = raw.search === '' ? EMPTY : readForm(Buffer.from(raw.search, 'latin1'), 'the query string of the URL');
  refuseUpdate(urlParams);
  refuseParameterCredential(urlParams);
  if (raw.method === 'GET') return fromParams(urlParams, EMPTY);

  const { mediaType, charset } = parseContentType(raw.contentType);
  if (mediaType === SPARQL_UPDATE) {
    throw new GuardError(403, 'update', 'updates are not allowed: this endpoint only answers read queries');
  }
  refuseCodings(raw);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    if (!US_ASCII.has(charset)) {
      throw new GuardError(415, 'unsupported_media_type', 'unsupported charset: request bodies must be UTF-8');
    }
    // US-ASCII is UTF-8's first 128 characters; a byte above them is not what the header says.
    if (raw.body !== undefined && !isAscii(raw.body))
      throw new GuardError(400, 'bad_request', 'the request body is not US-ASCII, as its charset says');
  }
  if (mediaType === FORM) {
    const bodyParams = raw.body === undefined ? EMPTY : readForm(raw.body, 'the request body');
    refuseUpdate(bodyParams);
    refuseParameterCredential(bodyParams);
    return fromParams(urlParams, bodyParams);
  }
  if (mediaType === SPARQL_QUERY) {
    // SPARQL 1.1 Protocol 2.1.3: the body is the query; dataset parameters come from the URL.
    if (urlParams.has('query')) {
      throw new GuardError(400, 'bad_request', 'the query was given twice: in the body and as a URL parameter');
    }
    const query = decodeBody(raw.body);
    if (query.trim() === '') throw new GuardError(400, 'bad_request', 'the query is missing: the request body is empty');
    return {
      query,
      defaultGraphs: valuesOf(urlParams, 'default-graph-uri'),
      namedGraphs: valuesOf(urlParams, 'named-graph-uri'),
    };
  }
  throw new GuardError(
    415,
    'unsupported_media_type',
    mediaType === '' ? `POST needs a Content-Type: ${FORM} or ${SPARQL_QUERY}` : `unsupported Content-Type: use ${FORM} or ${SPARQL_QUERY}`,
  );
}

const EMPTY: FormParams = new Map();

function refuseUpdate(params: FormParams): void {
  if (params.has('update')) {
    throw new GuardError(403, 'update', 'updates are not allowed: this endpoint only answers read queries');
  }
}

/**
 * `access_token` (RFC 6750 sections 2.2 and 2.3, a bearer token as a parameter) is never read:
 * a credential in a URL ends up in history, logs and Referer headers. Refused rather than
 * ignored, so the caller does not silently run as anonymous.
 */
function refuseParameterCredential(params: FormParams): void {
  if (params.has('access_token')) {
    throw new GuardError(
      400,
      'credential_in_parameter',
      'credentials are not read from request parameters (access_token): send the key in an Authorization header',
    );
  }
}

/**
 * A body under a content coding (RFC 9110 section 8.4) is refused with 415 and `Accept-Encoding:
 * identity` (section 12.5.3), never read as if it had none: gzip bytes read as text would be
 * "not UTF-8" or, worse, another query. `identity` is no coding. A transfer coding other than
 * chunked (node decodes only that one) is a malformed request, 400 (RFC 9112 section 6.1 says
 * 501, which the contract's statuses do not have). A coding is named only when it is a short
 * token, so the message never carries a client's arbitrary text.
 */
function refuseCodings(raw: RawQueryRequest): void {
  const content = codingsOf(raw.contentEncoding, 'identity');
  if (content.length > 0) {
    throw new GuardError(
      415,
      'unsupported_media_type',
      `the request body has ${named('Content-Encoding', content)}: send it without a content coding`,
      {
        'accept-encoding': 'identity',
      },
    );
  }
  const transfer = codingsOf(raw.transferEncoding, 'chunked');
  if (transfer.length > 0) {
    throw new GuardError(
      400,
      'bad_request',
      `malformed HTTP request: ${named('Transfer-Encoding', transfer)} is not supported: send the body chunked or with a Content-Length`,
    );
  }
}

/** The codings a header lists, lower case, without `plain` (the one that changes nothing). */
function codingsOf(header: string | undefined, plain: string): readonly string[] {
  if (header === undefined) return NONE;
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== plain);
}

function named(header: string, codings: readonly string[]): string {
  return codings.every((coding) => /^[a-z0-9-]{1,24}$/.test(coding)) ? `${header} ${codings.join(', ')}` : `a ${header}`;
}

/** The operation from the URL's parameters and then the body's (SPARQL 1.1 Protocol 2.1.1, 2.1.2). */
function fromParams(url: FormParams, body: FormParams): QueryRequest {
  // A form POST with nothing in the URL, or a GET: one side only, no arrays joined.
  if (url === EMPTY || body === EMPTY) return fromOneSide(url === EMPTY ? body : url);
  const queries = [...valuesOf(url, 'query'), ...valuesOf(body, 'query')];
  if (queries.length > 1) throw new GuardError(400, 'bad_request', 'the query parameter was given more than once');
  const query = queries[0];
  if (query === undefined || query.trim() === '') throw missingQuery(url, body);
  return {
    query,
    defaultGraphs: [...valuesOf(url, 'default-graph-uri'), ...valuesOf(body, 'default-graph-uri')],
    namedGraphs: [...valuesOf(url, 'named-graph-uri'), ...valuesOf(body, 'named-graph-uri')],
  };
}

function fromOneSide(params: FormParams): QueryRequest {
  const queries = valuesOf(params, 'query');
  if (queries.length > 1) throw new GuardError(400, 'bad_request', 'the query parameter was given more than once');
  const query = queries[0];
  if (query === undefined || query.trim() === '') throw missingQuery(params);
  return { query, defaultGraphs: valuesOf(params, 'default-graph-uri'), namedGraphs: valuesOf(params, 'named-graph-uri') };
}

/**
 * The 400 for a request without a query. When a parameter is named `query` but for its case or
 * a leading byte order mark (a form body saved by an editor that writes one: WHATWG's form
 * parser keeps it in the first name), the message names what was sent, since it is no typo the
 * caller can see. Any other name is not echoed.
 */
function missingQuery(...sides: FormParams[]): GuardError {
  for (const params of sides) {
    for (const name of params.keys()) {
      if (name === 'query' || name.replace(/^\uFEFF/, '').toLowerCase() !== 'query') continue;
      const sent = name.startsWith('\uFEFF')
        ? 'a byte order mark (U+FEFF) before `query`: send the body without it'
        : `\`${name}\`: parameter names are case-sensitive`;
      return new GuardError(400, 'bad_request', `the query parameter is missing; the request has ${sent}`);
    }
  }
  return new GuardError(400, 'bad_request', 'the query parameter is missing');
}

function valuesOf(params: FormParams, name: string): readonly string[] {
  return params.get(name) ?? NONE;
}

function decodeBody(body: Buffer | undefined): string {
  if (body === undefined) return '';
  try {
    return utf8.decode(body);
  } catch {
    throw notUtf8();
  }
}

function notUtf8(where = 'the request body'): GuardError {
  return new GuardError(400, 'bad_request', `${where} is not valid UTF-8`);
}

/** A form's parameters; 400 when its bytes, raw or percent-escaped, are not UTF-8 (never U+FFFD in their place). */
function readForm(bytes: Buffer, where: string): FormParams {
  try {
    return parseForm(bytes);
  } catch (error) {
    if (error instanceof FormNotUtf8Error) throw notUtf8(where);
    throw error;
  }
}

/** The last Content-Type parsed and its parts: clients send the same header again and again. */
let lastHeader: string | undefined;
let lastParsed: { readonly mediaType: string; readonly charset: string | undefined } = { mediaType: '', charset: undefined };

/** Splits `type/subtype; charset=x` into a lower-case media type and charset. */
export function parseContentType(header: string | undefined): { readonly mediaType: string; readonly charset: string | undefined } {
  if (header === undefined) return { mediaType: '', charset: undefined };
  if (header === lastHeader) return lastParsed;
  lastParsed = splitContentType(header);
  lastHeader = header;
  return lastParsed;
}

function splitContentType(header: string): { mediaType: string; charset: string | undefined } {
  const [type = '', ...params] = header.split(';');
  let charset: string | undefined;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0) continue;
    if (param.slice(0, eq).trim().toLowerCase() === 'charset') {
      charset = param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
    }
  }
  return { mediaType: type.trim().toLowerCase(), charset };
}
