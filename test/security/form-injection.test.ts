// Bypass class: form-encoding injection through the query text; the guard must send exactly one query= and nothing else.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GRAPHS, bindings, describeOnEveryStore, send } from '../helpers/rig-stores.js';

/** Literals that would add or split parameters if the guard built the form body by string joining. */
const PAYLOADS = [
  `x&default-graph-uri=${GRAPHS.secret}`,
  `x&named-graph-uri=${encodeURIComponent(GRAPHS.secret)}&query=ASK{}`,
  'a+b %2B %26 %3D = &amp; ;',
  'line\nbreak\r\nand\ttab',
  'unicode é ü ☃ 𝄞',
  `x&update=${encodeURIComponent('DROP ALL')}`,
];

describeOnEveryStore('form-encoding injection', (guard) => {
  for (const payload of PAYLOADS) {
    it(`literal ${JSON.stringify(payload)} comes back unchanged, and no parameter is added`, async () => {
      const literal = JSON.stringify(payload); // a valid SPARQL string: JSON escapes are a subset of ECHAR / UCHAR
      const answer = await send(guard().endpoint, `SELECT ?x WHERE { BIND(${literal} AS ?x) }`, { caller: 'reader' });
      assert.equal(answer.status, 200, answer.body.slice(0, 200));
      assert.deepEqual(bindings(answer.body, 'x'), [payload]);
    });
  }

  it('a comment holding parameters is dropped, not forwarded', async () => {
    const query = `PREFIX ex: <http://example.org/>\nSELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b } # &default-graph-uri=${GRAPHS.secret}&union-default-graph=true\n`;
    const answer = await send(guard().endpoint, query, { caller: 'reader' });
    assert.equal(answer.status, 200);
    assert.deepEqual(
      bindings(answer.body, 'b')
        .map(Number)
        .sort((x, y) => x - y),
      [2, 8],
    );
    const explained = await send(guard().endpoint, query, { caller: 'reader', suffix: '/explain' });
    assert.doesNotMatch(explained.body, /default-graph-uri|union-default-graph/);
  });

  it('a raw & in a GET query string splits parameters for the guard, which then sees a broken query', async () => {
    const response = await fetch(
      `${guard().endpoint}?query=ASK%20%7B%7D&default-graph-uri=${encodeURIComponent(GRAPHS.secret)}&query=ASK%20%7B%7D`,
    );
    assert.equal(response.status, 400, 'two query parameters');
  });

  it('a form body with a non-UTF-8 byte is refused, not reinterpreted', async () => {
    const response = await fetch(guard().endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' },
      body: Buffer.from('query=ASK%20%7B%7D', 'latin1'),
    });
    assert.equal(response.status, 415);
  });
});
