// Proves every identity rule of docs/design/auth.md#identity against a configuration read from a real file.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Caller } from '../../src/auth/caller.js';
import { ANONYMOUS_AGENT } from '../../src/vocabulary.js';
import { hashApiKey } from '../../src/auth/hash-api-key.js';
import { createCallerIdentifier, credentialHeaderNames, type RequestHeaders } from '../../src/auth/identify-caller.js';
import { parseConfig, readConfig } from '../../src/config/read-config.js';
import { GuardError } from '../../src/guard-error.js';

const ALICE_KEY = 'sg_alice-test-key';
const BOB_KEY = 'sg_bob-test-key';
const config = readConfig({ GUARD_CONFIG: 'test/fixtures/auth/keys-and-headers.json' });

/** The identifier of `auth`, asserting that it answers at once (only a JWT makes it wait). */
function syncIdentifier(auth: Parameters<typeof createCallerIdentifier>[0]): (headers: RequestHeaders) => Caller {
  const identifyCaller = createCallerIdentifier(auth);
  return (headers) => {
    const caller = identifyCaller(headers);
    assert.ok(!(caller instanceof Promise), 'answered at once');
    return caller;
  };
}

const identify = syncIdentifier(config.auth);
const keysOnly = syncIdentifier(parseConfig({ auth: { apiKeys: config.auth.apiKeys } }, { configFile: undefined, env: {} }).auth);

const anonymous: Caller = { agent: ANONYMOUS_AGENT, groups: [], authenticated: false, via: 'anonymous' };
const alice: Caller = { agent: 'https://example.org/agents/alice', groups: ['staff', 'editors'], authenticated: true, via: 'api-key' };
const bob: Caller = { agent: 'https://example.org/agents/bob', groups: [], authenticated: true, via: 'api-key' };

/** Expects a 401 with the challenge of the configured schemes (Bearer, and Basic when keys are configured), a one-line message matching `pattern`, echoing no header value. */
function refused(headers: RequestHeaders, pattern: RegExp, identifyCaller: (headers: RequestHeaders) => unknown = identify): void {
  assert.throws(
    () => identifyCaller(headers),
    (error: unknown) => {
      assert.ok(error instanceof GuardError, `expected GuardError, got ${String(error)}`);
      assert.equal(error.status, 401);
      assert.match(
        error.headers['WWW-Authenticate'] ?? '',
        /^(Basic realm="sparql-guard", charset="UTF-8", )?Bearer realm="sparql-guard"(, error="invalid_token")?$/,
      );
      assert.match(error.message, pattern);
      assert.doesNotMatch(error.message, /[\r\n]/);
      for (const value of Object.values(headers).flat()) {
        const secret = (value ?? '').replace(/^\s*(bearer|basic)\b/i, '').trim();
        if (secret.length > 2) assert.ok(!error.message.includes(secret), 'message echoes a header value');
      }
      return true;
    },
  );
}

describe('the fixture', () => {
  it('stores the digests of the test keys', () => {
    assert.deepEqual(
      config.auth.apiKeys.map((entry) => entry.sha256),
      [hashApiKey(ALICE_KEY), hashApiKey(BOB_KEY)],
    );
  });
});

describe('no credentials', () => {
  it('gives the anonymous caller', () => {
    assert.deepEqual(identify({}), anonymous);
    assert.deepEqual(identify({ accept: '*/*', cookie: 'a=b' }), anonymous);
  });
});

