// Bypass class: graph templates: a caller's token or agent, however spelled, names only the graphs the template says, through the real guard, a real issuer and the embedded store.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { updateLabStore } from '../helpers/lab-update.js';
import { storesUnderTest } from '../helpers/rig-stores.js';
import { sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startTestIssuer, type TestIssuer } from '../helpers/start-test-issuer.js';

const FIXTURES = resolve('test/fixtures/policy/graph-templates');
const OWNER = 'http://example.org/ns#owner';
const KEEPER_KEY = 'graph-templates-keeper-key-0123456789';
const OWNERS = `SELECT DISTINCT ?o WHERE { { ?s <${OWNER}> ?o } UNION { GRAPH ?g { ?s <${OWNER}> ?o } } }`;

let issuer: TestIssuer;
let t: TestGuard;
before(async () => {
  issuer = await startTestIssuer();
  t = await startTestGuard({
    policies: [`${FIXTURES}/policies.ttl`],
    embedded: { data: [`${FIXTURES}/data.trig`] },
    explain: true,
    auth: {
      apiKeys: [{ agent: 'http://example.org/agents/keeper', groups: [], sha256: sha256(KEEPER_KEY) }],
      jwt: {
        issuer: issuer.issuer,
        audience: issuer.audience,
        jwksUri: issuer.jwksUri,
        agentPrefix: 'https://id.example.org/users/',
        groupsClaim: 'groups',
      },
    },
  });
});
after(async () => {
  await t.close();
  await issuer.close();
});

const tokenOf = (claims: Record<string, unknown>) => issuer.sign({ claims });

/** The owners a caller reads (the ex:owner value of each graph it reaches), or the refusal. */
async function ownersAs(authorization: string | undefined, query = OWNERS): Promise<{ status: number; owners: string[]; body: string }> {
  const response = await fetch(t.endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/sparql-results+json',
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: new URLSearchParams({ query }),
  });
  const body = await response.text();
  if (response.status !== 200) return { status: response.status, owners: [], body };
  const json = JSON.parse(body) as { results: { bindings: Record<string, { value: string }>[] } };
  return { status: 200, owners: json.results.bindings.map((row) => row.o?.value ?? '').sort(), body };
}

const bearerOf = async (claims: Record<string, unknown>) => `Bearer ${await tokenOf(claims)}`;

