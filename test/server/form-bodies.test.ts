// Query forms as clients encode them, through a real guard over HTTP to the embedded store: the literal the store answers is the one the client wrote.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEYS, useTestGuard } from '../helpers/start-test-guard.js';

/** A literal with every kind of character a query holds, the form's delimiters among them. */
const LITERAL = "ü & = + % é€😀 ~!*()' a?b=c&d#e %41 +";
const queryOf = (literal: string): string => `SELECT ?x WHERE { BIND(${JSON.stringify(literal)} AS ?x) }`;

describe('query forms through the guard', () => {
  const guard = useTestGuard();

  /** The values of ?x the store answered, or the status when it is not 200. */
  const answer = async (response: Response): Promise<string[] | number> => {
    if (response.status !== 200) return response.status;
    const json = (await response.json()) as { results: { bindings: { x?: { value: string } }[] } };
    return json.results.bindings.map((row) => row.x?.value ?? '');
  };
  const post = async (body: string | Buffer, search = ''): Promise<string[] | number> =>
    answer(
      await fetch(`${guard().endpoint}${search}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': KEYS.beta, accept: 'application/sparql-results+json' },
        body,
      }),
    );
  const get = async (search: string): Promise<string[] | number> =>
    answer(
      await fetch(`${guard().endpoint}?${search}`, { headers: { 'x-api-key': KEYS.beta, accept: 'application/sparql-results+json' } }),
    );

  it('reads a form as URLSearchParams writes it (spaces as +), with dataset parameters beside the query', async () => {
    const body = new URLSearchParams([
      ['query', queryOf(LITERAL)],
      ['default-graph-uri', 'http://example.org/graphs/a?x=1&y=2'],
    ]).toString();
    assert.deepEqual(await post(body), [LITERAL]);
  });

  it("reads a form as encodeURIComponent writes it (spaces as %20, !'()*~ unescaped)", async () => {
    assert.deepEqual(await post(`query=${encodeURIComponent(queryOf(LITERAL))}`), [LITERAL]);
  });

  it('reads a GET query string, lower-case escapes and multi-byte characters included', async () => {
    const escaped = encodeURIComponent(queryOf(LITERAL)).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
    assert.deepEqual(await get(`query=${escaped}`), [LITERAL]);
  });

  it('reads characters a client left unescaped in a UTF-8 body as themselves', async () => {
    const body = Buffer.from(`query=${queryOf('é€😀').replace(/ /g, '+')}`, 'utf8');
    assert.deepEqual(await post(body), ['é€😀']);
  });

  it('reads escaped bytes as UTF-8 and a stray % as the standard says (the % kept); refuses a malformed sequence (400, never U+FFFD)', async () => {
    const prefix = encodeURIComponent('SELECT ?x WHERE { BIND("');
    const suffix = encodeURIComponent('" AS ?x) }');
    assert.deepEqual(await post(`query=${prefix}%E2%82%AC${suffix}`), ['€']);
    assert.equal(await post(`query=${prefix}%FF${suffix}`), 400);
    assert.equal(await post(`query=${prefix}%E2%82${suffix}`), 400);
    assert.equal(await get(`query=${prefix}%C3${suffix}`), 400);
    assert.deepEqual(await post(`query=${prefix}%zz%4${suffix}`), ['%zz%4']);
  });

  it('takes the query from the body and a dataset parameter from the URL, and refuses a query given in both', async () => {
    assert.deepEqual(await post(`query=${encodeURIComponent(queryOf('x'))}`, `?default-graph-uri=${encodeURIComponent('urn:g')}`), ['x']);
    assert.equal(await post(`query=${encodeURIComponent(queryOf('x'))}`, `?query=${encodeURIComponent('ASK {}')}`), 400);
  });

  it('skips empty pairs and refuses a form without a query, one with two, and one that names update', async () => {
    assert.deepEqual(await post(`&&query=${encodeURIComponent(queryOf('y'))}&&`), ['y']);
    assert.equal(await post('&&=&'), 400);
    assert.equal(await post(`query=${encodeURIComponent(queryOf('y'))}&query=${encodeURIComponent('ASK {}')}`), 400);
    assert.equal(await post(`query=${encodeURIComponent(queryOf('y'))}&update=`), 403);
  });
});
