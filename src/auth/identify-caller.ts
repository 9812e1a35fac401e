// Turns the credential headers of a request into a Caller, or refuses with 401 (DESIGN section 4).

import type { GuardConfig } from '../config/read-config.js';
import { GuardError } from '../guard-error.js';
import { ANONYMOUS_AGENT, type Caller } from './caller.js';
import { findAgentIriProblem } from './find-agent-iri-problem.js';
import { hashApiKey } from './hash-api-key.js';

/** Request headers as node gives them: lower-case names, an array for a repeated header. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** RFC 6750 section 3: a 401 names the scheme the client should use. */
const CHALLENGE = Object.freeze({ 'WWW-Authenticate': 'Bearer' });

const ANONYMOUS: Caller = Object.freeze({ agent: ANONYMOUS_AGENT, groups: Object.freeze([]), authenticated: false });

/** `<scheme> <credentials>` of an Authorization header (RFC 9110 section 11.4). */
const AUTHORIZATION = /^(\S+)(?:\s+(.*))?$/s;

/**
 * Compiles the auth settings once into a function from request headers to the Caller:
 * an API key (`Authorization: Bearer <key>` or `X-API-Key: <key>`) looked up by its SHA-256
 * digest, else the trusted headers when configured, else the anonymous caller. It throws
 * GuardError 401 with `WWW-Authenticate: Bearer` for an unknown key, two different keys,
 * empty or repeated credential headers, an agent header that does not make an agent IRI,
 * and a groups header without an agent header. Messages never echo keys or header values.
 */
export function createCallerIdentifier(auth: GuardConfig['auth']): (headers: RequestHeaders) => Caller {
  // Keyed by digest, so the secret itself is never compared: no timing leak on the key.
  const callersByDigest = new Map<string, Caller>();
  for (const entry of auth.apiKeys) {
    const caller: Caller = { agent: entry.agent, groups: Object.freeze([...new Set(entry.groups)]), authenticated: true };
    callersByDigest.set(entry.sha256.toLowerCase(), Object.freeze(caller));
  }
  const trusted = auth.trustedHeaders && {
    agent: auth.trustedHeaders.agent.toLowerCase(),
    groups: auth.trustedHeaders.groups?.toLowerCase(),
    agentPrefix: auth.trustedHeaders.agentPrefix,
  };

  return function identifyCaller(headers: RequestHeaders): Caller {
    const key = readApiKey(headers);
    // An API key wins over trusted headers: the key is the stronger, caller-held proof.
    if (key !== undefined) return callersByDigest.get(hashApiKey(key)) ?? refuse('unknown API key');
    if (trusted === undefined) return ANONYMOUS;

    const agentValue = readSingle(headers[trusted.agent], 'the trusted agent header');
    const groupsValue = trusted.groups === undefined ? undefined : readSingle(headers[trusted.groups], 'the trusted groups header');
    if (agentValue === undefined) {
      if (groupsValue !== undefined) refuse('the trusted groups header arrived without the trusted agent header');
      return ANONYMOUS;
    }
    if (agentValue === '') refuse('the trusted agent header is empty');
    const agent = trusted.agentPrefix + agentValue;
    const problem = findAgentIriProblem(agent);
    if (problem !== undefined) refuse(`the trusted agent header does not make a valid agent IRI: it ${problem}`);
    return Object.freeze({ agent, groups: Object.freeze(splitGroups(groupsValue)), authenticated: true });
  };
}

/**
 * The lower-case names of every request header that can change who the caller is, for
 * `Vary`: Authorization and X-API-Key always (a key turns anonymous into 401 or a caller
 * even when no keys are configured), and the trusted headers when configured.
 */
export function credentialHeaderNames(auth: GuardConfig['auth']): readonly string[] {
  const names = ['authorization', 'x-api-key'];
  if (auth.trustedHeaders !== undefined) {
    names.push(auth.trustedHeaders.agent.toLowerCase());
    if (auth.trustedHeaders.groups !== undefined) names.push(auth.trustedHeaders.groups.toLowerCase());
  }
  return Object.freeze([...new Set(names)]);
}

function refuse(message: string): never {
  throw new GuardError(401, message, CHALLENGE);
}

/**
 * One header's value, trimmed (leading and trailing whitespace is not part of a field value,
 * RFC 9110 section 5.5); undefined when absent. A header given twice is ambiguous: 401.
 */
function readSingle(value: string | string[] | undefined, label: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value.trim();
  if (value.length === 1 && value[0] !== undefined) return value[0].trim();
  return refuse(`${label} was given more than once`);
}

/** The API key of the request, if it presents one; both headers must then agree. */
function readApiKey(headers: RequestHeaders): string | undefined {
  const fromAuthorization = readBearerKey(readSingle(headers.authorization, 'the Authorization header'));
  const fromHeader = readSingle(headers['x-api-key'], 'the X-API-Key header');
  if (fromHeader === '') refuse('the X-API-Key header is empty');
  if (fromAuthorization !== undefined && fromHeader !== undefined && fromAuthorization !== fromHeader) {
    refuse('the Authorization and X-API-Key headers carry different API keys');
  }
  return fromAuthorization ?? fromHeader;
}

/**
 * The key of `Bearer <key>` (scheme case-insensitive, RFC 9110 section 11.1). Another scheme
 * (Basic, Digest, ...) is not an API key and is ignored. An empty header or a Bearer without
 * a key is an empty credential: 401.
 */
function readBearerKey(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const match = AUTHORIZATION.exec(authorization);
  if (match === null) return refuse('the Authorization header is empty');
  if (match[1]?.toLowerCase() !== 'bearer') return undefined;
  const key = (match[2] ?? '').trim();
  if (key === '') refuse('the Authorization header has the Bearer scheme but no key');
  return key;
}

/** Groups header: comma-separated, items trimmed, empty items dropped, duplicates removed. */
function splitGroups(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  const groups = new Set<string>();
  for (const item of value.split(',')) {
    const group = item.trim();
    if (group !== '') groups.add(group);
  }
  return [...groups];
}