describe('graph templates through the guard', () => {
  it('control: each user reads its own graph, its tenant, its groups and its agent graph', async () => {
    const alice = await ownersAs(await bearerOf({ sub: 'alice', tenant: 'acme', groups: ['staff'] }));
    assert.deepEqual(alice.owners, ['acme', 'agent-alice', 'alice', 'group-staff', 'public']);
    const carol = await ownersAs(await bearerOf({ sub: 'carol', tenant: 'globex' }));
    assert.deepEqual(carol.owners, ['carol', 'globex', 'public']);
    // A caller known only from its token: Unicode names its graph percent-encoded.
    assert.deepEqual((await ownersAs(await bearerOf({ sub: 'ümit' }))).owners, ['public', 'uemit']);
    // The anonymous caller: the Everyone policy's template names no graph for it.
    assert.deepEqual((await ownersAs(undefined)).owners, ['public']);
    // An API-key caller: no claims, its agent graph only.
    assert.deepEqual((await ownersAs(`Bearer ${KEEPER_KEY}`)).owners, ['agent-keeper', 'public']);
  });

  const spellings: [string, Record<string, unknown>][] = [
    ['a slash', { sub: 'alice/x' }],
    ['a trailing slash', { sub: 'alice/' }],
    ['an encoded slash', { sub: 'alice%2Fx' }],
    ['a fragment', { sub: 'x#/../alice' }],
    ['a query', { sub: '?alice' }],
    // The agent IRI refuses these in sub (401); a claim that only fills a template may hold them.
    ['an angle bracket', { sub: 'mallory', tenant: 'acme/graph> } GRAPH ?g { ?s ?p ?o' }],
    ['a space', { sub: 'mallory', tenant: 'acme ' }],
    ['a newline', { sub: 'mallory', tenant: 'acme\n' }],
    ['an encoded letter', { sub: '%61lice' }],
    ['a tenant climbing into users', { sub: 'mallory', tenant: '../users/alice' }],
    ['a tenant with a slash', { sub: 'mallory', tenant: 'acme/graph' }],
    ['a group climbing', { sub: 'mallory', groups: ['../users/alice'] }],
  ];
  for (const [name, claims] of spellings) {
    it(`${name} in a claim names a graph of its own, never alice's`, async () => {
      const { status, owners, body } = await ownersAs(await bearerOf(claims));
      assert.equal(status, 200, body);
      assert.deepEqual(owners, ['public'], JSON.stringify(claims));
    });
  }

  const refusals: [string, Record<string, unknown>, RegExp, number][] = [
    // A sub whose agent IRI holds a dot segment is no agent at all (401): a store that removes dot segments would read another.
    ['a dot-segment sub', { sub: '..' }, /dot segments/, 401],
    ['a dot sub', { sub: '.' }, /dot segments/, 401],
    ['a climb', { sub: '../users/alice' }, /dot segments/, 401],
    ['a climb inside', { sub: 'bob/../alice' }, /dot segments/, 401],
    ['an array tenant', { sub: 'mallory', tenant: ['acme', 'globex'] }, /tenant claim.*not a string/, 403],
    ['a number tenant', { sub: 'mallory', tenant: 7 }, /tenant claim.*not a string/, 403],
    ['an object tenant', { sub: 'mallory', tenant: { id: 'acme' } }, /tenant claim.*not a string/, 403],
    ['a very long tenant', { sub: 'mallory', tenant: 'a'.repeat(2100) }, /longer than 1800/, 403],
    // An agent IRI over the same bound is no agent (401): a row rule writes it into the query.
    ['a very long sub', { sub: 'a'.repeat(2100) }, /longer than 1800 characters/, 401],
  ];
  for (const [name, claims, reason, expected] of refusals) {
    it(`refuses ${name} with one line (${expected})`, async () => {
      const { status, body } = await ownersAs(await bearerOf(claims));
      assert.equal(status, expected, body);
      assert.match(body, reason);
      assert.doesNotMatch(body, /acme|globex|aaaaaaaa/);
    });
  }

  it('names no graph for a missing or an empty claim (never the graph of the empty name)', async () => {
    assert.deepEqual((await ownersAs(await bearerOf({ sub: 'mallory' }))).owners, ['public']);
    assert.deepEqual((await ownersAs(await bearerOf({ sub: 'mallory', tenant: '' }))).owners, ['public']);
    // An empty sub is refused by identification itself.
    assert.equal((await ownersAs(await bearerOf({ sub: '' }))).status, 401);
  });

  it('hides the policy’s paths in template graphs', async () => {
    const bob = await bearerOf({ sub: 'bob' });
    const all = await ownersAs(bob, 'SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }');
    assert.equal(all.status, 200, all.body);
    assert.ok(all.owners.includes('bob'));
    assert.ok(!all.owners.includes('bob-secret-note'));
    const named = await ownersAs(bob, 'SELECT ?o WHERE { GRAPH ?g { ?s <http://example.org/ns#secretNote> ?o } }');
    assert.equal(named.status, 403, named.body);
  });

  it('shows the template graphs and the policy limit in explain, and the graphs in the service description', async () => {
    const authorization = await bearerOf({ sub: 'alice', tenant: 'acme' });
    const explained = await fetch(`${t.endpoint}/explain?query=${encodeURIComponent(OWNERS)}`, { headers: { authorization } });
    const json = (await explained.json()) as { templateGraphs?: string[]; query: string };
    assert.deepEqual(json.templateGraphs, [
      '<https://data.example.org/agents/https%3A%2F%2Fid.example.org%2Fusers%2Falice>',
      '<https://data.example.org/tenants/acme/graph>',
      '<https://data.example.org/users/alice/>',
    ]);
    assert.match(json.query, /LIMIT 50$/);
    const description = await (await fetch(t.endpoint, { headers: { authorization, accept: 'application/n-triples' } })).text();
    assert.match(description, /<https:\/\/data\.example\.org\/users\/alice\/>/);
    assert.doesNotMatch(description, /users\/bob\//);
  });
});

// An identity provider that namespaces its claims (Auth0's "https://example.org/tenant", a claim inside an object): the
// configuration names the claim's path (auth.jwt.claims), the template reads the short name, and a top-level claim of the
// same name, which any token may carry, never stands in for it.
describe('graph templates: a namespaced claim named in auth.jwt.claims', () => {
  let named: TestGuard;
  before(async () => {
    named = await startTestGuard({
      policies: [`${FIXTURES}/policies.ttl`],
      embedded: { data: [`${FIXTURES}/data.trig`] },
      auth: {
        jwt: {
          issuer: issuer.issuer,
          audience: issuer.audience,
          jwksUri: issuer.jwksUri,
          agentPrefix: 'https://id.example.org/users/',
          claims: { tenant: ['https://example.org/claims/tenant'] },
        },
      },
    });
  });
  after(() => named.close());

  const ownersThrough = async (claims: Record<string, unknown>) => {
    const response = await fetch(`${named.endpoint}?query=${encodeURIComponent(OWNERS)}`, {
      headers: { authorization: await bearerOf(claims), accept: 'application/sparql-results+json' },
    });
    const body = await response.text();
    if (response.status !== 200) return { status: response.status, owners: [], body };
    const json = JSON.parse(body) as { results: { bindings: Record<string, { value: string }>[] } };
    return { status: 200, owners: json.results.bindings.map((row) => row.o?.value ?? '').sort(), body };
  };

  it('reads the tenant from its namespaced claim', async () => {
    const carol = await ownersThrough({ sub: 'carol', 'https://example.org/claims/tenant': 'globex' });
    assert.deepEqual(carol.owners, ['carol', 'globex', 'public'], carol.body);
  });

  it('never takes a top-level claim of the same name in its place', async () => {
    const mallory = await ownersThrough({ sub: 'mallory', tenant: 'acme' });
    assert.deepEqual(mallory.owners, ['public'], mallory.body);
    const both = await ownersThrough({ sub: 'mallory', tenant: 'acme', 'https://example.org/claims/tenant': 'globex' });
    assert.deepEqual(both.owners, ['globex', 'public'], both.body);
  });

  it('refuses a namespaced claim that is not a string, with one line that repeats no value', async () => {
    const refused = await ownersThrough({ sub: 'mallory', 'https://example.org/claims/tenant': ['acme', 'globex'] });
    assert.equal(refused.status, 403, refused.body);
    assert.match(refused.body, /tenant claim.*not a string/);
    assert.doesNotMatch(refused.body, /acme|globex/);
  });
});

// Virtuoso 7.2 keeps an IRI of up to 1,880 characters as written and stores a longer one as its first 1,847 characters
// and the MD5 of the rest; that 1,879-character string, written in a query, then names the long IRI's graph. A caller
// whose own claim spells it would read another caller's graph: every granted IRI stays below both lengths.
describe('graph templates: a claim that spells a store’s short form of another caller’s long graph IRI', () => {
  const NOTES = 'https://data.example.org/notes/';
  const victimNote = 'v'.repeat(1900);
  const victimGraph = `${NOTES}${victimNote}`;
  const shortForm = victimGraph.slice(0, 1847) + createHash('md5').update(victimGraph.slice(1847)).digest('hex');
  // Hex digits and letters are not encoded: the attacker's graph is the short form, letter for letter.
  const attackerNote = shortForm.slice(NOTES.length);
  const SUBJECT = 'http://example.org/ns#long-graph-doc';

  for (const store of storesUnderTest()) {
    it(`never gives the caller whose graph IRI is that short form the long graph [${store.name}]`, async () => {
      const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-long-'));
      writeFileSync(join(folder, 'long.nq'), `<${SUBJECT}> <${OWNER}> "long-victim" <${victimGraph}> .\n`);
      writeFileSync(
        join(folder, 'policies.ttl'),
        '<http://example.org/policies/notes> a <https://w3id.org/sparql-guard#Policy> ;\n' +
          '  <https://w3id.org/sparql-guard#agent> <https://w3id.org/sparql-guard#AuthenticatedAgent> ;\n' +
          `  <https://w3id.org/sparql-guard#readGraphTemplate> "${NOTES}{claim.note}" .\n`,
      );
      const isql = (sql: string) => {
        const port = Number(new URL(store.queryUrl ?? '').port) + 10;
        const run = spawnSync('isql-vt', [`127.0.0.1:${port}`, 'dba', 'dba'], { input: `${sql}\n`, encoding: 'utf8' });
        assert.ok(run.status === 0 && !/\*\*\* Error/.test(run.stdout), run.stdout + run.stderr);
      };
      // isql cuts a long line: the graph IRI is built in SQL.
      if (store.name === 'virtuoso')
        isql(`DB.DBA.RDF_QUAD_URI_L (concat('${NOTES}', repeat('v', ${victimNote.length})), '${SUBJECT}', '${OWNER}', 'long-victim');`);
      else if (store.queryUrl !== undefined)
        await updateLabStore(store, `INSERT DATA { GRAPH <${victimGraph}> { <${SUBJECT}> <${OWNER}> "long-victim" } }`);
      const guard = await startTestGuard({
        policies: [join(folder, 'policies.ttl')],
        ...(store.queryUrl === undefined
          ? { embedded: { data: [join(folder, 'long.nq')] } }
          : { upstream: store.queryUrl, embedded: undefined }),
        auth: {
          jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUri: issuer.jwksUri, agentPrefix: 'https://id.example.org/users/' },
        },
      });
      try {
        const response = await fetch(guard.endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/sparql-results+json',
            authorization: await bearerOf({ sub: 'mallory', note: attackerNote }),
          },
          body: new URLSearchParams({ query: `SELECT ?o WHERE { ?s <${OWNER}> ?o }` }),
        });
        const body = await response.text();
        assert.doesNotMatch(body, /long-victim/);
        assert.equal(response.status, 403, body);
        assert.match(body, /longer than 1800 characters/);
      } finally {
        await guard.close();
        rmSync(folder, { recursive: true, force: true });
        if (store.name === 'virtuoso') isql(`DELETE FROM DB.DBA.RDF_QUAD WHERE S = iri_to_id('${SUBJECT}');`);
        else if (store.queryUrl !== undefined) await updateLabStore(store, `DELETE WHERE { GRAPH ?g { <${SUBJECT}> ?p ?o } }`);
      }
    });
  }
});

