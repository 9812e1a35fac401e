// Planner behaviour beyond the golden cases: plan cache, refusals under stress, escapes, IRI resolution.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import sparqljs from 'sparqljs';
import { GUARD_CODES, GuardError, type GuardCode } from '../../src/guard-error.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { createPlanner, type PlannerOptions } from '../../src/sparql/create-planner.js';
import { EMPTY_GRAPH } from '../../src/vocabulary.js';
import { prepareQuery } from '../../src/sparql/prepare-query.js';
import { resolveIri } from '../../src/sparql/resolve-iri.js';

const P1 = 'http://example.org/g/public1';
const P2 = 'http://example.org/g/public2';
const SECRET = 'http://example.org/g/secret';
const grantOf = (...graphs: string[]): Grant => ({ policies: ['urn:test:p'], graphs: new Set(graphs), hiddenByGraph: new Map() });
const options = (maxEntries: number, maxBytes = 16 * 1024 * 1024): PlannerOptions => ({
  baseIri: 'http://localhost/',
  maxQueryDepth: 64,
  planCache: { maxEntries, maxBytes },
  allowedFunctions: [],
});
const request = (query: string, defaultGraphs: string[] = [], namedGraphs: string[] = []) => ({ query, defaultGraphs, namedGraphs });
const refusal = (code: GuardCode) => (error: unknown) =>
  error instanceof GuardError && error.code === code && error.status === GUARD_CODES[code];

const QUERY = `PREFIX ex: <http://example.org/>
SELECT ?s ?o WHERE { ?s ex:p ?o GRAPH <${P1}> { ?s ex:q ?z } OPTIONAL { GRAPH <${SECRET}> { ?s ex:r ?w } } }`;

test('a cache hit returns the same text as a cold plan, for different grants', () => {
  const cached = createPlanner(options(10));
  const cold = createPlanner(options(0));
  for (const grant of [grantOf(P1), grantOf(P1, SECRET), grantOf(P2), grantOf()]) {
    const first = cached.plan(request(QUERY), grant).query;
    const hit = cached.plan(request(QUERY), grant).query;
    assert.equal(hit, first);
    assert.equal(hit, cold.plan(request(QUERY), grant).query);
    new sparqljs.Parser().parse(hit);
  }
  assert.notEqual(cached.plan(request(QUERY), grantOf(P1)).query, cached.plan(request(QUERY), grantOf(P1, SECRET)).query);
});

test('a cache hit does not prepare (so does not parse) again; refusals are cached too', () => {
  let prepared = 0;
  const planner = createPlanner(options(10), (req, settings) => {
    prepared++;
    return prepareQuery(req, settings);
  });
  planner.plan(request(QUERY), grantOf(P1));
  planner.plan(request(QUERY), grantOf(P2, SECRET));
  planner.plan(request(QUERY), grantOf());
  assert.equal(prepared, 1);
  planner.plan(request(QUERY, [P1]), grantOf(P1)); // another protocol dataset is another key
  assert.equal(prepared, 2);
  // A refused shape is learned once (its sentinel text), then each text is planned and refused by its exact key.
  assert.throws(() => planner.plan(request('SELECT * { SERVICE <http://x/> {} }'), grantOf(P1)), refusal('service'));
  assert.throws(() => planner.plan(request('SELECT * { SERVICE <http://x/> {} }'), grantOf(P1)), refusal('service'));
  assert.equal(prepared, 4);
});

test('without a cache every plan prepares', () => {
  let prepared = 0;
  const planner = createPlanner(options(0), (req, settings) => (prepared++, prepareQuery(req, settings)));
  planner.plan(request(QUERY), grantOf(P1));
  planner.plan(request(QUERY), grantOf(P1));
  assert.equal(prepared, 2);
});

