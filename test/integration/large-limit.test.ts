// LIMIT and OFFSET integers reach the store exactly as written, or the query is refused: never rounded through a floating-point number.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

describe('LIMIT and OFFSET beyond what a JavaScript number holds exactly', () => {
  let t: TestGuard;
  before(async () => {
    t = await startTestGuard({ explain: true });
  });
  after(() => t.close());

  const post = (path: string, query: string) =>
    fetch(`${t.endpoint}${path}`, { method: 'POST', body: new URLSearchParams({ query }) }).then(async (response) => ({
      status: response.status,
      body: await response.text(),
    }));

  it('writes the largest exact integer as given', async () => {
    const explained = await post('/explain', 'SELECT * WHERE { ?s ?p ?o } LIMIT 9007199254740991 OFFSET 9007199254740991');
    assert.equal(explained.status, 200, explained.body);
    assert.match((JSON.parse(explained.body) as { query: string }).query, /OFFSET 9007199254740991\s+LIMIT 9007199254740991$/);
  });

  it('forwards a large LIMIT the store accepts (the embedded store takes up to 2^32 - 1), and the store answers', async () => {
    const answered = await post('', 'SELECT * WHERE { ?s ?p ?o } LIMIT 4294967295');
    assert.equal(answered.status, 200, answered.body);
  });

  for (const [what, query] of [
    ['the outer LIMIT of the report', 'SELECT * WHERE { ?s ?p ?o } LIMIT 99999999999999999999'],
    ['one past 2^53 - 1, which a number would round down', 'SELECT * WHERE { ?s ?p ?o } LIMIT 9007199254740993'],
    ['a sub-select LIMIT', 'SELECT * WHERE { { SELECT * WHERE { ?s ?p ?o } LIMIT 99999999999999999999 } }'],
  ] as const) {
    it(`refuses ${what} with one line, and sends nothing rounded`, async () => {
      for (const path of ['/explain', '']) {
        const answer = await post(path, query);
        assert.equal(answer.status, 400);
        assert.equal(answer.body, 'LIMIT above 9007199254740991 is not supported\n');
      }
    });
  }

  it('refuses an OFFSET past 2^53 - 1 the same way', async () => {
    const answer = await post('', 'SELECT * WHERE { ?s ?p ?o } OFFSET 1000000000000000000000');
    assert.equal(answer.status, 400);
    assert.equal(answer.body, 'OFFSET above 9007199254740991 is not supported\n');
  });
});
