// Terms that need escaping survive the trip into EYE as N3P and back as N3 (real EYE, shipped rules).

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Parser } from 'n3';
import { loadPolicySet } from '../../src/policy/load/load-policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { reasonOverPolicies } from '../../src/policy/rules/reason-over-policies.js';
import { writeN3p } from '../../src/policy/rules/write-n3p.js';

const EX = 'https://example.org/';

describe('writeN3p', () => {
  it('writes one Prolog fact per triple with quoted atoms', () => {
    const quads = new Parser().parse(`<${EX}s> <${EX}p> "a'b\\\\c"@en, <${EX}o'x>.`);
    assert.equal(
      writeN3p(quads),
      [
        `:- dynamic('<${EX}p>'/2).`,
        `'<${EX}p>'('<${EX}s>', literal('a\\'b\\\\\\\\c', lang('en'))).`,
        `'<${EX}p>'('<${EX}s>', '<${EX}o\\'x>').`,
        'end_of_file.',
        '',
      ].join('\n'),
    );
  });

  it('round-trips group names and IRIs with quotes, backslashes, control characters and non-ASCII through EYE', async () => {
    const set = await loadPolicySet({ policyFiles: [resolve('test/fixtures/policy/odd-literals.ttl')], ruleFiles: shippedRuleFiles() });
    const groups = set.policies.flatMap((policy) => policy.principals.flatMap((p) => (p.kind === 'group' ? [p.group] : [])));
    assert.deepEqual(groups, [`it's "quoted"`, 'back\\slash\nnew line\ttab', 'équipe 研究']);
    assert.deepEqual(set.policies[0]?.graphs, [`${EX}g?a='b'`]);
  });

  it('feeds EYE every triple, literals of any datatype and blank nodes included, when a rule reads any predicate', async () => {
    const quads = new Parser().parse(`<${EX}p> <${EX}note> "x"@en, 42, [ <${EX}x> "b" ]. <${EX}p> <${EX}agent> <${EX}a>.`);
    const rules = resolve('test/fixtures/policy/rules/variable-predicate.n3');
    const reasoning = await reasonOverPolicies(quads, [rules], 'eye');
    assert.equal(reasoning.inputTriples, quads.length);
  });
});
