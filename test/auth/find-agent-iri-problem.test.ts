// Proves which strings may stand as agent IRIs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findAgentIriProblem } from '../../src/iri.js';

describe('findAgentIriProblem', () => {
  it('accepts absolute IRIs of any scheme, non-ASCII included', () => {
    for (const iri of [
      'https://example.org/agents/alice',
      'mailto:a@example.org',
      'urn:uuid:1234',
      'did:web:example.org',
      'https://例え.jp/ユーザー',
      'x:',
    ]) {
      assert.equal(findAgentIriProblem(iri), undefined, iri);
    }
  });

  it('refuses strings without a scheme', () => {
    for (const value of ['alice', '/agents/alice', '//example.org/a', '1http://x', ':x', '']) {
      assert.match(findAgentIriProblem(value) ?? '', /^is not an absolute IRI/, value);
    }
  });

  it('refuses whitespace, controls and the characters IRIREF excludes', () => {
    for (const bad of [' ', '\t', '\n', '\u00a0', '\u2028', '\u0000', '\u007f', '\u0085', '<', '>', '"', '{', '}', '|', '^', '`', '\\']) {
      assert.match(
        findAgentIriProblem(`https://example.org/a${bad}b`) ?? '',
        /^holds whitespace, a control character/,
        JSON.stringify(bad),
      );
    }
  });

  it('refuses an IRI over 1,800 characters, whose short form Virtuoso would read as the same agent', () => {
    // Virtuoso stores an IRI over 1,880 characters as its first 1,847 and an MD5 of the rest: a row rule writing a
    // 1,879-character agent of that form would match the rows of the long one.
    assert.equal(findAgentIriProblem(`https://example.org/a/${'x'.repeat(1800 - 22)}`), undefined);
    assert.match(findAgentIriProblem(`https://example.org/a/${'x'.repeat(1800 - 21)}`) ?? '', /^is longer than 1800 characters/);
    assert.match(findAgentIriProblem(`https://example.org/a/${'x'.repeat(1857)}`) ?? '', /^is longer than 1800 characters/);
  });

  it('refuses dot segments, which a store that normalises would read as another agent', () => {
    // A row rule writes the agent as it is; Jena reads .../users/../staff/root as .../staff/root.
    for (const iri of [
      'https://idp.example.org/users/../staff/root',
      'https://idp.example.org/users/./ann',
      'https://idp.example.org/users/ann/..',
      'https://idp.example.org/..',
    ]) {
      assert.match(findAgentIriProblem(iri) ?? '', /^has dot segments/, iri);
    }
    for (const iri of [
      'https://idp.example.org/users/..ann',
      'https://idp.example.org/users/a.b',
      'https://idp.example.org/users/ann#..',
      'urn:x:..',
    ]) {
      assert.equal(findAgentIriProblem(iri), undefined, iri);
    }
  });

  it('refuses the guard vocabulary namespace', () => {
    assert.match(
      findAgentIriProblem('https://w3id.org/sparql-guard#Everyone') ?? '',
      /^lies in the reserved namespace https:\/\/w3id\.org\/sparql-guard#/,
    );
    assert.equal(findAgentIriProblem('https://w3id.org/sparql-guard-fan#me'), undefined);
  });

  it('never repeats the IRI it judges', () => {
    for (const value of ['secret-agent', 'https://example.org/secret agent', 'https://w3id.org/sparql-guard#secret']) {
      assert.doesNotMatch(findAgentIriProblem(value) ?? '', /secret/);
    }
  });
});
