// A row rule's constants match the same RDF term only: a record whose value equals a rule's number, date or typed
// literal in value but is another term ("1"^^xsd:double for the rule's 1, a dateTime in another time zone) is
// outside the view (SPARQL 1.1 §12.3.1: a pattern matches the terms it names; the rule is a basic graph pattern,
// docs/policies.md, "Rows and columns"). Found on the lab's Virtuoso 7.2.5, which matches a literal of a pattern by
// value: `?s ex:level 1` held for "1"^^xsd:double and xsd:float, and a dateTime for the same instant in another zone,
// so a caller whose rule names level 1 read those records too; a rule's VALUES, joined, did the same. The view is
// judged on the terms the store itself holds, as an unrestricted caller reads them (Virtuoso stores the
// "1"^^xsd:decimal of `INSERT { … } WHERE {}` as an xsd:integer, Oxigraph and Jena an xsd:long as one).

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

const EX = 'http://example.org/rule-constants#';
const XSD = 'http://www.w3.org/2001/XMLSchema#';

/** A term of a SPARQL JSON result. */
interface Term {
  readonly type: string;
  readonly value: string;
  readonly datatype?: string;
  readonly 'xml:lang'?: string;
}

/** The key of a term: the same key for the same term. */
const keyOf = (term: Term): string =>
  term.type === 'uri'
    ? `<${term.value}>`
    : `"${term.value}"@${term['xml:lang']?.toLowerCase() ?? ''}^^${term['xml:lang'] ? 'lang' : (term.datatype ?? `${XSD}string`)}`;

/** Each rule by its group: the property it reads and the terms it admits. */
const RULES: Readonly<Record<string, { readonly property: string; readonly terms: readonly Term[] }>> = {
  level: { property: 'level', terms: [{ type: 'literal', value: '1', datatype: `${XSD}integer` }] },
  'level-values': {
    property: 'level',
    terms: [
      { type: 'literal', value: '1', datatype: `${XSD}integer` },
      { type: 'uri', value: `${EX}one` },
      { type: 'literal', value: '2.5', datatype: `${XSD}decimal` },
    ],
  },
  day: { property: 'day', terms: [{ type: 'literal', value: '2020-01-01T00:00:00Z', datatype: `${XSD}dateTime` }] },
  code: { property: 'code', terms: [{ type: 'literal', value: 'A1', datatype: `${EX}code` }] },
};

