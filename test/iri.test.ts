// One decision about the characters an IRI may hold, held by every check that reads an IRI: query text, protocol dataset, policies, agents, configuration.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { findAgentIriProblem, hasScheme, iriSpliceProblem, isAbsoluteIri, NOT_IN_IRI } from '../src/iri.js';
import { GuardError } from '../src/guard-error.js';
import type { Grant } from '../src/policy/grant.js';
import { createPlanner } from '../src/sparql/create-planner.js';
import { readProtocolGraphs } from '../src/sparql/read-protocol-dataset.js';
import { readConfig } from '../src/config/read-config.js';

/** Every code point the class must refuse: C0, space, DEL, C1, the IRIREF punctuation, and Unicode spaces. */
const REFUSED: readonly string[] = [
  ...Array.from({ length: 0x21 }, (_, code) => String.fromCodePoint(code)),
  ...Array.from({ length: 0x21 }, (_, offset) => String.fromCodePoint(0x7f + offset)),
  ...'<>"{}|^`\\',
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u200a',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
];

const name = (char: string): string => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
const GRAPH = 'http://example.org/g/public';
const grant: Grant = { policies: ['urn:test:p'], graphs: new Set([GRAPH]), hiddenByGraph: new Map() };
const planner = createPlanner({
  baseIri: 'http://localhost/',
  maxQueryDepth: 64,
  planCache: { maxEntries: 0, maxBytes: 1 },
  allowedFunctions: [],
});
const plan = (query: string) => planner.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant);
const refused400 = (error: unknown) => error instanceof GuardError && error.status === 400;

test('the class refuses C0, space, DEL, every C1 control, the IRIREF punctuation and Unicode spaces', () => {
  for (const char of REFUSED) assert.ok(NOT_IN_IRI.test(`http://example.org/a${char}b`), name(char));
});

test('letters beyond ASCII, percent escapes and the characters RFC 3986 reserves pass', () => {
  for (const iri of [
    'http://example.org/caf\u00e9',
    'http://example.org/\u4e2d\u6587',
    'http://example.org/a%20b',
    "http://ex.org/a;b=c,d&e+f$g!h*i'j(k)l@m:n[o]?p#q",
    'urn:x:\u00a1',
  ]) {
    assert.equal(isAbsoluteIri(iri), true, iri);
  }
});

test('a scheme is a letter, then letters, digits, +, - or ., then a colon', () => {
  for (const iri of ['http:', 'urn:x', 'a+b.c-d:x', 'X1:y']) assert.equal(hasScheme(iri), true, iri);
  for (const iri of ['', ':x', '1a:x', 'a_b:x', '//example.org/x', 'relative']) assert.equal(hasScheme(iri), false, iri);
});

test('a C1 control is refused in the query text, raw or as a codepoint escape, like a C0 control', () => {
  for (const char of ['\u0085', '\u009b', '\u007f', '\u0001', '\u00a0']) {
    assert.throws(() => plan(`SELECT * FROM <http://example.org/a${char}b> { ?s ?p ?o }`), refused400, `raw ${name(char)}`);
    const escape = `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`;
    assert.throws(() => plan(`SELECT * FROM <http://example.org/a${escape}b> { ?s ?p ?o }`), refused400, `escaped ${name(char)}`);
  }
  assert.match(plan(`SELECT * FROM <${GRAPH}> { ?s ?p ?o }`).query, /public/);
});

test("the protocol dataset, policy IRIs, agent IRIs, and the configuration's baseIri and allowedFunctions refuse the same characters", () => {
  const folder = mkdtempSync(join(tmpdir(), 'iri-'));
  for (const char of ['\u0085', '\u009f', '\u007f', '\u2028']) {
    const iri = `http://example.org/a${char}b`;
    assert.throws(() => readProtocolGraphs([iri], 'default-graph-uri'), refused400, name(char));
    assert.match(iriSpliceProblem(iri) ?? '', /not a valid absolute SPARQL IRI/, name(char));
    assert.match(findAgentIriProblem(iri) ?? '', /control character/, name(char));
    const file = join(folder, 'config.json');
    writeFileSync(file, JSON.stringify({ baseIri: iri }));
    assert.throws(() => readConfig({ GUARD_CONFIG: file }), { name: 'ConfigError', message: /baseIri: not an absolute IRI/ }, name(char));
    writeFileSync(file, JSON.stringify({ allowedFunctions: [iri] }));
    assert.throws(
      () => readConfig({ GUARD_CONFIG: file }),
      { name: 'ConfigError', message: /allowedFunctions\[0\]: not an absolute IRI/ },
      name(char),
    );
  }
});
