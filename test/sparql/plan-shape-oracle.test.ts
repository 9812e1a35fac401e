// The shape cache's oracle: a plan filled from another query of the same shape equals, byte for byte, the plan made without a cache; refusals too.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Caller } from '../../src/auth/caller.js';
import { ANONYMOUS_AGENT } from '../../src/vocabulary.js';
import { GuardError } from '../../src/guard-error.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { createPlanner, type Planner } from '../../src/sparql/create-planner.js';
import { prepareQuery as prepareQueryForTest } from '../../src/sparql/prepare-query.js';
import { applyGrant } from '../../src/sparql/apply-grant.js';
import { compileFunctionAllowList } from '../../src/sparql/check-function-calls.js';
import type { Plan } from '../../src/sparql/plan.js';
import type { PreparedQuery } from '../../src/sparql/prepared-query.js';
import { encodeQueryForm } from '../../src/url-encoded-form.js';
import { lexQueryShape } from '../../src/sparql/lex-query-shape.js';
import { embeddedSources, goldenSources, GRANTS, mutate, random, w3cSources, type Source } from '../helpers/query-corpus.js';
import { policySetSources } from '../../src/policy/load/policy-set-sources.js';
import { grantFor } from '../../src/policy/grant.js';
import { loadPolicies } from '../helpers/load-policies.js';
import { oracleCorpus, sampleOf, type OracleVocabulary } from '../helpers/redaction-oracle.js';
import { ROWS_CALLERS, ROWS_EX, rowsAttacks, rowsFixture } from '../helpers/rows-stores.js';

function outcome(plan: () => Plan): string {
  let planned: Plan;
  try {
    planned = plan();
  } catch (error) {
    if (error instanceof GuardError) return `refused ${error.status} ${error.message}`;
    return `crash ${(error as Error).message}`;
  }
  // What the store is sent: the template's strings encoded once, the request's pieces now.
  assert.ok(planned.formBody.equals(encodeQueryForm(planned.query)), 'the form body is the encoded query text');
  return 'plan ' + planned.query;
}

/**
 * What the planner with its cache off answers, for several grants: it prepares
 * the exact text and applies the grant, so the text is prepared once here.
 */
function withoutCache(source: Source, query: string): string[] {
  const settings = { baseIri: 'http://localhost/', maxQueryDepth: 64, allowedFunctions: compileFunctionAllowList(source.allowedFunctions) };
  const request = { query, defaultGraphs: source.defaultGraphs, namedGraphs: source.namedGraphs };
  let prepared: PreparedQuery | GuardError;
  try {
    prepared = prepareQueryForTest(request, settings);
  } catch (error) {
    if (!(error instanceof GuardError)) throw error;
    prepared = error;
  }
  return source.grants.map((grant) =>
    outcome(() => {
      if (prepared instanceof GuardError) throw prepared;
      return applyGrant(prepared, grant);
    }),
  );
}

let prepareCalls = 0;
const planners = new Map<string, Planner>();
function cachedPlannerFor(allowedFunctions: readonly string[]): Planner {
  const key = JSON.stringify(allowedFunctions);
  let planner = planners.get(key);
  if (planner === undefined) {
    const options = { baseIri: 'http://localhost/', maxQueryDepth: 64, allowedFunctions };
    planner = createPlanner({ ...options, planCache: { maxEntries: 5000, maxBytes: 64 * 1024 * 1024 } }, (request, settings) => {
      prepareCalls++;
      return prepareQueryForTest(request, settings);
    });
    planners.set(key, planner);
  }
  return planner;
}