describe('API keys', () => {
  it('identifies a caller by Authorization: Bearer', () => {
    assert.deepEqual(identify({ authorization: `Bearer ${ALICE_KEY}` }), alice);
    assert.deepEqual(identify({ authorization: `Bearer ${BOB_KEY}` }), bob);
  });

  it('takes the scheme in any case and one or more spaces', () => {
    assert.deepEqual(identify({ authorization: `bearer ${ALICE_KEY}` }), alice);
    assert.deepEqual(identify({ authorization: `BEARER    ${ALICE_KEY}` }), alice);
    assert.deepEqual(identify({ authorization: `  Bearer ${ALICE_KEY}  ` }), alice);
  });

  it('identifies a caller by X-API-Key', () => {
    assert.deepEqual(identify({ 'x-api-key': ALICE_KEY }), alice);
  });

  it('accepts the same key in both headers', () => {
    assert.deepEqual(identify({ authorization: `Bearer ${BOB_KEY}`, 'x-api-key': BOB_KEY }), bob);
  });

  it('refuses two different keys', () => {
    refused(
      { authorization: `Bearer ${ALICE_KEY}`, 'x-api-key': BOB_KEY },
      /^the Authorization and X-API-Key headers carry different API keys$/,
    );
  });

  it('refuses an unknown key, in either header', () => {
    refused({ authorization: 'Bearer sg_not-a-key' }, /^unknown API key$/);
    refused({ 'x-api-key': 'sg_not-a-key' }, /^unknown API key$/);
    refused({ 'x-api-key': ALICE_KEY.toUpperCase() }, /^unknown API key$/);
    refused({ authorization: `Bearer ${ALICE_KEY} extra` }, /^unknown API key$/);
  });

  it('refuses any key when none are configured', () => {
    const noKeys = syncIdentifier({ apiKeys: [], trustedHeaders: undefined, jwt: undefined });
    refused({ authorization: `Bearer ${ALICE_KEY}` }, /^unknown API key$/, noKeys);
  });

  it('ignores Authorization with a scheme other than Bearer and Basic', () => {
    assert.deepEqual(identify({ authorization: 'Digest username="alice"' }), anonymous);
    assert.deepEqual(identify({ authorization: 'Bearerx abc' }), anonymous);
    assert.deepEqual(identify({ authorization: 'Negotiate YWxpY2U6c2VjcmV0', 'x-api-key': BOB_KEY }), bob);
    assert.deepEqual(
      identify({ authorization: 'Negotiate YWxpY2U6c2VjcmV0', 'x-remote-user': 'carol' }).agent,
      'https://idp.example.org/users/carol',
    );
  });

  it('names Bearer, and Basic only when keys are configured, in the challenge', () => {
    assert.throws(
      () => identify({ 'x-api-key': 'sg_nope' }),
      (error: GuardError) =>
        error.headers['WWW-Authenticate'] === 'Basic realm="sparql-guard", charset="UTF-8", Bearer realm="sparql-guard"',
    );
    const headersOnly = syncIdentifier(
      parseConfig({ auth: { trustedHeaders: { agent: 'X-Agent' } } }, { configFile: undefined, env: {} }).auth,
    );
    assert.throws(
      () => headersOnly({ 'x-api-key': 'sg_nope' }),
      (error: GuardError) => error.headers['WWW-Authenticate'] === 'Bearer realm="sparql-guard"',
    );
  });
  it('names invalid_token (RFC 6750) only for a bearer token that was sent and failed', () => {
    const challengeOf = (headers: RequestHeaders, identifyCaller: (headers: RequestHeaders) => unknown = identify): string => {
      try {
        identifyCaller(headers);
      } catch (error) {
        assert.ok(error instanceof GuardError && error.status === 401, String(error));
        return error.headers['WWW-Authenticate'] ?? '';
      }
      assert.fail('expected a 401');
    };
    const basicAndBearer = 'Basic realm="sparql-guard", charset="UTF-8", Bearer realm="sparql-guard"';
    assert.equal(challengeOf({ authorization: 'Bearer sg_not-a-key' }), `${basicAndBearer}, error="invalid_token"`);
    assert.equal(
      challengeOf({ authorization: 'Bearer sg_not-a-key', 'x-api-key': 'sg_not-a-key' }),
      `${basicAndBearer}, error="invalid_token"`,
    );
    const noKeys = syncIdentifier({ apiKeys: [], trustedHeaders: undefined, jwt: undefined });
    assert.equal(challengeOf({ authorization: 'Bearer sg_not-a-key' }, noKeys), 'Bearer realm="sparql-guard", error="invalid_token"');
    // No bearer token sent, or one that is not a token's failure: the plain challenge.
    assert.equal(challengeOf({ 'x-api-key': 'sg_not-a-key' }), basicAndBearer);
    assert.equal(challengeOf({ authorization: `Basic ${Buffer.from('u:sg_not-a-key').toString('base64')}` }), basicAndBearer);
    assert.equal(challengeOf({ authorization: 'Bearer' }), basicAndBearer);
    assert.equal(challengeOf({ authorization: `Bearer ${ALICE_KEY}`, 'x-api-key': BOB_KEY }), basicAndBearer);
  });

  it('refuses empty credentials', () => {
    refused({ 'x-api-key': '' }, /^the X-API-Key header is empty$/);
    refused({ 'x-api-key': '   ' }, /^the X-API-Key header is empty$/);
    refused({ authorization: 'Bearer' }, /^the Authorization header has the Bearer scheme but no key$/);
    refused({ authorization: 'Bearer    ' }, /^the Authorization header has the Bearer scheme but no key$/);
    refused({ authorization: '' }, /^the Authorization header is empty$/);
  });

  it('refuses a credential header given twice', () => {
    refused({ 'x-api-key': [ALICE_KEY, ALICE_KEY] }, /^the X-API-Key header was given more than once$/);
    refused({ authorization: [`Bearer ${ALICE_KEY}`, `Bearer ${BOB_KEY}`] }, /^the Authorization header was given more than once$/);
    assert.deepEqual(identify({ 'x-api-key': [ALICE_KEY] }), alice);
  });

  it('wins over trusted headers', () => {
    assert.deepEqual(identify({ 'x-api-key': BOB_KEY, 'x-remote-user': 'carol', 'x-remote-groups': 'admins' }), bob);
    // Trusted headers are not even read, so a malformed one does not matter.
    assert.deepEqual(identify({ 'x-api-key': BOB_KEY, 'x-remote-user': '' }), bob);
  });

  it('returns the same frozen caller object per key, so no request can alter another', () => {
    const first = identify({ 'x-api-key': ALICE_KEY });
    assert.equal(identify({ authorization: `Bearer ${ALICE_KEY}` }), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.groups));
  });
});

