// Columns and row rules at load: what a policy file may state (guard:readPath, guard:rowPattern, guard:rowClass, guard:rowData) and the one-line refusals.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { grantFor } from '../../src/policy/grant.js';
import { loadPolicies } from '../helpers/load-policies.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';

const PREFIXES =
  '@prefix guard: <https://w3id.org/sparql-guard#>. @prefix ex: <https://example.org/>. @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>.\n';
const folder = mkdtempSync(join(tmpdir(), 'row-rules-'));
after(() => rmSync(folder, { recursive: true, force: true }));

let files = 0;
async function load(policy: string) {
  const file = join(folder, `p${files++}.ttl`);
  writeFileSync(file, `${PREFIXES}ex:p a guard:Policy; guard:agent guard:Everyone; guard:readGraph ex:g; ${policy}.`);
  return { file, set: await loadPolicies({ policyFiles: [file], ruleFiles: shippedRuleFiles() }) };
}

describe('row rules and columns at load', () => {
  it('reads readPath, a row pattern with the file prefixes and VALUES, rowClass and rowData', async () => {
    const { set } = await load(
      'guard:readPath ex:name, rdf:type, ex:name; guard:rowPattern "?this ex:project ?p . ?p ex:member ?agent VALUES ?s { ex:Open \\"on\\" UNDEF }"; guard:rowData ex:m, ex:n',
    );
    const [policy] = set.policies;
    assert.deepEqual(policy?.readPaths, ['http://www.w3.org/1999/02/22-rdf-syntax-ns#type', 'https://example.org/name']);
    assert.deepEqual(policy?.rowRule?.data, ['https://example.org/m', 'https://example.org/n']);
    assert.deepEqual(
      policy?.rowRule?.triples.map(({ subject, predicate, object }) => [subject.value, predicate.value, object.value]),
      [
        ['this', 'https://example.org/project', 'p'],
        ['p', 'https://example.org/member', 'agent'],
      ],
    );
    assert.deepEqual(policy?.rowRule?.values, [
      {
        variables: ['s'],
        rows: [
          [{ termType: 'NamedNode', value: 'https://example.org/Open' }],
          [{ termType: 'Literal', value: 'on', language: '', datatype: 'http://www.w3.org/2001/XMLSchema#string' }],
          [undefined],
        ],
      },
    ]);
    const grant = grantFor(set, { agent: 'https://example.org/a', groups: [], authenticated: true });
    assert.equal(grant?.views?.get('https://example.org/g')?.rows.length, 1);
    assert.equal(grant?.hiddenByGraph.size, 0);
  });

  it('VALUES holds literals as SPARQL writes them: strings in either quotes, with a language or a datatype, numbers, booleans', async () => {
    const { set } = await load(
      `guard:rowPattern "?this ex:level ?l VALUES ?l { 1 -2 +3.5 .5 1e3 2.5E-1 true false 'o\\"k' \\"b\\"@en-GB 'c'^^ex:t \\"d\\"^^<https://example.org/u> }"`,
    );
    const xsd = 'http://www.w3.org/2001/XMLSchema#';
    const literal = (value: string, datatype: string, language = '') => [{ termType: 'Literal', value, language, datatype }];
    assert.deepEqual(set.policies[0]?.rowRule?.values[0]?.rows, [
      literal('1', `${xsd}integer`),
      literal('-2', `${xsd}integer`),
      literal('+3.5', `${xsd}decimal`),
      literal('.5', `${xsd}decimal`),
      literal('1e3', `${xsd}double`),
      literal('2.5E-1', `${xsd}double`),
      literal('true', `${xsd}boolean`),
      literal('false', `${xsd}boolean`),
      literal('o"k', `${xsd}string`),
      literal('b', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString', 'en-gb'),
      literal('c', 'https://example.org/t'),
      literal('d', 'https://example.org/u'),
    ]);
  });

  it("takes the '.' SPARQL allows after triples, around VALUES and at the end, and triples on both sides of VALUES", async () => {
    const triples = async (pattern: string) =>
      (await load(`guard:rowPattern "${pattern}"`)).set.policies[0]?.rowRule?.triples.map(({ subject, predicate, object }) =>
        [subject, predicate, object].map((term) => term.value).join(' '),
      );
    assert.deepEqual(await triples('?this a ex:C .'), ['this http://www.w3.org/1999/02/22-rdf-syntax-ns#type https://example.org/C']);
    assert.deepEqual(await triples('?this ex:b ?b . VALUES ?b { 1 2 }'), ['this https://example.org/b b']);
    assert.deepEqual(await triples('VALUES ?b { 1 } . ?this ex:b ?b . # the budget'), ['this https://example.org/b b']);
    assert.deepEqual(await triples('?a ex:p ?b VALUES ?b { ex:x } ?this ex:q ?a'), [
      'a https://example.org/p b',
      'this https://example.org/q a',
    ]);
    assert.deepEqual(await triples('?this ex:p \\"a.\\" .'), ['this https://example.org/p a.']);
  });

  it('rowClass is the pattern ?this a <C>', async () => {
    const { set } = await load('guard:rowClass ex:Public');
    assert.equal(set.policies[0]?.rowRule?.source, '?this a <https://example.org/Public>');
    assert.equal(set.policies[0]?.rowRule?.triples[0]?.predicate.value, 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type');
  });

  it('a policy without a restriction lifts it: the graph is then read as before', async () => {
    const file = join(folder, 'lift.ttl');
    writeFileSync(
      file,
      `${PREFIXES}ex:p a guard:Policy; guard:agent guard:Everyone; guard:readGraph ex:g; guard:rowClass ex:Public; guard:readPath ex:name.
       ex:q a guard:Policy; guard:agent guard:Everyone; guard:readGraph ex:g; guard:hidePath ex:salary.`,
    );
    const set = await loadPolicies({ policyFiles: [file], ruleFiles: shippedRuleFiles() });
    const grant = grantFor(set, { agent: 'https://example.org/a', groups: [], authenticated: true });
    // ex:q shows every column of every row but salary: the row rule adds nothing, salary stays hidden.
    assert.equal(grant?.views?.get('https://example.org/g'), undefined);
    assert.deepEqual([...(grant?.hiddenByGraph.get('https://example.org/g') ?? [])], ['https://example.org/salary']);
  });

  it('reads past comments and inside strings and IRIs: no keyword, no VALUES block, no N3 word there', async () => {
    const { set } = await load(
      'guard:rowPattern "?this ex:is ?has ; ex:p \\"a = b => c, is it VALUES ?has { ex:x }\\" ; ex:of <https://example.org/is#=> ; ex:a.of ex:b.is # this is = VALUES ?has { ex:y }\\n"',
    );
    const rule = set.policies[0]?.rowRule;
    assert.deepEqual(rule?.values, []);
    assert.deepEqual(
      rule?.triples.map(({ predicate, object }) => [predicate.value, object.value]),
      [
        ['https://example.org/is', 'has'],
        ['https://example.org/p', 'a = b => c, is it VALUES ?has { ex:x }'],
        ['https://example.org/of', 'https://example.org/is#='],
        ['https://example.org/a.of', 'https://example.org/b.is'],
      ],
    );
    // Long strings, over lines and holding quotes, are strings too.
    const long = await load(`guard:rowPattern '?this ex:p """a"b = c\\n# is VALUES ?x { ex:y }""" ; ex:q \\'\\'\\'d\\'e => f\\'\\'\\''`);
    assert.deepEqual(
      long.set.policies[0]?.rowRule?.triples.map(({ object }) => object.value),
      ['a"b = c\n# is VALUES ?x { ex:y }', "d'e => f"],
    );
  });

  it('reads a pattern with its file prefixes only where each is declared once (or again to the same IRI)', async () => {
    const write = (text: string) => {
      const file = join(folder, `p${files++}.ttl`);
      writeFileSync(file, text);
      return loadPolicies({ policyFiles: [file], ruleFiles: shippedRuleFiles() });
    };
    const policy = (pattern: string) =>
      `ex:p a guard:Policy; guard:agent guard:Everyone; guard:readGraph ex:g; guard:rowPattern "${pattern}".\n`;
    // ex: redefined after the policy: Turtle reads the pattern's ex: as the first, the pattern cannot know which.
    await assert.rejects(
      write(`${PREFIXES}${policy('?this ex:member ?agent')}@prefix ex: <https://other.example/>.\nex:q ex:r ex:s.\n`),
      /guard:rowPattern uses ex:, which its file declares more than once with different IRIs \(declare each prefix once, or write the IRI in full\)$/,
    );
    await assert.rejects(
      write(`${PREFIXES}@prefix ex: <https://other.example/>.\n${policy('?this ex:member ?agent VALUES ?agent { ex:a }')}`),
      /guard:rowPattern uses ex:, which its file declares more than once/,
    );
    // The same IRI again, or a prefix the pattern does not use declared twice: read as before.
    const same = await write(
      `${PREFIXES}@prefix ex: <https://example.org/>. @prefix o: <https://a/>. @prefix o: <https://b/>.\n${policy('?this ex:member ?agent')}`,
    );
    assert.equal(same.policies[0]?.rowRule?.triples[0]?.predicate.value, 'https://example.org/member');
    // A prefix named as a property of Object.prototype is a prefix like any other.
    const named = await write(`${PREFIXES}@prefix constructor: <https://c.example/>.\n${policy('?this constructor:member ?agent')}`);
    assert.equal(named.policies[0]?.rowRule?.triples[0]?.predicate.value, 'https://c.example/member');
  });

  it('refuses, in one line naming file and policy, what the rewriter could not hold to the rule', async () => {
    const wrong: [string, RegExp][] = [
      ['guard:readPath "name"', /guard:readPath must be an IRI/],
      ['guard:rowClass "C"', /guard:rowClass must be an IRI/],
      ['guard:rowPattern ex:x', /guard:rowPattern must be a plain string literal/],
      ['guard:rowPattern "?this ex:member ?agent"@en', /guard:rowPattern must be a plain string literal/],
      ['guard:rowPattern "?s ex:member ?agent"', /does not mention \?this/],
      ['guard:rowPattern "?this ex:member [ ex:name ?n ]"', /blank node/],
      ['guard:rowPattern "?this ex:a/ex:b ?x"', /blank node, a list or a path|not a basic graph pattern/],
      ['guard:rowPattern "?this ex:p ( 1 2 )"', /blank node, a list or a path/],
      ['guard:rowPattern "{ ?this ex:p ?o } => { ?this ex:q ?o }"', /formula|blank node|N3/],
      ['guard:rowPattern "?this nope:p ?o"', /not a basic graph pattern/],
      ['guard:rowPattern "?this ex:p \\"a\\\\\\\\u0022b\\""', /backslash/],
      ['guard:rowPattern "?this ex:p ?o } UNION { ?x ?y ?z"', /not a basic graph pattern/],
      ['guard:rowPattern "?this ex:p ?o FILTER(true)"', /not a basic graph pattern/],
      ['guard:rowPattern "VALUES ?this { ex:a } ?this ex:p ?o"', /binds \?this in VALUES/],
      ['guard:rowPattern "VALUES ?this { ex:a }"', /binds \?this in VALUES/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { ex:a _:b }"', /VALUES block holding/],
      ['guard:rowPattern "?this ex:p ?o . ."', /not a basic graph pattern/],
      // N3 reads a lone term and its '.' as no triple: it would load unread.
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { ex:a } <https://example.org/x>"', /a term that is no part of a triple pattern/],
      ['guard:rowPattern "?this ex:p ?o . ?x"', /a term that is no part of a triple pattern/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { ex:a } \\"x\\""', /a term that is no part of a triple pattern/],
      ['guard:rowPattern "# only a comment"', /no triple pattern/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { 1. }"', /VALUES block holding/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { \\"b\\"@ }"', /VALUES block holding/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { \\"b\\"^^nope:t }"', /undeclared prefix nope: in VALUES/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { \\"b\\"^^<t> }"', /relative IRI <t> in VALUES/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { 12ex:a }"', /VALUES block holding/],
      ['guard:rowPattern "?this ex:p ?a-b"', /not a basic graph pattern|variable/],
      ['guard:rowPattern "?this ex:p ?o"; guard:rowClass ex:C', /more than one row rule/],
      ['guard:rowData ex:m', /guard:rowData without a row rule/],
      ['guard:rowClass ex:C; guard:rowData <urn:x-sparql-guard:empty>', /reserved/],
      // The rewriter's own IRIs, in every place a policy names an IRI of its rows or columns.
      ['guard:readPath <urn:x-sparql-guard:empty>', /guard:readPath <urn:x-sparql-guard:empty> is reserved/],
      ['guard:hidePath <URN:X-SPARQL-GUARD:p>', /guard:hidePath <URN:X-SPARQL-GUARD:p> is reserved/],
      ['guard:rowClass <urn:x-sparql-guard:C>', /guard:rowClass <urn:x-sparql-guard:C> is reserved/],
      ['guard:rowPattern "?this <urn:x-sparql-guard:constant?p> ?o"', /names <urn:x-sparql-guard:constant\?p>, which is reserved/],
      ['guard:rowPattern "?this ex:p ?o VALUES ?o { <urn:x-sparql-guard:a> }"', /in VALUES, which is reserved/],
      // N3 beyond Turtle that reads as a triple nobody wrote as one.
      ['guard:rowPattern "?this ex:p ?o . ?o = ?this"', /writes =, which is N3/],
      ['guard:rowPattern "?this ex:p ?o . ?o => ?this"', /writes =>, which is N3/],
      ['guard:rowPattern "?this <= ?o"', /writes <=, which is N3/],
      ['guard:rowPattern "?this is ex:member of ?agent"', /writes is, which is N3/],
      ['guard:rowPattern "?this has ex:member ?agent"', /writes has, which is N3/],
      ['guard:rowPattern "?this ex:p ?o . ?o=?this"', /writes =, which is N3/],
      // N3's other spelling of an inverse (`is … of` above): `?this <- ex:member ?agent` loaded as `?agent ex:member ?this`.
      ['guard:rowPattern "?this <- ex:member ?agent"', /writes <-, which is N3/],
      ['guard:rowPattern "?this ex:p ?o ; <- ex:member ?agent"', /writes <-, which is N3/],
      // Declarations inside the pattern: N3 read them, so the pattern's ex: was another IRI than the file's, and a relative
      // IRI resolved against a base nobody checks.
      ['guard:rowPattern "@prefix ex: <https://example.org/other#> . ?this ex:member ?agent"', /declares @prefix/],
      ['guard:rowPattern "PREFIX ex: <https://example.org/other#> ?this ex:member ?agent"', /declares PREFIX/],
      ['guard:rowPattern "@base <https://example.org/> . ?this <member> ?agent"', /declares @base/],
      ['guard:rowPattern "BASE <https://example.org/> ?this <member> ?agent"', /declares BASE/],
      ['guard:rowPattern "@forAll ?x . ?this ex:member ?x"', /writes @forAll, which is N3/],
      // A long string holding a quote, read as short strings, would end early and hide the = after it.
      ['guard:rowPattern \'?this ex:p ?o . """x"y""" = ex:z ; ex:q "w"\'', /writes =, which is N3/],
      [`guard:rowPattern "?this ex:p ?o . '''x'y''' = ex:z ; ex:q 'w'"`, /writes =, which is N3/],
      // A relative IRI resolved against the file's path (not its @base) matched nothing: refused, as in VALUES.
      ['guard:rowPattern "?this <member> ?agent"', /has the relative IRI <member> \(write it in full, or with a prefix\)/],
      ['guard:rowPattern "?this <#member> ?agent"', /has the relative IRI <#member>/],
      // N3 binds an undeclared `:` to the base: a pattern's `:member` is an undeclared prefix.
      ['guard:rowPattern "?this :member ?agent"', /not a basic graph pattern: Undefined prefix ":"/],
      ['guard:rowclass ex:C', /did you mean guard:rowClass/],
      ['guard:readpath ex:C', /did you mean guard:readPath/],
    ];
    for (const [policy, pattern] of wrong) {
      await assert.rejects(load(policy), (error: Error) => {
        assert.match(error.message, pattern, policy);
        assert.ok(error.message.includes('.ttl'), error.message);
        if (!/did you mean/.test(error.message)) assert.match(error.message, /policy <https:\/\/example\.org\/p>/, error.message);
        assert.doesNotMatch(error.message, /\n/);
        return true;
      });
    }
  });
});
