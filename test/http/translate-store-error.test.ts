// Each lab store's own error words, as the store answers them, to the guard's one line: refused for cost, time, memory or size, or a plain store error.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANSWER_TOO_LARGE } from '../../src/embedded/answer-query.js';
import { StoreError } from '../../src/guard-error.js';
import { translateStoreError } from '../../src/http/translate-store-error.js';
import type { Plan } from '../../src/sparql/plan.js';

/** The two fields of a plan the translation reads. */
const planOf = (datasetGraphs: number, formBytes = 2048): Plan => ({ datasetGraphs, formBytes }) as Plan;
const QUOTED = 'SELECT * FROM <http://example.org/g/secret> WHERE { ?s <http://example.org/hidden> ?o }';

/** [store, status, its words (first line as the store sends it, then the quoted query), expected code, expected reason]. */
const CASES: readonly (readonly [string, number, string, 'store_refused' | 'store_error', RegExp | undefined])[] = [
  [
    'Virtuoso MaxQueryCostEstimationTime',
    500,
    `Virtuoso 42000 Error The estimated execution time -807834112 (sec) exceeds the limit of 400 (sec).\n\nSPARQL query:\n${QUOTED}`,
    'store_refused',
    /its estimated cost is over the store's limit/,
  ],
  [
    'Virtuoso MaxQueryExecutionTime',
    500,
    `Virtuoso S1T00 Error SR171: Transaction timed out\n\nSPARQL query:\n${QUOTED}`,
    'store_refused',
    /ran past the store's time limit/,
  ],
  [
    'Virtuoso MaxQueryMem',
    500,
    `Virtuoso 42000 Error SR483: Out of memory for the query\n\nSPARQL query:\n${QUOTED}`,
    'store_refused',
    /more memory than the store allows/,
  ],
  [
    'Virtuoso past 4,094 graphs',
    400,
    'Virtuoso 37000 Error SP030: SPARQL compiler: Too many arguments',
    'store_refused',
    /larger than the store accepts/,
  ],
  ['Fuseki timeout', 503, 'The query timed out (restricted to 1000 ms)', 'store_refused', /ran past the store's time limit/],
  [
    'Jena ARQ timeout (the lab)',
    500,
    'Error 500: org.apache.jena.query.QueryCancelledException',
    'store_refused',
    /ran past the store's time limit/,
  ],
  [
    'Jena past its heap (the lab, a six-variable cross product)',
    500,
    'Error 500: java.lang.OutOfMemoryError: Java heap space',
    'store_refused',
    /more memory than the store allows/,
  ],
  ['Jena body limit (the lab)', 413, 'Error 413: request body too large', 'store_refused', /larger than the store accepts/],
  [
    'Oxigraph body limit (the lab)',
    400,
    'SPARQL body payloads are limited to 134217728 bytes',
    'store_refused',
    /larger than the store accepts/,
  ],
  [
    'the embedded store, an answer over one JavaScript string',
    500,
    ANSWER_TOO_LARGE,
    'store_refused',
    /its answer is larger than the store can send/,
  ],
  [
    "the lab's Oxigraph (hosted in Node), the same answer",
    500,
    'Cannot create a string longer than 0x1fffffe8 characters',
    'store_refused',
    /its answer is larger than the store can send/,
  ],
  ['a proxy in front: URI too long', 414, '<html>414 Request-URI Too Large</html>', 'store_refused', /larger than the store accepts/],
  [
    'Virtuoso parse error',
    400,
    `Virtuoso 37000 Error SP030: SPARQL compiler, line 0: Too many closing parentheses at '}'\n\nSPARQL query:\n${QUOTED}`,
    'store_error',
    undefined,
  ],
  [
    'Jena parse error',
    400,
    `Error 400: Parse error: \n${QUOTED}\n\nEncountered " "}" "} "" at line 1, column 89.`,
    'store_error',
    undefined,
  ],
  ['Oxigraph parse error', 400, 'error at 1:90: expected [_]', 'store_error', undefined],
];

describe("translateStoreError: the lab stores' own words", () => {
  for (const [store, status, text, code, reason] of CASES) {
    it(`${store} (${status}): ${code}, the store's status, nothing of its text`, () => {
      const error = translateStoreError(status, text, planOf(6), { explain: false });
      assert.ok(error instanceof StoreError);
      assert.equal(error.status, status);
      assert.equal(error.code, code);
      if (reason !== undefined) assert.match(error.message, reason);
      assert.doesNotMatch(error.message, /example\.org|Virtuoso|SPARQL query|Error \d/);
      assert.doesNotMatch(error.message, /\n/);
    });
  }

  it('a refusal names the forwarded dataset and its size', () => {
    const error = translateStoreError(500, CASES[0]![2], planOf(6, 10_000), { explain: false });
    assert.match(error.message, /^the store refused the query as forwarded \(HTTP 500\): with 6 graphs in its dataset, 10 KiB, /);
  });

  it('with explain on, the store text is one line without control characters', () => {
    const error = translateStoreError(500, 'line one\r\nline two\u2028three\u0000\u001b[31m red\u0085end', planOf(2), { explain: true });
    assert.equal(
      error.message,
      'the store answered HTTP 500 to the query as forwarded; the store said: line one line two three [31m red end',
    );
  });

  it("a store's 401 or 407 says it refused the guard's own credential, not the caller's; its status stays", () => {
    for (const status of [401, 407]) {
      const error = translateStoreError(status, 'Unauthorized', planOf(2), { explain: false });
      assert.equal(error.status, status);
      assert.equal(
        error.message,
        `the store answered HTTP ${status} to the query as forwarded (it refused the guard's own credential, upstreamHeaders: the caller's were accepted); its message is in the guard's log`,
      );
    }
    assert.doesNotMatch(translateStoreError(403, 'Forbidden', planOf(2), { explain: false }).message, /credential/);
  });

  it('a refusal the table does not name is put down to size from 1,000 graphs, not below', () => {
    assert.equal(translateStoreError(400, 'some store error', planOf(1_000), { explain: false }).code, 'store_refused');
    assert.equal(translateStoreError(400, 'some store error', planOf(999), { explain: false }).code, 'store_error');
  });

  it("the store's words are matched on its first line only: a query that quotes them is no refusal", () => {
    const error = translateStoreError(400, 'Error 400: Parse error: \nSELECT * WHERE { ?s ?p "Transaction timed out" }', planOf(2), {
      explain: false,
    });
    assert.equal(error.code, 'store_error');
  });

  it("with explain on, the store's text follows, as one bounded line", () => {
    const error = translateStoreError(400, `Error 400: Parse error: \n${QUOTED}\n${'x'.repeat(5000)}`, planOf(2), { explain: true });
    assert.match(
      error.message,
      /^the store answered HTTP 400 to the query as forwarded; the store said: Error 400: Parse error: SELECT \* FROM <http:\/\/example\.org\/g\/secret>/,
    );
    assert.ok(error.message.length < 2_200);
    assert.doesNotMatch(error.message, /\n/);
  });
});
