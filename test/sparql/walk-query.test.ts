// Proves walkQuery reaches every position of a parsed query (patterns, expressions, paths, sub-queries, EXISTS, VALUES, templates, solution modifiers) and replaces terms where they stand.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseQuery } from '../../src/sparql/parse-query.js';
import { walkQuery, type TreeNode } from '../../src/sparql/walk-query.js';

/** Every IRI of the query names the position it is written in. */
const EVERY_POSITION = `
  CONSTRUCT { ?s <x:template> ?o }
  WHERE {
    ?s <x:bgp> ?o ; <x:seq>/^<x:inv>* ?o ; !(<x:neg>|^<x:neginv>) ?o .
    OPTIONAL { ?s <x:optional> ?o }
    MINUS { ?s <x:minus> ?o }
    { ?s <x:union1> ?o } UNION { ?s <x:union2> ?o }
    GRAPH <x:graph> { ?s ?p ?o }
    { SELECT ?s (<x:projected>(?o) AS ?c) WHERE { ?s <x:subselect> ?o } GROUP BY ?s <x:groupby>(?o) HAVING (COUNT(?o) > <x:having>(1)) ORDER BY <x:orderby>(?s) }
    BIND(<x:bind>(?o) AS ?b)
    FILTER(EXISTS { ?s <x:exists> ?o } && ?o NOT IN (<x:notin>) && STR(?o) != STR(<x:builtin>))
    FILTER NOT EXISTS { ?s <x:notexists> ?o }
    VALUES ?v { <x:values> UNDEF }
  }
  ORDER BY DESC(<x:outerorder>(?s))
  VALUES ?w { <x:trailing> }`;

const POSITIONS = [
  'template',
  'bgp',
  'seq',
  'inv',
  'neg',
  'neginv',
  'optional',
  'minus',
  'union1',
  'union2',
  'graph',
  'projected',
  'subselect',
  'groupby',
  'having',
  'orderby',
  'bind',
  'exists',
  'notin',
  'builtin',
  'notexists',
  'values',
  'outerorder',
  'trailing',
];

test('every term of the tree reaches the term callback, wherever it stands', () => {
  const seen = new Set<string>();
  walkQuery(parseQuery(EVERY_POSITION), {
    term(term) {
      if (term.termType === 'NamedNode' && term.value.startsWith('x:')) seen.add(term.value.slice(2));
    },
  });
  assert.deepEqual([...seen].sort(), [...POSITIONS].sort());
});

const kind = (node: TreeNode): string => String(node['type'] ?? ('subject' in node ? 'triple' : 'prefixes'));

test('nodes are entered before and left after their fields, in field order; terms are never entered', () => {
  const events: string[] = [];
  walkQuery(parseQuery('SELECT * { ?s <x:p>* ?o FILTER(?o > 1) }'), {
    enter: (node) => void events.push('enter ' + kind(node)),
    leave: (node) => void events.push('leave ' + kind(node)),
  });
  // The prefix map is a node too: every field is walked.
  assert.deepEqual(events, [
    'enter query',
    'enter bgp',
    'enter triple',
    'enter path',
    'leave path',
    'leave triple',
    'leave bgp',
    'enter filter',
    'enter operation',
    'leave operation',
    'leave filter',
    'enter prefixes',
    'leave prefixes',
    'leave query',
  ]);
});

test("enter returning false skips a node's fields and its leave", () => {
  const seen: string[] = [];
  walkQuery(parseQuery('SELECT * { ?s <x:outside> ?o FILTER EXISTS { ?s <x:inside> ?o } }'), {
    enter: (node: TreeNode) => node['type'] !== 'filter',
    leave: (node) => assert.notEqual(node['type'], 'filter'),
    term: (term) => void seen.push(term.value),
  });
  assert.ok(seen.includes('x:outside'));
  assert.ok(!seen.includes('x:inside'));
});

test('a term returned by the term callback replaces the term in arrays and in fields alike', () => {
  const tree = parseQuery('SELECT * { <x:a> <x:b> <x:c> FILTER(?o IN (<x:a>)) }') as unknown as {
    where: [
      { triples: [{ subject: { value: string }; predicate: { value: string } }] },
      { expression: { args: [unknown, { value: string }[]] } },
    ];
  };
  walkQuery(tree, {
    term: (term) => (term.value === 'x:a' ? { termType: 'NamedNode', value: 'x:replaced' } : undefined),
  });
  assert.equal(tree.where[0].triples[0].subject.value, 'x:replaced');
  assert.equal(tree.where[0].triples[0].predicate.value, 'x:b');
  assert.equal(tree.where[1].expression.args[1][0]?.value, 'x:replaced');
});

test('the root tells a sub-query from the query itself', () => {
  const tree = parseQuery('SELECT * { { SELECT ?s { ?s ?p ?o } } }');
  const roots: boolean[] = [];
  walkQuery(tree, { enter: (node, root) => void (node['type'] === 'query' && roots.push(node === root)) });
  assert.deepEqual(roots, [true, false]);
});