test('the cache keeps at most maxEntries plans', () => {
  let prepared = 0;
  const planner = createPlanner(options(2), (req, settings) => (prepared++, prepareQuery(req, settings)));
  const queries = ['ASK { ?a ?b 1 }', 'ASK { ?a ?c 1 }', 'ASK { ?a ?d 1 }']; // three shapes
  for (const q of queries) planner.plan(request(q), grantOf(P1));
  planner.plan(request(queries[0] ?? ''), grantOf(P1)); // evicted as least recently used
  assert.equal(prepared, 4);
  planner.plan(request(queries[2] ?? ''), grantOf(P1)); // still cached
  assert.equal(prepared, 4);
});

test('a shape the cache evicted is prepared again, however often it was used before', () => {
  let prepared = 0;
  const planner = createPlanner(options(2), (req, settings) => (prepared++, prepareQuery(req, settings)));
  const queries = ['ASK { ?a ?b 1 }', 'ASK { ?a ?c 1 }', 'ASK { ?a ?d 1 }']; // three shapes
  for (let i = 0; i < 5; i++) planner.plan(request(queries[0] ?? ''), grantOf(P1));
  assert.equal(prepared, 1);
  planner.plan(request(queries[1] ?? ''), grantOf(P1));
  planner.plan(request(queries[2] ?? ''), grantOf(P1)); // the first shape is the least recently used
  planner.plan(request(queries[0] ?? ''), grantOf(P1));
  assert.equal(prepared, 4);
});

test('a text planned again as it is gets the plan of its own constants, after texts of its shape, a flood and long texts', () => {
  const cached = createPlanner(options(1_000));
  const cold = createPlanner(options(0));
  const text = (n: number) => `PREFIX ex: <http://example.org/> SELECT ?s WHERE { ?s ex:p ${n} ; ex:q "w${n}" FILTER(?s != ex:n${n}) }`;
  const long = (n: number) => `${text(n)} # ${'x'.repeat(20_000)}`;
  const check = (query: string, grant: Grant) =>
    assert.equal(cached.plan(request(query), grant).query, cold.plan(request(query), grant).query);
  for (let round = 0; round < 3; round++) {
    for (const n of [1, 2, 1, 3, 2, 1]) check(text(n), grantOf(round === 1 ? P2 : P1));
    for (const n of [1, 2, 1]) check(long(n), grantOf(P1));
    for (let n = 100; n < 400; n++) check(text(n), grantOf(P1)); // more texts than the planner remembers
  }
  check(text(1), grantOf(P1, SECRET));
});

test('one text sent again and again with other protocol datasets plans each time for its own dataset', () => {
  const cached = createPlanner(options(1_000));
  const cold = createPlanner(options(0));
  const datasets: [string[], string[]][] = [
    [[], []],
    [[P1], []],
    [[], [P1, P2]],
    [[P2], [P1]],
    [[], []],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [defaults, named] of datasets) {
      const sent = request(QUERY, defaults, named);
      assert.equal(cached.plan(sent, grantOf(P1, P2)).query, cold.plan(sent, grantOf(P1, P2)).query);
    }
  }
});

test('a constant of a million characters gets the answer the cache-less planner gives, whatever its kind', () => {
  const cached = createPlanner(options(1_000));
  const cold = createPlanner(options(0));
  const long = 'x'.repeat(1_000_000);
  const outcome = (planner: ReturnType<typeof createPlanner>, query: string) => {
    try {
      return planner.plan(request(query), grantOf(P1)).query;
    } catch (error) {
      return error instanceof GuardError ? `${error.status} ${error.code}` : error;
    }
  };
  for (const constant of [
    `"${long}"`,
    `'''${long}'''`,
    `1.${'1'.repeat(1_000_000)}`,
    `ex:${long}`,
    `<http://example.org/${long}>`,
    '"short"',
  ]) {
    const query = `PREFIX ex: <http://example.org/> SELECT * WHERE { ?s ex:p ${constant} }`;
    assert.equal(outcome(cached, query), outcome(cold, query), constant.slice(0, 12));
  }
});

