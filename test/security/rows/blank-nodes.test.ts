// Rows bypass class "blank nodes": rules hold for blank-node subjects as for IRIs, a blank node shared by a visible and a hidden record shows only through the visible one, and EXISTS over blank nodes agrees on every store.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ROWS_EX, askRows, assertAsView, describeRowsOnEveryStore, identityOf, valuesOf } from '../../helpers/rows-stores.js';

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
      expected: ['Alice', 'Apollo', 'Dark', 'Open project', 'Second public'],
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
    it(`${caller}: ${query.replace(P, '')}`, async () => {
      assert.deepEqual(valuesOf(await assertAsView(rows(), caller, identityOf(caller), query), variable), expected);
    });
  }

  // Found by the rows oracle (seed 4101, W3C syn-11 mutated): sparqljs splits a BGP at each FILTER into
  // blocks, and a label named per block became two variables, so the blocks no longer joined on it.
  it('a blank-node label shared across a FILTER inside one BGP stays one node', async () => {
    const everyone = ['alice', 'bob', 'pub', 'cat'] as const;
    for (const [query, callers] of [
      [`${P}SELECT * WHERE { _:a ?p ?v . FILTER(true) . [] ?q _:a }`, everyone],
      [`${P}SELECT (COUNT(*) AS ?n) WHERE { _:a ?p ?v . FILTER(true) . [] ?q _:a }`, everyone],
      [`${P}SELECT ?n ?b WHERE { _:x ex:name ?n FILTER(?n != "") _:x ex:budget ?b }`, everyone],
      // Only bob's columns hold notes and their text.
      [`${P}SELECT ?t WHERE { ?s ex:note _:n FILTER(isIRI(?s)) FILTER(true) _:n ex:text ?t }`, ['bob']],
    ] as const) {
      for (const caller of callers) await assertAsView(rows(), caller, identityOf(caller), query);
    }
  });

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
    const ask = `${P}ASK { [] ex:text "shared note" }`;
    assert.equal((JSON.parse(await assertAsView(rows(), 'alice', identityOf('alice'), ask)) as { boolean: boolean }).boolean, false);
    assert.equal((JSON.parse(await assertAsView(rows(), 'bob', identityOf('bob'), ask)) as { boolean: boolean }).boolean, true);
  });

  // Query blank nodes become fresh variables under rows: none of them may reach a projection or a count.
  const star: readonly { caller: 'alice' | 'bob' | 'pub'; query: string; head: string[] }[] = [
    { caller: 'alice', query: `${P}SELECT * WHERE { [] ex:name ?n }`, head: ['n'] },
    { caller: 'alice', query: `${P}SELECT DISTINCT * WHERE { ?p ex:note [] ; ex:name ?n }`, head: ['n', 'p'] },
    { caller: 'bob', query: `${P}SELECT * WHERE { ?p ex:note _:b . _:b ex:text ?t }`, head: ['p', 't'] },
    { caller: 'bob', query: `${P}SELECT * WHERE { ?p ex:note [ ex:team ?t ] }`, head: ['p', 't'] },
    { caller: 'pub', query: `${P}SELECT * WHERE { { SELECT * WHERE { [] a ex:PublicRecord ; ex:name ?n } } }`, head: ['n'] },
    { caller: 'alice', query: `${P}SELECT (COUNT(*) AS ?c) WHERE { [] ex:name ?n }`, head: ['c'] },
    { caller: 'alice', query: `${P}SELECT DISTINCT ?n WHERE { [] ex:budget ?b ; ex:name ?n } ORDER BY ?n`, head: ['n'] },
  ];
  for (const { caller, query, head } of star) {
    it(`${caller}: ${query.replace(P, '')} projects only the query's variables`, async () => {
      const body = await assertAsView(rows(), caller, identityOf(caller), query);
      const json = JSON.parse(body) as { head: { vars: string[] } };
      assert.deepEqual([...json.head.vars].sort(), head);
    });
  }

  it('a blank node label is one node within its BGP, shared by its triples', async () => {
    const body = await assertAsView(rows(), 'bob', identityOf('bob'), `${P}SELECT ?p ?t WHERE { ?p ex:note _:x . _:x ex:team ?t }`);
    assert.deepEqual(valuesOf(body, 't'), ['team-b']);
  });

  it('CONSTRUCT over a blank node of the query answers as the view', async () => {
    await assertAsView(rows(), 'alice', identityOf('alice'), `${P}CONSTRUCT { ?s ex:name ?n } WHERE { ?s ex:note [] ; ex:name ?n }`);
    await assertAsView(rows(), 'bob', identityOf('bob'), `${P}CONSTRUCT { [] ex:saw ?t } WHERE { [] ex:text ?t }`);
  });

  it('COUNT(DISTINCT *) over a blank node is refused under rows, in one line', async () => {
    const query = `${P}SELECT (COUNT(DISTINCT *) AS ?c) WHERE { [] ex:name ?n }`;
    const refused = await askRows(rows().endpoint, query, 'alice');
    assert.equal(refused.status, 403, refused.body);
    assert.match(refused.body, /COUNT\(DISTINCT \*\)/);
  });
});