// Jena reads `urn:x-arq:UnionGraph` as every named graph of the store (and `urn:x-arq:DefaultGraph` as its default
// graph): a template with two claims around a literal colon spells it for a caller whose claims are `x-arq` and
// `UnionGraph`, who would then read every tenant's graph. A grant of such a name is refused, expanded or written.
describe('graph templates: claims that spell a store’s name for other graphs', () => {
  const VICTIM_GRAPH = 'http://example.org/graphs/union-victim';
  const SUBJECT = 'http://example.org/ns#union-victim-doc';

  for (const store of storesUnderTest()) {
    it(`never gives the caller whose claims spell urn:x-arq:UnionGraph another graph [${store.name}]`, async () => {
      const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-alias-'));
      writeFileSync(join(folder, 'victim.nq'), `<${SUBJECT}> <${OWNER}> "union-victim" <${VICTIM_GRAPH}> .\n`);
      writeFileSync(
        join(folder, 'policies.ttl'),
        '<http://example.org/policies/projects> a <https://w3id.org/sparql-guard#Policy> ;\n' +
          '  <https://w3id.org/sparql-guard#agent> <https://w3id.org/sparql-guard#AuthenticatedAgent> ;\n' +
          '  <https://w3id.org/sparql-guard#readGraphTemplate> "urn:{claim.org}:{claim.project}" .\n',
      );
      if (store.queryUrl !== undefined)
        await updateLabStore(store, `INSERT DATA { GRAPH <${VICTIM_GRAPH}> { <${SUBJECT}> <${OWNER}> "union-victim" } }`);
      const guard = await startTestGuard({
        policies: [join(folder, 'policies.ttl')],
        ...(store.queryUrl === undefined
          ? { embedded: { data: [join(folder, 'victim.nq')] } }
          : { upstream: store.queryUrl, embedded: undefined }),
        auth: {
          jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUri: issuer.jwksUri, agentPrefix: 'https://id.example.org/users/' },
        },
      });
      try {
        for (const [org, project] of [
          ['x-arq', 'UnionGraph'],
          ['X-ARQ', 'UnionGraph'],
          ['x-arq', 'DefaultGraph'],
        ]) {
          const response = await fetch(guard.endpoint, {
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              accept: 'application/sparql-results+json',
              authorization: await bearerOf({ sub: 'mallory', org, project }),
            },
            body: new URLSearchParams({ query: `SELECT ?o WHERE { ?s <${OWNER}> ?o }` }),
          });
          const body = await response.text();
          assert.doesNotMatch(body, /union-victim/);
          assert.equal(response.status, 403, body);
          assert.match(body, /a name Jena reads as other graphs of the store/);
        }
      } finally {
        await guard.close();
        rmSync(folder, { recursive: true, force: true });
        if (store.queryUrl !== undefined) await updateLabStore(store, `DELETE WHERE { GRAPH ?g { <${SUBJECT}> ?p ?o } }`);
      }
    });
  }
});