test('shape cache oracle: every query the project holds, and mutations of its constants, plan as without a cache', () => {
  const sources = [...goldenSources(), ...w3cSources(), ...embeddedSources()];
  assert.ok(sources.length > 100, `only ${sources.length} queries found`);
  let compared = 0;
  let filled = 0;
  /** Mutated queries planned through the cache without any prepare: filled from another query's template. */
  let fromTemplate = 0;
  const mismatches: string[] = [];
  sources.forEach((source, index) => {
    const cached = cachedPlannerFor(source.allowedFunctions);
    const variants = [source.query];
    // Mutations with the shape's code, then two with the text's own white space and comments.
    for (let m = 0; m < 4; m++) {
      const mutated = mutate(source.query, index * 31 + m, m >= 2);
      if (mutated !== undefined) variants.push(mutated);
    }
    // The original fills the shape first, then each mutation is planned from it.
    for (const query of variants) {
      const expectedByGrant = withoutCache(source, query);
      source.grants.forEach((grant, g) => {
        const expected = expectedByGrant[g] ?? '';
        const request = { query, defaultGraphs: source.defaultGraphs, namedGraphs: source.namedGraphs };
        const before = prepareCalls;
        const actual = outcome(() => cached.plan(request, grant));
        compared++;
        if (query !== source.query && expected.startsWith('plan ')) {
          filled++;
          if (prepareCalls === before && g === 0) fromTemplate++;
        }
        if (actual !== expected && mismatches.length < 10) {
          mismatches.push(`${source.name}\n--- query\n${query}\n--- without cache\n${expected}\n--- through the shape cache\n${actual}`);
        }
      });
    }
  });
  assert.deepEqual(mismatches, [], mismatches.join('\n\n'));
  assert.ok(filled > 300, `only ${filled} mutated queries planned`);
  assert.ok(fromTemplate > 200, `only ${fromTemplate} mutated queries filled from another query's template`);
  console.log(
    `# shape oracle: ${sources.length} queries, ${compared} comparisons, ${filled} mutated plans, ${fromTemplate} of them (first grant) filled from another query's template`,
  );
});

test('shape cache: a hit never parses, and one shape with many sensitive variants cannot push other plans out', () => {
  let prepares = 0;
  const options = { baseIri: 'http://localhost/', maxQueryDepth: 64 };
  const planner = createPlanner({ ...options, planCache: { maxEntries: 100, maxBytes: 1 << 24 } }, (request, settings) => {
    prepares++;
    return prepareQueryForTest(request, settings);
  });
  const grant = GRANTS[0] as Grant;
  const plan = (query: string) => planner.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant).query;
  plan('SELECT * WHERE { <http://example.org/s1> <http://example.org/p> "a" }');
  const before = prepares;
  for (let i = 0; i < 50; i++) plan(`SELECT * WHERE { <http://example.org/s${i}> <http://example.org/p> "v${i}" . FILTER(?x > ${i}) }`);
  plan('SELECT * WHERE { <http://example.org/s1> <http://example.org/p> "b" . FILTER(?x > 1) }');
  const afterHits = prepares;
  assert.ok(afterHits - before <= 2, `${afterHits - before} prepares for one shape with 51 constant variants`);
  // 200 predicates (sensitive): at most a tenth of the entries, so the shape above stays cached.
  for (let i = 0; i < 200; i++) plan(`SELECT * WHERE { ?s <http://example.org/q${i}> ?o }`);
  const mark = prepares;
  plan('SELECT * WHERE { <http://example.org/s7> <http://example.org/p> "c" . FILTER(?x > 9) }');
  assert.equal(prepares, mark, 'the first shape was pushed out by the variants of another');
});

