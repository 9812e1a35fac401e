// Rows bypass class "blank nodes": rules hold for blank-node subjects as for IRIs, a blank node shared by a visible and a hidden record shows only through the visible one, and EXISTS over blank nodes agrees on every store.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  ROWS_EX,
  ROWS_FINDINGS,
  askRows,
  assertAsView,
  describeRowsOnEveryStore,
  identityOf,
  valuesOf,
} from '../../helpers/rows-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

describeRowsOnEveryStore('rows: blank-node subjects', (rows) => {
  const cases: readonly { caller: 'alice' | 'bob' | 'pub' | 'cat'; query: string; variable: string; expected: string[] }[] = [
    {
      caller: 'pub',
      query: `${P}SELECT ?n WHERE { ?s a ex:PublicRecord ; ex:name ?n FILTER(isBlank(?s)) }`,
      variable: 'n',
      expected: ['Anonymous record'],
    },
    { caller: 'pub', query: `${P}SELECT ?s WHERE { ?s ex:name "Ghost" }`, variable: 's', expected: [] },
    { caller: 'bob', query: `${P}SELECT ?t WHERE { ?x ex:text ?t }`, variable: 't', expected: ['shared note'] },
    { caller: 'alice', query: `${P}SELECT ?t WHERE { ?x ex:text ?t }`, variable: 't', expected: [] },
    { caller: 'alice', query: `${P}SELECT ?x WHERE { ex:p1 ex:note ?x }`, variable: 'x', expected: ['_:'] },
    { caller: 'alice', query: `${P}SELECT ?t WHERE { ex:p1 ex:note ?x . ?x ?p ?t }`, variable: 't', expected: [] },
    { caller: 'bob', query: `${P}SELECT ?p WHERE { ?p ex:note ?x . ?x ex:text ?t }`, variable: 'p', expected: ['ex:p2'] },
    { caller: 'alice', query: `${P}SELECT ?n WHERE { ?s ex:budget 999 ; ex:name ?n }`, variable: 'n', expected: ['Dark'] },
    {
      caller: 'alice',
      query: `${P}SELECT ?n WHERE { [] ex:name ?n }`,
      variable: 'n',
      expected: ['Alice', 'Apollo', 'Dark', 'Open project'],
    },
    { caller: 'cat', query: `${P}SELECT ?e WHERE { ?s ex:name "Ghost" ; ex:email ?e }`, variable: 'e', expected: ['ghost@example.org'] },
    {
      caller: 'pub',
      query: `${P}SELECT ?n WHERE { ?s ex:name ?n FILTER EXISTS { ?s ex:budget ?b } }`,
      variable: 'n',
      expected: ['Anonymous record', 'Open data', 'Open project', 'Second public'],
    },
    {
      caller: 'pub',
      query: `${P}SELECT ?n WHERE { ?s ex:name ?n FILTER NOT EXISTS { ?s a ex:PublicRecord } }`,
      variable: 'n',
      expected: [],
    },
    {
      caller: 'bob',
      query: `${P}SELECT ?s WHERE { ?s ex:team "team-b" FILTER NOT EXISTS { ?s ex:name ?n } }`,
      variable: 's',
      expected: ['_:'],
    },
    { caller: 'alice', query: `${P}SELECT ?s WHERE { ?s ex:name ?n FILTER EXISTS { ?s ex:budget 999 } }`, variable: 's', expected: ['_:'] },
  ];
  for (const { caller, query, variable, expected } of cases) {
    it(`${caller}: ${query.replace(P, '')}`, query.includes('[]') ? { todo: ROWS_FINDINGS.blankNodes } : {}, async () => {
      assert.deepEqual(valuesOf(await assertAsView(rows(), caller, identityOf(caller), query), variable), expected);
    });
  }

  it('CONSTRUCT keeps the hidden blank node rows out', async () => {
    const body = await assertAsView(
      rows(),
      'alice',
      identityOf('alice'),
      `${P}CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(isBlank(?s)) }`,
    );
    assert.doesNotMatch(body, /Ghost|shared note|Anonymous record/);
    assert.match(body, /Dark/);
  });

  it('a blank node in the query never matches a hidden blank-node row', async () => {
    const answer = await askRows(rows().endpoint, `${P}ASK { [] ex:text "shared note" }`, 'alice');
    // A refusal is safe too (see ROWS_FINDINGS.blankNodes); true never is.
    if (answer.status !== 403) assert.match(answer.body, /false/);
  });
});
