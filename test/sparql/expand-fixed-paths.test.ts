// Unit tests of expandFixedPaths: fixed-length paths written as the triple patterns and unions of SPARQL 1.1 §18.4 and §18.5.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sparqljs from 'sparqljs';
import { createPlanner } from '../../src/sparql/create-planner.js';
import { GuardError } from '../../src/guard-error.js';
import { expandFixedPaths } from '../../src/sparql/expand-fixed-paths.js';

const P = 'PREFIX x: <urn:x:>\n';
const generator = new sparqljs.Generator();
const parse = (text: string): Record<string, unknown> => new sparqljs.Parser().parse(P + text) as unknown as Record<string, unknown>;
const write = (tree: unknown): string => generator.stringify(tree as sparqljs.SparqlQuery).replace(/\s+/g, ' ');

/** The expansion of `query`, written, against `expected` parsed and written the same way. */
function assertExpands(query: string, expected: string): void {
  const tree = parse(query);
  const before = JSON.stringify(tree);
  const expanded = expandFixedPaths(tree);
  assert.ok(expanded !== undefined && !(expanded instanceof GuardError), query);
  assert.equal(write(expanded), write(parse(expected)), query);
  assert.equal(JSON.stringify(tree), before, 'the query tree is not changed');
}

describe('expandFixedPaths', () => {
  it('writes a sequence with a fresh middle variable, an inverse with its ends swapped', () => {
    assertExpands('SELECT ?s ?o { ?s x:a/x:b ?o }', 'SELECT ?s ?o { ?s x:a ?path . ?path x:b ?o }');
    assertExpands('SELECT ?s ?o { ?s x:a/x:b/x:c ?o }', 'SELECT ?s ?o { ?s x:a ?path . ?path x:b ?path1 . ?path1 x:c ?o }');
    assertExpands('SELECT ?s ?o { ?s ^x:a ?o }', 'SELECT ?s ?o { ?o x:a ?s }');
    assertExpands('SELECT ?s ?o { ?s ^(x:a/x:b) ?o }', 'SELECT ?s ?o { ?o x:a ?path . ?path x:b ?s }');
    assertExpands('SELECT ?o { <urn:x:s> ^x:a/x:b "v" }', 'SELECT ?o { ?path x:a <urn:x:s> . ?path x:b "v" }');
  });

  it('writes an alternative as a union of its branches, nested ones flattened, beside the triples of its BGP', () => {
    assertExpands('SELECT ?s ?o { ?s x:a|x:b ?o }', 'SELECT ?s ?o { { ?s x:a ?o } UNION { ?s x:b ?o } }');
    assertExpands('SELECT ?s ?o { ?s x:a|(x:b|^x:c) ?o }', 'SELECT ?s ?o { { ?s x:a ?o } UNION { ?s x:b ?o } UNION { ?o x:c ?s } }');
    assertExpands(
      'SELECT ?s ?o { ?s x:t ?t ; (x:a|x:b)/x:c ?o }',
      'SELECT ?s ?o { ?s x:t ?t . ?path x:c ?o { ?s x:a ?path } UNION { ?s x:b ?path } }',
    );
    assertExpands(
      'SELECT ?s ?o { ?s x:a/(x:b|x:c/x:d) ?o }',
      'SELECT ?s ?o { ?s x:a ?path { ?path x:b ?o } UNION { ?path x:c ?path1 . ?path1 x:d ?o } }',
    );
  });

  it('leaves variable-length paths and negated sets as paths, at the ends the expansion gives them', () => {
    assertExpands('SELECT ?s ?o { ?s x:a/x:b* ?o }', 'SELECT ?s ?o { ?s x:a ?path . ?path x:b* ?o }');
    assertExpands('SELECT ?s ?o { ?s x:a|!x:b ?o }', 'SELECT ?s ?o { { ?s x:a ?o } UNION { ?s !x:b ?o } }');
    for (const query of [
      'SELECT * { ?s x:a* ?o }',
      'SELECT * { ?s !(x:a|^x:b) ?o }',
      'SELECT * { ?s ^(x:a+) ?o }',
      'SELECT * { ?s x:a ?o }',
    ]) {
      assert.equal(expandFixedPaths(parse(query)), undefined, query);
    }
  });

  it('reaches every group: UNION branches, OPTIONAL, MINUS, GRAPH, EXISTS, sub-selects', () => {
    assertExpands(
      'SELECT ?s { { ?s x:a/x:b ?o } UNION { ?s x:a|x:b ?o } }',
      'SELECT ?s { { ?s x:a ?path . ?path x:b ?o } UNION { { ?s x:a ?o } UNION { ?s x:b ?o } } }',
    );
    assertExpands(
      'SELECT ?s { ?s x:t ?t OPTIONAL { ?s x:a|x:b ?o } MINUS { ?s ^x:c ?m } }',
      'SELECT ?s { ?s x:t ?t OPTIONAL { { ?s x:a ?o } UNION { ?s x:b ?o } } MINUS { ?m x:c ?s } }',
    );
    assertExpands(
      'SELECT ?s { GRAPH ?g { ?s x:a/x:b ?o } FILTER EXISTS { ?s x:a|x:b ?o } }',
      'SELECT ?s { GRAPH ?g { ?s x:a ?path . ?path x:b ?o } FILTER EXISTS { { ?s x:a ?o } UNION { ?s x:b ?o } } }',
    );
    assertExpands('SELECT ?s { { SELECT ?s { ?s x:a/x:b ?o } } }', 'SELECT ?s { { SELECT ?s { ?s x:a ?path . ?path x:b ?o } } }');
  });

  it('writes each blank node as a fresh variable throughout its BGP, so the joins of a union branch hold', () => {
    assertExpands('SELECT ?s { ?s (x:a|x:b) _:k . _:k x:e ?z }', 'SELECT ?s { ?blank x:e ?z { ?s x:a ?blank } UNION { ?s x:b ?blank } }');
    assertExpands('SELECT ?s { ?s x:a/x:b _:b }', 'SELECT ?s { ?s x:a ?path . ?path x:b ?blank }');
  });

  it('writes blank nodes without a path as fresh variables, one per label, never projected', () => {
    assertExpands('SELECT * { [] x:a ?o }', 'SELECT ?o { ?blank x:a ?o }');
    assertExpands('SELECT ?o { _:b x:a ?o . _:b x:b [ x:c ?z ] }', 'SELECT ?o { ?blank x:a ?o . ?blank x:b ?blank1 . ?blank1 x:c ?z }');
    // Triples with FILTERs between them are one BGP (§18.2.2), which sparqljs splits into blocks: one node.
    assertExpands('SELECT ?o { _:b x:a ?o FILTER(true) _:b x:b ?o }', 'SELECT ?o { ?blank x:a ?o FILTER(true) ?blank x:b ?o }');
    assertExpands('SELECT ?o { _:b x:a ?o FILTER EXISTS { _:c x:b ?o } }', 'SELECT ?o { ?blank x:a ?o FILTER EXISTS { ?blank1 x:b ?o } }');
    // The same label in two BGPs is refused before (§4.1.4, checkBlankNodeScope), so one name per label is safe.
    const planner = createPlanner({
      baseIri: 'http://localhost/',
      maxQueryDepth: 64,
      allowedFunctions: [],
      planCache: { maxEntries: 0, maxBytes: 1 },
    });
    const grant = { policies: ['urn:test:p'], graphs: new Set(['urn:x:g']), hiddenByGraph: new Map() };
    assert.throws(
      () =>
        planner.plan(
          { query: 'PREFIX x: <urn:x:> SELECT ?o { _:b x:a ?o FILTER EXISTS { _:b x:b ?o } }', defaultGraphs: [], namedGraphs: [] },
          grant,
        ),
      /a blank node label is used in two basic graph patterns/,
    );
    const counted = expandFixedPaths(parse('SELECT (COUNT(DISTINCT *) AS ?n) { [] x:a ?o }'));
    assert.ok(counted instanceof GuardError && counted.status === 403, 'COUNT(DISTINCT *) refused');
    assert.equal(expandFixedPaths(parse('CONSTRUCT { [] x:a ?o } WHERE { ?s x:a ?o }')), undefined, 'a template blank node stays');
  });

  it('names fresh variables no variable of the query has', () => {
    assertExpands('SELECT ?path ?o { ?path x:a/x:b ?o }', 'SELECT ?path ?o { ?path x:a ?path1 . ?path1 x:b ?o }');
    assertExpands(
      'SELECT ?o { ?s x:a/x:b ?o FILTER EXISTS { ?path x:c ?o } }',
      'SELECT ?o { ?s x:a ?path1 . ?path1 x:b ?o FILTER EXISTS { ?path x:c ?o } }',
    );
  });

  it('writes SELECT * above an expansion as the variables in scope before it; refuses it with none', () => {
    assertExpands('SELECT * { ?s x:a/x:b ?o }', 'SELECT ?s ?o { ?s x:a ?path . ?path x:b ?o }');
    assertExpands(
      'SELECT * { ?s x:a/x:b ?o BIND(1 AS ?n) } VALUES ?v { 1 }',
      'SELECT ?s ?o ?n ?v { ?s x:a ?path . ?path x:b ?o BIND(1 AS ?n) } VALUES ?v { 1 }',
    );
    assertExpands('SELECT ?s { { SELECT * { ?s x:a|x:b ?o } } }', 'SELECT ?s { { SELECT ?s ?o { { ?s x:a ?o } UNION { ?s x:b ?o } } } }');
    const refused = expandFixedPaths(parse('SELECT * { <urn:x:s> x:a/x:b <urn:x:o> }'));
    assert.ok(refused instanceof GuardError && refused.status === 403, 'refused');
    // Without a path to expand, SELECT * stays as written.
    assert.equal(expandFixedPaths(parse('SELECT * { <urn:x:s> x:a <urn:x:o> }')), undefined);
  });
});