/** Typed literals in every position the planner writes one, each datatype the generator treats alike or apart. */
const TYPED_QUERIES: readonly string[] = [
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s <http://example.org/p> "2008-01-01"^^xsd:date ; <http://example.org/q> "1.0"^^xsd:decimal }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?p ?o FILTER(?o > "1.5"^^xsd:decimal && ?o != "true"^^xsd:boolean && ?o < "2"^^xsd:double) }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?p "1"^^xsd:integer , "01"^^xsd:integer , "x"^^xsd:string , "2"^^xsd:int , "y"^^xsd:normalizedString }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?p ?v } VALUES ?v { "2008-01-01"^^xsd:date "b"^^xsd:date UNDEF "c" 12 }',
  'SELECT * WHERE { "a"^^<http://example.org/dt> <http://example.org/p> ?o . "a"^^<http://example.org/dt> <http://example.org/q> ?o2 . "b"^^<http://example.org/dt> <http://example.org/p> ?o3 }',
  'SELECT * WHERE { "a"^^<http://example.org/dt> <http://example.org/p> ?o . "a"^^<http://example.org/dt2> <http://example.org/q> ?o2 . "a" <http://example.org/r> ?o3 }',
  'SELECT * WHERE { "a"^^<http://example.org/dt> <http://example.org/hidden>* ?o . "b"^^<http://example.org/dt2> <http://example.org/m/a>? ?x }',
  'SELECT * WHERE { "1"^^<http://example.org/dt> <http://example.org/hidden>* ?o . "1"^^<http://example.org/dt2> <http://example.org/hidden>* ?x }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> CONSTRUCT { ?s <http://example.org/p> "t"^^xsd:date } WHERE { ?s ?p "w"^^xsd:date }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> DESCRIBE ?s WHERE { ?s ?p "a"^^xsd:date }',
  'BASE <http://www.w3.org/2001/XMLSchema> SELECT * WHERE { ?s ?p "1"^^<#integer> , "2"^^<#decimal> , "3"^^<#string> }',
  'BASE <http://www.w3.org/2001/> PREFIX x: <XMLSchema#> SELECT * WHERE { ?s ?p "1"^^x:integer , "1"^^x:string , "1"^^x:boolean , "1" }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?p ?o FILTER(xsd:date(?o) = "2008-01-01"^^xsd:date) BIND("P1D"^^xsd:duration AS ?d) }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?p "a" ^^ # a comment\n xsd:date . ?s ?q "a"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s <http://www.w3.org/2001/XMLSchema#date> "x"^^xsd:date }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT ?s (COUNT(*) AS ?c) WHERE { ?s ?p ?o } GROUP BY ?s HAVING (COUNT(*) > "2"^^xsd:decimal) ORDER BY ("z"^^xsd:date) LIMIT 5 OFFSET 1',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { GRAPH <http://example.org/g/public1> { ?s ?p "a"^^xsd:date } GRAPH ?g { ?s ?q "b"^^xsd:date } }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?v ?o . ?s <http://example.org/p> "a"^^xsd:date OPTIONAL { ?s ?w "b"^^xsd:gYear } FILTER NOT EXISTS { ?s ?u "c"^^xsd:date } }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?p ?o FILTER(?o IN ("a"^^xsd:date, "a"^^xsd:dateTime, STRDT("a", xsd:date))) }',
  'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> ASK { ("a"^^xsd:date "b"^^xsd:date) <http://example.org/p> [ <http://example.org/q> "c"^^xsd:date ] }',
];

/** Contents for typed literals: ones the generator could write differently, escapes, and the sentinels' own spellings. */
const TYPED_CONTENTS: readonly string[] = [
  '"12"',
  '"-1"',
  "'1.0'",
  '"1e3"',
  '"true"',
  '""',
  '"a\\"b"',
  "'''x\ny'''",
  '"\uF8FF"',
  '"7493021856"',
  '"2008-02-29T00:00:00Z"',
];

test('shape cache oracle: typed literals (their content a slot, their datatype in the key) plan as without a cache', () => {
  const source: Source = { name: 'typed', query: '', grants: GRANTS, defaultGraphs: [], namedGraphs: [], allowedFunctions: [] };
  const cached = cachedPlannerFor([]);
  let compared = 0;
  let fromTemplate = 0;
  const mismatches: string[] = [];
  TYPED_QUERIES.forEach((query, index) => {
    const shape = lexQueryShape(query, 'http://localhost/');
    const variants = [query];
    if (shape !== undefined) {
      const next = random(1000 + index);
      for (let m = 0; m < 6; m++) {
        let out = shape.code[0] ?? '';
        for (let o = 0; o < shape.refs.length; o++) {
          const k = shape.refs[o] ?? 0;
          out += shape.classes[k] === 'S' ? (TYPED_CONTENTS[Math.floor(next() * TYPED_CONTENTS.length)] ?? '') : (shape.raw[k] ?? '');
          out += shape.code[o + 1] ?? '';
        }
        variants.push(out);
      }
    }
    for (const variant of variants) {
      const expected = withoutCache({ ...source, query: variant }, variant);
      GRANTS.forEach((grant, g) => {
        const before = prepareCalls;
        const actual = outcome(() => cached.plan({ query: variant, defaultGraphs: [], namedGraphs: [] }, grant));
        compared++;
        if (variant !== query && g === 0 && prepareCalls === before && actual.startsWith('plan ')) fromTemplate++;
        if (actual !== expected[g] && mismatches.length < 10) {
          mismatches.push(`--- query\n${variant}\n--- without cache\n${expected[g]}\n--- through the shape cache\n${actual}`);
        }
      });
    }
  });
  assert.deepEqual(mismatches, [], mismatches.join('\n\n'));
  // The dates of one shape share its template: typed-literal content is a slot.
  const key = (literal: string) =>
    lexQueryShape(`PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * { ?s ?p ${literal} }`, 'http://localhost/')?.key;
  assert.equal(key('"2008-01-01"^^xsd:date'), key('"2009-12-31"^^xsd:date'));
  assert.notEqual(key('"2008-01-01"^^xsd:date'), key('"2008-01-01"^^xsd:dateTime'));
  // xsd:integer and xsd:string are written apart by the generator (bare digits, a plain string): the whole literal is key.
  assert.notEqual(key('"1"^^xsd:integer'), key('"x"^^xsd:integer'));
  assert.notEqual(key('"1"^^xsd:string'), key('"x"^^xsd:string'));
  assert.ok(fromTemplate > 40, `only ${fromTemplate} typed-literal variants filled from a template`);
  console.log(
    `# typed-literal oracle: ${TYPED_QUERIES.length} queries, ${compared} comparisons, ${fromTemplate} variants (first grant) filled from a template`,
  );
});

/**
 * One shape each, first a query whose IRIs are IRI references (RFC 3987, SPARQL 1.1 §19.5), then variants of the same
 * shape whose constant is not: a port of letters once a local part extends a namespace that ends at its host or port,
 * a bare % or a second # from PN_LOCAL_ESC, an IRIREF with a bad port or brackets in its path.
 */
const IRI_SHAPES: readonly (readonly string[])[] = [
  [
    'PREFIX ex: <http://example.com:> SELECT * WHERE { ex:8080 ?p "a" }',
    'PREFIX ex: <http://example.com:> SELECT * WHERE { ex:p ?p "a" }',
    'PREFIX ex: <http://example.com:> SELECT * WHERE { ex:80 ?p "b" }',
  ],
  [
    'PREFIX ex: <http://example.com> SELECT * WHERE { ?s ex:x "a" }',
    'PREFIX ex: <http://example.com> SELECT * WHERE { ?s ex::p "a" }',
    'PREFIX ex: <http://example.com> SELECT * WHERE { ?s ex:y.z "b" }',
  ],
  [
    'PREFIX ex: <http://example.org/> SELECT * WHERE { ex:a ?p "a" }',
    'PREFIX ex: <http://example.org/> SELECT * WHERE { ex:a\\%zz ?p "a" }',
    'PREFIX ex: <http://example.org/#> SELECT * WHERE { ex:a\\#b ?p "a" }',
  ],
  [
    'SELECT * WHERE { <http://example.org/a> ?p "a" }',
    'SELECT * WHERE { <http://example.com:p> ?p "a" }',
    'SELECT * WHERE { <http://example.org/a[1]> ?p "a" }',
    'SELECT * WHERE { <b%zz> ?p "a" }',
  ],
];

test('shape cache oracle: a constant that is not an RFC 3987 IRI is refused as without a cache, after its shape was cached', () => {
  const cached = cachedPlannerFor([]);
  const source: Source = { name: 'iri', query: '', grants: GRANTS, defaultGraphs: [], namedGraphs: [], allowedFunctions: [] };
  let refused = 0;
  for (const [first, ...variants] of IRI_SHAPES) {
    for (const query of [first!, ...variants]) {
      const expected = withoutCache({ ...source, query }, query);
      GRANTS.forEach((grant, g) => {
        const actual = outcome(() => cached.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant));
        assert.equal(actual, expected[g], query);
        if (actual.includes('RFC 3987')) refused++;
      });
    }
  }
  assert.equal(refused, 7 * GRANTS.length);
});

