// A BGP with a literal subject is written as the group with no solution (src/sparql/empty-group.ts): its variables stay in
// scope, a path from a literal stays as written, a hidden predicate it names is still refused, and a cached shape holds it for
// every literal of the slot.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GuardError } from '../../src/guard-error.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { createPlanner } from '../../src/sparql/create-planner.js';

const G = 'http://example.org/g/people';
const SALARY = 'http://example.org/ns#salary';
const open: Grant = { policies: ['urn:test:p'], graphs: new Set([G]), hiddenByGraph: new Map() };
const hiding: Grant = { ...open, hiddenByGraph: new Map([[G, new Set([SALARY])]]) };

const planner = createPlanner({
  baseIri: 'http://localhost/',
  maxQueryDepth: 64,
  planCache: { maxEntries: 100, maxBytes: 1024 * 1024 },
  allowedFunctions: [],
});
const plan = (query: string, grant: Grant = open): string =>
  planner.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant).query.replace(/\s+/g, ' ');

test('the BGP becomes VALUES of its variables under FILTER(1 = 0), in every kind of group', () => {
  assert.match(
    plan('SELECT * WHERE { ?s ?q ?r . "a" ?p ?o }'),
    /WHERE \{ \{ VALUES \(\?s \?q \?r \?p \?o\) \{ \(UNDEF UNDEF UNDEF UNDEF UNDEF\) \} FILTER\(1 = 0 ?\) \} \}/,
  );
  assert.match(plan('ASK { 100 a ?x }'), /\{ \{ VALUES \?x \{ UNDEF \} FILTER\(1 = 0 ?\) \} \}/);
  assert.match(plan('ASK { "a"@en <urn:p> <urn:o> }'), /\{ \{ FILTER\(1 = 0 ?\) \} \}/);
  for (const query of [
    'SELECT * WHERE { ?s ?p ?o FILTER EXISTS { "x" ?q ?r } }',
    'SELECT * WHERE { ?s ?p ?o MINUS { ?s ?p ?o . 1.5 ?q ?r } }',
    'SELECT * WHERE { ?s ?p ?o OPTIONAL { true ?q ?s } }',
    'SELECT * WHERE { { SELECT ?x WHERE { "x" ?p ?x } } }',
  ]) {
    const text = plan(query);
    assert.match(text, /FILTER\(1 = 0 ?\)/, query);
    assert.doesNotMatch(text, /"x" \?|1\.5 \?|true \?/, query);
  }
});

test('a path from a literal whose every way starts forward is the same group: alternatives, negated sets, sequences, +', () => {
  for (const path of ['(<urn:p>|<urn:q>)', '!<urn:p>', '!(<urn:p>|<urn:q>)', '<urn:p>/^<urn:q>', '(<urn:p>|<urn:q>)+', '^(^<urn:p>)']) {
    assert.match(plan(`SELECT * WHERE { "a" ${path} ?o }`), /VALUES \?o \{ UNDEF \} FILTER\(1 = 0 ?\)/, path);
  }
});

test('other patterns stay as written: an IRI or a variable subject, a literal object, a path that may start at a literal', () => {
  assert.doesNotMatch(plan('SELECT * WHERE { ?s ?p "a" . <urn:s> ?q ?s }'), /FILTER\(1 = 0/);
  assert.match(plan('SELECT * WHERE { "a" <urn:p>* ?o }'), /"a" \(<urn:p>\*\) \?o/);
  for (const path of [
    '^<urn:p>',
    '(^<urn:p>|<urn:q>)',
    '!(^<urn:p>)',
    '!(<urn:q>|^<urn:p>)',
    '<urn:p>?',
    '<urn:p>?/<urn:q>',
    '^(<urn:p>/<urn:q>)',
  ]) {
    assert.doesNotMatch(plan(`SELECT * WHERE { "a" ${path} ?o }`), /FILTER\(1 = 0/, path);
  }
});

test('a hidden predicate in such a BGP is still refused, as anywhere else', () => {
  assert.throws(
    () => plan(`SELECT * WHERE { "a" <${SALARY}> ?o }`, hiding),
    (error: unknown) => error instanceof GuardError && error.status === 403 && error.message === 'the query uses a hidden path',
  );
});

test('one cached shape: every literal of the slot gets the group, an IRI in its place does not', () => {
  for (const literal of ['"a"', '"b"', '"c"@en', '7', '7.5'])
    assert.match(plan(`SELECT * WHERE { ${literal} ?p ?o }`), /FILTER\(1 = 0/, literal);
  assert.doesNotMatch(plan('SELECT * WHERE { <urn:a> ?p ?o }'), /FILTER\(1 = 0/);
});
