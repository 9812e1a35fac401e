// Rows bypass class "counting": COUNT, SUM and GROUP BY count the view, so no total or group betrays a hidden record or column.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ROWS_EX, assertAsView, describeRowsOnEveryStore, identityOf, valuesOf } from '../../helpers/rows-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

describeRowsOnEveryStore('rows: counting counts the view', (rows) => {
  const cases: readonly { caller: 'alice' | 'pub' | 'bob' | 'dan' | 'erin'; query: string; variable: string; expected: string[] }[] = [
    { caller: 'alice', query: `${P}SELECT (COUNT(*) AS ?n) WHERE { ?s a ex:Project }`, variable: 'n', expected: ['3'] },
    { caller: 'alice', query: 'SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?o }', variable: 'n', expected: ['5'] },
    { caller: 'alice', query: `${P}SELECT (SUM(?b) AS ?n) WHERE { ?s ex:budget ?b }`, variable: 'n', expected: ['1114'] },
    { caller: 'alice', query: `${P}SELECT ?t (COUNT(?s) AS ?n) WHERE { ?s ex:team ?t } GROUP BY ?t`, variable: 't', expected: ['team-a'] },
    {
      caller: 'alice',
      query: `${P}SELECT ?t WHERE { ?s ex:team ?t } GROUP BY ?t HAVING (COUNT(?s) > 0)`,
      variable: 't',
      expected: ['team-a'],
    },
    {
      caller: 'alice',
      query: 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g',
      variable: 'n',
      expected: ['21', '3'],
    },
    { caller: 'pub', query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', variable: 'n', expected: ['13'] },
    {
      caller: 'pub',
      query: 'SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p',
      variable: 'p',
      expected: ['ex:budget', 'ex:name', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'],
    },
    { caller: 'bob', query: `${P}SELECT ?t (COUNT(?s) AS ?n) WHERE { ?s ex:team ?t } GROUP BY ?t`, variable: 'n', expected: ['3'] },
    { caller: 'dan', query: `${P}SELECT (COUNT(*) AS ?n) WHERE { ?s ex:name ?x }`, variable: 'n', expected: ['11'] },
    { caller: 'dan', query: `${P}SELECT (COUNT(*) AS ?n) WHERE { ?s ex:budget ?x }`, variable: 'n', expected: ['1'] },
    { caller: 'erin', query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', variable: 'n', expected: ['6'] },
  ];
  for (const { caller, query, variable, expected } of cases) {
    it(`${caller}: ${query.replace(P, '')}`, async () => {
      assert.deepEqual(valuesOf(await assertAsView(rows(), caller, identityOf(caller), query), variable), expected);
    });
  }

  it('a count over the unrestricted caller proves the hidden records are there to be counted', async () => {
    const body = await assertAsView(
      rows(),
      'keeperMain',
      identityOf('keeperMain'),
      `${P}SELECT (COUNT(*) AS ?n) WHERE { ?s a ex:Project }`,
    );
    assert.deepEqual(valuesOf(body, 'n'), ['5']);
  });
});
