// A graph where two policies show different columns for different row rules (or open columns beside a row rule):
// the check of a variable predicate is an OR of the policies' tests. Virtuoso 7.2.5 evaluated that OR wrongly in a
// group with another pattern while each operand read `p IN (…) && EXISTS { rule }`: cat's `?s ?p ?o . ?s ex:name ?n`
// answered budget and team of a project only the name-and-region policy admits (a leak), and `?s ?p ?o GRAPH ?g {…}`
// lost the rows of the other policy (random policies, seed 2027, set 8). The check is now the negation of its
// negation, NOT EXISTS only (docs/design/sparql.md, "An OR of row policies' tests"): the view on every store.

import { it } from 'node:test';
import { ROWS_EX, assertAsView, describeRowsOnEveryStore, identityOf } from '../../helpers/rows-stores.js';
import { oneStorePerEngine } from '../../helpers/rig-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

/**
 * cat: projects with budget 100, 5, 3 or 12 show name and region; those with 100, 5 or 3 show every column.
 * dan: budget and team of every record; the name of the records with a lead.
 * erin and gil: cat's and dan's policies, and second beside main (gil without its phones): a default graph that
 * merges the two, whose check holds the OR inside the merged graph's test.
 */
const policies = (base: string): string => `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix ex: <${ROWS_EX}> .
@prefix g: <${base}> .
@prefix pol: <http://example.org/policies/rule-disjunction/> .
pol:cat-0 a guard:Policy ; guard:agent <http://example.org/agents/cat> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:budget ?b . VALUES ?b { 100 5 3 12 }" ;
    guard:readPath ex:name, ex:region, ex:note ; guard:hidePath ex:text, ex:note .
pol:cat-1 a guard:Policy ; guard:agent <http://example.org/agents/cat> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:budget ?b . VALUES (?b ?c) { (100 'x') (5 UNDEF) (3 'y'@en) }" .
pol:dan-0 a guard:Policy ; guard:agent <http://example.org/agents/dan> ; guard:readGraph g:main ;
    guard:readPath ex:budget, ex:team .
pol:dan-1 a guard:Policy ; guard:agent <http://example.org/agents/dan> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:lead ?l" ; guard:readPath ex:name .
pol:erin-0 a guard:Policy ; guard:agent <http://example.org/agents/erin> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:budget ?b . VALUES ?b { 100 5 3 12 }" ;
    guard:readPath ex:name, ex:region, ex:note ; guard:hidePath ex:text, ex:note .
pol:erin-1 a guard:Policy ; guard:agent <http://example.org/agents/erin> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:budget ?b . VALUES (?b ?c) { (100 'x') (5 UNDEF) (3 'y'@en) }" .
pol:erin-2 a guard:Policy ; guard:agent <http://example.org/agents/erin> ; guard:readGraph g:second .
pol:gil-0 a guard:Policy ; guard:agent <http://example.org/agents/gil> ; guard:readGraph g:main ;
    guard:readPath ex:budget, ex:team .
pol:gil-1 a guard:Policy ; guard:agent <http://example.org/agents/gil> ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:lead ?l" ; guard:readPath ex:name .
pol:gil-2 a guard:Policy ; guard:agent <http://example.org/agents/gil> ; guard:readGraph g:second ; guard:hidePath ex:phone .
`;

/** The triple read joined with another pattern in its group, and alone. */
const QUERIES = [
  'SELECT * WHERE { ?s ?p ?o }',
  'SELECT * WHERE { ?s ?p ?o . ?s ?q ?v }',
  `${P}SELECT * WHERE { ?s ?p ?o . ?s ex:name ?n }`,
  `${P}SELECT * WHERE { ?s ex:budget ?b . ?s ?p ?o }`,
  'SELECT * WHERE { ?s ?p ?o GRAPH ?g { ?s ?q ?v } }',
  'SELECT * WHERE { ?s ?p ?o { ?s ?q ?v } }',
  'SELECT * WHERE { ?s ?p ?o OPTIONAL { ?s ?q ?v } }',
  `${P}SELECT * WHERE { ?s ?p ?o FILTER(?o != "none") ?s ex:team ?t }`,
  `${P}SELECT ?s ?q ?r WHERE { { SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(?p = ex:budget) } } ?s ?q ?r }`,
  `${P}SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o . ?s ?q ?v } GROUP BY ?p`,
  `${P}DESCRIBE ?s WHERE { ?s ex:budget ?b }`,
];

describeRowsOnEveryStore(
  'an OR of row policies’ tests, in a group with other patterns',
  (rows) => {
    for (const caller of ['cat', 'dan', 'erin', 'gil'] as const) {
      it(`${caller}: every answer is the view's`, async () => {
        for (const query of QUERIES) await assertAsView(rows(), caller, identityOf(caller), query);
      });
    }
  },
  {},
  oneStorePerEngine,
  policies,
);