describe('matched API keys, remembered', () => {
  it('answer a key seen before with its caller, in every header, and again after forgetKeys', () => {
    const identifyCaller = createCallerIdentifier(config.auth);
    for (let round = 0; round < 2; round += 1) {
      for (let i = 0; i < 3; i += 1) {
        assert.deepEqual(identifyCaller({ authorization: `Bearer ${ALICE_KEY}` }), alice);
        assert.deepEqual(identifyCaller({ 'x-api-key': BOB_KEY }), bob);
        assert.deepEqual(identifyCaller({ authorization: `Basic ${Buffer.from(`u:${ALICE_KEY}`).toString('base64')}` }), alice);
      }
      identifyCaller.forgetKeys();
    }
  });

  it('never let a near miss of a remembered key in: each near miss is refused, before and after the key was seen', () => {
    const identifyCaller = createCallerIdentifier(config.auth);
    const nearMisses = [
      ALICE_KEY.slice(0, -1),
      `${ALICE_KEY}x`,
      ALICE_KEY.toUpperCase(),
      `${ALICE_KEY.slice(0, -1)}${String.fromCharCode(ALICE_KEY.charCodeAt(ALICE_KEY.length - 1) + 1)}`,
      `x${ALICE_KEY.slice(1)}`,
      ALICE_KEY.replace('_', '\uFF3F'),
    ];
    for (const miss of nearMisses) refused({ 'x-api-key': miss }, /unknown API key/, identifyCaller);
    assert.deepEqual(identifyCaller({ 'x-api-key': ALICE_KEY }), alice);
    for (let i = 0; i < 2; i += 1) for (const miss of nearMisses) refused({ 'x-api-key': miss }, /unknown API key/, identifyCaller);
    assert.deepEqual(identifyCaller({ 'x-api-key': ALICE_KEY }), alice);
  });

  it('remember no unknown key: a flood of them neither admits one nor pushes out a known key', () => {
    const identifyCaller = createCallerIdentifier(config.auth);
    assert.deepEqual(identifyCaller({ 'x-api-key': BOB_KEY }), bob);
    for (let i = 0; i < 5_000; i += 1) refused({ 'x-api-key': `sg_flood-${i}` }, /unknown API key/, identifyCaller);
    refused({ 'x-api-key': 'sg_flood-0' }, /unknown API key/, identifyCaller);
    assert.deepEqual(identifyCaller({ 'x-api-key': BOB_KEY }), bob);
  });

  it('belong to one configuration: a key remembered by one identifier is unknown to another that lacks it', () => {
    const withAlice = createCallerIdentifier(config.auth);
    assert.deepEqual(withAlice({ 'x-api-key': ALICE_KEY }), alice);
    const bobOnly = createCallerIdentifier({
      ...config.auth,
      apiKeys: config.auth.apiKeys.filter((entry) => entry.sha256 === hashApiKey(BOB_KEY)),
    });
    refused({ 'x-api-key': ALICE_KEY }, /unknown API key/, bobOnly);
    assert.deepEqual(withAlice({ 'x-api-key': ALICE_KEY }), alice);
  });
});

