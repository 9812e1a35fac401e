// Bypass class: JWT callers: forged, stale or ill-formed tokens never gain an identity, and a genuine JWT caller sees no canary outside its grant.

import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { BITS, CALLERS, describeOnEveryStore, GRAPHS, itAttacks, send, type Attack } from '../helpers/rig-stores.js';
import { sha256 } from '../helpers/start-test-guard.js';
import { hmacToken, startTestIssuer, unsecuredToken } from '../helpers/start-test-issuer.js';

const issuer = await startTestIssuer();
after(() => issuer.close());

const AGENTS = 'http://example.org/agents/';
const nowSeconds = Math.floor(Date.now() / 1000);
const readerToken = await issuer.sign({ claims: { sub: 'reader', realm_access: { roles: ['team-a'] } } });
const keeperToken = await issuer.sign({ claims: { sub: 'keeper' } });
const keeperClaims = { iss: issuer.issuer, aud: issuer.audience, sub: 'keeper', exp: nowSeconds + 3600 };
const stray = await issuer.strayKey();

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const P = 'PREFIX ex: <http://example.org/>\nPREFIX res: <http://example.org/res/>\n';
const BITS_QUERY = `${P}SELECT DISTINCT ?b WHERE { { ex:fingerprint ex:graphBit ?b } UNION { GRAPH ?g { ex:fingerprint ex:graphBit ?b } } }`;
const SECRET_PATTERN = 'res:item1 ex:secretPredicate "CANARY-SECRET-1"';
const READER = [BITS.public1, BITS.teamA];