test("shape cache: the result cap is the smaller of the request's own LIMIT and the caller's cap, per request", () => {
  const planner = createPlanner({ baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 100, maxBytes: 1 << 20 } });
  const plain = GRANTS[0] as Grant;
  const capped = (resultLimit: number): Grant => ({ ...plain, limits: { resultLimit } });
  const plan = (query: string, grant: Grant) => planner.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant).query;
  const shape = (o: string, limit: string) => `SELECT * WHERE { ?s <http://example.org/p> "${o}" }${limit}`;
  // Same shape, other constants and other LIMITs, one planner: each request gets its own LIMIT against its own cap.
  for (let round = 0; round < 2; round++) {
    assert.match(plan(shape('a', ' LIMIT 3'), capped(10)), /"a"\. \}\nLIMIT 3$/);
    assert.match(plan(shape('b', ' LIMIT 50'), capped(10)), /"b"\. \}\nLIMIT 10$/);
    assert.match(plan(shape('c', ' LIMIT 50'), capped(20)), /"c"\. \}\nLIMIT 20$/);
    assert.match(plan(shape('d', ' LIMIT 50'), plain), /"d"\. \}\nLIMIT 50$/);
    assert.match(plan(shape('e', ''), capped(5)), /"e"\. \}\nLIMIT 5$/);
    assert.doesNotMatch(plan(shape('f', ''), plain), /LIMIT/);
    assert.match(plan(shape('g', ' OFFSET 4 LIMIT 9'), capped(6)), /"g"\. \}\nOFFSET 4\nLIMIT 6$/);
  }
});

