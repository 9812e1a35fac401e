// The principal index the policy worker builds and the serving thread searches: every name found under its own kind only, nothing else found.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PRINCIPAL_KINDS } from '../../src/policy/principal-index.js';
import { findPrincipal, indexPrincipals, principalName } from '../../src/policy/principal-index.js';

const AGENT = PRINCIPAL_KINDS.indexOf('agent');
const GROUP = PRINCIPAL_KINDS.indexOf('group');
const EVERYONE = PRINCIPAL_KINDS.indexOf('everyone');

/** An index of `names` with their kinds, each principal named by one policy of its own. */
function indexOf(entries: readonly (readonly [number, string])[]) {
  const kinds = Uint8Array.from(entries.map(([kind]) => kind));
  const starts = Int32Array.from(entries.map((_, at) => at).concat(entries.length));
  const indexes = Int32Array.from(entries.map((_, at) => at));
  return indexPrincipals(
    kinds,
    entries.map(([, name]) => name),
    starts,
    indexes,
  );
}

describe('principal index', () => {
  test('finds each of 20,000 agents and groups under its kind, and no near miss', () => {
    const entries: [number, string][] = [[EVERYONE, '']];
    for (let i = 0; i < 10_000; i += 1) entries.push([AGENT, `https://example.org/agents/${i}`], [GROUP, `project-${i}`]);
    const index = indexOf(entries);
    for (const [at, [kind, name]] of entries.entries()) {
      assert.equal(findPrincipal(index, kind, name), at, name);
      assert.equal(principalName(index, at), name);
    }
    for (const miss of [
      'https://example.org/agents/10000',
      'https://example.org/agents/1 ',
      'https://example.org/agents/',
      'HTTPS://example.org/agents/1',
    ]) {
      assert.equal(findPrincipal(index, AGENT, miss), -1, miss);
    }
    assert.equal(findPrincipal(index, GROUP, 'project-'), -1);
    assert.equal(findPrincipal(index, GROUP, 'project-10000'), -1);
  });

  test('an agent IRI and a group of the same text are two principals: neither answers for the other', () => {
    const name = 'https://example.org/agents/alice';
    const index = indexOf([[GROUP, name]]);
    assert.equal(findPrincipal(index, GROUP, name), 0);
    assert.equal(findPrincipal(index, AGENT, name), -1);
    assert.equal(findPrincipal(indexOf([[AGENT, 'ops']]), GROUP, 'ops'), -1);
  });

  test('the empty name of Everyone is not an agent or a group named ""', () => {
    const index = indexOf([[EVERYONE, '']]);
    assert.equal(findPrincipal(index, EVERYONE, ''), 0);
    assert.equal(findPrincipal(index, AGENT, ''), -1);
    assert.equal(findPrincipal(index, GROUP, ''), -1);
  });

  test('names outside ASCII, astral characters (surrogate pairs) and lone surrogates keep every code unit', () => {
    const names = ['équipe', 'チーム', 'team-\u{1F600}', 'team-\uD83D', 'team-\uDE00', 'a\u0000b'];
    const index = indexOf(names.map((name) => [GROUP, name] as const));
    for (const [at, name] of names.entries()) {
      assert.equal(findPrincipal(index, GROUP, name), at);
      assert.equal(principalName(index, at), name);
    }
    assert.equal(findPrincipal(index, GROUP, 'team-\uD83D\uDE01'), -1);
    assert.equal(findPrincipal(index, GROUP, 'equipe'), -1);
  });

  test('names within U+00FF take a byte per code unit, and are found and read back as well', () => {
    const narrow = indexOf([
      [GROUP, 'équipe'],
      [AGENT, 'https://example.org/ünïcode'],
    ]);
    assert.equal(narrow.units.BYTES_PER_ELEMENT, 1);
    assert.equal(findPrincipal(narrow, GROUP, 'équipe'), 0);
    assert.equal(principalName(narrow, 1), 'https://example.org/ünïcode');
    // U+01E9 stored in a byte would be 0xE9 (é): the wider name must not match it.
    assert.equal(findPrincipal(narrow, GROUP, '\u01e9quipe'), -1);
    assert.equal(indexOf([[GROUP, 'チーム']]).units.BYTES_PER_ELEMENT, 2);
  });

  test('an empty index finds nothing', () => {
    const index = indexOf([]);
    assert.equal(findPrincipal(index, AGENT, 'https://example.org/a'), -1);
    assert.equal(findPrincipal(index, EVERYONE, ''), -1);
  });

  test('each principal lists the policies naming it, in order of listing', () => {
    // Policy 0 names agents a and b, policy 1 names b, policy 2 names a.
    const index = indexPrincipals(
      Uint8Array.from([AGENT, AGENT]),
      ['a', 'b'],
      Int32Array.from([0, 2, 3, 4]),
      Int32Array.from([0, 1, 1, 0]),
    );
    const policiesOf = (at: number) => [...index.policies.subarray(index.policyStarts[at], index.policyStarts[at + 1])];
    assert.deepEqual(policiesOf(findPrincipal(index, AGENT, 'a')), [0, 2]);
    assert.deepEqual(policiesOf(findPrincipal(index, AGENT, 'b')), [0, 1]);
  });

  test('two loads of the same principals hash with different seeds', () => {
    const entries: [number, string][] = [[AGENT, 'https://example.org/a']];
    const seeds = new Set(Array.from({ length: 8 }, () => indexOf(entries).seed));
    assert.ok(seeds.size > 1);
  });
});
