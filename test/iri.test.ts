// One decision about the characters an IRI may hold, held by every check that reads an IRI: query text, protocol dataset, policies, agents, configuration.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { findAgentIriProblem, hasScheme, iriSpliceProblem, isAbsoluteIri, NOT_IN_IRI } from '../src/iri.js';
import { GuardError } from '../src/guard-error.js';
import type { Grant } from '../src/policy/policy-set.js';
import { createPlanner } from '../src/sparql/create-planner.js';
import { readProtocolGraphs } from '../src/sparql/read-protocol-dataset.js';
import { readConfig } from '../src/config/read-config.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadPolicySet } from '../src/policy/load/load-policy-set.js';
import { shippedRuleFiles } from '../src/policy/rules/shipped-rule-files.js';

/** The compiled bin next to the compiled tests. */
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

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

/** RFC 3987 section 4.1's bidirectional formatting characters, and the later isolates and ALM. */
const BIDI = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'];
/** Characters that show as nothing: zero-width space, non-joiner, joiner, word joiner, zero-width no-break space. */
const INVISIBLE = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff'];

test('a bidirectional formatting character is refused in every IRI: the class, the query (raw, escaped, prefixed name), policy IRIs', () => {
  for (const char of BIDI) {
    const iri = `http://example.org/a${char}b`;
    assert.ok(NOT_IN_IRI.test(iri), name(char));
    assert.match(iriSpliceProblem(iri) ?? '', /not a valid absolute SPARQL IRI/, name(char));
    assert.throws(() => readProtocolGraphs([iri], 'default-graph-uri'), refused400, name(char));
    assert.throws(() => plan(`SELECT * WHERE { <${iri}> ?p ?o }`), refused400, name(char));
    const escape = `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`;
    assert.throws(() => plan(`SELECT * WHERE { <http://example.org/a${escape}b> ?p ?o }`), refused400, `${name(char)} escaped`);
  }
  // ALM (U+061C) is a PN_CHARS_BASE character: a prefixed name may spell it, and is refused too.
  assert.throws(() => plan('PREFIX ex: <http://example.org/> SELECT * WHERE { ex:a\u061cb ?p ?o }'), refused400);
});

test('an agent IRI holding a bidirectional or an invisible character is refused, with a reason that names the kind and not the IRI', () => {
  for (const char of BIDI) {
    assert.match(
      findAgentIriProblem(`https://example.org/agents/eve${char}alice`) ?? '',
      /^holds a bidirectional formatting character/,
      name(char),
    );
  }
  for (const char of INVISIBLE) {
    const problem = findAgentIriProblem(`https://example.org/agents/ali${char}ce`) ?? '';
    assert.match(problem, /^holds (an invisible character|whitespace)/, name(char));
    assert.doesNotMatch(problem, /alice|ali/);
  }
});

test('a zero-width joiner or space stays allowed in query and graph IRIs (RFC 3987 allows them; some scripts and emoji need the joiners)', () => {
  for (const char of ['\u200b', '\u200c', '\u200d', '\u2060']) {
    const iri = `http://example.org/a${char}b`;
    assert.equal(isAbsoluteIri(iri), true, name(char));
    assert.equal(iriSpliceProblem(iri), undefined, name(char));
    assert.match(plan(`SELECT * WHERE { <${iri}> ?p ?o }`).query, new RegExp(`<${iri}>`), name(char));
  }
});

test('every way an agent IRI enters refuses U+202E and U+200B: API key entries, policy files, explain and hash-key', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'iri-agent-'));
  const config = join(folder, 'config.json');
  for (const char of ['\u202e', '\u200b']) {
    const agent = `https://example.org/agents/eve${char}alice`;
    writeFileSync(config, JSON.stringify({ auth: { apiKeys: [{ agent, groups: [], sha256: 'a'.repeat(64) }] } }));
    assert.throws(() => readConfig({ GUARD_CONFIG: config }), { name: 'ConfigError', message: /apiKeys\[0\]\.agent: holds/ }, name(char));
    const policy = join(folder, 'policy.ttl');
    writeFileSync(
      policy,
      `<https://example.org/p> a <https://w3id.org/sparql-guard#Policy>; <https://w3id.org/sparql-guard#agent> <${agent}>.`,
    );
    await assert.rejects(
      loadPolicySet({ policyFiles: [policy], ruleFiles: shippedRuleFiles() }),
      { message: /the agent IRI holds/ },
      name(char),
    );
    for (const args of [
      ['explain', '--agent', agent, '--query', 'ASK {}'],
      ['hash-key', '--agent', agent],
    ]) {
      const run = spawnSync(process.execPath, [CLI, ...args], { input: 'k', encoding: 'utf8' });
      assert.notEqual(run.status, 0, `${args[0]} ${name(char)}`);
      assert.match(run.stderr, /holds/, `${args[0]} ${name(char)}`);
    }
  }
});
