// Row rules over blank-node subjects on every lab store: the EXISTS of a rule must compare a blank node of the data as the node it is, never as a variable.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Caller } from '../../src/auth/caller.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { createPlanner } from '../../src/sparql/create-planner.js';
import { rigStores } from '../helpers/rig-stores.js';
import { insertOf, updateLabStore } from '../helpers/rows-stores.js';

const EX = 'http://example.org/';
const RUN = `${EX}row-blank-${randomUUID()}/`;
const RECORDS = `${RUN}records`;
const PLAIN = `${RUN}plain`;
const ALICE = `${EX}alice`;

/** _:b2 and ex:p2 have no membership, but other records of the graph have one: a rule reading _:b2 as a variable would show them. */
const DATA = `@prefix ex: <${EX}> .
<${RECORDS}> { _:b1 ex:name "B1" ; ex:member ex:alice . _:b2 ex:name "B2" . ex:p1 ex:name "P1" ; ex:member ex:alice . ex:p2 ex:name "P2" . }
<${PLAIN}> { _:b3 ex:name "B3" . }`;

const grant: Grant = {
  policies: ['urn:test:rows'],
  graphs: new Set([RECORDS, PLAIN]),
  hiddenByGraph: new Map(),
  views: new Map([
    [
      RECORDS,
      {
        open: undefined,
        rows: [
          {
            policy: 'urn:test:rows',
            columns: { allow: false, set: new Set() },
            rule: {
              triples: [
                {
                  subject: { termType: 'Variable', value: 'this' },
                  predicate: { termType: 'NamedNode', value: `${EX}member` },
                  object: { termType: 'Variable', value: 'agent' },
                },
              ],
              values: [],
              data: [],
              source: '?this ex:member ?agent',
            },
          },
        ],
      },
    ],
  ]),
};
const alice: Caller = { agent: ALICE, groups: [], authenticated: true };
const planner = createPlanner({
  baseIri: 'http://localhost/',
  maxQueryDepth: 64,
  planCache: { maxEntries: 10, maxBytes: 1 << 20 },
  allowedFunctions: [],
});

const P = `PREFIX ex: <${EX}>\n`;
/** Queries and the values of ?n (or the count) alice must get: the view holds B1 and P1 of records, B3 of plain. */
const EXPECTED: [string, string[]][] = [
  [`SELECT ?n FROM <${RECORDS}> WHERE { ?s ex:name ?n }`, ['B1', 'P1']],
  [`SELECT ?n WHERE { GRAPH <${RECORDS}> { ?s ex:name ?n } }`, ['B1', 'P1']],
  [`SELECT ?n WHERE { GRAPH ?g { ?s ex:name ?n } }`, ['B1', 'B3', 'P1']],
  [`SELECT ?n WHERE { ?s ex:name ?n }`, ['B1', 'B3', 'P1']],
  [`SELECT (COUNT(*) AS ?n) FROM <${RECORDS}> WHERE { ?s ?p ?o }`, ['4']],
  [`SELECT ?n FROM <${RECORDS}> WHERE { ?s ex:name ?n FILTER NOT EXISTS { ?s ex:member ?m } }`, []],
  [`SELECT ?n FROM <${RECORDS}> WHERE { ?s ex:name ?n MINUS { ?s ex:member ex:alice } }`, []],
];

for (const store of rigStores()) {
  describe(`row rules over blank-node subjects on ${store.name}`, () => {
    // INSERT { … } WHERE {} rather than INSERT DATA: Virtuoso refuses blank nodes in a constant clause.
    before(() => updateLabStore(store, insertOf(DATA)));
    after(async () => {
      // One update each: Virtuoso's isql ends a statement at `;`.
      for (const graph of [RECORDS, PLAIN]) await updateLabStore(store, `DROP SILENT GRAPH <${graph}>`);
    });

    it('each answer is the view: no record without a membership, whether its subject is an IRI or a blank node', async () => {
      for (const [query, expected] of EXPECTED) {
        const text = planner.plan({ query: P + query, defaultGraphs: [], namedGraphs: [] }, grant, alice).query;
        const response = await fetch(store.queryUrl ?? '', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
          body: new URLSearchParams({ query: text }).toString(),
        });
        assert.equal(response.status, 200, `${store.name}: ${query}: ${await response.clone().text()}`);
        const body = (await response.json()) as { results: { bindings: { n?: { value: string } }[] } };
        const values = body.results.bindings.map((row) => row.n?.value ?? 'UNDEF').sort();
        assert.deepEqual(values, expected, `${store.name}: ${query}\n${text}`);
      }
    });
  });
}
