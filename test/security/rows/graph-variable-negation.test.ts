// `GRAPH ?g` under EXISTS, NOT EXISTS and MINUS where the caller's graphs show different columns: the guard writes one branch
// per graph. Virtuoso 7.2.5 answered a UNION of branches ending in `VALUES ?g { <g> }` there wrongly (3 rows where the view has
// 42, found by the random-policies oracle, seed 1009, set 11): where ?g is named nowhere outside the negation and the body
// leaves it out of scope, a branch binds it with BIND (src/sparql/find-graphs-to-bind.ts). Where ?g is bound outside, Oxigraph
// takes such a BIND for true (rows oracle, seed 1301), so the branch keeps VALUES; every store answers as the view. Over
// alice's whole default graph (two graphs showing different columns) Virtuoso refuses the negations (merged-columns.test.ts);
// with FROM main they are answered there too.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EXISTS_BESIDE_NEGATION } from '../../../src/http/refuse-for-store.js';
import { ROWS_EX, askRows, assertAsView, describeRowsOnEveryStore, identityOf } from '../../helpers/rows-stores.js';
import { oneStorePerEngine } from '../../helpers/rig-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

/** alice reads main and second through a column list, and main through a second list: each graph shows other columns. */
const policies = (base: string): string => `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix ex: <${ROWS_EX}> .
@prefix g: <${base}> .
@prefix pol: <http://example.org/policies/graph-variable/> .
pol:alice-both a guard:Policy ; guard:agent <http://example.org/agents/alice> ; guard:readGraph g:main, g:second ;
    guard:readPath ex:note, rdf:type, ex:team, ex:region, ex:text, ex:phone .
pol:alice-main a guard:Policy ; guard:agent <http://example.org/agents/alice> ; guard:readGraph g:main ;
    guard:readPath ex:text, ex:name .
`;

const QUERIES = [
  'SELECT * WHERE { ?s ?p ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }',
  'SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { GRAPH ?g { ?s ?p ?o } } }',
  'SELECT * WHERE { ?s ?p ?o MINUS { GRAPH ?g { ?s ?p ?o } } }',
  'SELECT ?s WHERE { ?s a ?c FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }',
  `${P}SELECT ?s ?g WHERE { ?s a ?c OPTIONAL { GRAPH ?g { ?s ex:text ?n } } }`,
  'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g',
];

/** A query of alice's with a negation reads her merged default graph with per-graph checks: refused by Virtuoso. */
const NEGATES = /\b(EXISTS|MINUS)\b/;

describeRowsOnEveryStore(
  'rows: GRAPH ?g under EXISTS, NOT EXISTS and MINUS, each graph with its own columns',
  (rows, store) => {
    it('alice gets the view', async () => {
      const { main, second } = rows().fixture.graphs;
      // The default graph main alone (one column list): no per-graph check beside the caller's negation.
      const inMain = (query: string) => query.replace(' WHERE ', ` FROM <${main}> FROM NAMED <${main}> FROM NAMED <${second}> WHERE `);
      // The body binds ?g itself, or ?g is named outside: the branch joins it with VALUES.
      const outside = [
        `SELECT * WHERE { ?s ?p ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o VALUES ?g { <${main}> } } } }`,
        `SELECT * WHERE { ?s ?p ?o MINUS { GRAPH ?g { ?s ?p ?o VALUES ?g { <${main}> } } } }`,
        `${P}SELECT ?s WHERE { ?s ex:phone ?g FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }`,
      ];
      // Where ?g is bound outside, Virtuoso 7.2.5 does not join the branches' graph with that binding, with every form
      // tried (open: docs/design/sparql.md, "`GRAPH ?g` under a negation"); the first it answers wrongly with no guard
      // in front too (over the whole data, 65 rows where 8 are right; docs/operations.md). Not compared there.
      if (store.name !== 'virtuoso')
        outside.push(
          `SELECT * WHERE { ?s ?p ?o VALUES ?g { <${main}> } FILTER NOT EXISTS { GRAPH ?g { ?s ?p ?o } } }`,
          `SELECT * WHERE { ?s ?p ?o FILTER EXISTS { ?s ?p ?g FILTER NOT EXISTS { GRAPH ?g { ?s ?p ?o } } } }`,
        );
      let refused = 0;
      for (const query of [...QUERIES, ...outside]) {
        await assertAsView(rows(), 'alice', identityOf('alice'), inMain(query));
        if (store.name !== 'virtuoso' || !NEGATES.test(query)) {
          await assertAsView(rows(), 'alice', identityOf('alice'), query);
          continue;
        }
        const answer = await askRows(rows().endpoint, query, 'alice');
        if (answer.status !== 403) {
          await assertAsView(rows(), 'alice', identityOf('alice'), query);
          continue;
        }
        assert.equal(answer.body, `${EXISTS_BESIDE_NEGATION}\n`, query);
        refused++;
      }
      // Those reading the default graph with a variable predicate (the first three of QUERIES among them).
      if (store.name === 'virtuoso') assert.ok(refused >= 3, `${refused} refused`);
    });
  },
  {},
  oneStorePerEngine,
  policies,
);
