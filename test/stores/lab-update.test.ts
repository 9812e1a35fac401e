// The lab writer the tests and the benches share (test/helpers/lab-update.ts): an update of several operations reaches every lab store whole, Virtuoso's isql included (SQ074 when `op1 ; op2` goes as one statement).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { isqlStatementsOf, updateLabStore } from '../helpers/lab-update.js';
import { rigStores } from '../helpers/rig-stores.js';

const EX = 'http://example.org/';

describe('isqlStatementsOf', () => {
  it('sends one operation as written, on one SPARQL line', () => {
    assert.equal(isqlStatementsOf('DROP SILENT GRAPH <urn:x:g>'), 'SPARQL DROP SILENT GRAPH <urn:x:g>;\n');
  });
  it('splits several operations into one statement each, each with the prologue', () => {
    const statements = isqlStatementsOf(
      'PREFIX ex: <http://example.org/>\nINSERT DATA { GRAPH ex:g { ex:a ex:p "x;y" } } ;\nDROP SILENT GRAPH ex:h',
    )
      .split('\n')
      .filter((line) => line !== '');
    assert.equal(statements.length, 2);
    for (const statement of statements) assert.match(statement, /^SPARQL PREFIX ex: <http:\/\/example\.org\/> .*;$/);
    assert.match(statements[0]!, /INSERT DATA/);
    assert.match(statements[0]!, /"x;y"/);
    assert.match(statements[1]!, /DROP SILENT GRAPH ex:h/);
  });
});

for (const store of rigStores()) {
  describe(`updateLabStore [${store.name}]`, () => {
    const graph = `${EX}lab-update-${randomUUID()}`;
    after(() => updateLabStore(store, `DROP SILENT GRAPH <${graph}>`));

    it('writes every operation of a request of several', async () => {
      await updateLabStore(
        store,
        `PREFIX ex: <${EX}>\nINSERT DATA { GRAPH <${graph}> { ex:a ex:p 1 } } ;\nINSERT DATA { GRAPH <${graph}> { ex:b ex:p 2 } }`,
      );
      const response = await fetch(store.queryUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
        body: new URLSearchParams({ query: `SELECT ?s WHERE { GRAPH <${graph}> { ?s <${EX}p> ?o } }` }),
      });
      assert.equal(response.status, 200);
      const json = (await response.json()) as { results: { bindings: { s: { value: string } }[] } };
      assert.deepEqual(json.results.bindings.map((row) => row.s.value).sort(), [`${EX}a`, `${EX}b`]);
    });
  });
}
