// Verifies JWT bearer tokens with jose against the issuer's keys and turns their claims into a Caller (docs/design/auth.md, "JWT bearer tokens").

import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { GuardError } from '../guard-error.js';
import type { Caller } from './caller.js';
import { findAgentIriProblem } from '../iri.js';

/** Where the issuer's public keys come from: its JWKS URL, an inline JWKS, or one PEM public key. */
export type JwtKeySource =
  | { readonly kind: 'jwksUri'; readonly uri: string }
  | { readonly kind: 'jwks'; readonly jwks: Readonly<{ keys: readonly Readonly<Record<string, unknown>>[] }> }
  | { readonly kind: 'publicKey'; readonly pem: string };

/** The settings of JWT verification (`auth.jwt` of the configuration). */
export interface JwtSettings {
  readonly issuer: string;
  /** The token's `aud` must hold one of these. */
  readonly audience: readonly string[];
  readonly keys: JwtKeySource;
  /** JWS algorithms accepted; never `none` nor an HMAC one (the configuration refuses them). */
  readonly algorithms: readonly string[];
  readonly clockToleranceSeconds: number;
  /** Top-level claim whose string value, after `agentPrefix`, is the agent IRI. */
  readonly agentClaim: string;
  readonly agentPrefix: string;
  /** Path of object members down to the groups array, e.g. ["realm_access", "roles"]; undefined = no groups. */
  readonly groupsClaim: readonly string[] | undefined;
  /**
   * Claims named for templates and row rules (`{claim.NAME}`, `?claim_NAME`) by the path of object
   * members where each is, e.g. tenant -> ["https://example.org/tenant"]; a name here is read from its
   * path only, never from a top-level claim of the same name.
   */
  readonly claims: ReadonlyMap<string, readonly string[]>;
  /** Least time between two fetches of the JWKS, whatever the tokens ask for. */
  readonly jwksRefreshCooldownMs: number;
  /** Verified tokens remembered until they expire; 0 = verify every request. */
  readonly cacheMaxEntries: number;
}

/** The asymmetric JWS algorithms of RFC 7518 section 3.1 and RFC 8037; the default of `algorithms`. */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = Object.freeze([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]);

/** Longest bearer token accepted, in characters: real access tokens are a few kilobytes at most. */
export const MAX_TOKEN_LENGTH = 8192;

/** RFC 7515 section 7.1: a JWS compact serialization is three base64url parts joined by dots. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** How long a JWKS fetch may take before verification fails with 503. */
const JWKS_TIMEOUT_MS = 5000;

/** True when `value` has the shape of a signed JWT (it then goes to the verifier, not the API key table). */
export function looksLikeJwt(value: string): boolean {
  return COMPACT_JWS.test(value);
}

/** A verifier: token -> Caller, or GuardError 401 (bad token) / 503 (the issuer's keys cannot be fetched). */
export interface JwtVerifier {
  verify(token: string): Promise<Caller>;
  /** How many times the JWKS was fetched (or a fetch was attempted); 0 for inline keys. */
  jwksFetches(): number;
}

/**
 * Compiles the settings once: the key source (jose's remote JWKS, whose cache refreshes on an
 * unknown `kid` at most once per cooldown, and whose fetches this module spaces out even when
 * they fail), the verify options, and a bounded cache of verified tokens keyed by SHA-256 of the
 * token, each kept no longer than the token's `exp`. Error messages name the failed check,
 * never the token nor a claim value.
 */
export function createJwtVerifier(settings: JwtSettings, now: () => number = Date.now): JwtVerifier {
  let fetches = 0;
  const keys = createKeys(settings, () => {
    fetches += 1;
  });
  const options = {
    issuer: settings.issuer,
    audience: [...settings.audience],
    algorithms: [...settings.algorithms],
    clockTolerance: settings.clockToleranceSeconds,
    // A token without exp would be valid (and cached) forever.
    requiredClaims: ['exp'],
  };
  const cache = new Map<string, { caller: Caller; expiresAtMs: number }>();

  return {
    jwksFetches: () => fetches,
    async verify(token) {
      if (token.length > MAX_TOKEN_LENGTH) refuse(`the bearer token is longer than ${MAX_TOKEN_LENGTH} characters`);
      const digest = settings.cacheMaxEntries > 0 ? createHash('sha256').update(token).digest('base64') : undefined;
      if (digest !== undefined) {
        const hit = cache.get(digest);
        if (hit !== undefined && hit.expiresAtMs > now()) return hit.caller;
        if (hit !== undefined) cache.delete(digest);
      }
      let payload: JWTPayload;
      try {
        payload = (await (typeof keys === 'function' ? jwtVerify(token, keys, options) : jwtVerify(token, keys, options))).payload;
      } catch (error) {
        throw translateJoseError(error);
      }
      const caller = callerOf(payload, settings);
      if (digest !== undefined && typeof payload.exp === 'number') {
        // Oldest first out: Map keeps insertion order, so the bound costs one delete.
        if (cache.size >= settings.cacheMaxEntries) cache.delete(cache.keys().next().value!);
        cache.set(digest, { caller, expiresAtMs: payload.exp * 1000 });
      }
      return caller;
    },
  };
}