test('shape keys that differ in one character anywhere are never taken for one another', () => {
  const cached = createPlanner(options(10));
  const name = 'v'.repeat(120);
  const query = (variable: string) => `SELECT ?${variable} WHERE { ?${variable} ?p 1 }`;
  for (let j = 0; j < name.length; j++) {
    const other = name.slice(0, j) + 'w' + name.slice(j + 1);
    for (const variable of [name, other, name, other]) {
      assert.match(cached.plan(request(query(variable)), grantOf(P1)).query, new RegExp(`SELECT \\?${variable}\\b`));
    }
  }
});

test('the cache keeps at most maxBytes of plans', () => {
  let prepared = 0;
  const planner = createPlanner(options(1000, 4000), (req, settings) => (prepared++, prepareQuery(req, settings)));
  const big = (n: number) => `ASK { ?s ?p${String(n).repeat(600)} 1 }`; // > 2400 bytes each (key and template)
  for (let i = 1; i <= 4; i++) planner.plan(request(big(i)), grantOf(P1));
  planner.plan(request(big(1)), grantOf(P1)); // could not stay within 4000 bytes
  assert.equal(prepared, 5);
  const huge = `ASK { ?s ?p${'x'.repeat(5000)} 1 }`; // larger than the whole cache: never stored
  planner.plan(request(huge), grantOf(P1));
  planner.plan(request(huge), grantOf(P1));
  assert.equal(prepared, 7);
});

test('100,000 nested { or ( are a 400 before parsing, not a crash', () => {
  const planner = createPlanner(options(0));
  const cases = [
    'SELECT * WHERE ' + '{'.repeat(100_000) + '}'.repeat(100_000),
    'SELECT * WHERE { FILTER(' + '('.repeat(100_000) + '1' + ')'.repeat(100_000) + ') }',
    '{'.repeat(100_000),
    'ASK { FILTER(' + '('.repeat(100_000),
  ];
  for (const query of cases) {
    const started = performance.now();
    assert.throws(() => planner.plan(request(query), grantOf(P1)), refusal('too_complex'));
    assert.ok(performance.now() - started < 1000, 'refused by the scan, before the parser');
  }
});

test('a stack overflow in the parser, walkers or generator is a 400, not a crash', () => {
  // Operator chains nest the tree without brackets, so only the stack limit stops them.
  const planner = createPlanner(options(0));
  assert.throws(
    () => planner.plan(request('SELECT * WHERE { FILTER(' + '1 + '.repeat(20_000) + '1) }'), grantOf(P1)),
    refusal('too_complex'),
  );
});

test('nesting exactly at maxQueryDepth plans, one deeper is refused', () => {
  const planner = createPlanner({ ...options(0), maxQueryDepth: 5 });
  const nested = (levels: number) => 'ASK ' + '{'.repeat(levels) + ' ?s ?p ?o ' + '}'.repeat(levels);
  planner.plan(request(nested(5)), grantOf(P1));
  assert.throws(() => planner.plan(request(nested(6)), grantOf(P1)), refusal('too_complex'));
  // Brackets inside strings, IRIs and comments do not count.
  planner.plan(request('ASK { ?s <http://a/((((((> "{{{{{{" # ((((((\n }'), grantOf(P1));
});

test('refusal messages never echo the query', () => {
  const planner = createPlanner(options(0));
  for (const query of [
    'SELECT * WHERE { ?s ?p "CANARY-TEXT" ',
    'SELECT ?CANARY WHERE { ?s ?p ?o } GROUP BY ?s',
    'SELECT * { ?s <CANARY\\u003E> ?o }',
  ]) {
    assert.throws(
      () => planner.plan(request(query), grantOf(P1)),
      (error: unknown) => error instanceof GuardError && error.status === 400 && !error.message.includes('CANARY'),
    );
  }
});

