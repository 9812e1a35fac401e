// parseQuery's refusals: the place a parse error names is the unexpected token's, as the README's error table promises ("the line says where").

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GuardError } from '../../src/guard-error.js';
import { parseQuery } from '../../src/sparql/parse-query.js';

/** The 400's line for `text`. */
function refusal(text: string): string {
  try {
    parseQuery(text);
  } catch (error) {
    assert.ok(error instanceof GuardError);
    assert.equal(error.status, 400);
    return error.message;
  }
  assert.fail(`${JSON.stringify(text)} parsed`);
}

describe('parseQuery', () => {
  it('names the line and column where the unexpected token starts, not the token before it', () => {
    const cases: [string, string][] = [
      ['SELECT """a\nb""" WHERE {}', 'unexpected STRING_LITERAL_LONG2 at line 1, column 8'],
      ['SELECT * WHERE { ?s ?p ?o } ORDER BY "z"', 'unexpected STRING_LITERAL2 at line 1, column 38'],
      ['SELECT * WHERE { ?s ?p ?o } }', 'unexpected token at line 1, column 29'],
      ['SELECT * WHERE {\n  ?s ?p\n', 'unexpected end of query at line 3, column 1'],
      ['ASK {}\n\n  LIMIT x', 'unexpected INVALID at line 3, column 9'],
    ];
    for (const [text, reason] of cases) assert.equal(refusal(text), `query is not valid SPARQL 1.1: ${reason}`, JSON.stringify(text));
  });

  it('each parse places its own error: a parser is never left holding another query', () => {
    assert.match(refusal('SELECT * WHERE { ?s ?p ?o } }'), /column 29$/);
    assert.match(refusal('ASK { } }'), /line 1, column 9$/);
  });
});