for (const store of storesUnderTest()) {
  describe(`a row rule's constants match the same term only [${store.name}]`, () => {
    const G = store.queryUrl === undefined ? 'http://example.org/rule-constants/' : `http://example.org/rule-constants-${process.pid}/`;
    // r1 holds each rule's own term; the others a term of equal value, or of the same text.
    const DATA = `@prefix ex: <${EX}> .
@prefix xsd: <${XSD}> .
<${G}records> {
  ex:r1 ex:name "r1" ; ex:level 1 ; ex:day "2020-01-01T00:00:00Z"^^xsd:dateTime ; ex:code "A1"^^ex:code .
  ex:r2 ex:name "r2" ; ex:level "1"^^xsd:double ; ex:day "2020-01-01T01:00:00+01:00"^^xsd:dateTime ; ex:code "A1" .
  ex:r3 ex:name "r3" ; ex:level "1"^^xsd:decimal ; ex:day "2020-01-01"^^xsd:date ; ex:code "A1"@en .
  ex:r4 ex:name "r4" ; ex:level "1"^^xsd:float ; ex:day "2019-12-31T19:00:00-05:00"^^xsd:dateTime ; ex:code "A1"^^ex:other .
  ex:r5 ex:name "r5" ; ex:level "one"@en ; ex:day "2020-01-01T00:00:00Z" ; ex:code "A1"^^xsd:token .
  ex:r6 ex:name "r6" ; ex:level "one"@fr ; ex:day "2020-01-01T00:00:00.000Z"^^xsd:dateTime .
  ex:r7 ex:name "r7" ; ex:level ex:one .
  ex:r8 ex:name "r8" ; ex:level "${EX}one" .
  ex:r9 ex:name "r9" ; ex:level "2.50"^^xsd:decimal .
  ex:r10 ex:name "r10" ; ex:level "2.5"^^xsd:double .
  ex:r11 ex:name "r11" ; ex:level 2 .
}
`;
    const POLICIES = `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix ex: <${EX}> .
<http://example.org/policies/all> a guard:Policy ; guard:group "all" ; guard:readGraph <${G}records> .
<http://example.org/policies/level> a guard:Policy ; guard:group "level" ; guard:readGraph <${G}records> ;
    guard:rowPattern "?this ex:level 1" .
<http://example.org/policies/level-values> a guard:Policy ; guard:group "level-values" ; guard:readGraph <${G}records> ;
    guard:rowPattern "?this ex:level ?l VALUES ?l { 1 ex:one 2.5 }" .
<http://example.org/policies/day> a guard:Policy ; guard:group "day" ; guard:readGraph <${G}records> ;
    guard:rowPattern "?this ex:day \\"2020-01-01T00:00:00Z\\"^^<${XSD}dateTime>" .
<http://example.org/policies/code> a guard:Policy ; guard:group "code" ; guard:readGraph <${G}records> ;
    guard:rowPattern "?this ex:code \\"A1\\"^^ex:code" .
`;
    let t: TestGuard;
    let issuer: TestIssuer;
    let folder: string;
    before(async () => {
      folder = mkdtempSync(join(tmpdir(), 'rule-constants-'));
      writeFileSync(join(folder, 'data.trig'), DATA);
      writeFileSync(join(folder, 'policies.ttl'), POLICIES);
      if (store.queryUrl !== undefined) await updateLabStore(store, insertOf(DATA));
      issuer = await startTestIssuer();
      t = await startTestGuard({
        policies: [join(folder, 'policies.ttl')],
        auth: {
          jwt: {
            issuer: issuer.issuer,
            audience: issuer.audience,
            jwksUri: issuer.jwksUri,
            agentPrefix: 'http://example.org/agents/',
            groupsClaim: 'groups',
          },
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

    const ask = async (group: string, query: string): Promise<Record<string, Term>[]> => {
      const token = await issuer.sign({ claims: { sub: 'ann', groups: [group] } });
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
      return (JSON.parse(body) as { results: { bindings: Record<string, Term>[] } }).results.bindings;
    };

    const QUERIES = [
      `SELECT ?n WHERE { ?s <${EX}name> ?n }`,
      `SELECT ?n WHERE { ?s <${EX}name> ?n OPTIONAL { ?s <${EX}level> ?l } }`,
      `SELECT ?n WHERE { ?s ?p ?n FILTER(?p = <${EX}name>) }`,
      `SELECT ?n WHERE { { SELECT DISTINCT ?s WHERE { ?s ?p ?o } } ?s <${EX}name> ?n }`,
      `SELECT ?n WHERE { VALUES ?s { <${EX}r1> <${EX}r2> <${EX}r3> <${EX}r4> <${EX}r5> <${EX}r7> <${EX}r9> } ?s <${EX}name> ?n }`,
      `SELECT ?n WHERE { ?s <${EX}name> ?n FILTER EXISTS { ?s ?p ?o } }`,
    ];

    for (const [group, rule] of Object.entries(RULES)) {
      it(`a caller of the rule "${group}" reads the records holding one of the rule's own terms only, whatever the query's shape`, async () => {
        // The terms the store holds, read whole.
        const held = await ask('all', `SELECT ?n ?v WHERE { ?s <${EX}name> ?n ; <${EX}${rule.property}> ?v }`);
        const admitted = new Set(rule.terms.map(keyOf));
        const expected = held.flatMap((row) => (admitted.has(keyOf(row.v as Term)) ? [(row.n as Term).value] : [])).sort();
        assert.ok(expected.includes('r1'), `the store holds r1's ${rule.property} as written: ${JSON.stringify(held)}`);
        for (const query of QUERIES) {
          const names = (await ask(group, query)).map((row) => (row.n as Term).value).sort();
          const within = query.includes('VALUES') ? expected.filter((name) => /^r[123457]$|^r9$/.test(name)) : expected;
          assert.deepEqual(names, within, query);
        }
      });
    }
  });
}