test('codepoint escapes are decoded only where they cannot change the tokens', () => {
  const planner = createPlanner(options(0));
  const plan = (query: string) => planner.plan(request(query), grantOf(SECRET)).query;
  assert.match(plan('SELECT * FROM <http://example.org/g/\\U00000073ecret> { ?s ?p ?o }'), /FROM <http:\/\/example.org\/g\/secret>/);
  assert.match(plan('PREFIX ex: <http://example.org/> SELECT * { ?s ex:\\u0061bc "caf\\u00E9" }'), /<http:\/\/example.org\/abc> "café"/);
  assert.match(plan('SELECT * { ?s ?p "a\\\\u0041" }'), /"a\\\\u0041"/); // an ECHAR backslash, then text
  for (const bad of [
    'SELECT * { ?s ?p ?o }\\u007D', // would become a closing brace
    'SELECT * { ?s ?p "x\\u005C" }', // would become a backslash in a string
    'SELECT * { ?s ?p ?o } # comment\\u000A',
    'SELECT * { ?s ?p "\\uD800" }', // a surrogate is no character
    'SELECT * { ?s ?p "\\u12" }',
    'SELECT * { ?s <http://a/\\u0020b> ?o }',
  ])
    assert.throws(() => plan(bad), refusal('parse'), bad);
});

test('RFC 3986 5.4 reference resolution examples', () => {
  const base = 'http://a/b/c/d;p?q';
  const examples: Record<string, string> = {
    'g:h': 'g:h',
    g: 'http://a/b/c/g',
    './g': 'http://a/b/c/g',
    'g/': 'http://a/b/c/g/',
    '/g': 'http://a/g',
    '//g': 'http://g',
    '?y': 'http://a/b/c/d;p?y',
    'g?y': 'http://a/b/c/g?y',
    '#s': 'http://a/b/c/d;p?q#s',
    'g#s': 'http://a/b/c/g#s',
    ';x': 'http://a/b/c/;x',
    '': 'http://a/b/c/d;p?q',
    '.': 'http://a/b/c/',
    './': 'http://a/b/c/',
    '..': 'http://a/b/',
    '../': 'http://a/b/',
    '../g': 'http://a/b/g',
    '../..': 'http://a/',
    '../../g': 'http://a/g',
    '../../../g': 'http://a/g',
    '/./g': 'http://a/g',
    '/../g': 'http://a/g',
    'g.': 'http://a/b/c/g.',
    '.g': 'http://a/b/c/.g',
    'g..': 'http://a/b/c/g..',
    '..g': 'http://a/b/c/..g',
    './../g': 'http://a/b/g',
    './g/.': 'http://a/b/c/g/',
    'g/./h': 'http://a/b/c/g/h',
    'g/../h': 'http://a/b/c/h',
    'g;x=1/./y': 'http://a/b/c/g;x=1/y',
    'g;x=1/../y': 'http://a/b/c/y',
    'g?y/./x': 'http://a/b/c/g?y/./x',
    'g#s/../x': 'http://a/b/c/g#s/../x',
  };
  for (const [reference, expected] of Object.entries(examples)) assert.equal(resolveIri(reference, base), expected, reference);
});

test('the reserved graph is never requested into the dataset unless granted', () => {
  const planner = createPlanner(options(0));
  const text = planner.plan(request(`SELECT * FROM <${EMPTY_GRAPH}> WHERE { GRAPH <${EMPTY_GRAPH}> { ?s ?p ?o } }`), grantOf(P1)).query;
  assert.match(text, /\{ VALUES \(\?s \?p \?o\) \{ \(UNDEF UNDEF UNDEF\) \} FILTER\(1 = 0\) \}/);
});

