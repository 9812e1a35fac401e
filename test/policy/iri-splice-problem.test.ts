// Which policy IRIs the planner may splice into generated queries: absolute IRIREFs without dot segments.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { iriSpliceProblem } from '../../src/iri.js';

test('plain absolute IRIs pass, dots inside names and after the path too', () => {
  for (const iri of [
    'https://example.org/g/public',
    'urn:x:graph',
    'https://example.org/g/v1.2/..data',
    'https://example.org/g/.well-known',
    'https://example.org/g?x=/../y',
    'https://example.org/ns#/../salary',
    'https://example.org/',
  ])
    assert.equal(iriSpliceProblem(iri), undefined, iri);
});

test('dot segments anywhere in the path are refused', () => {
  for (const iri of [
    'https://example.org/g/./public',
    'https://example.org/g/x/../secret',
    'https://example.org/g/public/.',
    'https://example.org/g/public/..',
    'https://example.org/./ns#salary',
    'urn:a/../b',
    'tag:./x',
    'file:..',
  ])
    assert.match(iriSpliceProblem(iri) ?? '', /dot segments/, iri);
});

test('what is no valid absolute IRIREF is refused', () => {
  for (const iri of [
    'relative/graph',
    '',
    'https://example.org/g x',
    'https://example.org/g>x',
    'https://example.org/{g}',
    'https://example.org/g\\x',
    'https://example.org/\ng',
  ]) {
    assert.match(iriSpliceProblem(iri) ?? '', /not a valid absolute SPARQL IRI/, JSON.stringify(iri));
  }
});