function createKeys(settings: JwtSettings, onFetch: () => void): JWTVerifyGetKey | KeyObject {
  const source = settings.keys;
  if (source.kind === 'publicKey') return createPublicKey(source.pem);
  if (source.kind === 'jwks') return createLocalJWKSet(source.jwks as unknown as JSONWebKeySet);
  let lastAttemptMs = Number.NEGATIVE_INFINITY;
  return createRemoteJWKSet(new URL(source.uri), {
    timeoutDuration: JWKS_TIMEOUT_MS,
    cooldownDuration: settings.jwksRefreshCooldownMs,
    // jose waits out the cooldown only after a successful fetch; an issuer that is down
    // would otherwise be asked once per token with an unknown kid.
    [customFetch]: (url, init) => {
      const nowMs = Date.now();
      if (nowMs - lastAttemptMs < settings.jwksRefreshCooldownMs) {
        return Promise.reject(new errors.JWKSTimeout('the JWKS was fetched moments ago'));
      }
      lastAttemptMs = nowMs;
      onFetch();
      return fetch(url, init);
    },
  });
}

/** The Caller a verified payload names; 401 when the agent or groups claim is unusable. */
function callerOf(payload: JWTPayload, settings: JwtSettings): Caller {
  const claim = settings.agentClaim;
  const value = payload[claim];
  if (value === undefined) refuse(`the token has no ${claim} claim`);
  if (typeof value !== 'string' || value === '') refuse(`the token's ${claim} claim is not a non-empty string`);
  const agent = settings.agentPrefix + value;
  const problem = findAgentIriProblem(agent);
  if (problem !== undefined) refuse(`the token's ${claim} claim does not make a valid agent IRI: it ${problem}`);
  return Object.freeze({
    agent,
    groups: Object.freeze(readGroups(payload, settings.groupsClaim)),
    authenticated: true,
    via: 'jwt',
    claims: readClaims(payload, settings.claims),
  });
}

/**
 * The claims graph templates and row rules may read (`{claim.NAME}`, `?claim_NAME`): each top-level
 * claim by its name, then each configured name by its path (replacing a top-level claim of that name;
 * absent at its path = missing). A string claim gives its value, any other (array, object, number,
 * boolean, null) null, so that a template or rule reading it refuses the request rather than guess.
 * The token's length bounds them.
 */
function readClaims(payload: JWTPayload, named: JwtSettings['claims']): ReadonlyMap<string, string | null> {
  const claims = new Map<string, string | null>();
  const valueOf = (value: unknown) => (typeof value === 'string' ? value : null);
  for (const [name, value] of Object.entries(payload)) claims.set(name, valueOf(value));
  for (const [name, path] of named) {
    const value = memberAt(payload, path);
    if (value === undefined) claims.delete(name);
    else claims.set(name, valueOf(value));
  }
  return claims;
}

/** The value at `path` (object members, outermost first) in the payload; undefined when a member is absent. */
function memberAt(payload: JWTPayload, path: readonly string[]): unknown {
  let value: unknown = payload;
  for (const member of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, member)) return undefined;
    value = (value as Record<string, unknown>)[member];
  }
  return value;
}

/** The groups at `path` in the payload: absent = none; anything but an array of clean strings = 401. */
function readGroups(payload: JWTPayload, path: readonly string[] | undefined): string[] {
  if (path === undefined) return [];
  const value = memberAt(payload, path);
  if (value === undefined) return [];
  const label = path.join('.');
  if (!Array.isArray(value) || !value.every((group) => typeof group === 'string')) {
    refuse(`the token's ${label} claim is not an array of strings`);
  }
  const groups = new Set<string>();
  for (const group of value as string[]) {
    // Same rule as the configured groups: a name policies could spell.
    if (group === '' || group.trim() !== group || /[\u0000-\u001f\u007f]/.test(group)) {
      refuse(`the token's ${label} claim holds an empty group name, surrounding spaces or a control character`);
    }
    groups.add(group);
  }
  return [...groups];
}

/** jose's errors by code (its documented, stable `code`), as one-line reasons. */
function translateJoseError(error: unknown): GuardError {
  if (error instanceof GuardError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return unauthorized('the token has expired');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const { claim, reason } = error as errors.JWTClaimValidationFailed;
      // A date claim that is no number ("nbf": "soon") is malformed, not early or late.
      if (reason === 'invalid' && (claim === 'nbf' || claim === 'iat')) return unauthorized(`the token's ${claim} claim is not a number`);
      if (claim === 'iss') return unauthorized('the token is from another issuer');
      if (claim === 'aud') return unauthorized('the token is for another audience');
      if (claim === 'nbf') return unauthorized('the token is not valid yet');
      if (claim === 'iat') return unauthorized('the token was issued in the future');
      return unauthorized(`the token's ${/^[a-z]{1,16}$/.test(claim) ? claim : 'claims'} claim is missing or invalid`);
    }
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      // jose says so for a crit header naming an extension it does not know, too.
      if (/Extension Header Parameter/.test((error as Error).message)) {
        return unauthorized("the token's crit header names an extension the guard does not support");
      }
      return unauthorized('the token is signed with an algorithm that is not accepted');
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return unauthorized("the token's signature does not verify");
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return unauthorized('no key of the issuer matches the token');
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return unauthorized('several keys of the issuer match the token; it needs a kid');
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return unauthorized('the token is not a well-formed signed JWT');
    case 'ERR_JWKS_TIMEOUT':
    case 'ERR_JWKS_INVALID':
    case 'ERR_JOSE_GENERIC':
      return new GuardError(503, 'issuer_unavailable', "the issuer's key set could not be fetched");
    default:
      // A key that does not suit the algorithm (jose throws TypeError), or a fetch that failed.
      if (error instanceof TypeError && /fetch/i.test(error.message))
        return new GuardError(503, 'issuer_unavailable', "the issuer's key set could not be fetched");
      return unauthorized("the token cannot be verified with the issuer's keys");
  }
}

function unauthorized(message: string): GuardError {
  return new GuardError(401, 'unauthenticated', message);
}

function refuse(message: string): never {
  throw unauthorized(message);
}
