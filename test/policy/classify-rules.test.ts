// Which rule files the forward chainer may run: the shipped and example files are inside its fragment, every construct EYE alone understands is not.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { classifyRules } from '../../src/policy/rules/classify-rules.js';

const PREFIXES =
  '@prefix guard: <https://w3id.org/sparql-guard#>. @prefix groups: <https://example.org/groups#>. @prefix coll: <https://example.org/graph-collections#>. @prefix ex: <https://example.org/>. @prefix log: <http://www.w3.org/2000/10/swap/log#>. @prefix math: <http://www.w3.org/2000/10/swap/math#>. @prefix string: <http://www.w3.org/2000/10/swap/string#>. @prefix list: <http://www.w3.org/2000/10/swap/list#>.\n';

describe('classifyRules', () => {
  it('puts the shipped copy rules and every example rule file inside the fragment', () => {
    for (const file of [
      'rules/policy-targets.n3',
      'rules/examples/group-hierarchy.n3',
      'rules/examples/group-membership.n3',
      'rules/examples/graph-collections.n3',
      'rules/examples/attribute-access.n3',
      'rules/examples/delegation.n3',
      'policies/examples/group-hierarchy.n3',
    ]) {
      const reading = classifyRules(readFileSync(resolve(file), 'utf8'));
      assert.equal(reading.fragment, true, `${file}: ${reading.fragment ? '' : reading.reason}`);
    }
  });

  it('reads backward rules (<=) turned around, and facts with literal subjects', () => {
    const reading = classifyRules(`${PREFIXES}{ ?p guard:appliesTo ?a } <= { ?p ex:for ?a }. "a" groups:subGroupOf "b".`);
    assert.ok(reading.fragment);
    assert.equal(reading.rules[0]?.conclusion[0]?.predicate.value, 'https://w3id.org/sparql-guard#appliesTo');
    assert.equal(reading.facts.length, 1);
  });

  const outside: [string, string, RegExp][] = [
    [
      'a log: built-in',
      '{ ?a ex:p ?g. ?g log:rawType log:Literal } => { ?a ex:q ?g }.',
      /built-in <http:\/\/www\.w3\.org\/2000\/10\/swap\/log#rawType>/,
    ],
    ['a math: built-in', '{ ?a ex:level ?l. ?l math:greaterThan 2 } => { ?a ex:q ?l }.', /built-in|typed literal/],
    [
      'a string: built-in',
      '{ ?a ex:name ?n. ?n string:startsWith "x" } => { ?a ex:q ?n }.',
      /built-in <http:\/\/www\.w3\.org\/2000\/10\/swap\/string#startsWith>/,
    ],
    ['a false conclusion', '{ ?a ex:p ?b } => false.', /concluding false/],
    ['a list in a rule', '{ ?a ex:p (?b ?c) } => { ?a ex:q ?b }.', /blank node, list or formula/],
    ['a blank node in a conclusion', '{ ?a ex:p ?b } => { ?a ex:q [ ex:r ?b ] }.', /blank node/],
    ['a number in a rule', '{ ?a ex:p 42 } => { ?a ex:q ex:x }.', /typed literal/],
    ['a number in a fact', 'ex:a ex:level 3.', /typed literal/],
    ['a conclusion variable the premise does not bind', '{ ?a ex:p ?b } => { ?a ex:q ?c }.', /\?c that the premise does not bind/],
    ['a quoted formula', 'ex:a ex:says { ex:b ex:c ex:d }.', /blank node|quoted formula/],
    ['a rule that makes rules', '{ ?a ex:p ?b } => { { ?a ex:q ?b } => { ?a ex:r ?b } }.', /blank node|built-in/],
    ['owl:sameAs (EYE equates the terms)', '{ ?a ex:p ?b } => { ?a = ?b }.', /sameAs/],
    ['a syntax error', '{ ?a ex:p ?b } => { ?a ex:q ?b .', /cannot parse/],
  ];
  for (const [name, text, reason] of outside) {
    it(`sends ${name} to EYE`, () => {
      const reading = classifyRules(`${PREFIXES}${text}`);
      assert.equal(reading.fragment, false);
      assert.match(reading.fragment ? '' : reading.reason, reason);
    });
  }
});
