// Several policies at once: one caller matched by agent, by several groups and by guard:Everyone, given one graph
// by a direct grant, a graph template and a prefix, each with other hidden paths, columns and row rules; a rule's
// data graph that a second policy grants; the default graph merging graphs of different views. Each answer is the
// caller's query over its view, built by hand from the definition (docs/policies.md, "Rows and columns").

import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { RowCaller } from '../../helpers/row-view.js';
import { canonical } from '../../helpers/redaction-oracle.js';
import {
  AGENTS,
  ROWS_EX,
  askRows,
  assertAsView,
  describeRowsOnEveryStore,
  rowsAttacks,
  viewAnswer,
  type RowsCaller,
} from '../../helpers/rows-stores.js';
import { oneStorePerEngine } from '../../helpers/rig-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

/**
 * ann (groups main, t1): main directly (salary, phone hidden), by the template of group "main" (Person rows, e-mail
 * hidden) and by the prefix (names only); second for everyone (budget hidden) and by the prefix; members, orgs and
 * odd by the prefix (names only).
 * bea (t1, t2): main hiding salary and phone, and the salaries and names of team-a's rows; second's budgets and the
 * names of its drafts.
 * cy (t3, main): main's projects (name, budget) and, through the template, the led records (team, name).
 * dee (t4): every graph under the prefix with names and memberships hidden, second also directly with nothing hidden.
 * alice (t5): main's rows she is a member of (the rule reads members), and members itself with owners hidden.
 * Anonymous callers: second for everyone, budgets hidden.
 */
const policies = (base: string): string => `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix ex: <${ROWS_EX}> .
@prefix g: <${base}> .
@prefix ag: <${AGENTS}> .
@prefix pol: <http://example.org/policies/combined/> .
pol:t1-main a guard:Policy ; guard:group "t1" ; guard:readGraph g:main ; guard:hidePath ex:salary, ex:phone .
pol:ann-template a guard:Policy ; guard:agent ag:ann ; guard:readGraphTemplate "${base}{group}" ;
    guard:rowClass ex:Person ; guard:hidePath ex:email .
pol:everyone-second a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph g:second ; guard:hidePath ex:budget .
pol:ann-prefix a guard:Policy ; guard:agent ag:ann ; guard:readGraphPrefix "${base}" ; guard:readPath ex:name .
pol:t2-team-a a guard:Policy ; guard:group "t2" ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:team ?t . VALUES ?t { 'team-a' }" ; guard:readPath ex:salary, ex:name .
pol:t2-drafts a guard:Policy ; guard:group "t2" ; guard:readGraph g:second ; guard:rowClass ex:Draft ; guard:readPath ex:name .
pol:t1-budgets a guard:Policy ; guard:group "t1" ; guard:readGraph g:second ; guard:readPath ex:budget .
pol:t3-projects a guard:Policy ; guard:group "t3" ; guard:readGraph g:main ; guard:rowClass ex:Project ;
    guard:readPath ex:name, ex:budget .
pol:t3-led a guard:Policy ; guard:group "t3" ; guard:readGraphTemplate "${base}{group}" ;
    guard:rowPattern "?this ex:lead ?l" ; guard:readPath ex:team, ex:name .
pol:t4-prefix a guard:Policy ; guard:group "t4" ; guard:readGraphPrefix "${base}" ; guard:hidePath ex:name, ex:member .
pol:t4-second a guard:Policy ; guard:group "t4" ; guard:readGraph g:second .
pol:t5-rows a guard:Policy ; guard:group "t5" ; guard:readGraph g:main ;
    guard:rowPattern "?this ex:member ?agent" ; guard:rowData g:members .
pol:t5-members a guard:Policy ; guard:group "t5" ; guard:readGraph g:members ; guard:hidePath ex:owner .
`;

const caller = (user: string, groups: string): { caller: RowsCaller; identity: RowCaller } => ({
  caller: { headers: { 'x-rows-user': user, 'x-rows-groups': groups } },
  identity: { agent: `${AGENTS}${user}`, groups: groups.split(',') },
});

const CALLERS = {
  ann: caller('ann', 'main,t1'),
  bea: caller('bea', 't1,t2'),
  cy: caller('cy', 't3,main'),
  dee: caller('dee', 't4'),
  alice: caller('alice', 't5'),
  anonymous: { caller: undefined, identity: { agent: undefined, groups: [] } },
} as const;

