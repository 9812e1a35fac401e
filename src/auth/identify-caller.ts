// Turns the credential headers of a request (API key, Basic, JWT, trusted headers) into a Caller, or refuses with 401 (docs/design/auth.md#identity).

import { isUtf8 } from 'node:buffer';
import { GuardError } from '../guard-error.js';
import type { Caller } from './caller.js';
import { ANONYMOUS_AGENT } from '../vocabulary.js';
import { findAgentIriProblem } from '../iri.js';
import { createJwtVerifier, looksLikeJwt, type JwtSettings } from './create-jwt-verifier.js';
import { hashApiKey } from './hash-api-key.js';

/**
 * The credential settings identification needs (config key `auth`, which satisfies this
 * type): API keys by digest, the trusted headers, JWT bearer tokens.
 */
export interface AuthSettings {
  /** `sha256` is the hex SHA-256 of the key; `groups` may repeat (duplicates are dropped). */
  readonly apiKeys: readonly { readonly agent: string; readonly groups: readonly string[]; readonly sha256: string }[];
  /** Header names as node spells request headers (lower case); agentPrefix '' = the header holds whole IRIs. */
  readonly trustedHeaders: { readonly agent: string; readonly groups: string | undefined; readonly agentPrefix: string } | undefined;
  /** JWT bearer tokens; undefined = not accepted (a JWT-shaped bearer value is then an API key). */
  readonly jwt: JwtSettings | undefined;
}

/** Request headers as node gives them: lower-case names, an array for a repeated header. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The realm named in challenges (RFC 9110 section 11.5). */
const REALM = 'sparql-guard';

const ANONYMOUS: Caller = Object.freeze({ agent: ANONYMOUS_AGENT, groups: Object.freeze([]), authenticated: false, via: 'anonymous' });

/** `<scheme> <credentials>` of an Authorization header (RFC 9110 section 11.4). */
const AUTHORIZATION = /^([^ \t]+)(?:[ \t]+(.*))?$/s;

/** RFC 4648 section 4: the base64 alphabet with padding; Basic credentials use it (RFC 7617 section 2). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What identifyCaller returns: a Caller at once, or a promise when a JWT must be verified. */
export type CallerOrPromise = Caller | Promise<Caller>;

/** The compiled identification: request headers -> Caller, and the memory of the API keys it has matched. */
export interface CallerIdentifier {
  (headers: RequestHeaders): CallerOrPromise;
  /** Forgets the API keys matched so far (each is hashed again on its next use). */
  forgetKeys(): void;
}

/**
 * The `WWW-Authenticate` value of every 401 (RFC 9110 section 11.6.1): the schemes the
 * configuration accepts, Basic (API keys) and Bearer (API keys or JWTs); Bearer alone when
 * no API key is configured, since a 401 must name at least one scheme. Basic comes first, in
 * one header: clients that read only the first challenge (Apache Jena's HTTP client) answer
 * Basic with the key of a `http://user:KEY@host/` URL, and fail on a Bearer they cannot answer.
 * `bearerError` is RFC 6750 section 3.1's code for a bearer token that was sent and failed.
 */
export function authChallenge(auth: AuthSettings, bearerError?: 'invalid_token'): string {
  const bearer = bearerError === undefined ? BEARER_CHALLENGE : `${BEARER_CHALLENGE}, error="${bearerError}"`;
  return auth.apiKeys.length > 0 ? `${BASIC_CHALLENGE}, ${bearer}` : bearer;
}

const BASIC_CHALLENGE = `Basic realm="${REALM}", charset="UTF-8"`;
const BEARER_CHALLENGE = `Bearer realm="${REALM}"`;

/**
 * The challenge of authChallenge as a script in a browser gets it: Bearer first. A browser
 * reads the first challenge of the header line and answers Basic with a login dialog over the
 * page (the Fetch standard lets it prompt for a same-origin request), where the script (the
 * query page, with its own key field) must get the 401 itself. Other values pass unchanged.
 */
export function scriptChallenge(challenge: string): string {
  return challenge.startsWith(`${BASIC_CHALLENGE}, `) ? `${challenge.slice(BASIC_CHALLENGE.length + 2)}, ${BASIC_CHALLENGE}` : challenge;
}