describe('HTTP Basic carrying an API key', () => {
  const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

  it('takes the password as the key and ignores the user name', () => {
    assert.deepEqual(identify({ authorization: basic(`:${ALICE_KEY}`) }), alice);
    assert.deepEqual(identify({ authorization: basic(`anyone:${ALICE_KEY}`) }), alice);
    assert.deepEqual(identify({ authorization: `basic ${Buffer.from(`bob:${BOB_KEY}`).toString('base64')}` }), bob);
    // The user name cannot pose as another caller: the key alone decides.
    assert.deepEqual(identify({ authorization: basic(`alice:${BOB_KEY}`) }), bob);
  });

  it('is the same credential as the key in X-API-Key or Bearer', () => {
    assert.equal(identify({ authorization: basic(`u:${ALICE_KEY}`) }), identify({ authorization: `Bearer ${ALICE_KEY}` }));
    assert.deepEqual(identify({ authorization: basic(`u:${BOB_KEY}`), 'x-api-key': BOB_KEY }), bob);
    refused(
      { authorization: basic(`u:${ALICE_KEY}`), 'x-api-key': BOB_KEY },
      /^the Authorization and X-API-Key headers carry different API keys$/,
    );
  });

  it('wins over trusted headers', () => {
    assert.deepEqual(identify({ authorization: basic(`u:${BOB_KEY}`), 'x-remote-user': 'carol' }), bob);
  });

  it('refuses unknown, missing or undecodable credentials', () => {
    refused({ authorization: basic('alice:secret') }, /^unknown API key$/);
    refused({ authorization: basic(`${ALICE_KEY}`) }, /^the Basic credentials have no colon between user name and API key$/);
    refused({ authorization: basic('alice:') }, /^the Basic credentials carry no API key/);
    refused({ authorization: 'Basic' }, /^the Authorization header has the Basic scheme but no credentials$/);
    refused({ authorization: 'Basic not*base64!' }, /^the Basic credentials are not base64$/);
    refused({ authorization: 'Basic YWxpY2U6c2VjcmV0=' }, /^the Basic credentials are not base64$/);
    // Read loosely, both would be the key "sg_\uFFFD": one key for any byte that is not UTF-8.
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80]]) {
      const credentials = Buffer.concat([Buffer.from('u:sg_'), Buffer.from(bad)]).toString('base64');
      refused({ authorization: `Basic ${credentials}` }, /^the Basic credentials are not UTF-8$/);
    }
    assert.deepEqual(identify({ authorization: basic(`ünïcode:${BOB_KEY}`) }), bob, 'a UTF-8 user name is read');
  });
});