/** Queries over the combinations: the dataset naming some graphs, GRAPH ?g, counts over the merge, paths across graphs. */
function combinedQueries(base: string): string[] {
  const [main, second, members] = ['main', 'second', 'members'].map((name) => `<${base}${name}>`);
  return [
    ...rowsAttacks({ main: `${base}main`, second: `${base}second`, members: `${base}members`, orgs: `${base}orgs`, odd: `${base}odd` }),
    'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g',
    'SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p',
    'SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?o }',
    `SELECT * FROM ${main} WHERE { ?s ?p ?o }`,
    `SELECT * FROM ${second} WHERE { ?s ?p ?o }`,
    `SELECT * FROM ${main} FROM ${second} WHERE { ?s ?p ?o }`,
    `SELECT ?p (COUNT(*) AS ?n) FROM ${main} FROM ${second} WHERE { ?s ?p ?o } GROUP BY ?p`,
    `SELECT * FROM ${members} WHERE { ?s ?p ?o }`,
    `SELECT * FROM NAMED ${main} FROM NAMED ${members} WHERE { GRAPH ?g { ?s ?p ?o } }`,
    `SELECT * FROM ${second} FROM NAMED ${main} WHERE { ?s ?p ?o GRAPH ?g { ?s ?q ?v } }`,
    `${P}SELECT * FROM ${second} WHERE { ?s ex:name ?n }`,
    `${P}SELECT * WHERE { GRAPH ${main} { ?s ex:name ?n } GRAPH ${second} { ?s ?p ?o } }`,
    `${P}SELECT * WHERE { GRAPH ?g { ?s ex:name ?n } }`,
    `${P}SELECT * WHERE { ?s ex:lead ?l . ?l ?p ?o }`,
    `${P}SELECT * WHERE { ?s ex:lead/ex:salary ?x }`,
    `${P}SELECT * WHERE { GRAPH ?g { ?s ?p ?o } GRAPH ?h { ?o ?q ?v } }`,
    `${P}SELECT ?s ?o WHERE { ?s ex:member/^ex:member ?o }`,
    `${P}SELECT ?s (SUM(?b) AS ?t) WHERE { ?s ex:budget ?b } GROUP BY ?s`,
    `${P}CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }`,
    `CONSTRUCT { ?s ?p ?o } FROM ${main} FROM ${second} WHERE { ?s ?p ?o }`,
    `${P}DESCRIBE ?s WHERE { ?s ex:name ?n }`,
    `${P}DESCRIBE ex:p1 ex:alice`,
    `${P}ASK { ?s ex:salary ?x }`,
    `${P}ASK FROM ${second} { ?s ex:budget ?x }`,
  ];
}

/**
 * Queries whose answer on Virtuoso 7.2.5 differs from SPARQL 1.1's over any data, the caller's view or the whole store
 * alike (the rows oracle reports them as store deviations, comparing an unrestricted caller): the view built here is
 * SPARQL's, so the comparison would judge the store, not the guard. SUM over a group with an unbound value is the sum
 * of the bound ones, not an error (§18.5.1.3); `?s ex:note* ?o` with neither end bound is a 500 ("transitive start not
 * given"); its N-Triples writes non-ASCII characters as \u escapes, which the answer's reader here takes as written.
 */
const VIRTUOSO_DEVIATES = new Set(
  [
    `${P}SELECT ?t (COUNT(?s) AS ?n) (SUM(?b) AS ?total) WHERE { ?s ex:team ?t OPTIONAL { ?s ex:budget ?b } } GROUP BY ?t`,
    `${P}SELECT ?s ?o WHERE { ?s ex:note* ?o }`,
  ].map((query) => query.replace(/\s+/g, ' ')),
);

describeRowsOnEveryStore(
  'several policies granting one graph',
  (rows, store) => {
    for (const [name, { caller: who, identity }] of Object.entries(CALLERS)) {
      it(`${name}: every answer is the view's, or a refusal`, async () => {
        const wrong: string[] = [];
        const queries = combinedQueries(rows().fixture.graphs.main.replace(/main$/, ''));
        let answered = 0;
        for (const query of queries) {
          if (store.name === 'virtuoso' && VIRTUOSO_DEVIATES.has(query.replace(/\s+/g, ' '))) continue;
          const answer = await askRows(rows().endpoint, query, who);
          // A refusal names a predicate hidden where it is read, or a path of variable length over row rules: the
          // oracle does not judge which; its share is bounded below.
          if (answer.status === 403) {
            assert.match(answer.body, /the query uses a hidden path|a path of variable length/, query);
            continue;
          }
          answered++;
          try {
            await assertAsView(rows(), who, identity, query);
          } catch (error) {
            wrong.push(String(error).slice(0, 3000));
          }
        }
        assert.deepEqual(wrong, []);
        assert.ok(answered >= queries.length / 2, `${name}: ${answered} of ${queries.length} answered`);
      });
      it(`${name}: the protocol's default-graph-uri and named-graph-uri read as FROM and FROM NAMED`, async () => {
        const base = rows().fixture.graphs.main.replace(/main$/, '');
        for (const [defaults, named] of [
          [['main'], []],
          [['second'], ['main']],
          [['main', 'second'], ['members']],
          [['members'], ['main', 'second', 'orgs']],
          [[], ['main', 'members']],
        ] as const) {
          for (const body of [
            'SELECT * WHERE { ?s ?p ?o }',
            'SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }',
            'SELECT ?p (COUNT(*) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } } GROUP BY ?p',
          ]) {
            const params = { 'default-graph-uri': defaults.map((g) => base + g), 'named-graph-uri': named.map((g) => base + g) };
            const answer = await askRows(rows().endpoint, body, who, { params });
            if (answer.status === 403) continue;
            assert.equal(answer.status, 200, answer.body);
            const written = [...defaults.map((g) => `FROM <${base}${g}>`), ...named.map((g) => `FROM NAMED <${base}${g}>`)].join(' ');
            const asWritten = body.replace(' WHERE', ` ${written} WHERE`);
            assert.deepEqual(canonical(answer.body, false), viewAnswer(rows().fixture, identity, asWritten), `${asWritten}`);
          }
        }
      });
    }
  },
  {},
  oneStorePerEngine,
  policies,
);