/**
 * Compiles the auth settings once into a function from request headers to the Caller, by
 * the credential order of docs/design/auth.md, "Which credential wins":
 *
 * 1. The caller-held credentials: `Authorization: Bearer <JWT>` (when `auth.jwt` is set and
 *    the value has the shape of a signed JWT), `Authorization: Bearer <key>`,
 *    `Authorization: Basic <user:key>` (the user name is ignored) and `X-API-Key: <key>`.
 *    With X-API-Key beside an Authorization credential, both must carry the same API key;
 *    a JWT beside X-API-Key is a conflict. Any conflict is a 401.
 * 2. When a caller-held credential is present it alone decides; trusted headers are ignored.
 * 3. Otherwise the trusted headers when configured, else the anonymous caller.
 *
 * It throws GuardError 401 with the challenge of authChallenge for an unknown key, a token
 * that does not verify, conflicting, empty or repeated credential headers, an agent header
 * that does not make an agent IRI, and a groups header without an agent header (503 when the
 * issuer's keys cannot be fetched). Messages never echo keys, tokens or header values.
 */
export function createCallerIdentifier(auth: AuthSettings): CallerIdentifier {
  const challenge = Object.freeze({ 'WWW-Authenticate': authChallenge(auth) });
  // RFC 6750 section 3.1: a bearer token that was sent and is unknown, expired or does not verify
  // is named `invalid_token` in its challenge; a request without one, or whose credentials are
  // malformed or conflict, gets the plain challenge.
  const tokenChallenge = Object.freeze({ 'WWW-Authenticate': authChallenge(auth, 'invalid_token') });
  const refuse = (message: string): never => {
    throw new GuardError(401, 'unauthenticated', message, challenge);
  };
  const refuseToken = (message: string): never => {
    throw new GuardError(401, 'unauthenticated', message, tokenChallenge);
  };
  const withChallenge = (error: unknown): never => {
    if (error instanceof GuardError && error.status === 401) throw new GuardError(401, error.code, error.message, tokenChallenge);
    throw error;
  };
  // Keyed by digest, so the secret itself is never compared: no timing leak on the key.
  const callersByDigest = new Map<string, Caller>();
  for (const entry of auth.apiKeys) {
    const caller: Caller = { agent: entry.agent, groups: Object.freeze([...new Set(entry.groups)]), authenticated: true, via: 'api-key' };
    callersByDigest.set(entry.sha256.toLowerCase(), Object.freeze(caller));
  }
  // Keys whose digest matched, by the key (docs/design/auth.md#identity): only a key that is
  // valid enters, so the map holds at most one entry per configured digest, and an unknown
  // key is hashed every time and never stored.
  const callersByKey = new Map<string, Caller>();
  const callerOfKey = (key: string, bearer: boolean): Caller => {
    const known = callersByKey.get(key);
    if (known !== undefined) return known;
    const caller = callersByDigest.get(hashApiKey(key)) ?? (bearer ? refuseToken : refuse)('unknown API key');
    if (callersByKey.size < callersByDigest.size) callersByKey.set(key, caller);
    return caller;
  };
  const jwt = auth.jwt === undefined ? undefined : createJwtVerifier(auth.jwt);
  const trusted = auth.trustedHeaders && {
    agent: auth.trustedHeaders.agent.toLowerCase(),
    groups: auth.trustedHeaders.groups?.toLowerCase(),
    agentPrefix: auth.trustedHeaders.agentPrefix,
  };

  const identifyCaller = (headers: RequestHeaders): CallerOrPromise => {
    const credential = readCredential(headers, jwt !== undefined, refuse);
    if (credential?.kind === 'jwt') return jwt!.verify(credential.value).catch(withChallenge);
    // A caller-held credential wins over trusted headers: it is the stronger, caller-held proof.
    if (credential !== undefined) return callerOfKey(credential.value, credential.bearer);
    if (trusted === undefined) return ANONYMOUS;

    const agentValue = readSingle(headers[trusted.agent], 'the trusted agent header', refuse);
    const groupsValue = trusted.groups === undefined ? undefined : readSingle(headers[trusted.groups], 'the trusted groups header', refuse);
    if (agentValue === undefined) {
      if (groupsValue !== undefined) refuse('the trusted groups header arrived without the trusted agent header');
      return ANONYMOUS;
    }
    if (agentValue === '') refuse('the trusted agent header is empty');
    const agent = trusted.agentPrefix + agentValue;
    const problem = findAgentIriProblem(agent);
    if (problem !== undefined) refuse(`the trusted agent header does not make a valid agent IRI: it ${problem}`);
    return Object.freeze({ agent, groups: Object.freeze(splitGroups(groupsValue)), authenticated: true, via: 'trusted-headers' });
  };
  return Object.assign(identifyCaller, { forgetKeys: () => callersByKey.clear() });
}

/**
 * The lower-case names of every request header that can change who the caller is, for
 * `Vary`: Authorization and X-API-Key always (a key turns anonymous into 401 or a caller
 * even when no keys are configured), and the trusted headers when configured.
 */
