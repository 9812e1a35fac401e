// Rows bypass class "negation": MINUS, NOT EXISTS and OPTIONAL with !BOUND see the view only, so a hidden record reads as absent, never as present.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ROWS_EX, askRows, assertAsView, describeRowsOnEveryStore, identityOf, valuesOf } from '../../helpers/rows-stores.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;

describeRowsOnEveryStore('rows: negation sees the view only', (rows) => {
  it('NOT EXISTS: hidden records read as absent (alice is a member of p1 only)', async () => {
    const query = `${P}SELECT ?s WHERE { VALUES ?s { ex:p1 ex:p2 ex:p3 ex:r1 } FILTER NOT EXISTS { ?s a ?c } }`;
    const body = await assertAsView(rows(), 'alice', identityOf('alice'), query);
    assert.deepEqual(valuesOf(body, 's'), ['ex:p2', 'ex:p3', 'ex:r1']);
  });

  it('MINUS: a hidden record is not subtracted', async () => {
    const query = `${P}SELECT ?s WHERE { VALUES ?s { ex:p1 ex:p2 ex:p3 } MINUS { ?s ex:name ?n } }`;
    assert.deepEqual(valuesOf(await assertAsView(rows(), 'alice', identityOf('alice'), query), 's'), ['ex:p2', 'ex:p3']);
  });

  it('OPTIONAL with !BOUND: the hidden budget stays unbound', async () => {
    const query = `${P}SELECT ?s WHERE { VALUES ?s { ex:p1 ex:p2 } OPTIONAL { ?s ex:budget ?b } FILTER(!BOUND(?b)) }`;
    assert.deepEqual(valuesOf(await assertAsView(rows(), 'alice', identityOf('alice'), query), 's'), ['ex:p2']);
  });

  it('EXISTS probing a hidden value answers false; the keeper proves the value is there', async () => {
    const query = `${P}ASK { FILTER EXISTS { ex:p2 ex:budget 250 } }`;
    assert.equal((await askRows(rows().endpoint, query, 'alice')).body.includes('true'), false);
    assert.match((await askRows(rows().endpoint, query, 'keeperMain')).body, /true/);
  });

  it('NOT EXISTS through a fixed path: a visible lead with a visible salary subtracts, hidden ones do not', async () => {
    const query = `${P}SELECT ?p WHERE { ?p a ex:Project FILTER NOT EXISTS { ?p ex:lead/ex:salary ?x } }`;
    assert.deepEqual(valuesOf(await assertAsView(rows(), 'alice', identityOf('alice'), query), 'p'), ['_:', 'ex:r2']);
  });

  it('NOT EXISTS over a variable predicate: a hidden column never subtracts', async () => {
    const query = `${P}SELECT ?s WHERE { ?s a ex:PublicRecord FILTER NOT EXISTS { ?s ?p "south" } }`;
    assert.deepEqual(valuesOf(await assertAsView(rows(), 'pub', identityOf('pub'), query), 's'), ['_:', 'ex:d1', 'ex:r1', 'ex:r2']);
  });

  it('naming an unlisted column inside NOT EXISTS or MINUS is refused as a hidden one is', async () => {
    for (const query of [
      `${P}SELECT ?s WHERE { ?s a ex:PublicRecord FILTER NOT EXISTS { ?s ex:region ?r } }`,
      `${P}SELECT ?s WHERE { ?s a ex:PublicRecord MINUS { ?s ex:team ?t } }`,
    ]) {
      const answer = await askRows(rows().endpoint, query, 'pub');
      assert.equal(answer.status, 403, `${query}: ${answer.body}`);
      assert.doesNotMatch(answer.body, /south|team-a/);
    }
    const hidden = await askRows(
      rows().endpoint,
      `${P}SELECT ?s WHERE { ?s ex:name ?n OPTIONAL { ?s ex:salary ?x } FILTER(!BOUND(?x)) }`,
      'bob',
    );
    assert.equal(hidden.status, 403, hidden.body);
  });

  it('a hidden record named by its IRI stays hidden when an OPTIONAL follows (Virtuoso lost the row filter there)', async () => {
    for (const query of [
      `${P}SELECT ?n ?x ?t WHERE { ex:p2 ex:name ?n OPTIONAL { ?x ex:name ?t } }`,
      `${P}SELECT ?n ?x ?t WHERE { ex:p2 ex:name ?n OPTIONAL { ?x ex:lead ?l ; ex:name ?t } OPTIONAL { ?l ex:name ?m } }`,
      `${P}SELECT ?n ?b WHERE { ex:p3 ex:name ?n OPTIONAL { ex:p1 ex:budget ?b } }`,
    ]) {
      const body = await assertAsView(rows(), 'alice', identityOf('alice'), query);
      assert.doesNotMatch(body, /Borealis|Cygnus/, query);
    }
  });

  it('negation under a JWT claim rule: only the rows of the claimed region exist', async () => {
    const token = await rows().token({ region: 'north' });
    const identity = { agent: 'http://example.org/agents/jo', groups: ['regional'], claims: new Map([['region', 'north']]) };
    const query = `${P}SELECT ?s WHERE { VALUES ?s { ex:p1 ex:p2 ex:p3 } FILTER NOT EXISTS { ?s ex:name ?n } }`;
    assert.deepEqual(valuesOf(await assertAsView(rows(), { token }, identity, query), 's'), ['ex:p2', 'ex:p3']);
  });
});
