// Differential test: the engines chosen per rule file (the forward chainer, copy rules, EYE) compile the same policy table, and refuse the same loads, as EYE running every rule file.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { principalKey } from '../../src/policy/principal-index.js';
import { createPolicyWorker } from '../../src/policy/load/create-policy-worker.js';
import { loadPolicySetWithStats, type LoadedPolicySet } from '../../src/policy/load/load-policy-set.js';
import type { Engine } from '../../src/policy/rules/reason-over-policies.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { generatePolicySet, organisationShape, type PolicySetShape } from '../helpers/generate-policy-set.js';

const example = (name: string) => resolve('policies/examples', name);
const rule = (name: string) => resolve('rules/examples', name);
const fixture = (...parts: string[]) => resolve('test/fixtures/policy', ...parts);
const EXAMPLE_RULES = [rule('group-hierarchy.n3'), rule('group-membership.n3'), rule('graph-collections.n3')];

/** The whole compiled table, as plain data: what grantFor reads, in order. */
function table({ set }: LoadedPolicySet) {
  return set.policies.map((policy) => ({
    iri: policy.iri,
    order: policy.order,
    principals: policy.principals.map(principalKey),
    graphs: policy.graphs,
    hidePaths: policy.hidePaths,
  }));
}

/** One worker for every load of this file, as a guard keeps one: EYE stays warm between loads. */
const worker = createPolicyWorker();
after(() => worker.close());

type Outcome = { ok: true; table: ReturnType<typeof table>; engines: Engine[] } | { ok: false; message: string };

