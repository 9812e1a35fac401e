// A local OIDC-style issuer for tests: keys made with jose, its JWKS served over HTTP on loopback, tokens signed on demand.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** One signing key of the issuer. */
export interface IssuerKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  /** SPKI PEM of the public key (what an operator pastes as auth.jwt.publicKey). */
  readonly publicPem: string;
}

export interface TokenOptions {
  /** Claims beside the defaults (iss, aud, iat, exp one hour ahead); undefined values drop a claim. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** Protected header members beside alg and kid. */
  readonly header?: Readonly<Record<string, unknown>>;
  /** Sign with this key instead of the current one. */
  readonly key?: IssuerKey;
  /** Put this kid in the header instead of the key's own. */
  readonly kid?: string;
}

export interface TestIssuer {
  readonly issuer: string;
  readonly audience: string;
  /** URL of the JWKS document. */
  readonly jwksUri: string;
  /** The key tokens are signed with now (the first of the served set). */
  current(): IssuerKey;
  /** The public JWKS as served now. */
  jwks(): { keys: JWK[] };
  /** GET requests the JWKS endpoint has answered. */
  jwksRequests(): number;
  /** Makes the JWKS endpoint answer `ms` after each request from now on (a key-set fetch held in progress). */
  delayJwks(ms: number): void;
  /** Makes a new key (new kid), serves only it from now on and signs with it. */
  rotate(): Promise<IssuerKey>;
  /** Makes a key that the issuer never publishes (an attacker's). */
  strayKey(alg?: string): Promise<IssuerKey>;
  sign(options?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

let keyCounter = 0;

/** Makes a key pair with jose; `kid` is unique within the test process. */
export async function makeKey(alg = 'RS256'): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  keyCounter += 1;
  const kid = `test-key-${keyCounter}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk, publicPem: await exportSPKI(publicKey) };
}

/** Signs `claims` with `key` as a compact JWS (no defaults added). */
export function signWith(
  key: IssuerKey,
  claims: JWTPayload,
  header: Readonly<Record<string, unknown>> = {},
  kid = key.kid,
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid, typ: 'JWT', ...header }).sign(key.privateKey);
}

/** Starts the issuer on an ephemeral loopback port with one RS256 key. */
export async function startTestIssuer(options: { audience?: string } = {}): Promise<TestIssuer> {
  let keys: IssuerKey[] = [await makeKey('RS256')];
  let requests = 0;
  let delayMs = 0;
  const server: Server = createServer((request, response) => {
    if (request.url !== '/certs') {
      response.writeHead(404).end();
      return;
    }
    requests += 1;
    const answer = () => {
      response.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      response.end(JSON.stringify({ keys: keys.map((key) => key.publicJwk) }));
    };
    if (delayMs === 0) answer();
    else setTimeout(answer, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/realms/test`;
  const audience = options.audience ?? 'sparql';
  return {
    issuer,
    audience,
    jwksUri: `${base}/certs`,
    current: () => keys[0]!,
    jwks: () => ({ keys: keys.map((key) => key.publicJwk) }),
    jwksRequests: () => requests,
    delayJwks: (ms) => {
      delayMs = ms;
    },
    async rotate() {
      const next = await makeKey('ES256');
      keys = [next];
      return next;
    },
    strayKey: (alg = 'RS256') => makeKey(alg),
    sign(tokenOptions = {}) {
      const nowSeconds = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = {
        iss: issuer,
        aud: audience,
        iat: nowSeconds,
        exp: nowSeconds + 3600,
        ...tokenOptions.claims,
      };
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      const key = tokenOptions.key ?? keys[0]!;
      return signWith(key, claims as JWTPayload, tokenOptions.header, tokenOptions.kid ?? key.kid);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A token with `alg: none` (RFC 7519 section 6.1): header and claims, no signature. */
export function unsecuredToken(claims: Readonly<Record<string, unknown>>, kid?: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT', ...(kid === undefined ? {} : { kid }) })}.${part(claims)}.`;
}

/** An HS256 token whose HMAC secret is `secret` (the attack: a public key used as a shared secret). */
export async function hmacToken(claims: Readonly<Record<string, unknown>>, secret: string | Uint8Array, kid?: string): Promise<string> {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...(kid === undefined ? {} : { kid }) }).sign(bytes);
}