/** The rows fixture's callers as identification hands them out, and an anonymous one. */
const ROWS_IDENTITIES: readonly Caller[] = [
  ...Object.values(ROWS_CALLERS).map((caller) => ({ ...caller, authenticated: true, via: 'api-key' as const })),
  { agent: ANONYMOUS_AGENT, groups: [], authenticated: false },
];

test('shape cache oracle: the rows policies (row rules, columns, the caller in the checks), callers in random order, plan as without a cache', async () => {
  const fixture = rowsFixture();
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-shape-rows-'));
  try {
    const file = join(folder, 'policies.ttl');
    writeFileSync(file, fixture.policies);
    const set = await loadPolicies(policySetSources({ policies: [file], rules: [] }));
    // grantFor: undefined for a caller no policy applies to (the guard answers 401 or 403, nothing is planned).
    const callers = ROWS_IDENTITIES.flatMap((caller) => {
      const grant = grantFor(set, caller);
      return grant === undefined ? [] : [{ caller, grant }];
    });
    assert.ok(callers.filter(({ grant }) => (grant.views?.size ?? 0) > 0).length >= 5, 'callers with row rules or columns');
    const vocabulary: OracleVocabulary = {
      namespace: ROWS_EX,
      locals: ['name', 'budget', 'team', 'region', 'lead', 'note', 'text', 'email', 'phone', 'salary', 'member', 'nothing'],
      nodes: ['?a', '?b', '?c', '[]', 'ex:p1', 'ex:p2', 'ex:alice', 'ex:Project', 'ex:PublicRecord', '"Apollo"', '100', '"team-a"'],
      graphs: [fixture.graphs.main, fixture.graphs.second, fixture.graphs.members],
    };
    const seed = Number(process.env['ORACLE_SEED'] ?? 32);
    const queries = sampleOf(oracleCorpus(seed, vocabulary, rowsAttacks(fixture.graphs), 100), 150, seed);
    const settings = { baseIri: 'http://localhost/', maxQueryDepth: 64, allowedFunctions: compileFunctionAllowList([]) };
    for (const rowChecks of ['join', 'exists'] as const) {
      const cached = createPlanner({ ...settings, allowedFunctions: [], rowChecks, planCache: { maxEntries: 5000, maxBytes: 1 << 26 } });
      const next = random(seed);
      let compared = 0;
      let planned = 0;
      const mismatches: string[] = [];
      queries.forEach(({ query }, index) => {
        const variants = [query];
        for (let m = 0; m < 3; m++) {
          const mutated = mutate(query, seed * 7 + index * 31 + m, m === 2);
          if (mutated !== undefined) variants.push(mutated);
        }
        for (const variant of variants) {
          // The protocol dataset is part of the key: some requests name the main graph.
          const request = { query: variant, defaultGraphs: next() < 0.3 ? [fixture.graphs.main] : [], namedGraphs: [] };
          let prepared: PreparedQuery | GuardError;
          try {
            prepared = prepareQueryForTest(request, settings);
          } catch (error) {
            if (!(error instanceof GuardError)) throw error;
            prepared = error;
          }
          const order = callers.map((each) => ({ each, at: next() })).sort((a, b) => a.at - b.at);
          for (const { each } of order) {
            const expected = outcome(() => {
              if (prepared instanceof GuardError) throw prepared;
              return applyGrant(prepared, each.grant, undefined, each.caller, rowChecks);
            });
            const actual = outcome(() => cached.plan(request, each.grant, each.caller));
            compared++;
            if (actual.startsWith('plan ')) planned++;
            if (actual !== expected && mismatches.length < 5) {
              mismatches.push(
                `${each.caller.agent}, ${rowChecks}\n--- query\n${variant}\n--- without cache\n${expected}\n--- through the shape cache\n${actual}`,
              );
            }
          }
        }
      });
      assert.deepEqual(mismatches, [], mismatches.join('\n\n'));
      assert.ok(planned > compared / 4, `only ${planned} of ${compared} planned`);
      const { hits, misses } = cached.cacheStats();
      assert.ok(hits > misses, `${hits} hits against ${misses} misses: the cache was hardly used`);
      console.log(
        `# shape oracle, rows policies, ${rowChecks}: ${queries.length} queries, ${compared} comparisons, ${planned} plans, ${hits} hits`,
      );
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
