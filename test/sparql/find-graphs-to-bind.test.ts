// Which `GRAPH ?var` elements get BIND in their per-graph branches (src/sparql/find-graphs-to-bind.ts): those under an EXISTS,
// a NOT EXISTS or a MINUS whose variable nothing outside the innermost of them names, and whose body leaves it out of scope.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findGraphsToBind } from '../../src/sparql/find-graphs-to-bind.js';
import { parseQuery } from '../../src/sparql/parse-query.js';
import { walkQuery } from '../../src/sparql/walk-query.js';

/** The variables of the GRAPH elements findGraphsToBind picks in `query`, in the order written. */
function picked(query: string): string[] {
  const root = parseQuery(query);
  const found = findGraphsToBind(root);
  const names: string[] = [];
  walkQuery(root, {
    enter(node) {
      if (found.has(node)) names.push(String((node['name'] as { value: string }).value));
    },
  });
  return names;
}

test('a graph variable named only inside the negation is bound by BIND', () => {
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }'), ['g']);
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER(true && NOT EXISTS { GRAPH ?g { ?s ?p ?o } }) }'), ['g']);
  assert.deepEqual(picked('ASK { ?s ?p ?o MINUS { GRAPH ?g { ?s ?p ?o } } }'), ['g']);
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o } FILTER(?g != <urn:x>) } }'), ['g']);
  assert.deepEqual(picked('ASK { FILTER EXISTS { GRAPH ?a { ?s ?p ?o } } FILTER NOT EXISTS { GRAPH ?b { ?s ?p ?o } } }'), ['a', 'b']);
});

test('a graph variable that a solution from outside may bind keeps VALUES', () => {
  assert.deepEqual(picked('ASK { GRAPH ?g { ?s ?p ?o } }'), []);
  assert.deepEqual(picked('ASK { ?s ?p ?g FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }'), []);
  assert.deepEqual(picked('SELECT ?g { ?s ?p ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }'), []);
  assert.deepEqual(picked('ASK { ?s ?p ?o MINUS { GRAPH ?g { ?s ?p ?o } } FILTER(BOUND(?g)) }'), []);
  // VALUES names its variables by key, not by a term.
  assert.deepEqual(picked('ASK { ?s ?p ?o VALUES ?g { <urn:x> } FILTER NOT EXISTS { GRAPH ?g { ?s ?p ?o } } }'), []);
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER NOT EXISTS { GRAPH ?g { ?s ?p ?o } } } VALUES (?x ?g) { (1 UNDEF) }'), []);
  // Named in an outer EXISTS, outside the innermost one.
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER EXISTS { ?s ?p ?g FILTER NOT EXISTS { GRAPH ?g { ?s ?p ?o } } } }'), []);
  // Two GRAPH ?g in one negation: the other names it outside neither.
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o } GRAPH ?g { ?o ?p ?s } } }'), ['g', 'g']);
});

test('a body that puts the variable in scope itself keeps VALUES (BIND would assign a variable in scope, §18.2.1)', () => {
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o VALUES ?g { <urn:x> } } } }'), []);
  assert.deepEqual(picked('ASK { ?s ?p ?o FILTER EXISTS { GRAPH ?g { GRAPH ?h { ?s ?p ?g } } } }'), ['h']);
});
