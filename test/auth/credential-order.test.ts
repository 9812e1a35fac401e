// Proves the credential order of docs/design/auth.md for every combination of Authorization (Bearer key, Bearer JWT, Basic), X-API-Key and trusted headers.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ANONYMOUS_AGENT } from '../../src/vocabulary.js';
import { createCallerIdentifier, type RequestHeaders } from '../../src/auth/identify-caller.js';
import { parseConfig } from '../../src/config/read-config.js';
import { GuardError } from '../../src/guard-error.js';
import { sha256 } from '../helpers/start-test-guard.js';
import { makeKey, signWith } from '../helpers/start-test-issuer.js';

const ALICE_KEY = 'sg_alice-order-key';
const BOB_KEY = 'sg_bob-order-key';
const ALICE = 'https://example.org/agents/alice';
const BOB = 'https://example.org/agents/bob';
const CAROL = 'https://idp.example.org/users/carol';
const JWT_USER = 'https://idp.example.org/users/jwt-user';
const ISSUER = 'https://idp.example.org/realms/main';
const CHALLENGE = 'Basic realm="sparql-guard", charset="UTF-8", Bearer realm="sparql-guard"';

const basic = (user: string, key: string) => `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;

/** What the rule says a request gets: an agent IRI, `trusted` (carol with the trusted header, else anonymous), or a 401. */
type Outcome = string | 'trusted' | { refused: RegExp };

const DIFFERENT = { refused: /^the Authorization and X-API-Key headers carry different API keys$/ };
const JWT_AND_KEY = { refused: /^the Authorization header carries a JWT and the X-API-Key header an API key; send one credential$/ };

/** Rows: Authorization value; columns: X-API-Key absent, alice's key, bob's key. */
const RULE: readonly [string, (jwt: string) => string | undefined, readonly [Outcome, Outcome, Outcome]][] = [
  ['no Authorization', () => undefined, ['trusted', ALICE, BOB]],
  ['Digest (ignored)', () => 'Digest username="alice", response="x"', ['trusted', ALICE, BOB]],
  ['Bearer alice key', () => `Bearer ${ALICE_KEY}`, [ALICE, ALICE, DIFFERENT]],
  ['Bearer JWT', (jwt) => `Bearer ${jwt}`, [JWT_USER, JWT_AND_KEY, JWT_AND_KEY]],
  ['Basic alice key', () => basic('alice', ALICE_KEY), [ALICE, ALICE, DIFFERENT]],
  ['Basic bob key, user alice', () => basic('alice', BOB_KEY), [BOB, DIFFERENT, BOB]],
];
const X_API_KEY: readonly [string, string | undefined][] = [
  ['no X-API-Key', undefined],
  ['X-API-Key alice', ALICE_KEY],
  ['X-API-Key bob', BOB_KEY],
];

describe('credential order: every combination', () => {
  let identify: ReturnType<typeof createCallerIdentifier>;
  let jwt: string;
  before(async () => {
    const key = await makeKey('ES256');
    const config = parseConfig(
      {
        auth: {
          apiKeys: [
            { agent: ALICE, sha256: sha256(ALICE_KEY) },
            { agent: BOB, sha256: sha256(BOB_KEY) },
          ],
          trustedHeaders: { agent: 'X-Remote-User', agentPrefix: 'https://idp.example.org/users/' },
          jwt: { issuer: ISSUER, audience: 'sparql', jwks: { keys: [key.publicJwk] }, agentPrefix: 'https://idp.example.org/users/' },
        },
      },
      { configFile: undefined, env: {} },
    );
    identify = createCallerIdentifier(config.auth);
    jwt = await signWith(key, { iss: ISSUER, aud: 'sparql', sub: 'jwt-user', exp: Math.floor(Date.now() / 1000) + 600 });
  });

  for (const [authorizationName, authorization, outcomes] of RULE) {
    X_API_KEY.forEach(([keyName, apiKey], column) => {
      for (const trusted of [false, true]) {
        const title = `${authorizationName} + ${keyName}${trusted ? ' + trusted header' : ''}`;
        it(title, async () => {
          const headers: Record<string, string> = {};
          const value = authorization(jwt);
          if (value !== undefined) headers.authorization = value;
          if (apiKey !== undefined) headers['x-api-key'] = apiKey;
          if (trusted) headers['x-remote-user'] = 'carol';
          const outcome = outcomes[column]!;
          const expected = outcome === 'trusted' ? (trusted ? CAROL : ANONYMOUS_AGENT) : outcome;
          await check(identify, headers, expected);
        });
      }
    });
  }
});

async function check(
  identify: (headers: RequestHeaders) => unknown,
  headers: RequestHeaders,
  expected: string | { refused: RegExp },
): Promise<void> {
  if (typeof expected === 'string') {
    const caller = (await identify(headers)) as { agent: string };
    assert.equal(caller.agent, expected);
    return;
  }
  await assert.rejects((async () => identify(headers))(), (error: unknown) => {
    assert.ok(error instanceof GuardError);
    assert.equal(error.status, 401);
    assert.equal(error.headers['WWW-Authenticate'], CHALLENGE);
    assert.match(error.message, expected.refused);
    return true;
  });
}
