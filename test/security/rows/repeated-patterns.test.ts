// A triple pattern written twice beside a row check's join: the view's answer on every store. Virtuoso 7.2.5 answered erin's
// `SELECT * { ?s ?p ?o . ?s ?p ?o }` with no row where the view has six (found by the rows oracle, seed 91): a repeated pattern
// of variables is written once (src/sparql/drop-repeated-triples.ts).

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ROWS_EX, assertAsView, describeRowsOnEveryStore, identityOf } from '../../helpers/rows-stores.js';

describeRowsOnEveryStore('rows: a repeated triple pattern', (rows) => {
  it('erin (a join of two rule graphs) and alice get the view', async () => {
    for (const query of [
      'SELECT * WHERE { ?s ?p ?o . ?s ?p ?o . }',
      'SELECT * WHERE { ?s ?p ?o, ?o . ?x ?y ?z . ?s ?p ?o }',
      `PREFIX ex: <${ROWS_EX}>\nSELECT ?s ?n WHERE { ?s ex:name ?n . ?s ex:name ?n }`,
    ]) {
      const body = await assertAsView(rows(), 'erin', identityOf('erin'), query);
      if (query.includes('?s ?p ?o . ?s ?p ?o')) assert.ok(JSON.parse(body).results.bindings.length > 0, 'the view has rows');
      await assertAsView(rows(), 'alice', identityOf('alice'), query);
    }
  });
});
