// The Accept header sent to the store: the caller's as it is, or the form's default where the caller names no type.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseAccept } from '../../src/http/choose-accept.js';

const JSON_RESULTS = 'application/sparql-results+json';

describe('chooseAccept', () => {
  it("gives the form's default where the caller names no type: none, empty, */* alone, with parameters or repeated", () => {
    for (const accept of [undefined, '', ' ', '*/*', ' */* ', '*/*;q=0.8', '*/*, */*;q=0.5', ',']) {
      assert.equal(chooseAccept(accept, JSON_RESULTS), JSON_RESULTS, String(accept));
    }
  });

  it("passes the caller's Accept on as it is where it names a type", () => {
    for (const accept of ['text/csv', 'text/csv;q=0.9, */*;q=0.1', 'application/sparql-results+xml', 'text/*']) {
      assert.equal(chooseAccept(accept, JSON_RESULTS), accept);
    }
  });

  it('passes */*;q=0 on: it accepts nothing (RFC 9110 section 12.4.2), which the store answers', () => {
    for (const accept of ['*/*;q=0', '*/*; q=0.000', '*/*;Q=0.0, */*;q=0']) {
      assert.equal(chooseAccept(accept, JSON_RESULTS), accept);
    }
  });
});
