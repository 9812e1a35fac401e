// Rows bypass class "store optimisers, negation": NOT EXISTS, !EXISTS and MINUS over the triple a row check holds. Virtuoso
// 7.2.5 answers a group whose row check is a FILTER with an EXISTS beside such a negation beyond the view (found by the
// rows oracle over random policies, set 5 of seed 32, on the lab's Virtuoso): the guard refuses it there, one line,
// and every other store answers it as the view.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EXISTS_BESIDE_NEGATION } from '../../../src/http/refuse-for-store.js';
import { ROWS_EX, askRows, assertAsView, describeRowsOnEveryStore, identityOf } from '../../helpers/rows-stores.js';
import { oneStorePerEngine } from '../../helpers/rig-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

/**
 * alice reads main through two policies that show different columns, one of them for the rows of a rule: her
 * check of a variable predicate is `?p IN (…) || (?p IN (ex:name) && EXISTS { rule })`, a filter (no join can say it).
 * bob reads main under one rule for every column he sees: his checks are joins, with no EXISTS.
 */
const policies = (base: string): string => `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix ex: <${ROWS_EX}> .
@prefix g: <${base}> .
@prefix pol: <http://example.org/policies/negation/> .
pol:alice-open a guard:Policy ; guard:agent <http://example.org/agents/alice> ; guard:readGraph g:main ;
    guard:readPath rdf:type, ex:budget, ex:team, ex:text .
pol:alice-leads a guard:Policy ; guard:agent <http://example.org/agents/alice> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:lead ?l . ?l ex:salary ?s ." ; guard:readPath ex:name .
pol:bob-rows a guard:Policy ; guard:agent <http://example.org/agents/bob> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:team ?t" .
`;

/** Each negates the very triple it reads: over any view the answer is empty (the oracle's query was the second). */
const NEGATIONS = [
  'SELECT * WHERE { ?s ?p ?o MINUS { ?s ?p ?o } }',
  'SELECT * WHERE { ?s ?p ?o FILTER(true && NOT EXISTS { ?s ?p ?o }) }',
  'SELECT * WHERE { ?s ?p ?o FILTER(!EXISTS { ?s ?p ?o }) }',
  'SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { ?s ?p ?x } }',
  `${P}SELECT ?s ?n WHERE { ?s ?p ?n FILTER NOT EXISTS { ?s ?p ?n FILTER(?p = ex:budget) } }`,
];

describeRowsOnEveryStore(
  'rows: negation beside a row check that is a FILTER with an EXISTS',
  (rows, store) => {
    it('alice: the view on every store but Virtuoso, where the guard refuses it (one line)', async () => {
      for (const query of NEGATIONS) {
        if (store.name !== 'virtuoso') {
          await assertAsView(rows(), 'alice', identityOf('alice'), query);
          continue;
        }
        const answer = await askRows(rows().endpoint, query, 'alice');
        assert.equal(answer.status, 403, `${query}: ${answer.body.slice(0, 300)}`);
        assert.equal(answer.body, `${EXISTS_BESIDE_NEGATION}\n`, query);
      }
    });

    it('the same queries without negation are answered as the view on every store', async () => {
      for (const query of ['SELECT * WHERE { ?s ?p ?o }', 'SELECT * WHERE { ?s ?p ?o OPTIONAL { ?s ?p ?x } }']) {
        await assertAsView(rows(), 'alice', identityOf('alice'), query);
      }
    });

    it('bob (row checks that are joins, no EXISTS): the negations are answered as the view on every store', async () => {
      for (const query of NEGATIONS) await assertAsView(rows(), 'bob', identityOf('bob'), query);
    });
  },
  {},
  oneStorePerEngine,
  policies,
);
