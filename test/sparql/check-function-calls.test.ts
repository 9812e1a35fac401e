// Proves the function allow-list: compiled entries, exact and namespace matches on real parsed queries, and the deny-lists it cannot open.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GuardError } from '../../src/guard-error.js';
import { checkFunctionCalls, compileFunctionAllowList } from '../../src/sparql/check-function-calls.js';
import { findDeniedNamespace } from '../../src/property-function-namespaces.js';
import { parseQuery } from '../../src/sparql/parse-query.js';

const allowed = compileFunctionAllowList(['http://example.org/fn/len', 'http://example.org/ns#', 'urn:example:fns/']);
const refused = (error: unknown) => error instanceof GuardError && error.status === 400;
const check = (query: string, list = allowed) => checkFunctionCalls(parseQuery(query), list);

test('compiles exact entries into a set and entries ending in # or / into namespaces', () => {
  assert.deepEqual([...allowed.exact], ['http://example.org/fn/len']);
  assert.deepEqual(allowed.prefixes, ['http://example.org/ns#', 'urn:example:fns/']);
});

test('an exact entry allows that IRI only', () => {
  check('SELECT * { ?s ?p ?o FILTER(<http://example.org/fn/len>(?o) > 1) }');
  assert.throws(() => check('SELECT * { ?s ?p ?o FILTER(<http://example.org/fn/len2>(?o) > 1) }'), refused);
  assert.throws(() => check('SELECT * { ?s ?p ?o FILTER(<http://example.org/fn/>(?o) > 1) }'), refused);
});

test('a namespace entry allows every IRI starting with it, compared as strings', () => {
  check('SELECT (<http://example.org/ns#a>(?o) AS ?x) { ?s ?p ?o } ORDER BY <urn:example:fns/b>(?s)');
  assert.throws(() => check('SELECT * { FILTER(<http://example.org/ns>(1)) }'), refused);
  assert.throws(() => check('SELECT * { FILTER(<HTTP://EXAMPLE.ORG/ns#a>(1)) }'), refused);
  // Dot segments in the fragment are no path: still in the namespace. In the path they leave it.
  check('SELECT * { FILTER(<http://example.org/ns#a/../b>(1)) }');
  const lib = compileFunctionAllowList(['http://example.org/lib/']);
  check('SELECT * { FILTER(<http://example.org/lib/sub/../f>(1)) }', lib);
  assert.throws(() => check('SELECT * { FILTER(<http://example.org/lib/../evil/f>(1)) }', lib), refused);
});

test('without entries only XSD casts are called (fail closed)', () => {
  check('SELECT * { FILTER(<http://www.w3.org/2001/XMLSchema#integer>("1")) }', compileFunctionAllowList([]));
  assert.throws(() => check('SELECT * { FILTER(<http://example.org/ns#a>(1)) }', compileFunctionAllowList([])), refused);
  assert.throws(() => checkFunctionCalls(parseQuery('SELECT * { FILTER(<http://example.org/ns#a>(1)) }')), refused);
});

test('property functions in predicate position stay refused whatever the allow-list holds', () => {
  assert.throws(() => check('SELECT * { ?s <http://jena.apache.org/text#query> "x" FILTER(<http://example.org/ns#a>(?s)) }'), refused);
  assert.throws(() => check('SELECT * { ?s <bif:contains> "x" }'), refused);
  check('SELECT * { ?s <http://example.org/ns#p> "x" }');
});

// That the configuration refuses such entries (the planner gets only checked ones) is proven in
// test/config/read-config.test.ts.
test('entries in or covering a denied namespace are found, and even compiled they never let a call into it pass', () => {
  for (const entry of [
    'bif:contains',
    'SQL:',
    'java:x.Y',
    'http://jena.apache.org/ARQ/property#concat',
    'http://jena.apache.org/',
    'http://www.openlinksw.com/schemas/',
  ]) {
    const denied = findDeniedNamespace(entry);
    assert.notEqual(denied, undefined, entry);
    const callee = entry.endsWith('/') ? `${denied}f` : entry;
    assert.throws(() => check(`SELECT * { FILTER(<${callee}>(1)) }`, compileFunctionAllowList([entry])), refused, callee);
  }
  assert.equal(findDeniedNamespace('http://jena.apache.org/ARQ/function#'), undefined);
  assert.equal(findDeniedNamespace('http://example.org/'), undefined);
});

test('REGEX, SUBSTR and REPLACE take the argument counts the grammar gives them ([122]-[124]); sparqljs reads any count', () => {
  const arity = (name: string, low: number, high: number) => (error: unknown) =>
    error instanceof GuardError &&
    error.code === 'parse' &&
    error.message === `query is not valid SPARQL 1.1: ${name} takes ${low} or ${high} arguments (§17.4)`;
  for (const [query, name, low, high] of [
    ['SELECT (REGEX("a") AS ?x) {}', 'REGEX', 2, 3],
    ['SELECT * { FILTER(regex(?o, "a", "i", "x")) }', 'REGEX', 2, 3],
    ['SELECT (SUBSTR("abc") AS ?x) {}', 'SUBSTR', 2, 3],
    ['SELECT * { BIND(SUBSTR("abc", 1, 2, 3) AS ?x) }', 'SUBSTR', 2, 3],
    ['SELECT (REPLACE("a", "a") AS ?x) {}', 'REPLACE', 3, 4],
    ['SELECT * { FILTER EXISTS { FILTER(REPLACE("a", "a", "b", "i", "x") = "b") } }', 'REPLACE', 3, 4],
  ] as const) {
    assert.throws(() => check(query), arity(name, low, high), query);
  }
  check(
    'SELECT (REPLACE(?o, "a", "b") AS ?r) (REPLACE(?o, "a", "b", "i") AS ?i) (SUBSTR(?o, 2) AS ?t) (SUBSTR(?o, 2, 1) AS ?u) ' +
      '{ ?s ?p ?o FILTER(REGEX(?o, "a") || regex(?o, "a", "i")) }',
  );
});