const attacks: Attack[] = [
  // A genuine JWT caller: its grant, and the canary probes of the API-key reader.
  {
    name: 'control: the JWT keeper sees every graph',
    caller: 'keeper',
    headers: bearer(keeperToken),
    query: BITS_QUERY,
    expect: { bits: [BITS.public1, BITS.public2, BITS.teamA, BITS.teamB, BITS.secret] },
  },
  {
    name: 'the JWT reader (group from realm_access.roles) sees public1 and teamA',
    caller: 'reader',
    headers: bearer(readerToken),
    query: BITS_QUERY,
    expect: { bits: READER },
  },
  {
    name: 'JWT reader: ASK for a secret triple in any named graph',
    caller: 'reader',
    headers: bearer(readerToken),
    query: `${P}ASK { GRAPH ?g { ${SECRET_PATTERN} } }`,
    expect: { ask: false },
  },
  {
    name: 'JWT reader: FROM NAMED the secret graph',
    caller: 'reader',
    headers: bearer(readerToken),
    query: BITS_QUERY,
    params: { 'named-graph-uri': [GRAPHS.secret], 'default-graph-uri': [GRAPHS.secret] },
    expect: { ok: true },
  },
  {
    name: 'JWT reader: GRAPH <secret>',
    caller: 'reader',
    headers: bearer(readerToken),
    query: `${P}SELECT ?s ?p ?o WHERE { GRAPH <${GRAPHS.secret}> { ?s ?p ?o } }`,
    expect: { ok: true },
  },
  {
    name: 'JWT reader: regex over every literal',
    caller: 'reader',
    headers: bearer(readerToken),
    query: 'SELECT ?o WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } FILTER(REGEX(STR(?o), "CANARY")) }',
    expect: { ok: true },
  },
  {
    name: 'JWT reader: DESCRIBE of a secret resource',
    caller: 'reader',
    headers: bearer(readerToken),
    query: `${P}DESCRIBE res:item1`,
    accept: 'text/turtle',
    expect: { ok: true },
  },
  {
    name: 'JWT reader: transitive path into secret links',
    caller: 'reader',
    headers: bearer(readerToken),
    query: `${P}SELECT ?o WHERE { GRAPH ?g { res:item5 (ex:seeAlso|ex:about|ex:secretPredicate)+ ?o } }`,
    expect: { ok: true },
  },
  // Forged or stale tokens naming the keeper: never the keeper's grant.
  {
    name: 'alg none naming the keeper',
    headers: bearer(unsecuredToken(keeperClaims, issuer.current().kid)),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: "HS256 signed with the issuer's public key (PEM)",
    headers: bearer(await hmacToken(keeperClaims, issuer.current().publicPem, issuer.current().kid)),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: "HS256 signed with the issuer's JWK",
    headers: bearer(await hmacToken(keeperClaims, JSON.stringify(issuer.current().publicJwk))),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: "keeper token signed by an unpublished key under the issuer's kid",
    headers: bearer(await issuer.sign({ key: stray, kid: issuer.current().kid, claims: { sub: 'keeper' } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'keeper token with an unknown kid',
    headers: bearer(await issuer.sign({ key: stray, kid: 'unknown-kid', claims: { sub: 'keeper' } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'expired keeper token',
    headers: bearer(await issuer.sign({ claims: { sub: 'keeper', exp: nowSeconds - 3600 } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'keeper token not valid yet',
    headers: bearer(await issuer.sign({ claims: { sub: 'keeper', nbf: nowSeconds + 3600 } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'keeper token of another audience',
    headers: bearer(await issuer.sign({ claims: { sub: 'keeper', aud: 'other-service' } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'keeper token of another issuer',
    headers: bearer(await issuer.sign({ claims: { sub: 'keeper', iss: 'https://evil.example.org/' } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: "reader token with its payload swapped for the keeper's",
    headers: bearer(
      `${readerToken.split('.')[0]}.${Buffer.from(JSON.stringify(keeperClaims)).toString('base64url')}.${readerToken.split('.')[2]}`,
    ),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'a huge token',
    headers: bearer(await issuer.sign({ claims: { sub: 'keeper', pad: 'x'.repeat(9000) } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'sub that breaks the agent IRI',
    headers: bearer(await issuer.sign({ claims: { sub: 'reader> <http://example.org/agents/keeper' } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    // Refused outright: a store that removes dot segments would read the agent of a row rule as the keeper.
    name: 'sub with a dot-segment does not reach the keeper: 401',
    headers: bearer(await issuer.sign({ claims: { sub: 'x/../keeper' } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'groups claim as a string',
    headers: bearer(await issuer.sign({ claims: { sub: 'reader', realm_access: { roles: 'team-a,team-b' } } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'groups claim as an object',
    headers: bearer(await issuer.sign({ claims: { sub: 'reader', realm_access: { roles: { 'team-a': true } } } })),
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  // Conflicts: a JWT beside an API key is ambiguous.
  {
    name: "JWT reader with the keeper's X-API-Key",
    headers: { ...bearer(readerToken), 'x-api-key': CALLERS.keeper },
    query: BITS_QUERY,
    expect: { status: 401 },
  },
  {
    name: 'JWT reader with its own X-API-Key',
    headers: { ...bearer(readerToken), 'x-api-key': CALLERS.reader },
    query: BITS_QUERY,
    expect: { status: 401 },
  },
];

const config = {
  auth: {
    apiKeys: [
      { agent: `${AGENTS}reader`, groups: ['team-a'], sha256: sha256(CALLERS.reader) },
      { agent: `${AGENTS}keeper`, groups: [], sha256: sha256(CALLERS.keeper) },
    ],
    jwt: {
      issuer: issuer.issuer,
      audience: issuer.audience,
      jwksUri: issuer.jwksUri,
      agentPrefix: AGENTS,
      groupsClaim: 'realm_access.roles',
    },
  },
};

describeOnEveryStore(
  'JWT callers',
  (guard, store) => {
    itAttacks(attacks, guard, store);

    it('refuses with one text/plain line naming no token, and a challenge listing Bearer and Basic', async () => {
      const token = await issuer.sign({ claims: { sub: 'keeper', aud: 'other-service' } });
      const response = await fetch(`${guard().endpoint}?query=${encodeURIComponent(BITS_QUERY)}`, { headers: bearer(token) });
      const body = await response.text();
      assert.equal(response.status, 401);
      assert.equal(body, 'the token is for another audience\n');
      assert.equal(
        response.headers.get('www-authenticate'),
        'Bearer realm="sparql-guard", error="invalid_token", Basic realm="sparql-guard", charset="UTF-8"',
        'Node fetch sends Sec-Fetch-Mode: Bearer first; the token failed: invalid_token (RFC 6750 section 3.1)',
      );
    });

    it('explains the JWT caller with the agent and groups of its claims', async () => {
      const answer = await send(guard().endpoint, BITS_QUERY, { headers: bearer(readerToken), suffix: '/explain' });
      assert.equal(answer.status, 200, answer.body);
      const explained = JSON.parse(answer.body) as { agent: string; groups: string[] };
      assert.equal(explained.agent, `${AGENTS}reader`);
      assert.deepEqual(explained.groups, ['team-a']);
      void store;
    });

    it('serves Basic-only clients with the API key as password', async () => {
      const answer = await send(guard().endpoint, BITS_QUERY, {
        headers: { authorization: `Basic ${Buffer.from(`anyone:${CALLERS.reader}`).toString('base64')}` },
      });
      assert.equal(answer.status, 200, answer.body);
      assert.match(answer.body, /"8"|>8</);
    });
  },
  config,
);
