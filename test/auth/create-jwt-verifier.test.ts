// Proves JWT verification against a real issuer: a JWKS served over HTTP on loopback, keys made with jose, and the attacks on it.

import assert from 'node:assert/strict';
import { KeyObject, sign as cryptoSign } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createJwtVerifier, looksLikeJwt, MAX_TOKEN_LENGTH, type JwtSettings } from '../../src/auth/create-jwt-verifier.js';
import { parseConfig } from '../../src/config/read-config.js';
import { GuardError } from '../../src/guard-error.js';
import { hmacToken, makeKey, signWith, startTestIssuer, unsecuredToken, type TestIssuer } from '../helpers/start-test-issuer.js';

const PREFIX = 'https://idp.example.org/users/';

/** Settings as an operator writes them, read by the real configuration parser. */
function settings(issuer: TestIssuer, extra: Record<string, unknown> = {}): JwtSettings {
  const jwt = {
    issuer: issuer.issuer,
    audience: issuer.audience,
    jwksUri: issuer.jwksUri,
    agentPrefix: PREFIX,
    groupsClaim: 'realm_access.roles',
    jwksRefreshCooldownMs: 1000,
    ...extra,
  };
  const config = parseConfig({ auth: { jwt } }, { configFile: undefined, env: {} });
  assert.ok(config.auth.jwt);
  return config.auth.jwt;
}

