// Algebra depth: every wide construct plans at the limit and is refused one step past it, through the real planner.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import sparqljs from 'sparqljs';
import { GuardError } from '../../src/guard-error.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { algebraDepth } from '../../src/sparql/check-algebra-depth.js';
import { createPlanner } from '../../src/sparql/create-planner.js';
import { prepareQuery } from '../../src/sparql/prepare-query.js';

const GRANT: Grant = { policies: ['urn:test:p'], graphs: new Set(['urn:x:g']), hiddenByGraph: new Map() };
const planner = createPlanner({
  baseIri: 'http://localhost/',
  maxQueryDepth: 64,
  planCache: { maxEntries: 0, maxBytes: 1 },
  allowedFunctions: [],
});
const plan = (query: string) => planner.plan({ query, defaultGraphs: [], namedGraphs: [] }, GRANT);
const depthOf = (query: string) => algebraDepth(new sparqljs.Parser().parse(query));
const tooComplex = (limit: number) => (error: unknown) =>
  error instanceof GuardError &&
  error.status === 400 &&
  error.message === `query is too complex: its algebra nests deeper than ${limit} levels`;

const list = (n: number, item: (i: number) => string, separator = ' ') => Array.from({ length: n }, (_, i) => item(i)).join(separator);

/** name, query of width n, the largest n whose depth is 256 (the default limit, 4 x maxQueryDepth 64). */
const CONSTRUCTS: readonly [string, (n: number) => string, number][] = [
  ['path sequence steps', (n) => `ASK { ?s ${list(n, (i) => `<urn:x:p${i}>`, '/')} ?o }`, 253],
  ['path alternative members', (n) => `ASK { ?s ${list(n, (i) => `<urn:x:p${i}>`, '|')} ?o }`, 253],
  ['UNION branches', (n) => `SELECT * { ${list(n, (i) => `{ ?s <urn:x:p${i}> ?o }`, ' UNION ')} }`, 253],
  ['OPTIONALs in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `OPTIONAL { ?s <urn:x:p${i}> ?o${i} }`)} }`, 253],
  ['MINUS in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `MINUS { ?s <urn:x:p${i}> ?o }`)} }`, 253],
  ['GRAPH in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `GRAPH <urn:x:g> { ?s <urn:x:p${i}> ?o${i} }`)} }`, 252],
  ['sub-selects in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `{ SELECT ?s { ?s <urn:x:p${i}> ?x } }`)} }`, 252],
  ['BINDs in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `BIND(${i} AS ?b${i})`)} }`, 254],
  ['VALUES blocks in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `VALUES ?v${i} { ${i} }`)} }`, 254],
  ['FILTERs in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `FILTER(?o != ${i})`)} }`, 254],
  ['NOT EXISTS filters in one group', (n) => `SELECT * { ?s ?p ?o ${list(n, (i) => `FILTER NOT EXISTS { ?s <urn:x:p${i}> ?o }`)} }`, 249],
  ['|| operands', (n) => `SELECT * { ?s ?p ?o FILTER(${list(n, (i) => `?o = ${i}`, ' || ')}) }`, 254],
  ['+ operands', (n) => `SELECT * { ?s ?p ?o BIND(${list(n, () => '1', ' + ')} AS ?x) }`, 255],
  ['IN members (16 per level)', (n) => `SELECT * { ?s ?p ?o FILTER(?o IN (${list(n, (i) => `${i}`, ', ')})) }`, 16 * 253],
  ['select expressions', (n) => `SELECT ${list(n, (i) => `(${i} AS ?x${i})`)} { ?s ?p ?o }`, 254],
  ['ORDER BY keys', (n) => `SELECT * { ?s ?p ?o } ORDER BY ${list(n, (i) => `(?o + ${i})`)}`, 254],
  ['GROUP BY keys', (n) => `SELECT (COUNT(*) AS ?c) { ?s ?p ?o } GROUP BY ${list(n, (i) => `(?o + ${i})`)}`, 253],
  ['triple patterns in one BGP (2 per level)', (n) => `SELECT * { ${list(n, (i) => `?s <urn:x:p${i}> ?o${i} .`)} }`, 2 * 255],
];

for (const [name, build, atLimit] of CONSTRUCTS) {
  test(`${name}: ${atLimit} plan, ${atLimit + 1} are refused`, () => {
    assert.equal(depthOf(build(atLimit)), 256);
    assert.equal(depthOf(build(atLimit + 1)), 257);
    plan(build(atLimit));
    assert.throws(() => plan(build(atLimit + 1)), tooComplex(256));
  });
}

test('the limit follows maxQueryDepth (4 levels per bracket level)', () => {
  const small = createPlanner({
    baseIri: 'http://localhost/',
    maxQueryDepth: 8,
    planCache: { maxEntries: 0, maxBytes: 1 },
    allowedFunctions: [],
  });
  const union = (n: number) => `SELECT * { ${list(n, (i) => `{ ?s <urn:x:p${i}> ?o }`, ' UNION ')} }`;
  small.plan({ query: union(29), defaultGraphs: [], namedGraphs: [] }, GRANT);
  assert.throws(() => small.plan({ query: union(30), defaultGraphs: [], namedGraphs: [] }, GRANT), tooComplex(32));
});

test('flat lists stay flat: negated sets, function arguments, VALUES rows, CONSTRUCT templates', () => {
  const wide = [
    `ASK { ?s !(${list(5000, (i) => `<urn:x:p${i}>`, '|')}) ?o }`,
    `SELECT (CONCAT(${list(5000, () => '"a"', ', ')}) AS ?x) {}`,
    `SELECT * { VALUES ?v { ${list(20_000, (i) => `${i}`)} } }`,
    `CONSTRUCT { ${list(5000, (i) => `?s <urn:x:p${i}> ?o .`)} } WHERE { ?s ?p ?o }`,
  ];
  for (const query of wide) {
    assert.ok(depthOf(query) < 8, String(depthOf(query)));
    plan(query);
  }
});

test("the bench's large query (300 triple patterns in one BGP) plans", () => {
  const query = `PREFIX ex: <http://example.org/>\nSELECT * WHERE { ${list(300, (i) => `?s ex:p${i} ?o${i} .`)} }`;
  assert.equal(depthOf(query), 1 + 150);
  plan(query);
});

test('depth adds up across nesting: OPTIONALs inside UNION branches inside EXISTS', () => {
  const optionals = (n: number) => `{ ?s ?p ?o ${list(n, (i) => `OPTIONAL { ?s <urn:x:p${i}> ?o${i} }`)} }`;
  // WHERE group 2 elements (bgp, filter) + EXISTS 4 + its group 1 + UNION 2 + branch (n + 1 elements + 2).
  const query = (n: number) => `ASK { ?s ?p ?o FILTER EXISTS { ${optionals(n)} UNION ${optionals(n)} } }`;
  assert.equal(depthOf(query(100)), 2 + 4 + 1 + 2 + 100 + 1 + 2);
  assert.equal(depthOf(query(244)), 256);
  plan(query(244));
  assert.throws(() => plan(query(245)), tooComplex(256));
});

test('a very long chain is refused as too complex, without running out of stack', () => {
  const query = `SELECT * { ?s ?p ?o FILTER(${list(60_000, (i) => `?o = ${i}`, ' || ')}) }`;
  assert.throws(() => plan(query), tooComplex(256));
  const path = `ASK { ?s ${list(60_000, () => '<urn:x:p>', '/')} ?o }`;
  assert.throws(() => plan(path), tooComplex(256));
});

test('the check runs once per prepared query: a refused wide query is not prepared again', () => {
  let prepared = 0;
  const cached = createPlanner(
    { baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 10, maxBytes: 1 << 24 }, allowedFunctions: [] },
    (request, settings) => (prepared++, prepareQuery(request, settings)),
  );
  const query = `SELECT * { ${list(3000, (i) => `{ ?s <urn:x:p${i}> ?o }`, ' UNION ')} }`;
  assert.throws(() => cached.plan({ query, defaultGraphs: [], namedGraphs: [] }, GRANT), tooComplex(256));
  // First sight of the shape: the guessed and the all-sentinel texts, then the exact text; then never again.
  const firstSight = prepared;
  assert.ok(firstSight <= 3, `${firstSight} prepares`);
  for (let i = 0; i < 2; i++) {
    assert.throws(() => cached.plan({ query, defaultGraphs: [], namedGraphs: [] }, GRANT), tooComplex(256));
  }
  assert.equal(prepared, firstSight);
});
