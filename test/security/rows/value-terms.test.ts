// The caller's values in a row rule match the same RDF term only: a record whose rule value is a look-alike of the
// caller's group, claim or agent (a language-tagged string, a string of a type derived from xsd:string, a custom
// datatype, the agent's IRI written as a string) is outside the view (docs/policies.md, "Rows and columns": the
// identity is bound, and a pattern matches terms). Found on the lab's Jena: the guard tested the value with
// `FILTER(?v IN ("team-a"))`, and Jena's `=` takes "team-a"^^xsd:token for "team-a", so a group caller read such a
// record through `?s ex:name ?n OPTIONAL { ?s ex:dept ?d }` (Virtuoso's `=` also holds for "a"@en, "a"^^<dt> and
// an IRI's string, though not in the shapes tried here).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { updateLabStore } from '../../helpers/lab-update.js';
import { storesUnderTest } from '../../helpers/rig-stores.js';
import { insertOf } from '../../helpers/rows-stores.js';
import { startTestGuard, type TestGuard } from '../../helpers/start-test-guard.js';
import { startTestIssuer, type TestIssuer } from '../../helpers/start-test-issuer.js';

const EX = 'http://example.org/value-terms#';
const AG = 'http://example.org/agents/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';

for (const store of storesUnderTest()) {
  describe(`a row rule's caller values match the same term only [${store.name}]`, () => {
    const G = store.queryUrl === undefined ? 'http://example.org/value-terms/' : `http://example.org/value-terms-${process.pid}/`;
    // r1 holds the caller's own terms; r2 to r5 look-alikes of each; r6 another caller's.
    const DATA = `@prefix ex: <${EX}> .
<${G}records> {
  ex:r1 ex:name "exact" ; ex:team "team-a" ; ex:dept "sales" ; ex:owner <${AG}alice> .
  ex:r2 ex:name "language" ; ex:team "team-a"@en ; ex:dept "sales"@en ; ex:owner "${AG}alice" .
  ex:r3 ex:name "token" ; ex:team "team-a"^^<${XSD}token> ; ex:dept "sales"^^<${XSD}normalizedString> ; ex:owner "${AG}alice"^^<${XSD}anyURI> .
  ex:r4 ex:name "custom" ; ex:team "team-a"^^ex:code ; ex:dept "sales"^^ex:code ; ex:owner "${AG}alice"@en .
  ex:r6 ex:name "other" ; ex:team "team-b" ; ex:dept "ops" ; ex:owner <${AG}bob> .
}
`;
    const POLICIES = `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix ex: <${EX}> .
<http://example.org/policies/by-group> a guard:Policy ; guard:group "team-a" ; guard:readGraph <${G}records> ;
    guard:rowPattern "?this ex:team ?group" .
<http://example.org/policies/by-claim> a guard:Policy ; guard:group "claims" ; guard:readGraph <${G}records> ;
    guard:rowPattern "?this ex:dept ?claim_dept" .
<http://example.org/policies/by-agent> a guard:Policy ; guard:group "owners" ; guard:readGraph <${G}records> ;
    guard:rowPattern "?this ex:owner ?agent" .
`;
    let t: TestGuard;
    let issuer: TestIssuer;
    let folder: string;
    before(async () => {
      folder = mkdtempSync(join(tmpdir(), 'value-terms-'));
      writeFileSync(join(folder, 'data.trig'), DATA);
      writeFileSync(join(folder, 'policies.ttl'), POLICIES);
      if (store.queryUrl !== undefined) await updateLabStore(store, insertOf(DATA));
      issuer = await startTestIssuer();
      t = await startTestGuard({
        policies: [join(folder, 'policies.ttl')],
        auth: {
          jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUri: issuer.jwksUri, agentPrefix: AG, groupsClaim: 'groups' },
        },
        ...(store.queryUrl === undefined
          ? { embedded: { data: [join(folder, 'data.trig')] } }
          : { upstream: store.queryUrl, embedded: undefined }),
      });
    });
    after(async () => {
      await t?.close();
      await issuer?.close();
      if (store.queryUrl !== undefined) await updateLabStore(store, `DROP SILENT GRAPH <${G}records>`);
      rmSync(folder, { recursive: true, force: true });
    });

    const QUERIES = [
      `SELECT ?n WHERE { ?s <${EX}name> ?n }`,
      `SELECT ?n WHERE { ?s <${EX}name> ?n OPTIONAL { ?s <${EX}dept> ?d } }`,
      `SELECT ?n WHERE { ?s <${EX}name> ?n OPTIONAL { ?s <${EX}team> ?t } OPTIONAL { ?s <${EX}owner> ?o } }`,
      `SELECT ?n WHERE { ?s ?p ?n FILTER(?p = <${EX}name>) }`,
      `SELECT ?n WHERE { { SELECT DISTINCT ?s WHERE { ?s ?p ?o } } ?s <${EX}name> ?n }`,
      `SELECT ?n WHERE { VALUES ?s { <${EX}r1> <${EX}r2> <${EX}r3> <${EX}r4> } ?s <${EX}name> ?n }`,
      `SELECT ?n WHERE { ?s <${EX}name> ?n FILTER EXISTS { ?s ?p ?o } }`,
    ];

    for (const [who, groups] of [
      ['a group caller', ['team-a']],
      ['a claim caller', ['claims']],
      ['an agent caller', ['owners']],
    ] as const) {
      it(`${who} reads its own term's record only, whatever the query's shape`, async () => {
        const token = await issuer.sign({ claims: { sub: 'alice', dept: 'sales', groups: [...groups] } });
        for (const query of QUERIES) {
          const response = await fetch(t.endpoint, {
            method: 'POST',
            headers: {
              'content-type': 'application/sparql-query',
              accept: 'application/sparql-results+json',
              authorization: `Bearer ${token}`,
            },
            body: query,
          });
          const body = await response.text();
          assert.equal(response.status, 200, `${query}: ${body.slice(0, 300)}`);
          const names = (JSON.parse(body) as { results: { bindings: { n: { value: string } }[] } }).results.bindings.map(
            (row) => row.n.value,
          );
          assert.deepEqual(names, ['exact'], query);
        }
      });
    }
  });
}