export function credentialHeaderNames(auth: AuthSettings): readonly string[] {
  const names = ['authorization', 'x-api-key'];
  if (auth.trustedHeaders !== undefined) {
    names.push(auth.trustedHeaders.agent.toLowerCase());
    if (auth.trustedHeaders.groups !== undefined) names.push(auth.trustedHeaders.groups.toLowerCase());
  }
  return Object.freeze([...new Set(names)]);
}

type Refuse = (message: string) => never;

/** A caller-held credential: an API key (from Bearer, Basic or X-API-Key) or a JWT; `bearer` when `Authorization: Bearer` carried it. */
type Credential = { readonly kind: 'apiKey' | 'jwt'; readonly value: string; readonly bearer: boolean };

/**
 * Leading and trailing whitespace of HTTP, spaces and tabs only (RFC 9110 section 5.6.3).
 * Not String.trim: it also takes U+00A0, the byte A0 of a Latin-1 value, so `bob<A0>`
 * would be taken for the agent `bob` and `hr<A0>` for the group `hr`.
 */
function trimOws(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * One header's value, trimmed (leading and trailing whitespace is not part of a field value,
 * RFC 9110 section 5.5); undefined when absent. A header given twice is ambiguous: 401.
 */
function readSingle(value: string | string[] | undefined, label: string, refuse: Refuse): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return trimOws(value);
  if (value.length === 1 && value[0] !== undefined) return trimOws(value[0]);
  return refuse(`${label} was given more than once`);
}

/** The caller-held credential of the request, if any (rule 1 of createCallerIdentifier). */
function readCredential(headers: RequestHeaders, jwtAccepted: boolean, refuse: Refuse): Credential | undefined {
  const fromAuthorization = readAuthorization(readSingle(headers.authorization, 'the Authorization header', refuse), jwtAccepted, refuse);
  const fromHeader = readSingle(headers['x-api-key'], 'the X-API-Key header', refuse);
  if (fromHeader === '') refuse('the X-API-Key header is empty');
  if (fromHeader === undefined) return fromAuthorization;
  if (fromAuthorization?.kind === 'jwt')
    refuse('the Authorization header carries a JWT and the X-API-Key header an API key; send one credential');
  if (fromAuthorization !== undefined && fromAuthorization.value !== fromHeader) {
    refuse('the Authorization and X-API-Key headers carry different API keys');
  }
  return { kind: 'apiKey', value: fromHeader, bearer: fromAuthorization?.bearer ?? false };
}

/**
 * The credential of `Bearer <key or JWT>` or `Basic <base64 of user:key>` (schemes
 * case-insensitive, RFC 9110 section 11.1). Another scheme (Digest, Negotiate, ...) carries
 * nothing the guard reads and is ignored. An empty header, a scheme without credentials or
 * undecodable Basic credentials: 401.
 */
function readAuthorization(authorization: string | undefined, jwtAccepted: boolean, refuse: Refuse): Credential | undefined {
  if (authorization === undefined) return undefined;
  const match = AUTHORIZATION.exec(authorization);
  if (match === null) return refuse('the Authorization header is empty');
  const scheme = match[1]?.toLowerCase();
  const value = trimOws(match[2] ?? '');
  if (scheme === 'bearer') {
    if (value === '') refuse('the Authorization header has the Bearer scheme but no key');
    return { kind: jwtAccepted && looksLikeJwt(value) ? 'jwt' : 'apiKey', value, bearer: true };
  }
  if (scheme !== 'basic') return undefined;
  if (value === '') refuse('the Authorization header has the Basic scheme but no credentials');
  if (!BASE64.test(value)) refuse('the Basic credentials are not base64');
  const bytes = Buffer.from(value, 'base64');
  // RFC 7617 section 2.1: the challenge says charset="UTF-8". Decoded loosely, bytes that are not
  // UTF-8 would become U+FFFD, and different passwords one key.
  if (!isUtf8(bytes)) refuse('the Basic credentials are not UTF-8');
  const decoded = bytes.toString('utf8');
  // RFC 7617 section 2: user-id ":" password; the user-id holds no colon, the password may.
  const colon = decoded.indexOf(':');
  if (colon < 0) refuse('the Basic credentials have no colon between user name and API key');
  const key = decoded.slice(colon + 1);
  if (key === '') refuse('the Basic credentials carry no API key (put the key in the password)');
  return { kind: 'apiKey', value: key, bearer: false };
}

/** Groups header: comma-separated, items trimmed, empty items dropped, duplicates removed. */
function splitGroups(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  const groups = new Set<string>();
  for (const item of value.split(',')) {
    const group = trimOws(item);
    if (group !== '') groups.add(group);
  }
  return [...groups];
}
