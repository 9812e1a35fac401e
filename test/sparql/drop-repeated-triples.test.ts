// A repeated triple pattern of variables is written once; patterns with constants and paths stay as written.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import sparqljs from 'sparqljs';
import { dropRepeatedTriples } from '../../src/sparql/drop-repeated-triples.js';

const rewritten = (text: string): string => {
  const tree = new sparqljs.Parser().parse(text);
  dropRepeatedTriples(tree);
  return new sparqljs.Generator().stringify(tree).replace(/\s+/g, ' ');
};

test('a pattern of three variables written twice in one BGP is kept once, in every group and sub-select', () => {
  assert.equal(rewritten('SELECT * { ?s ?p ?o . ?s ?p ?o }'), 'SELECT * WHERE { ?s ?p ?o. }');
  assert.equal(rewritten('SELECT * { ?s ?p ?o, ?o ; ?p ?o }'), 'SELECT * WHERE { ?s ?p ?o. }');
  assert.match(
    rewritten('ASK { { SELECT ?s { ?s ?p ?o . ?s ?p ?o } } FILTER EXISTS { ?a ?b ?c . ?a ?b ?c } }'),
    /\?s \?p \?o\. \}.*\?a \?b \?c\. \}/,
  );
});

test('other patterns stay: different variables, constants (slots of a cached shape), paths, other BGPs', () => {
  assert.equal(rewritten('SELECT * { ?s ?p ?o . ?o ?p ?s }'), 'SELECT * WHERE { ?s ?p ?o. ?o ?p ?s. }');
  assert.equal(rewritten('SELECT * { ?s <urn:p> ?o . ?s <urn:p> ?o }'), 'SELECT * WHERE { ?s <urn:p> ?o, ?o. }');
  assert.equal(
    rewritten('SELECT * { ?s <urn:p>/<urn:q> ?o . ?s <urn:p>/<urn:q> ?o }'),
    'SELECT * WHERE { ?s (<urn:p>/<urn:q>) ?o; (<urn:p>/<urn:q>) ?o. }',
  );
  assert.equal(rewritten('SELECT * { ?s ?p ?o OPTIONAL { ?s ?p ?o } }'), 'SELECT * WHERE { ?s ?p ?o. OPTIONAL { ?s ?p ?o. } }');
});