async function outcome(policyFiles: string[], ruleFiles: string[], engine: 'auto' | 'eye'): Promise<Outcome> {
  try {
    const loaded = await loadPolicySetWithStats({ policyFiles, ruleFiles: [...shippedRuleFiles(), ...ruleFiles] }, { engine, worker });
    return { ok: true, table: table(loaded), engines: loaded.stats.stages.map((stage) => stage.engine) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** Loads with the chosen engines and with EYE alone; asserts the same table or the same error line, and returns the engines chosen. */
async function same(policyFiles: string[], ruleFiles: string[]): Promise<Outcome> {
  const chosen = await outcome(policyFiles, ruleFiles, 'auto');
  const eye = await outcome(policyFiles, ruleFiles, 'eye');
  if (eye.ok) assert.deepEqual(eye.engines, ['eye'], 'the reference run is EYE alone');
  if (chosen.ok && eye.ok) assert.deepEqual(chosen.table, eye.table);
  else assert.deepEqual(chosen.ok ? 'loaded' : chosen.message, eye.ok ? 'loaded' : eye.message);
  return chosen;
}

describe('The forward chainer and EYE compile the same policy table', () => {
  let folder = '';
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'sparql-guard-differential-'));
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('for the shipped examples, each alone and all together, without EYE', async () => {
    const cases: [string[], string[]][] = [
      [[example('group-hierarchy.ttl')], [rule('group-hierarchy.n3'), example('group-hierarchy.n3')]],
      [[example('group-hierarchy.ttl')], [rule('group-hierarchy.n3'), example('group-hierarchy.n3'), fixture('rules', 'group-cycle.n3')]],
      [[example('group-membership.ttl')], [rule('group-membership.n3')]],
      [[example('graph-collections.ttl')], [rule('graph-collections.n3')]],
      [
        [example('group-membership.ttl'), example('group-hierarchy.ttl'), example('graph-collections.ttl'), fixture('trainee-member.ttl')],
        [...EXAMPLE_RULES, example('group-hierarchy.n3')],
      ],
      [[resolve('policies/demo.ttl')], []],
    ];
    for (const [policyFiles, ruleFiles] of cases) {
      const chosen = await same(policyFiles, ruleFiles);
      assert.ok(chosen.ok && !chosen.engines.includes('eye'), `${ruleFiles.join(', ')}: ${JSON.stringify(chosen)}`);
    }
  });

  for (const [n, seed, cycles] of [
    [10, 1, 1],
    [60, 2, 2],
    [200, 3, 3],
    [500, 4, 0],
  ] as const) {
    it(`for a generated organisation of ${n} policies (seed ${seed}, ${cycles} cycle(s) in the hierarchy)`, async () => {
      const shape: PolicySetShape = { ...organisationShape(n, seed), groups: Math.max(2, Math.round(n / 8)), cycles, memberShare: 0.3 };
      const { policyTurtle, hierarchyN3 } = generatePolicySet(shape);
      const policies = join(folder, `org-${n}.ttl`);
      const hierarchy = join(folder, `org-${n}.n3`);
      await writeFile(policies, policyTurtle);
      await writeFile(hierarchy, hierarchyN3);
      const chosen = await same([policies], [...EXAMPLE_RULES, hierarchy]);
      assert.ok(chosen.ok, JSON.stringify(chosen));
      assert.deepEqual(chosen.engines, ['chain']);
      // The rules did derive: some policy applies beyond its own group and agent.
      assert.ok(chosen.table.some((policy) => policy.principals.length > 2));
    });
  }

  it('when a premise constant is produced only by a later rule variable (N3.Reasoner in one pass missed it)', async () => {
    const chosen = await same(
      [fixture('differential', 'open-to.ttl')],
      [fixture('differential', 'open-to-grants.n3'), fixture('differential', 'open-to-applies.n3')],
    );
    assert.ok(chosen.ok);
    assert.deepEqual(chosen.engines, ['chain']);
    assert.deepEqual(chosen.table.find((policy) => policy.iri === 'https://example.org/open')?.graphs, [
      'https://example.org/open-graph',
      'https://example.org/everyone-extra',
    ]);
  });

  it('for a three-premise join with two conclusions, a variable predicate, and a derived triple meeting a constant premise', async () => {
    const chosen = await same([fixture('differential', 'joins.ttl')], [fixture('differential', 'joins.n3')]);
    assert.ok(chosen.ok, JSON.stringify(chosen));
    assert.deepEqual(chosen.engines, ['chain']);
    const hr = chosen.table.find((policy) => policy.iri === 'https://example.org/hr-steward');
    assert.deepEqual(hr?.principals, [
      'group "hr"',
      '<https://example.org/ann>',
      '<https://example.org/auditor>',
      '<https://example.org/bob>',
    ]);
    assert.deepEqual(hr?.graphs, ['https://example.org/audit-log', 'https://example.org/reviews', 'https://example.org/salaries']);
  });

  it('for guard:appliesTo stated in the Turtle, with the shipped rules alone', async () => {
    const chosen = await same([fixture('differential', 'stated-applies.ttl')], []);
    assert.ok(chosen.ok);
    assert.deepEqual(chosen.engines, ['copy']);
    assert.deepEqual(chosen.table[0]?.principals, ['group "a"', 'group "b"']);
  });

  it('when an EYE rule file feeds the fragment files (those then run in EYE too)', async () => {
    const ruleFiles = [
      fixture('rules', 'team-lead-agent-eye.n3'),
      fixture('rules', 'typed-policies.n3'),
      fixture('rules', 'grants-copy.n3'),
    ];
    const chosen = await same([fixture('copy-rules.ttl')], ruleFiles);
    assert.ok(chosen.ok, JSON.stringify(chosen));
    assert.deepEqual(chosen.engines, ['chain', 'eye']);
    // The lead EYE derives is an agent of the policy: the copy rules ran after EYE's rule, in EYE.
    const viaTeam = chosen.table.find((policy) => policy.iri === 'https://example.org/via-team');
    assert.ok(viaTeam?.principals.includes('<https://example.org/carol>'), JSON.stringify(viaTeam));
    const loaded = await loadPolicySetWithStats({
      policyFiles: [fixture('copy-rules.ttl')],
      ruleFiles: [...shippedRuleFiles(), ...ruleFiles],
    });
    const engineOf = (file: string) => loaded.stats.ruleRuns.find((run) => run.file === file)?.engine;
    assert.equal(engineOf(shippedRuleFiles()[0] ?? ''), 'eye');
    assert.equal(engineOf(fixture('rules', 'team-lead-agent-eye.n3')), 'eye');
    // typed-policies reads rdf:type, which no EYE file derives: it stays in the forward chainer.
    assert.equal(engineOf(fixture('rules', 'typed-policies.n3')), 'chain');
  });
});

describe('The forward chainer and EYE refuse the same loads with the same line', () => {
  const cases: [string, string[], string[]][] = [
    ['a derived graph that is not an IRI', [fixture('targeting.ttl')], [fixture('rules', 'derives-literal-graph.n3')]],
    ['a derived graph the rewriter reserves', [fixture('targeting.ttl')], [fixture('rules', 'derives-reserved-graph.n3')]],
    ['a derived graph with dot segments', [fixture('targeting.ttl')], [fixture('rules', 'derives-dot-segment-graph.n3')]],
    [
      'a derivation about a resource that is not a declared policy',
      [fixture('targeting.ttl')],
      [fixture('rules', 'derives-for-non-policy.n3')],
    ],
    [
      'a derived graph that is a blank node of the data',
      [fixture('differential', 'blank-collection-graph.ttl')],
      [rule('graph-collections.n3')],
    ],
    ['a stated guard:appliesTo about a resource that is not a policy', [fixture('differential', 'stated-for-non-policy.ttl')], []],
  ];
  for (const [name, policyFiles, ruleFiles] of cases) {
    it(name, async () => {
      const chosen = await same(policyFiles, ruleFiles);
      assert.equal(chosen.ok, false, `${name} must not load`);
    });
  }
});
