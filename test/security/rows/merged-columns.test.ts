// Columns in a default graph that merges graphs showing different columns, attacked with negations and with a group
// that fixes the predicate by a filter. Virtuoso 7.2.5 answered both wrongly while the hidden-path checks held ?p
// inside a NOT EXISTS bound by VALUES (random policies, seed 1409, set 8): rows where the view has none beside a
// caller's NOT EXISTS, and no row where it has nine in a joined group. The checks now test ?p outside a NOT EXISTS
// per graph (docs/design/sparql.md, "The hidden-path checks of such a default graph"): the joined groups are the
// view on every store; beside a caller's EXISTS Virtuoso still errs with every form (seed 2027, set 6), so in front
// of it a query with EXISTS, NOT EXISTS or MINUS is refused, as beside a row check's EXISTS.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EXISTS_BESIDE_NEGATION } from '../../../src/http/refuse-for-store.js';
import { ROWS_EX, askRows, assertAsView, describeRowsOnEveryStore, identityOf } from '../../helpers/rows-stores.js';
import { oneStorePerEngine } from '../../helpers/rig-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

/**
 * bob sees five columns of main and every column of second: his default graph merges the two. alice hides salary in
 * main and phone in second; cat reads main's projects and three columns of second (row checks over the merge).
 */
const policies = (base: string): string => `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix ex: <${ROWS_EX}> .
@prefix g: <${base}> .
@prefix pol: <http://example.org/policies/merged-columns/> .
pol:bob-main a guard:Policy ; guard:agent <http://example.org/agents/bob> ; guard:readGraph g:main ;
    guard:readPath ex:lead, ex:phone, ex:region, ex:salary, ex:team .
pol:bob-second a guard:Policy ; guard:agent <http://example.org/agents/bob> ; guard:readGraph g:second .
pol:alice-main a guard:Policy ; guard:agent <http://example.org/agents/alice> ; guard:readGraph g:main, g:second ;
    guard:hidePath ex:salary .
pol:alice-second a guard:Policy ; guard:agent <http://example.org/agents/alice> ; guard:readGraph g:second ;
    guard:hidePath ex:phone .
pol:cat-main a guard:Policy ; guard:agent <http://example.org/agents/cat> ; guard:readGraph g:main ;
    guard:rowClass ex:Project .
pol:cat-second a guard:Policy ; guard:agent <http://example.org/agents/cat> ; guard:readGraph g:second ;
    guard:readPath ex:name, ex:salary, ex:phone .
`;

/** Negations of the very triple read, and one EXISTS: refused in front of Virtuoso, the view elsewhere. */
const NEGATING = [
  'SELECT * WHERE { ?s ?p ?o FILTER(NOT EXISTS { ?s ?p ?o }) }',
  'SELECT * WHERE { ?s ?p ?o MINUS { ?s ?p ?o } }',
  'SELECT * WHERE { ?s ?p ?o FILTER(!EXISTS { ?s ?p ?o }) }',
  'SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { ?s ?p ?x } }',
  'SELECT * WHERE { ?s ?p ?o FILTER(EXISTS { ?s ?p ?o }) }',
  'SELECT * WHERE { ?s ?p ?o FILTER EXISTS { ?s ?p ?x } }',
  `${P}SELECT ?s WHERE { ?s ?p ?o FILTER(?p IN (ex:phone, ex:name)) FILTER NOT EXISTS { ?s ?q 100 } }`,
];

/** A group that fixes the predicate by a filter, joined with another pattern: the view on every store. */
const JOINED = [
  `${P}SELECT ?s ?q ?r WHERE { { SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(?p = ex:salary) } } ?s ?q ?r }`,
  `${P}SELECT * WHERE { { ?s ?p ?o FILTER(?p = ex:salary) } ?s ?q ?r }`,
  `${P}SELECT * WHERE { { ?s ?p ?o FILTER(?p = ex:phone) } ?s ?q ?r }`,
  'SELECT * WHERE { ?s ?p ?o }',
  'SELECT * WHERE { ?s ?p ?o OPTIONAL { ?s ?q ?o } }',
];

describeRowsOnEveryStore(
  'columns in a merged default graph, beside negations and joined groups',
  (rows, store) => {
    for (const caller of ['bob', 'alice', 'cat'] as const) {
      it(`${caller}: every answer is the view's, or in front of Virtuoso a negation the one-line refusal`, async () => {
        for (const query of JOINED) await assertAsView(rows(), caller, identityOf(caller), query);
        for (const query of NEGATING) {
          if (store.name !== 'virtuoso' || caller === 'cat') {
            await assertAsView(rows(), caller, identityOf(caller), query);
            continue;
          }
          const answer = await askRows(rows().endpoint, query, caller);
          assert.equal(answer.status, 403, `${query}: ${answer.body.slice(0, 300)}`);
          assert.equal(answer.body, `${EXISTS_BESIDE_NEGATION}\n`, query);
        }
      });
    }
  },
  {},
  oneStorePerEngine,
  policies,
);