describe('trusted headers', () => {
  it('form the agent from agentPrefix and the header value, with trimmed, deduplicated groups', () => {
    assert.deepEqual(identify({ 'x-remote-user': 'carol', 'x-remote-groups': ' staff, ,admins,staff ,, ' }), {
      agent: 'https://idp.example.org/users/carol',
      groups: ['staff', 'admins'],
      authenticated: true,
      via: 'trusted-headers',
    });
  });

  it('give no groups without a groups header or with an empty one', () => {
    assert.deepEqual(identify({ 'x-remote-user': 'carol' }).groups, []);
    assert.deepEqual(identify({ 'x-remote-user': 'carol', 'x-remote-groups': '' }).groups, []);
    assert.deepEqual(identify({ 'x-remote-user': 'carol', 'x-remote-groups': ' , ' }).groups, []);
  });

  it('refuse an empty agent header', () => {
    refused({ 'x-remote-user': '' }, /^the trusted agent header is empty$/);
    refused({ 'x-remote-user': '  ' }, /^the trusted agent header is empty$/);
  });

  it('refuse an agent that is not an absolute IRI or holds forbidden characters', () => {
    for (const value of [
      'car ol',
      'carol<',
      'a>b',
      'a"b',
      'a{b',
      'a}b',
      'a|b',
      'a^b',
      'a`b',
      'a\\b',
      'a\tb',
      'a\u0001b',
      'a\u007fb',
      'a\u0085b',
    ]) {
      refused(
        { 'x-remote-user': value },
        /^the trusted agent header does not make a valid agent IRI: it holds whitespace, a control character/,
      );
    }
    const noPrefix = syncIdentifier(
      parseConfig({ auth: { trustedHeaders: { agent: 'X-Agent' } } }, { configFile: undefined, env: {} }).auth,
    );
    assert.deepEqual(noPrefix({ 'x-agent': 'mailto:carol@example.org' }).agent, 'mailto:carol@example.org');
    refused({ 'x-agent': 'carol' }, /^the trusted agent header does not make a valid agent IRI: it is not an absolute IRI/, noPrefix);
    refused({ 'x-agent': 'https://w3id.org/sparql-guard#Anonymous' }, /it lies in the reserved namespace/, noPrefix);
    refused({ 'x-agent': 'https://w3id.org/sparql-guard#AuthenticatedAgent' }, /it lies in the reserved namespace/, noPrefix);
    // A store that removes dot segments (Jena) would read the agent of a row rule as another's.
    refused({ 'x-remote-user': '../staff/root' }, /^the trusted agent header does not make a valid agent IRI: it has dot segments/);
    refused({ 'x-agent': 'https://example.org/agents/./carol' }, /it has dot segments/, noPrefix);
  });

  it('trim only the spaces and tabs of HTTP: a byte A0 (no-break space) is part of the name', () => {
    // String.trim took U+00A0 too: `carol<A0>` was the agent carol, `staff<A0>` the group staff.
    const caller = (() => {
      try {
        return identify({ 'x-remote-user': 'carol\u00a0', 'x-remote-groups': 'staff\u00a0, \u00a0admins' });
      } catch (error) {
        assert.ok(error instanceof GuardError && error.status === 401, String(error));
        return undefined;
      }
    })();
    if (caller !== undefined) assert.notEqual(caller.agent, 'https://idp.example.org/users/carol');
    assert.deepEqual(identify({ 'x-remote-user': 'carol', 'x-remote-groups': 'staff\u00a0, \u00a0admins' }).groups, [
      'staff\u00a0',
      '\u00a0admins',
    ]);
    assert.deepEqual(identify({ 'x-remote-user': ' \tcarol\t ', 'x-remote-groups': '\tstaff\t' }), {
      agent: 'https://idp.example.org/users/carol',
      groups: ['staff'],
      authenticated: true,
      via: 'trusted-headers',
    });
    refused({ 'x-api-key': `${ALICE_KEY}\u00a0` }, /^unknown API key$/);
    // Nor does it part a scheme from its credentials: `Bearer<A0>key` is no Bearer key.
    assert.equal(identify({ authorization: `Bearer \t${ALICE_KEY}` }).via, 'api-key');
    // An unknown scheme is none the guard reads: ignored, as any other.
    assert.equal(identify({ authorization: `Bearer\u00a0${ALICE_KEY}` }).via, 'anonymous');
  });

  it('refuse a groups header without an agent header', () => {
    refused({ 'x-remote-groups': 'admins' }, /^the trusted groups header arrived without the trusted agent header$/);
  });

  it('refuse a trusted agent header that node joined from two (", " holds a space)', () => {
    refused({ 'x-remote-user': 'carol, mallory' }, /^the trusted agent header does not make a valid agent IRI: it holds whitespace/);
  });

  it('refuse a trusted header given twice', () => {
    refused({ 'x-remote-user': ['carol', 'dave'] }, /^the trusted agent header was given more than once$/);
    refused({ 'x-remote-user': 'carol', 'x-remote-groups': ['a', 'b'] }, /^the trusted groups header was given more than once$/);
  });

  it('mean nothing when not configured', () => {
    assert.deepEqual(keysOnly({ 'x-remote-user': 'carol', 'x-remote-groups': 'admins' }), anonymous);
    assert.deepEqual(keysOnly({ 'x-remote-groups': 'admins' }), anonymous);
    assert.deepEqual(keysOnly({ 'x-remote-user': '' }), anonymous);
  });

  it('ignore a groups header when only the agent header is configured', () => {
    const agentOnly = syncIdentifier(
      parseConfig({ auth: { trustedHeaders: { agent: 'X-Remote-User', agentPrefix: 'urn:user:' } } }, { configFile: undefined, env: {} })
        .auth,
    );
    assert.deepEqual(agentOnly({ 'x-remote-user': 'carol', 'x-remote-groups': 'admins' }), {
      agent: 'urn:user:carol',
      groups: [],
      authenticated: true,
      via: 'trusted-headers',
    });
    assert.deepEqual(agentOnly({ 'x-remote-groups': 'admins' }), anonymous);
  });
});

describe('credentialHeaderNames', () => {
  it('lists the API key headers and the configured trusted headers, lower-cased', () => {
    assert.deepEqual(credentialHeaderNames(config.auth), ['authorization', 'x-api-key', 'x-remote-user', 'x-remote-groups']);
    assert.deepEqual(credentialHeaderNames({ apiKeys: [], trustedHeaders: undefined, jwt: undefined }), ['authorization', 'x-api-key']);
    assert.deepEqual(
      credentialHeaderNames({ apiKeys: [], trustedHeaders: { agent: 'X-User', groups: undefined, agentPrefix: '' }, jwt: undefined }),
      ['authorization', 'x-api-key', 'x-user'],
    );
  });
});
