// A triple pattern with a literal subject matches nothing (RDF 1.1 §3.1: a subject is an IRI or a blank node), so its BGP has
// no solution. Virtuoso 7.2.5 takes such a pattern for one solution whatever the data: `ASK { "a" ?p ?o }` true over an empty
// dataset, `COUNT(*)` 1, `EXISTS` true, a MINUS of it removing every row (found by the rows oracle, seed 313, bob's `ASK { 100
// a/ex:phone ex:Project … }`, whose expanded path starts at the literal). The guard writes such a BGP as the group with no
// solution (src/sparql/empty-group.ts), and a path from a literal whose every way starts forward (`"a" (p|q) ?o`, `!p`: the
// same fault); every store then answers as the view, restricted callers and unrestricted alike.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ROWS_EX, askRows, assertAsView, describeRowsOnEveryStore, identityOf } from '../helpers/rows-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

const QUERIES = [
  'ASK { "a" ?p ?o }',
  'ASK { 100 a ?x }',
  `${P}ASK { 100 a/ex:phone ex:Project }`,
  'SELECT (COUNT(*) AS ?n) WHERE { 100 a ?x }',
  'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o . "x"@en ?q ?r }',
  'SELECT ?s WHERE { ?s a ?c FILTER EXISTS { "x" ?q ?r } }',
  'SELECT ?s WHERE { ?s a ?c FILTER NOT EXISTS { "x" ?q ?r } }',
  'SELECT ?s ?c WHERE { ?s a ?c MINUS { "x" ?q ?r } }',
  'SELECT * WHERE { ?s a ?c OPTIONAL { 1.5 ?q ?s } }',
  `${P}SELECT ?s ?n WHERE { ?s ex:name ?n { SELECT ?x WHERE { true ?p ?x } } }`,
  `${P}SELECT ?s WHERE { { ?s a ex:Project } UNION { "p" ?q ?s } }`,
  `${P}ASK { "zzz" (ex:team|ex:name) ?o }`,
  `${P}SELECT (COUNT(*) AS ?n) WHERE { "zzz" !ex:team ?o }`,
  `${P}SELECT (COUNT(*) AS ?n) WHERE { "team-a" ex:team/ex:name ?o }`,
  // Paths that may start at a literal: answered, and not empty where the view holds the triples.
  `${P}SELECT ?s WHERE { "team-a" ^ex:team ?s }`,
  `${P}SELECT ?s WHERE { "team-a" (^ex:team|ex:name) ?s }`,
];

describeRowsOnEveryStore('a triple pattern with a literal subject', (rows) => {
  it('answers as the view for callers with rows and columns, and for a caller of the whole graph', async () => {
    for (const caller of ['bob', 'alice', 'keeperMain'] as const) {
      for (const query of QUERIES) await assertAsView(rows(), caller, identityOf(caller), query);
    }
    // A negated set is refused under rows and columns (docs/policies.md); one with an inverse member may start at a literal.
    await assertAsView(rows(), 'keeperMain', identityOf('keeperMain'), `${P}SELECT ?s WHERE { "team-a" !(^ex:name) ?s }`);
  });

  it('keeps the variables of the BGP it replaces in scope (SELECT * names them)', async () => {
    const answer = await askRows(rows().endpoint, 'SELECT * WHERE { "a" ?p ?o }', 'keeperMain');
    assert.equal(answer.status, 200, answer.body);
    const json = JSON.parse(answer.body) as { head: { vars: string[] }; results: { bindings: unknown[] } };
    assert.deepEqual([...json.head.vars].sort(), ['o', 'p']);
    assert.equal(json.results.bindings.length, 0);
  });
});