test('form and default Accept follow the query form', () => {
  const planner = createPlanner(options(0));
  const cases: [string, string, string][] = [
    ['SELECT * { ?s ?p ?o }', 'select', 'application/sparql-results+json'],
    ['ASK { ?s ?p ?o }', 'ask', 'application/sparql-results+json'],
    ['CONSTRUCT WHERE { ?s ?p ?o }', 'construct', 'text/turtle'],
    ['DESCRIBE ?s WHERE { ?s ?p ?o }', 'describe', 'text/turtle'],
  ];
  for (const [query, form, accept] of cases) {
    const plan = planner.plan(request(query), grantOf(P1));
    assert.equal(plan.form, form);
    assert.equal(plan.defaultAccept, accept);
  }
});

test('absolute IRIs stay byte for byte; only relative ones are resolved (§4.1.1)', () => {
  assert.equal(resolveIri('http://a/b/../c/./d', 'http://x/y'), 'http://a/b/../c/./d');
  assert.equal(resolveIri('eXAMPLE://a/./b/../b/%63', 'http://x/y'), 'eXAMPLE://a/./b/../b/%63');
  assert.equal(resolveIri('../c/./d', 'http://x/y/z'), 'http://x/c/d');
  const planner = createPlanner(options(0));
  const text = planner.plan(request('PREFIX p: <eXAMPLE://a/./b/../b/%63/%7bfoo%7d#> SELECT * { ?s ?p p:xyz }'), grantOf(P1)).query;
  assert.match(text, /<eXAMPLE:\/\/a\/\.\/b\/\.\.\/b\/%63\/%7bfoo%7d#xyz>/);
});

test('numeric literals keep their tokens (§4.1.2: `1.0e6` is "1.0e6"^^xsd:double), cold and through the shape cache; after `+` in a sum the sign is the operator', () => {
  const query = 'SELECT (1.5E3 AS ?x) (+1 AS ?y) (STR(+1.50) AS ?z) (-2.5E-1 AS ?w) { ?s ?p ?o FILTER(?o +1 > 2E0) }';
  const cold = createPlanner(options(0)).plan(request(query), grantOf(P1)).query;
  for (const written of ['"1.5E3"^^', '"+1"^^', '"+1.50"^^', '"-2.5E-1"^^', '"2E0"^^'])
    assert.ok(cold.includes(written), `${written} in ${cold}`);
  // `?o +1` is `?o + 1` ([116]): the literal without its sign, as sparqljs read it.
  assert.match(cold, /\(\?o \+ 1 \) >/);
  const cached = createPlanner(options(100));
  cached.plan(request(query.replace('1.5E3', '7.5E3')), grantOf(P1));
  assert.equal(cached.plan(request(query), grantOf(P1)).query, cold);
});

test('function refusals name neither the IRI nor the query', () => {
  const planner = createPlanner(options(0));
  for (const query of [
    'SELECT * { BIND(<bif:CANARY>(1) AS ?x) }',
    'SELECT * { ?s <http://jena.apache.org/text#CANARY> "x" }',
    'SELECT (<urn:CANARY>(DISTINCT ?o) AS ?a) { ?s ?p ?o }',
  ]) {
    assert.throws(
      () => planner.plan(request(query), grantOf(P1)),
      (error: unknown) =>
        error instanceof GuardError && error.status === 400 && !error.message.includes('CANARY') && !error.message.includes('\n'),
      query,
    );
  }
});

test("the BASE line is the query's last BASE, resolved, or the configured base", () => {
  const planner = createPlanner(options(0));
  assert.match(planner.plan(request('SELECT * { ?s ?p ?o }'), grantOf(P1)).query, /^BASE <http:\/\/localhost\/>\nSELECT /);
  assert.match(
    planner.plan(request('BASE <http://a/b/> BASE <c/> SELECT * { ?s ?p ?o }'), grantOf(P1)).query,
    /^BASE <http:\/\/a\/b\/c\/>\nSELECT /,
  );
});

test('a blank-node label in two basic graph patterns is a 400 (§4.1.4); FILTERs between triples do not split one', () => {
  const planner = createPlanner(options(0));
  for (const query of [
    'SELECT * { _:a ?p ?v . OPTIONAL { _:a ?q 1 } }',
    'SELECT * { { _:a ?p ?v } UNION { _:a ?q 1 } }',
    'SELECT * { _:a ?p ?v . FILTER EXISTS { _:a ?q 1 } }',
    'SELECT * { _:a ?p ?v { SELECT * { _:a ?q 1 } } }',
  ]) {
    assert.throws(
      () => planner.plan(request(query), grantOf(P1)),
      (error: unknown) => error instanceof GuardError && error.code === 'parse' && /blank node label/.test(error.message),
      query,
    );
  }
  for (const query of [
    'SELECT * { _:a ?p ?v . FILTER(?v > 1) _:a ?q 1 }',
    'SELECT * { _:a ?p ?v . [] ?q _:a }',
    'CONSTRUCT { _:a <x:p> ?v } WHERE { _:a ?p ?v }',
  ]) {
    new sparqljs.Parser().parse(planner.plan(request(query), grantOf(P1)).query);
  }
});

test('a CONSTRUCT template triple that is only `[ p o ]` or a collection plans as its `[] p o` spelling (W3C construct-3); what the grammar forbids stays a 400', () => {
  const planner = createPlanner(options(0));
  const hidden: Grant = {
    policies: ['urn:test:p'],
    graphs: new Set([P1]),
    hiddenByGraph: new Map([[P1, new Set(['http://example.org/secret'])]]),
  };
  const outcome = (query: string, grant: Grant) => {
    try {
      // Blank nodes are numbered in the order the parser makes them, which differs between the spellings.
      return planner.plan(request(query), grant).query.replace(/_:\w+/g, '_:b');
    } catch (error) {
      return error instanceof GuardError ? `${error.status} ${error.code} ${error.message}` : `crash ${String(error)}`;
    }
  };
  const pairs = [
    [
      'CONSTRUCT { [ <http://example.org/p> ?o ; <http://example.org/q> ?s ] . } WHERE { ?s ?p ?o }',
      'CONSTRUCT { [] <http://example.org/p> ?o ; <http://example.org/q> ?s . } WHERE { ?s ?p ?o }',
    ],
    [
      'CONSTRUCT { [ <http://example.org/secret> ?o ] } WHERE { ?s ?p ?o }',
      'CONSTRUCT { [] <http://example.org/secret> ?o } WHERE { ?s ?p ?o }',
    ],
    [
      'CONSTRUCT { ?s <http://example.org/p> 1 . ( ?o 2 ) . } WHERE { ?s ?p ?o }',
      'CONSTRUCT { ?s <http://example.org/p> 1 . _:l <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> ?o ; <http://www.w3.org/1999/02/22-rdf-syntax-ns#rest> _:m . _:m <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> 2 ; <http://www.w3.org/1999/02/22-rdf-syntax-ns#rest> <http://www.w3.org/1999/02/22-rdf-syntax-ns#nil> . } WHERE { ?s ?p ?o }',
    ],
  ] as const;
  for (const grant of [grantOf(P1), hidden]) {
    for (const [bare, spelled] of pairs) {
      const expected = outcome(spelled, grant);
      assert.equal(outcome(bare, grant), expected, bare);
      assert.ok(!expected.startsWith('crash'), expected);
    }
  }
  assert.match(outcome(pairs[1][0], hidden), /^403 /);
  for (const query of [
    'CONSTRUCT { [ <http://example.org/p>/<http://example.org/q> ?o ] . } WHERE { ?s ?p ?o }',
    'CONSTRUCT { [] . } WHERE { ?s ?p ?o }',
    'CONSTRUCT { [ ] } WHERE { ?s ?p ?o }',
  ]) {
    assert.match(outcome(query, grantOf(P1)), /^400 parse /, query);
  }
});

test('an empty negated property set `!()` is a 400 naming NIL (§19.8), not a crash of the rewrite; sets of one or more IRIs plan', () => {
  const planner = createPlanner(options(0));
  const hidden: Grant = { ...grantOf(P1), hiddenByGraph: new Map([[P1, new Set(['http://example.org/secret'])]]) };
  for (const grant of [grantOf(P1), hidden]) {
    for (const query of [
      'SELECT * { ?s !() ?o }',
      'SELECT * { ?s !( ) ?o }',
      'SELECT * { ?s !()* ?o }',
      'ASK { ?s <x:p>/!() ?o }',
      'SELECT * { ?s ?p ?o FILTER EXISTS { ?o !() ?z } }',
    ]) {
      assert.throws(
        () => planner.plan(request(query), grant),
        (error: unknown) =>
          error instanceof GuardError &&
          error.code === 'parse' &&
          error.message.endsWith('an empty negated property set !() (§19.8: () is NIL)'),
        query,
      );
    }
    for (const query of ['SELECT * { ?s !(<x:p>) ?o }', 'SELECT * { ?s !^<x:p> ?o }', 'SELECT * { ?s !(^<x:p>|<x:q>)* ?o }']) {
      new sparqljs.Parser().parse(planner.plan(request(query), grant).query);
    }
  }
});

test('the keyword `a` is lower case only (§19.8): `A` is a 400 wherever `a` stands, also after `a` was planned and cached', () => {
  const A = 'query is not valid SPARQL 1.1: the keyword a (rdf:type) is lower case only (§19.8)';
  for (const planner of [createPlanner(options(0)), createPlanner(options(100))]) {
    for (const [lower, upper] of [
      ['SELECT * { ?s a ?o }', 'SELECT * { ?s A ?o }'],
      ['SELECT * { ?s a <x:o> ; a ?z }', 'SELECT * { ?s a <x:o> ; A ?z }'],
      ['SELECT * { ?s <x:p>/a* ?o }', 'SELECT * { ?s <x:p>/A* ?o }'],
      ['SELECT * { ?s !(a|^a) ?o }', 'SELECT * { ?s !(a|^A) ?o }'],
      ['CONSTRUCT { ?s a ?o } WHERE { ?s a ?o }', 'CONSTRUCT { ?s A ?o } WHERE { ?s a ?o }'],
    ]) {
      const planned = planner.plan(request(lower!), grantOf(P1)).query;
      assert.ok(planned.includes('<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>'), planned);
      assert.throws(
        () => planner.plan(request(upper!), grantOf(P1)),
        (error: unknown) => error instanceof GuardError && error.code === 'parse' && error.message === A,
        upper,
      );
    }
  }
});

test('`<` directly before an IRI is the less-than operator (`?o<<x:b>`, valid SPARQL 1.1), not the SPARQL-star opener, which stays a 400', () => {
  for (const planner of [createPlanner(options(0)), createPlanner(options(100))]) {
    for (const query of ['SELECT * { ?s ?p ?o FILTER(?o<<x:b>) }', 'SELECT * { ?s ?p ?o FILTER(?o<<rel>&&?o>?s) }']) {
      const planned = planner.plan(request(query), grantOf(P1)).query;
      assert.match(planned, /FILTER\(\(?\?o < <(x:b|http:\/\/localhost\/rel)>/, planned);
    }
    assert.throws(
      () => planner.plan(request('SELECT * { << ?s ?p ?o >> ?q ?r }'), grantOf(P1)),
      (error: unknown) => error instanceof GuardError && error.message === 'query is not valid SPARQL 1.1: SPARQL-star is not SPARQL 1.1',
    );
  }
});

test('`CONSTRUCT WHERE {}` plans as `CONSTRUCT {} WHERE {}` does (sparqljs reads the two differently and wrote the first back as the second)', () => {
  const planner = createPlanner(options(0));
  for (const query of ['CONSTRUCT WHERE {}', 'CONSTRUCT WHERE { }', 'CONSTRUCT {} WHERE {}', 'CONSTRUCT { } { }']) {
    const planned = planner.plan(request(query), grantOf(P1)).query;
    assert.match(planned, /^CONSTRUCT \{ {2}\}$/m, planned);
    assert.match(planned, /^WHERE \{ {2}\}$/m, planned);
  }
});

test('an inverse under a modifier or another inverse is written in brackets: `(^a)*` and `^(^a)` plan as the caller wrote them', () => {
  const planner = createPlanner(options(0));
  const hidden: Grant = { ...grantOf(P1), hiddenByGraph: new Map([[P1, new Set(['http://example.org/secret'])]]) };
  const predicateOf = (query: string): unknown => (new sparqljs.Parser().parse(query) as sparqljs.SelectQuery).where?.[0];
  for (const grant of [grantOf(P1), hidden]) {
    for (const path of ['(^<x:a>)*', '(^<x:a>)+', '(^<x:a>)?', '^(^<x:a>)', '(^(<x:a>/<x:b>))+', '^(^(^<x:a>)+)?', '<x:c>/(^<x:a>)*']) {
      const query = `SELECT * { ?s ${path} ?o }`;
      const planned = planner.plan(request(query), grant).query;
      const written = /WHERE \{ \?s (.*?) \?o\./.exec(planned)?.[1];
      assert.ok(written !== undefined, planned);
      assert.deepEqual(predicateOf(`SELECT * { ?s ${written} ?o }`), predicateOf(query), planned);
    }
  }
});

test('an alternative path alone in a UNION branch, EXISTS or MINUS plans for every caller (its expansion for rows read `{ P }` as sparqljs does)', () => {
  const planner = createPlanner(options(0));
  for (const query of [
    'SELECT * { { ?x <x:c> 1 } UNION { ?x <x:a>|<x:b> ?y } }',
    'SELECT * { ?x <x:a> ?y FILTER EXISTS { ?y <x:a>|<x:b> ?z } }',
    'SELECT * { ?x <x:a> ?y FILTER NOT EXISTS { ?y <x:a>|<x:b>/<x:c> ?z } MINUS { ?y <x:a>|^<x:b> ?x } }',
    'ASK { { [] <x:c> 1 } UNION { [] (<x:a>|<x:b>*) 2 } }',
  ]) {
    new sparqljs.Parser().parse(planner.plan(request(query), grantOf(P1)).query);
  }
});

test('a group of one pattern as a UNION branch or EXISTS operand keeps its own braces (`{ { P } } UNION …`), so the query plans as written', () => {
  const planner = createPlanner(options(0));
  const hidden: Grant = { ...grantOf(P1), hiddenByGraph: new Map([[P1, new Set(['http://example.org/secret'])]]) };
  for (const grant of [grantOf(P1), hidden]) {
    for (const query of [
      'SELECT * { { { ?s <x:a> ?o } } UNION { ?s <x:c> ?o } }',
      'SELECT * { { ?s <x:a> ?o } UNION { { ?s <x:c> ?o } } }',
      'SELECT * { ?s <x:z> ?o FILTER EXISTS { { ?s <x:a> ?o } } }',
      'SELECT * { ?s <x:z> ?o FILTER NOT EXISTS { { { ?s <x:a> ?o } } } }',
      'SELECT * { { { ?s <x:a>|<x:b> ?o } } UNION { ?s <x:c> ?o } }',
      'SELECT * { { {} } UNION { ?s <x:c> ?o } }',
      'SELECT * { ?s <x:z> ?o FILTER EXISTS { { SELECT * { ?s <x:a> ?o } } } }',
    ]) {
      const planned = planner.plan(request(query), grant).query;
      new sparqljs.Parser().parse(planned);
    }
  }
});