/** Expects `promise` to reject with GuardError `status` whose one-line message matches `pattern` and holds no part of `token`. */
async function refused(promise: Promise<unknown>, pattern: RegExp, token = '', status = 401): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof GuardError, `expected GuardError, got ${String(error)}`);
    assert.equal(error.status, status);
    assert.match(error.message, pattern);
    assert.doesNotMatch(error.message, /[\r\n]/);
    for (const part of token.split('.')) if (part.length > 8) assert.ok(!error.message.includes(part), 'message echoes the token');
    return true;
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('JWT verification against a local issuer', () => {
  let issuer: TestIssuer;
  before(async () => {
    issuer = await startTestIssuer();
  });
  after(async () => {
    await issuer.close();
  });

  it('tells JWTs from API keys by shape', () => {
    assert.equal(looksLikeJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln'), true);
    assert.equal(looksLikeJwt('eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.'), true);
    assert.equal(looksLikeJwt('sg_abcdefABCDEF0123456789-_'), false);
    assert.equal(looksLikeJwt('a.b.c.d.e'), false);
    assert.equal(looksLikeJwt('a b.c.d'), false);
  });

  it('gives each caller its agent and groups from the claims (Keycloak-style realm_access.roles)', async () => {
    const verifier = createJwtVerifier(settings(issuer));
    const alice = await verifier.verify(
      await issuer.sign({ claims: { sub: 'alice', realm_access: { roles: ['staff', 'editors', 'staff'] } } }),
    );
    const { claims, ...identity } = alice;
    assert.deepEqual(identity, { agent: `${PREFIX}alice`, groups: ['staff', 'editors'], authenticated: true, via: 'jwt' });
    // The top-level claims graph templates read: strings by value, anything else as null.
    assert.equal(claims?.get('sub'), 'alice');
    assert.equal(claims?.get('realm_access'), null);
    assert.equal(claims?.get('exp'), null);
    assert.equal(claims?.has('roles'), false);
    const bob = await verifier.verify(await issuer.sign({ claims: { sub: 'bob' } }));
    assert.deepEqual(
      { ...bob, claims: undefined },
      { agent: `${PREFIX}bob`, groups: [], authenticated: true, via: 'jwt', claims: undefined },
    );
    assert.ok(Object.isFrozen(alice) && Object.isFrozen(alice.groups));
  });

  it('takes a WebID claim as the whole agent IRI (Solid-OIDC)', async () => {
    const verifier = createJwtVerifier(settings(issuer, { agentClaim: 'webid', agentPrefix: undefined, groupsClaim: undefined }));
    const caller = await verifier.verify(await issuer.sign({ claims: { sub: 'x', webid: 'https://alice.example/profile/card#me' } }));
    assert.equal(caller.agent, 'https://alice.example/profile/card#me');
    await refused(verifier.verify(await issuer.sign({ claims: { sub: 'x' } })), /^the token has no webid claim$/);
  });

  it('reads a groups claim whose member names hold dots, given as an array path', async () => {
    const verifier = createJwtVerifier(settings(issuer, { groupsClaim: ['https://example.org/claims', 'groups'] }));
    const caller = await verifier.verify(
      await issuer.sign({ claims: { sub: 'carol', 'https://example.org/claims': { groups: ['team-a'] } } }),
    );
    assert.deepEqual(caller.groups, ['team-a']);
  });

  it('names claims at a path for templates and row rules (auth.jwt.claims), in place of a top-level claim of that name', async () => {
    const verifier = createJwtVerifier(
      settings(issuer, { claims: { tenant: ['https://example.org/claims/tenant'], org: 'app.org.id', role: ['app', 'role'] } }),
    );
    const caller = await verifier.verify(
      await issuer.sign({
        claims: { sub: 'erin', tenant: 'not-this', 'https://example.org/claims/tenant': 'acme', app: { org: { id: 'o-1' }, role: ['x'] } },
      }),
    );
    assert.equal(caller.claims?.get('tenant'), 'acme');
    assert.equal(caller.claims?.get('org'), 'o-1');
    // Not a string at its path: null, which a template or rule reading it refuses (403).
    assert.equal(caller.claims?.get('role'), null);
    // The top-level claims stay readable by their own names.
    assert.equal(caller.claims?.get('sub'), 'erin');
    assert.equal(caller.claims?.get('https://example.org/claims/tenant'), 'acme');
    // Absent at its path: missing, even where a top-level claim has the name.
    const other = await verifier.verify(await issuer.sign({ claims: { sub: 'fay', tenant: 'acme', org: 'o-1' } }));
    assert.equal(other.claims?.has('tenant'), false);
    assert.equal(other.claims?.has('org'), false);
  });

  it('accepts a token from an inline JWKS and from a PEM public key, without any fetch', async () => {
    const token = await issuer.sign({ claims: { sub: 'dave' } });
    const inline = createJwtVerifier(settings(issuer, { jwksUri: undefined, jwks: issuer.jwks() }));
    assert.equal((await inline.verify(token)).agent, `${PREFIX}dave`);
    const pem = createJwtVerifier(settings(issuer, { jwksUri: undefined, publicKey: issuer.current().publicPem }));
    assert.equal((await pem.verify(token)).agent, `${PREFIX}dave`);
    assert.equal(inline.jwksFetches() + pem.jwksFetches(), 0);
  });

  it('refuses alg none, even naming a known kid', async () => {
    const verifier = createJwtVerifier(settings(issuer));
    const token = unsecuredToken(
      { iss: issuer.issuer, aud: issuer.audience, sub: 'keeper', exp: Math.floor(Date.now() / 1000) + 600 },
      issuer.current().kid,
    );
    await refused(verifier.verify(token), /^the token is signed with an algorithm that is not accepted$/, token);
  });

  it("refuses HS256 signed with the issuer's public key (as PEM, as JWK modulus, as JWK JSON)", async () => {
    const verifier = createJwtVerifier(settings(issuer));
    const pemVerifier = createJwtVerifier(settings(issuer, { jwksUri: undefined, publicKey: issuer.current().publicPem }));
    const claims = { iss: issuer.issuer, aud: issuer.audience, sub: 'keeper', exp: Math.floor(Date.now() / 1000) + 600 };
    const key = issuer.current();
    for (const secret of [key.publicPem, String(key.publicJwk.n), JSON.stringify(key.publicJwk)]) {
      const token = await hmacToken(claims, secret, key.kid);
      await refused(verifier.verify(token), /^the token is signed with an algorithm that is not accepted$/, token);
      await refused(pemVerifier.verify(token), /^the token is signed with an algorithm that is not accepted$/, token);
    }
  });

  it('refuses a token signed by a key the issuer never published, under a published kid', async () => {
    const verifier = createJwtVerifier(settings(issuer));
    const stray = await issuer.strayKey();
    const token = await issuer.sign({ key: stray, kid: issuer.current().kid, claims: { sub: 'keeper' } });
    await refused(verifier.verify(token), /^the token's signature does not verify$/, token);
    // A tampered payload under a genuine signature.
    const genuine = await issuer.sign({ claims: { sub: 'reader' } });
    const [header, , signature] = genuine.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ iss: issuer.issuer, aud: issuer.audience, sub: 'keeper', exp: 9_999_999_999 })).toString('base64url')}.${signature}`;
    await refused(verifier.verify(forged), /^the token's signature does not verify$/, forged);
  });

  it('refuses expired, not yet valid, exp-less, wrong-issuer and wrong-audience tokens', async () => {
    const verifier = createJwtVerifier(settings(issuer, { clockToleranceSeconds: 5 }));
    const now = Math.floor(Date.now() / 1000);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ exp: now - 60 }, /^the token has expired$/],
      [{ nbf: now + 600 }, /^the token is not valid yet$/],
      [{ nbf: 'soon' }, /^the token's nbf claim is not a number$/],
      [{ exp: undefined }, /^the token's exp claim is missing or invalid$/],
      [{ iss: 'https://evil.example.org/realms/test' }, /^the token is from another issuer$/],
      [{ aud: 'another-service' }, /^the token is for another audience$/],
      [{ aud: undefined }, /^the token is for another audience$/],
    ];
    for (const [claims, pattern] of cases) {
      const token = await issuer.sign({ claims: { sub: 'alice', ...claims } });
      await refused(verifier.verify(token), pattern, token);
    }
    // Within the clock tolerance an expired token still passes (clocks of issuer and guard differ).
    assert.equal((await verifier.verify(await issuer.sign({ claims: { sub: 'alice', exp: now - 2 } }))).agent, `${PREFIX}alice`);
  });

  it('names a crit header the guard does not support as such, not as an algorithm', async () => {
    const verifier = createJwtVerifier(settings(issuer));
    // jose will not sign it either: signed here by hand (RS256 is RSASSA-PKCS1-v1_5 over SHA-256).
    const key = issuer.current();
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const input = `${part({ alg: key.alg, kid: key.kid, typ: 'JWT', crit: ['x-ext'], 'x-ext': 1 })}.${part({
      iss: issuer.issuer,
      aud: issuer.audience,
      sub: 'alice',
      exp: Math.floor(Date.now() / 1000) + 60,
    })}`;
    const signature = cryptoSign('sha256', Buffer.from(input), KeyObject.from(key.privateKey)).toString('base64url');
    const token = `${input}.${signature}`;
    await refused(verifier.verify(token), /^the token's crit header names an extension the guard does not support$/, token);
  });

  it('refuses a huge token before any parsing', async () => {
    const verifier = createJwtVerifier(settings(issuer));
    const token = await issuer.sign({ claims: { sub: 'alice', pad: 'x'.repeat(MAX_TOKEN_LENGTH) } });
    await refused(verifier.verify(token), /^the bearer token is longer than 8192 characters$/, token);
  });

  it('refuses claims that break the agent IRI, or that are not strings', async () => {
    const verifier = createJwtVerifier(settings(issuer));
    const noPrefix = createJwtVerifier(settings(issuer, { agentPrefix: undefined }));
    const cases: [ReturnType<typeof createJwtVerifier>, unknown, RegExp][] = [
      [verifier, 'a b', /^the token's sub claim does not make a valid agent IRI: it holds whitespace/],
      [verifier, 'alice>', /^the token's sub claim does not make a valid agent IRI: it holds whitespace, a control character or one of/],
      [verifier, 'x\u0000y', /does not make a valid agent IRI/],
      [verifier, '../staff/root', /^the token's sub claim does not make a valid agent IRI: it has dot segments/],
      [verifier, '', /^the token's sub claim is not a non-empty string$/],
      [verifier, 42, /^the token's sub claim is not a non-empty string$/],
      [verifier, ['alice'], /^the token's sub claim is not a non-empty string$/],
      [verifier, undefined, /^the token has no sub claim$/],
      [noPrefix, 'alice', /^the token's sub claim does not make a valid agent IRI: it is not an absolute IRI/],
      [noPrefix, 'https://w3id.org/sparql-guard#AuthenticatedAgent', /lies in the reserved namespace/],
    ];
    for (const [which, sub, pattern] of cases) {
      const token = await issuer.sign({ claims: { sub } });
      await refused(which.verify(token), pattern, token);
    }
  });

  it('refuses a groups claim of the wrong type, or with unusable names; no claim means no groups', async () => {
    const verifier = createJwtVerifier(settings(issuer));
    for (const roles of ['admins', { admins: true }, [1, 2], ['ok', null], 'staff,admins']) {
      const token = await issuer.sign({ claims: { sub: 'alice', realm_access: { roles } } });
      await refused(verifier.verify(token), /^the token's realm_access\.roles claim is not an array of strings$/, token);
    }
    for (const roles of [[''], [' staff'], ['a\u0007b']]) {
      const token = await issuer.sign({ claims: { sub: 'alice', realm_access: { roles } } });
      await refused(verifier.verify(token), /^the token's realm_access\.roles claim holds an empty group name/, token);
    }
    for (const claims of [{}, { realm_access: 'x' }, { realm_access: ['roles'] }, { realm_access: {} }]) {
      assert.deepEqual((await verifier.verify(await issuer.sign({ claims: { sub: 'alice', ...claims } }))).groups, []);
    }
  });

  it('caches a verified token until it expires, bounded, and then verifies again', async () => {
    let nowMs = Date.now();
    const verifier = createJwtVerifier({ ...settings(issuer), cacheMaxEntries: 2 }, () => nowMs);
    const exp = Math.floor(nowMs / 1000) + 60;
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((sub) => issuer.sign({ claims: { sub, exp } })));
    const first = await verifier.verify(a!);
    assert.equal(await verifier.verify(a!), first, 'a hit returns the same caller object');
    await verifier.verify(b!);
    await verifier.verify(c!);
    assert.notEqual(await verifier.verify(a!), first, 'the oldest entry was evicted past the bound');
    const again = await verifier.verify(a!);
    nowMs = exp * 1000 + 1;
    assert.notEqual(await verifier.verify(a!), again, 'an expired entry is not served from the cache');
    const uncached = createJwtVerifier({ ...settings(issuer), cacheMaxEntries: 0 });
    assert.notEqual(await uncached.verify(a!), await uncached.verify(a!));
  });

  it('fetches the JWKS once, refetches on a rotated key, and refuses the retired key afterwards', async () => {
    const verifier = createJwtVerifier(settings(issuer, { cacheMaxEntries: 0 }));
    const before = issuer.jwksRequests();
    const oldToken = await issuer.sign({ claims: { sub: 'alice' } });
    await Promise.all(Array.from({ length: 5 }, () => verifier.verify(oldToken)));
    assert.equal(issuer.jwksRequests() - before, 1, 'one fetch for concurrent first requests');
    await issuer.rotate();
    await sleep(1100);
    const newToken = await issuer.sign({ claims: { sub: 'bob' } });
    assert.equal((await verifier.verify(newToken)).agent, `${PREFIX}bob`);
    assert.equal(issuer.jwksRequests() - before, 2, 'the unknown kid caused one refetch');
    await refused(verifier.verify(oldToken), /^no key of the issuer matches the token$/, oldToken);
  });

  it('bounds JWKS refetches under a flood of unknown kids', async () => {
    const verifier = createJwtVerifier(settings(issuer, { jwksRefreshCooldownMs: 60_000, cacheMaxEntries: 0 }));
    const before = issuer.jwksRequests();
    await verifier.verify(await issuer.sign({ claims: { sub: 'alice' } }));
    const stray = await issuer.strayKey();
    const flood = await Promise.all(
      Array.from({ length: 200 }, (_, i) => issuer.sign({ key: stray, kid: `flood-${i}`, claims: { sub: 'keeper' } })),
    );
    const results = await Promise.allSettled(flood.map((token) => verifier.verify(token)));
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.ok(result.reason instanceof GuardError && result.reason.status === 401, String(result.reason));
    }
    assert.equal(issuer.jwksRequests() - before, 1, 'no refetch within the cooldown');
    assert.equal(verifier.jwksFetches(), 1);
  });

  it("answers 503 when the issuer's keys cannot be fetched, and does not hammer it", async () => {
    const gone = await startTestIssuer();
    const verifier = createJwtVerifier(settings(gone, { jwksRefreshCooldownMs: 60_000 }));
    const token = await gone.sign({ claims: { sub: 'alice' } });
    await gone.close();
    await refused(verifier.verify(token), /^the issuer's key set could not be fetched$/, token, 503);
    await Promise.allSettled(Array.from({ length: 20 }, () => verifier.verify(token)));
    assert.equal(verifier.jwksFetches(), 1, 'a failed fetch also waits out the cooldown');
  });

  it('refuses a key of the wrong type for the algorithm (an EC token against an RSA PEM)', async () => {
    const ec = await makeKey('ES256');
    const verifier = createJwtVerifier(settings(issuer, { jwksUri: undefined, publicKey: issuer.current().publicPem }));
    const token = await signWith(ec, { iss: issuer.issuer, aud: issuer.audience, sub: 'alice', exp: Math.floor(Date.now() / 1000) + 60 });
    await refused(
      verifier.verify(token),
      /^the token cannot be verified with the issuer's keys$|^the token's signature does not verify$/,
      token,
    );
  });
});
