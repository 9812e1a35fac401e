// Proves the sparqljs internals the guard relies on: the version they were written against is the one pinned and installed, and each still behaves as used.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../../src/package-root.js';
import { parseQuery } from '../../src/sparql/parse-query.js';
import { createStrictParser, generateWithHooks, namedNode } from '../../src/sparql/sparqljs-internals.js';

const readJson = (path: string): { version?: string; dependencies?: Record<string, string> } =>
  JSON.parse(readFileSync(path, 'utf8')) as { version?: string; dependencies?: Record<string, string> };

test('package.json pins sparqljs to one exact version, the one installed and named in the internals file', () => {
  const root = packageRoot();
  const pinned = readJson(join(root, 'package.json')).dependencies?.['sparqljs'];
  assert.match(pinned ?? '', /^\d+\.\d+\.\d+$/, 'sparqljs must be pinned exactly: its internals are not covered by semver');
  assert.equal(readJson(join(root, 'node_modules', 'sparqljs', 'package.json')).version, pinned);
  assert.match(
    readFileSync(join(root, 'src', 'sparql', 'sparqljs-internals.ts'), 'utf8'),
    new RegExp(`sparqljs ${pinned!.replaceAll('.', '\\.')} exactly`),
  );
});

test('blank-node labels start again with every strict parser', () => {
  const text = 'SELECT * { [] <x:p> [] }';
  const first = JSON.stringify(parseQuery(text));
  parseQuery('SELECT * { [] <x:p> [] . [] <x:q> [] }');
  assert.equal(JSON.stringify(parseQuery(text)), first);
  assert.equal(JSON.stringify(createStrictParser().parse(text)), first);
});

test('namedNode builds terms of the class the parser builds', () => {
  const parsed = (parseQuery('ASK { <x:a> <x:b> <x:c> }') as unknown as { where: [{ triples: [{ subject: object }] }] }).where[0].triples[0]
    .subject;
  const made = namedNode('x:a') as object;
  assert.equal(Object.getPrototypeOf(made), Object.getPrototypeOf(parsed));
  assert.deepEqual(made, parsed);
});

test('every hook is called where the generator writes its element, and the stock writers still write', () => {
  const tree = parseQuery('SELECT * FROM <x:d> FROM NAMED <x:n> { ?s !<x:neg> ?o GRAPH <x:g> { ?s <x:p> "a\u2028b" . ?t <x:q> ?o } }');
  const calls: string[] = [];
  const text = generateWithHooks(tree, {
    dataset: (keyword) => (calls.push(keyword), `#${keyword.trim()}#`),
    graph: (pattern, write) => (calls.push('graph'), write.graph(pattern)),
    bgp: (pattern, write) => (calls.push('bgp'), write.bgp(pattern)),
    entity: (value, write) => write.plainEntity(value),
  });
  assert.deepEqual(calls, ['FROM ', 'FROM NAMED ', 'bgp', 'graph', 'bgp']);
  assert.ok(text.includes('#FROM##FROM NAMED#'));
  assert.ok(text.includes('?s !<x:neg> ?o.'));
  // Full IRIs, and a line separator inside a literal is no line to indent (the stock indent would change the literal).
  assert.ok(text.includes('GRAPH <x:g> {\n    ?s <x:p> "a\u2028b".\n    ?t <x:q> ?o.\n  }'), text);
});

test('an IN whose left operand is an operation, and a GROUP BY constant, are written to read back as the same query', () => {
  for (const [query, written] of [
    // The stock generator wrote `?a && ?b IN(1)` (another expression) and `?a = 1 NOT IN()` (no expression at all).
    ['SELECT * { ?a ?p ?b FILTER((?a && ?b) IN (1)) }', /\(\?a && \?b\) IN \(1 ?\)/],
    ['SELECT * { ?a ?p ?b FILTER((?a = 1) NOT IN ()) }', /\(\?a = 1 ?\) NOT IN \(\)/],
    // It wrote `GROUP BY 1 <x:k>`, which [20] does not take.
    ['SELECT (COUNT(*) AS ?n) { ?a ?p ?b } GROUP BY (1) (<x:k>) ("k"@en)', /GROUP BY \(1 ?\) \(<x:k>\) \("k"@en\)/],
  ] as const) {
    const tree = parseQuery(query);
    const text = generateWithHooks(tree, {
      dataset: () => '',
      graph: (pattern, write) => write.graph(pattern),
      bgp: (pattern, write) => write.bgp(pattern),
      entity: (value, write) => write.plainEntity(value),
    });
    assert.match(text, written);
    assert.deepEqual(JSON.parse(JSON.stringify(parseQuery(text))), JSON.parse(JSON.stringify(tree)), text);
  }
});
