// Rows bypass class "duplicate solutions": equal solutions of the caller's pattern stay as many as the view has beside a row check's join (Jena 4.5 ran the join as a sequence through its DISTINCT and kept one of each).

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ROWS_EX, assertAsView, describeRowsOnEveryStore, identityOf, valuesOf } from '../../helpers/rows-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

describeRowsOnEveryStore('rows: duplicate solutions keep their multiplicity beside a row check', (rows) => {
  // bob (team-b) sees p2, bob and the shared note: 12 triples, names Borealis and Bob.
  const cases: readonly { query: string; variable: string; expected: string[] }[] = [
    {
      query: `${P}SELECT (COUNT(*) AS ?c) WHERE { { SELECT ?s WHERE { ?s ?p ?o } } ?s ex:name ?n }`,
      variable: 'c',
      expected: ['12'],
    },
    {
      query: `${P}SELECT ?s ?n WHERE { { ?s ex:name ?n } UNION { ?s ex:name ?n } }`,
      variable: 'n',
      expected: ['Bob', 'Bob', 'Borealis', 'Borealis'],
    },
    {
      query: `${P}SELECT * WHERE { ?s ex:name ?n } VALUES ?s { ex:p2 ex:alice UNDEF }`,
      variable: 'n',
      expected: ['Bob', 'Borealis', 'Borealis'],
    },
    { query: `${P}SELECT ?n WHERE { VALUES ?s { ex:p2 ex:p2 } ?s ex:name ?n }`, variable: 'n', expected: ['Borealis', 'Borealis'] },
    {
      query: `${P}SELECT ?n WHERE { VALUES ?n { "Borealis" "Borealis" } ex:p2 ex:name ?n }`,
      variable: 'n',
      expected: ['Borealis', 'Borealis'],
    },
  ];
  for (const { query, variable, expected } of cases) {
    it(`bob: ${query.replace(P, '')}`, async () => {
      const body = await assertAsView(rows(), 'bob', identityOf('bob'), query);
      assert.deepEqual(valuesOf(body, variable), expected);
    });
  }

  it('gil: a row check inside NOT EXISTS of a sub-select (Virtuoso answered a grouped set there with one record eight times)', async () => {
    // gil sees salaries only of projects (none has one): every record with a team stays, once.
    const query = `${P}SELECT * WHERE { ?s ex:name ?n { SELECT ?s WHERE { ?s ex:team ?t FILTER NOT EXISTS { ?s ex:salary ?x } } } }`;
    const body = await assertAsView(rows(), 'gil', identityOf('gil'), query);
    assert.deepEqual(valuesOf(body, 'n'), ['Alice', 'Apollo', 'Bob', 'Borealis', 'Cygnus', 'Ghost', 'Open project']);
  });
});
