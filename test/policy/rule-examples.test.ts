// The operator-rule examples shipped in rules/examples/ and policies/examples/, run through the real loader with the engines it picks and with EYE alone.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Caller } from '../../src/auth/caller.js';
import { grantFor } from '../../src/policy/grant.js';
import { createPolicyWorker } from '../../src/policy/load/create-policy-worker.js';
import { loadPolicySetWithStats } from '../../src/policy/load/load-policy-set.js';
import type { PolicySet } from '../../src/policy/policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';

const EX = 'https://example.org/';
/** One worker for every load of this file, as a guard keeps one: EYE stays warm between loads. */
const worker = createPolicyWorker();
after(() => worker.close());
const user = (agent: string, ...groups: string[]): Caller => ({ agent, groups, authenticated: true });
const example = (name: string) => resolve('policies/examples', name);
const rule = (name: string) => resolve('rules/examples', name);
const view = (set: PolicySet) => set.policies.map((policy) => [policy.iri, policy.principals, policy.graphs, policy.hidePaths]);
/** Loads with the engines the loader picks and with every file in EYE; both tables must be equal. */
async function load(policyFiles: string[], ruleFiles: string[]): Promise<PolicySet> {
  const sources = { policyFiles, ruleFiles: [...shippedRuleFiles(), ...ruleFiles] };
  const chosen = await loadPolicySetWithStats(sources, { worker });
  const eye = await loadPolicySetWithStats(sources, { engine: 'eye', worker });
  assert.deepEqual(view(chosen.set), view(eye.set));
  return chosen.set;
}
const names = (set: Awaited<ReturnType<typeof load>>, caller: Caller) => grantFor(set, caller)?.policies.map((iri) => iri.slice(EX.length));

describe('operator rule examples', () => {
  it('group hierarchy: a staff policy applies to interns and, transitively, trainees', async () => {
    const set = await load([example('group-hierarchy.ttl')], [rule('group-hierarchy.n3'), example('group-hierarchy.n3')]);
    assert.deepEqual(names(set, user(`${EX}x`, 'staff')), ['policies/staff-handbook']);
    assert.deepEqual(names(set, user(`${EX}x`, 'interns')), ['policies/staff-handbook', 'policies/intern-desk']);
    assert.deepEqual(names(set, user(`${EX}x`, 'trainees')), ['policies/staff-handbook', 'policies/intern-desk']);
    // Without the operator rule the hierarchy facts mean nothing.
    const plain = await load([example('group-hierarchy.ttl')], [example('group-hierarchy.n3')]);
    assert.deepEqual(names(plain, user(`${EX}x`, 'trainees')), undefined);
  });

  it('group hierarchy: a cycle terminates', async () => {
    const set = await load(
      [example('group-hierarchy.ttl')],
      [rule('group-hierarchy.n3'), example('group-hierarchy.n3'), resolve('test/fixtures/policy/rules/group-cycle.n3')],
    );
    assert.deepEqual(names(set, user(`${EX}x`, 'staff')), ['policies/staff-handbook', 'policies/intern-desk']);
  });

  it('group membership in RDF: alice gets the staff policies without the group in her credentials', async () => {
    const set = await load([example('group-membership.ttl')], [rule('group-membership.n3')]);
    assert.deepEqual(names(set, user(`${EX}agents/alice`)), ['policies/staff-wiki']);
    assert.equal(names(set, user(`${EX}agents/bob`)), undefined);
  });

  it('group membership combines with the hierarchy', async () => {
    const set = await load(
      [example('group-membership.ttl'), example('group-hierarchy.ttl'), resolve('test/fixtures/policy/trainee-member.ttl')],
      [rule('group-hierarchy.n3'), example('group-hierarchy.n3'), rule('group-membership.n3')],
    );
    assert.deepEqual(names(set, user(`${EX}agents/tom`)), ['policies/staff-wiki', 'policies/staff-handbook', 'policies/intern-desk']);
  });

  it('graph collections: a policy grants every graph of its collection, with its hidden paths', async () => {
    const set = await load([example('graph-collections.ttl')], [rule('graph-collections.n3')]);
    const grant = grantFor(set, user(`${EX}x`, 'research'));
    assert.deepEqual([...(grant?.graphs ?? [])].sort(), [`${EX}graphs/trial-1`, `${EX}graphs/trial-2`]);
    assert.deepEqual([...(grant?.hiddenByGraph.get(`${EX}graphs/trial-1`) ?? [])], [`${EX}ns#labNotes`]);
  });
  it('attribute-based access: department and clearance select the policy, owner department and classification the graphs', async () => {
    const set = await load([example('attribute-access.ttl')], [rule('attribute-access.n3')]);
    const graphs = (caller: Caller) => [...(grantFor(set, caller)?.graphs ?? [])].sort();
    assert.deepEqual(names(set, user(`${EX}agents/ann`)), ['policies/finance-secret']);
    assert.deepEqual(graphs(user(`${EX}agents/ann`)), [`${EX}graphs/budget`, `${EX}graphs/ledger`]);
    // A lower clearance reads only what its level covers.
    assert.deepEqual(names(set, user(`${EX}agents/bob`)), ['policies/finance-internal']);
    assert.deepEqual(graphs(user(`${EX}agents/bob`)), [`${EX}graphs/budget`]);
    // The right clearance in another department reads no finance graph.
    assert.equal(grantFor(set, user(`${EX}agents/cat`)), undefined);
    // An agent the data does not describe gets nothing, whatever it claims about itself but groups.
    assert.equal(grantFor(set, user(`${EX}agents/mallory`)), undefined);
  });

  it('delegation: an owner passes its own graphs to a delegate, never what it reads otherwise, and never along a chain', async () => {
    const set = await load([example('delegation.ttl')], [rule('delegation.n3')]);
    const graphs = (caller: Caller) => [...(grantFor(set, caller)?.graphs ?? [])].sort();
    assert.deepEqual(graphs(user(`${EX}agents/alice`, 'staff')), [`${EX}graphs/drafts`, `${EX}graphs/wiki`]);
    // bob reads alice's drafts (delegated) and his own notes, not the wiki alice reads as staff.
    assert.deepEqual(graphs(user(`${EX}agents/bob`)), [`${EX}graphs/drafts`, `${EX}graphs/notes`]);
    // carol is bob's delegate: bob's notes only; alice's drafts do not pass along the chain.
    assert.deepEqual(graphs(user(`${EX}agents/carol`)), [`${EX}graphs/notes`]);
    assert.deepEqual(names(set, user(`${EX}agents/carol`)), ['policies/bob-own']);
  });
});
