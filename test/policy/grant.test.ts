// grantFor over sets loaded from real files through the real rules: who gets what, hidden paths, and a 1,000-policy set.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Caller } from '../../src/auth/caller.js';
import { ANONYMOUS_AGENT } from '../../src/vocabulary.js';
import { grantFor } from '../../src/policy/grant.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { loadPolicies } from '../helpers/load-policies.js';
import type { PolicySet } from '../../src/policy/policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';

const EX = 'https://example.org/';
const anonymous: Caller = { agent: ANONYMOUS_AGENT, groups: [], authenticated: false };
const user = (agent: string, ...groups: string[]): Caller => ({ agent, groups, authenticated: true });
const load = (...files: string[]) =>
  loadPolicies({ policyFiles: files.map((file) => resolve('test/fixtures/policy', file)), ruleFiles: shippedRuleFiles() });
const names = (grant: Grant | undefined) => grant?.policies.map((iri) => iri.slice(EX.length));
const hidden = (grant: Grant | undefined) =>
  Object.fromEntries(
    [...(grant?.hiddenByGraph ?? [])].map(([graph, paths]) => [graph.slice(EX.length), [...paths].map((p) => p.slice(EX.length)).sort()]),
  );

describe('grantFor: targeting', () => {
  let set: PolicySet;
  before(async () => {
    set = await load('targeting.ttl');
  });

  it('gives an anonymous caller only the Everyone policies and those naming guard:Anonymous', () => {
    const grant = grantFor(set, anonymous);
    assert.deepEqual(names(grant), ['everyone', 'anonymous-only']);
    assert.deepEqual([...(grant?.graphs ?? [])], [`${EX}public`, `${EX}welcome`]);
  });

  it('gives an anonymous caller nothing from group policies even if groups were passed', () => {
    assert.deepEqual(names(grantFor(set, { agent: ANONYMOUS_AGENT, groups: [], authenticated: false })), ['everyone', 'anonymous-only']);
  });

  it('gives any authenticated caller Everyone and AuthenticatedAgent policies', () => {
    assert.deepEqual(names(grantFor(set, user(`${EX}carol`))), ['everyone', 'authenticated']);
  });

  it('adds the policies of the agent IRI and of each group, in order of listing, without duplicates', () => {
    const grant = grantFor(set, user(`${EX}alice`, 'editors', 'editors', 'unknown'));
    assert.deepEqual(names(grant), ['everyone', 'authenticated', 'alice', 'editors', 'two-ways']);
    assert.deepEqual([...(grant?.graphs ?? [])].sort(), [
      `${EX}alice-graph`,
      `${EX}drafts`,
      `${EX}members`,
      `${EX}public`,
      `${EX}reviews`,
      `${EX}shared`,
    ]);
  });

  it('counts a policy that grants no graph as applying', () => {
    const grant = grantFor(set, user(`${EX}bob`));
    assert.deepEqual(names(grant), ['everyone', 'authenticated', 'nothing-granted']);
  });

  it('does not confuse an agent IRI with a special principal or a group name', () => {
    assert.deepEqual(names(grantFor(set, user('https://w3id.org/sparql-guard#Everyone'))), ['everyone', 'authenticated']);
    assert.deepEqual(names(grantFor(set, user('editors'))), ['everyone', 'authenticated']);
  });

  it('returns undefined when no policy applies', async () => {
    const none = await load('group-only.ttl');
    assert.equal(grantFor(none, anonymous), undefined);
    assert.equal(grantFor(none, user(`${EX}dave`)), undefined);
    assert.deepEqual(names(grantFor(none, user(`${EX}dave`, 'only'))), ['only-group']);
  });
});

describe('grantFor: hidden paths (docs/design/policy.md#vocabulary)', () => {
  let set: PolicySet;
  before(async () => {
    set = await load('hide-paths.ttl');
  });

  it('hides the paths of a single policy in the graphs it grants', () => {
    assert.deepEqual(hidden(grantFor(set, anonymous)), { G1: ['s', 't'], G2: ['s', 't'] });
  });

  it('intersects the hidePath sets of the policies granting the same graph', () => {
    assert.deepEqual(hidden(grantFor(set, user(`${EX}u`))), { G1: ['s'], G2: ['s', 't'] });
  });

  it('lifts every path when one policy grants the graph without hiding anything, and omits that graph', () => {
    const grant = grantFor(set, user(`${EX}u`, 'x'));
    assert.deepEqual(hidden(grant), { G1: ['s'] });
    assert.ok(grant?.graphs.has(`${EX}G2`));
  });

  it('keeps paths hidden only in the graphs of the policy that hides them', () => {
    assert.deepEqual(hidden(grantFor(set, user(`${EX}u`, 'y'))), { G1: ['s'], G2: ['s', 't'], G3: ['u'] });
  });
});

describe('grantFor: 1,000 policies', () => {
  let folder: string;
  let set: PolicySet;
  const N = 1000;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'sparql-guard-policy-'));
    // Policy i: agent i, group "team-(i mod 10)", graph i; every 100th is for everyone; split over two files.
    const lines = (from: number, to: number) => {
      const out = ['@prefix guard: <https://w3id.org/sparql-guard#>.', '@prefix ex: <https://example.org/>.'];
      for (let i = from; i < to; i += 1) {
        const target = i % 100 === 0 ? 'guard:agent guard:Everyone' : `guard:agent ex:agent-${i}; guard:group "team-${i % 10}"`;
        out.push(`ex:p-${i} a guard:Policy; ${target}; guard:readGraph ex:g-${i}.`);
      }
      return out.join('\n');
    };
    await writeFile(join(folder, 'one.ttl'), lines(0, N / 2));
    await writeFile(join(folder, 'two.ttl'), lines(N / 2, N));
    set = await loadPolicies({ policyFiles: [join(folder, 'one.ttl'), join(folder, 'two.ttl')], ruleFiles: shippedRuleFiles() });
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('loads every policy in order', () => {
    assert.equal(set.policies.length, N);
    assert.ok(set.policies.every((policy, index) => policy.iri === `${EX}p-${index}` && policy.order === index));
  });

  it('returns the right policies for an agent in a group', () => {
    const grant = grantFor(set, user(`${EX}agent-503`, 'team-7'));
    const expected = new Set<number>();
    for (let i = 0; i < N; i += 1) if (i % 100 === 0 || i % 10 === 7 || i === 503) expected.add(i);
    assert.deepEqual(
      grant?.policies,
      [...expected].sort((a, b) => a - b).map((i) => `${EX}p-${i}`),
    );
    assert.equal(grant?.graphs.size, expected.size);
    assert.ok(grant?.graphs.has(`${EX}g-503`) && grant.graphs.has(`${EX}g-997`) && !grant.graphs.has(`${EX}g-998`));
  });

  it('returns the Everyone policies for an anonymous caller', () => {
    assert.deepEqual(
      grantFor(set, anonymous)?.policies,
      Array.from({ length: 10 }, (_, k) => `${EX}p-${k * 100}`),
    );
  });
});
