// Loads real policy files through the real shipped rules in EYE (on the worker) and checks targeting, order and every refusal.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { loadPolicySet, loadPolicySetWithStats } from '../../src/policy/load/load-policy-set.js';
import { loadPolicies } from '../helpers/load-policies.js';
import { createPolicyWorker } from '../../src/policy/load/create-policy-worker.js';
import { PolicyLoadError } from '../../src/policy/policy-load-error.js';
import type { PolicySet } from '../../src/policy/policy-set.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';

const FIXTURES = resolve('test/fixtures/policy');
const EX = 'https://example.org/';
const fixture = (...parts: string[]) => join(FIXTURES, ...parts);
const load = (policyFiles: string[], extraRules: string[] = []) =>
  loadPolicies({ policyFiles, ruleFiles: [...shippedRuleFiles(), ...extraRules] });
const policy = (set: PolicySet, iri: string) => set.policies.find((p) => p.iri === iri);

/** Asserts the load fails with a PolicyLoadError whose one-line message matches. */
async function refuses(promise: Promise<unknown>, pattern: RegExp): Promise<PolicyLoadError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof PolicyLoadError, `expected PolicyLoadError, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.doesNotMatch(error.message, /[\r\n]/);
    return error;
  }
  assert.fail('the load succeeded');
}

describe('loadPolicySet: targeting derived by the shipped rules', () => {
  it('loads on a thread of its own (loadPolicySet) the set it loads on a shared worker', async () => {
    const sources = { policyFiles: [fixture('targeting.ttl')], ruleFiles: shippedRuleFiles() };
    const [own, shared] = await Promise.all([loadPolicySet(sources), loadPolicies(sources)]);
    assert.deepEqual(own.policies, shared.policies);
    assert.ok(own.policies.length > 3);
    await refuses(loadPolicySet({ ...sources, policyFiles: [fixture('absent.ttl')] }), /absent\.ttl/);
  });

  it('derives principals and graphs for agent, AuthenticatedAgent, Everyone and group policies', async () => {
    const set = await load([fixture('targeting.ttl')]);
    assert.deepEqual(policy(set, `${EX}everyone`)?.principals, [{ kind: 'everyone' }]);
    assert.deepEqual(policy(set, `${EX}authenticated`)?.principals, [{ kind: 'authenticated' }]);
    assert.deepEqual(policy(set, `${EX}alice`)?.principals, [{ kind: 'agent', agent: `${EX}alice` }]);
    assert.deepEqual(policy(set, `${EX}editors`)?.principals, [{ kind: 'group', group: 'editors' }]);
    assert.deepEqual(policy(set, `${EX}editors`)?.graphs, [`${EX}drafts`, `${EX}reviews`]);
    assert.deepEqual(policy(set, `${EX}two-ways`)?.principals, [
      { kind: 'agent', agent: `${EX}alice` },
      { kind: 'group', group: 'editors' },
    ]);
    assert.equal(policy(set, `${EX}everyone`)?.file, fixture('targeting.ttl'));
  });

  it('keeps a policy without guard:readGraph: it applies and grants nothing', async () => {
    const set = await load([fixture('targeting.ttl')]);
    assert.deepEqual(policy(set, `${EX}nothing-granted`)?.graphs, []);
    assert.deepEqual(policy(set, `${EX}nothing-granted`)?.principals, [{ kind: 'agent', agent: `${EX}bob` }]);
  });

  it('lists per principal the policies and graphs, for operator tools', async () => {
    const set = await load([fixture('targeting.ttl')]);
    const alice = set.principals.find((entry) => entry.label === `<${EX}alice>`);
    assert.deepEqual(
      alice?.policies.map((p) => p.iri),
      [`${EX}alice`, `${EX}two-ways`],
    );
    assert.deepEqual(alice?.graphs, [`${EX}alice-graph`, `${EX}shared`]);
    assert.deepEqual(
      set.principals.map((entry) => entry.label),
      ['Everyone', 'AuthenticatedAgent', `<${EX}alice>`, 'group "editors"', '<https://w3id.org/sparql-guard#Anonymous>', `<${EX}bob>`],
    );
  });

  it('lists policies in order of files, then of first appearance as a subject in each file', async () => {
    const set = await load([fixture('order-a.ttl'), fixture('order-b.ttl')]);
    assert.deepEqual(
      set.policies.map((p) => [p.iri.slice(EX.length), p.order]),
      [
        ['a2', 0],
        ['a1', 1],
        ['a3', 2],
        ['b1', 3],
        ['b0', 4],
      ],
    );
    // A policy continued in a later file keeps its first file and gains the later triples (RDF merge).
    assert.equal(policy(set, `${EX}a3`)?.file, fixture('order-a.ttl'));
    assert.deepEqual(policy(set, `${EX}a3`)?.graphs, [`${EX}g3`, `${EX}g5`]);
    const swapped = await load([fixture('order-b.ttl'), fixture('order-a.ttl')]);
    assert.deepEqual(
      swapped.policies.map((p) => p.iri.slice(EX.length)),
      ['b1', 'a3', 'b0', 'a2', 'a1'],
    );
  });

  it('gives every policy that names a principal the same principal object (the worker sends it once)', async () => {
    const set = await load([fixture('targeting.ttl')]);
    const alice = set.policies.flatMap((p) =>
      p.principals.filter((principal) => principal.kind === 'agent' && principal.agent === `${EX}alice`),
    );
    assert.equal(alice.length, 2);
    assert.equal(alice[0], alice[1]);
    assert.ok(Object.isFrozen(alice[0]));
  });

  it('returns a frozen set', async () => {
    const set = await load([fixture('targeting.ttl')]);
    assert.ok(Object.isFrozen(set) && Object.isFrozen(set.policies) && Object.isFrozen(set.policies[0]));
    assert.ok(Object.isFrozen(set.policies[0]?.graphs) && Object.isFrozen(set.lookup));
  });

  it('loads the demo policies', async () => {
    const set = await load([resolve('policies/demo.ttl')]);
    assert.deepEqual(
      set.policies.map((p) => [p.iri, p.graphs, p.hidePaths]),
      [
        [`${EX}policies/public`, [`${EX}graphs/public`], []],
        [`${EX}policies/staff`, [`${EX}graphs/people`], [`${EX}ns#salary`]],
        [`${EX}policies/hr`, [`${EX}graphs/people`, `${EX}graphs/hr`], []],
        [`${EX}policies/research`, [`${EX}graphs/research`], []],
        [`${EX}policies/projects`, [`${EX}graphs/projects`], []],
        [`${EX}policies/project-overview`, [`${EX}graphs/projects`], []],
      ],
    );
  });
});

describe('loadPolicySet: validation fails closed with one line naming file and policy', () => {
  const cases: [string, RegExp][] = [
    ['no-target.ttl', /policy <https:\/\/example\.org\/p>: has neither guard:agent nor guard:group$/],
    ['graph-literal.ttl', /policy <https:\/\/example\.org\/p>: guard:readGraph must be an IRI, found literal "https:\/\/example\.org\/g"$/],
    ['graph-blank.ttl', /policy <https:\/\/example\.org\/p>: guard:readGraph must be an IRI, found a blank node$/],
    ['graph-reserved.ttl', /policy <https:\/\/example\.org\/p>: guard:readGraph <URN:X-Sparql-Guard:empty> is reserved by the rewriter/],
    [
      'graph-store-alias.ttl',
      /policy <https:\/\/example\.org\/p>: guard:readGraph <urn:x-arq:UnionGraph> is a name Jena reads as other graphs of the store/,
    ],
    ['agent-literal.ttl', /policy <https:\/\/example\.org\/p>: guard:agent must be an IRI, found literal "https:\/\/example\.org\/alice"$/],
    ['group-iri.ttl', /policy <https:\/\/example\.org\/p>: guard:group must be a string literal, found <https:\/\/example\.org\/staff>$/],
    ['group-lang.ttl', /policy <https:\/\/example\.org\/p>: guard:group must be a plain string literal, found literal "staff"@en$/],
    ['group-empty.ttl', /policy <https:\/\/example\.org\/p>: guard:group must not be the empty string$/],
    [
      'graph-dot-segments.ttl',
      /policy <https:\/\/example\.org\/p>: guard:readGraph "https:\/\/example\.org\/g\/x\/\.\.\/secret" has dot segments/,
    ],
    [
      'graph-trailing-dot.ttl',
      /policy <https:\/\/example\.org\/p>: guard:readGraph "https:\/\/example\.org\/g\/public\/\." has dot segments/,
    ],
    [
      'hidepath-dot-segments.ttl',
      /policy <https:\/\/example\.org\/p>: guard:hidePath "https:\/\/example\.org\/x\/\.\/ns#salary" has dot segments/,
    ],
    ['hidepath-literal.ttl', /policy <https:\/\/example\.org\/p>: guard:hidePath must be an IRI, found literal "salary"$/],
    [
      'untyped.ttl',
      /: guard:Polcy \(as the class of <https:\/\/example\.org\/p>\) is not a term of the policy vocabulary \(did you mean guard:Policy\?\)$/,
    ],
    ['undeclared.ttl', /policy <https:\/\/example\.org\/p>: uses guard:agent but is not declared a guard:Policy$/],
    ['blank-policy.ttl', /: a guard:Policy must be named by an IRI, not a blank node$/],
    ['syntax-error.ttl', /: Turtle syntax error: .* on line 7$/],
    [
      'graph-relative.ttl',
      /policy <https:\/\/example\.org\/p>: guard:readGraph <file:\/\/\/.*\/invalid\/graphs\/public> is a relative IRI resolved against the policy file's path \(write the IRI in full, or give the file an @base\)$/,
    ],
  ];
  for (const [name, pattern] of cases) {
    it(`refuses ${name}`, async () => {
      const file = fixture('invalid', name);
      const error = await refuses(load([fixture('targeting.ttl'), file]), pattern);
      assert.ok(error.message.startsWith(`${file}: `), error.message);
      assert.equal(error.file, file);
    });
  }

  it('takes a relative IRI in a file with @base (the author chose its base), and a file: IRI written in full', async () => {
    const set = await load([fixture('relative-with-base.ttl')]);
    assert.deepEqual(set.policies[0]?.graphs, ['https://example.org/graphs/public']);
    const files = await load([fixture('file-iri-in-full.ttl')]);
    assert.deepEqual(files.policies[0]?.graphs, ['file:///data/w3c/two-nested-opt.ttl']);
  });

  it('refuses a policy file that does not exist', async () => {
    const file = fixture('missing.ttl');
    await refuses(load([file]), new RegExp(`^${file}: policy file cannot be read \\(ENOENT\\)$`));
  });

  it('refuses a rule file that does not exist', async () => {
    const file = fixture('rules', 'missing.n3');
    await refuses(load([fixture('targeting.ttl')], [file]), new RegExp(`^${file}: rule file cannot be read \\(ENOENT\\)$`));
  });

  it('refuses a policy or rule file that is not UTF-8, naming the line: a Latin-1 é would hide another IRI than the one meant', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-latin1-'));
    try {
      // Read as UTF-8 with U+FFFD in place of the byte, this policy loads and hides ex:caf\uFFFD, not ex:café.
      const policyFile = join(folder, 'latin1.ttl');
      const text = `@prefix guard: <https://w3id.org/sparql-guard#> .\n@prefix ex: <${EX}> .\nex:p a guard:Policy ; guard:agent guard:Everyone ;\n  guard:readGraph ex:g ; guard:hidePath ex:café .\n`;
      writeFileSync(policyFile, Buffer.from(text, 'latin1'));
      await refuses(load([policyFile]), new RegExp(`^${policyFile}: policy file is not valid UTF-8 \\(line 4; `));
      // The same text in UTF-8, with a byte order mark, loads and hides ex:café itself.
      const utf8File = join(folder, 'utf8.ttl');
      writeFileSync(utf8File, `\uFEFF${text}`);
      const set = await load([utf8File]);
      assert.deepEqual([...(policy(set, `${EX}p`)?.hidePaths ?? [])], [`${EX}café`]);
      const ruleFile = join(folder, 'latin1.n3');
      writeFileSync(ruleFile, Buffer.from(`# r\u00e8gle\n{ ?p <${EX}x> ?y } => { ?p <${EX}y> ?y } .\n`, 'latin1'));
      await refuses(load([utf8File], [ruleFile]), new RegExp(`^${ruleFile}: rule file is not valid UTF-8 \\(line 1; `));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('loadPolicySet: rule files', () => {
  it('refuses a rule file with an N3 syntax error, naming it', async () => {
    const file = fixture('rules', 'broken-syntax.n3');
    await refuses(
      load([fixture('targeting.ttl')], [file]),
      new RegExp(`^${file}: rule file fails in EYE: invalid_document\\(after_line\\(4\\)\\)$`),
    );
  });

  it('refuses a rule set that EYE stops on (inference fuse)', async () => {
    await refuses(
      load([fixture('targeting.ttl')], [fixture('rules', 'inference-fuse.n3')]),
      /\/inference-fuse\.n3: rule file fails in EYE: inference_fuse \(a rule concluded false\)$/,
    );
  });

  it('refuses a derived graph that is not an IRI', async () => {
    await refuses(
      load([fixture('targeting.ttl')], [fixture('rules', 'derives-literal-graph.n3')]),
      /targeting\.ttl: policy <https:\/\/example\.org\/[a-z-]+>: the rules derived guard:grantsGraph literal "not an IRI": a graph must be an IRI$/,
    );
  });

  it('refuses a derived graph that the rewriter reserves', async () => {
    await refuses(
      load([fixture('targeting.ttl')], [fixture('rules', 'derives-reserved-graph.n3')]),
      /guard:grantsGraph <urn:x-sparql-guard:empty>: the IRI is reserved/,
    );
  });

  it('refuses a derived graph with dot segments (a store may normalise it to another graph)', async () => {
    await refuses(
      load([fixture('targeting.ttl')], [fixture('rules', 'derives-dot-segment-graph.n3')]),
      /policy <https:\/\/example\.org\/[a-z-]+>: the rules derived guard:grantsGraph <https:\/\/example\.org\/g\/a\/\.\.\/b>: the IRI has dot segments/,
    );
  });

  it('refuses a derived principal that is neither an IRI nor a group name', async () => {
    await refuses(
      load([fixture('targeting.ttl')], [fixture('rules', 'derives-number-principal.n3')]),
      /guard:appliesTo literal "42"\^\^<http:\/\/www\.w3\.org\/2001\/XMLSchema#integer>: a principal must be/,
    );
  });

  it('refuses a derivation about a resource that is not a declared policy', async () => {
    await refuses(
      load([fixture('targeting.ttl')], [fixture('rules', 'derives-for-non-policy.n3')]),
      /^the rules derived guard:appliesTo for <https:\/\/example\.org\/not-a-policy>, which is not a declared guard:Policy$/,
    );
  });

  it('refuses a rule that derives a blank node or an unbound variable as principal or graph (EYE would derive it, the load drop it)', async () => {
    const blank = fixture('rules', 'derives-blank-principal.n3');
    await refuses(
      load([fixture('targeting.ttl')], [blank]),
      new RegExp(
        `^${blank}: rule 1 \\(\\{ \\?policy guard:group \\?group \\} => \\{ \\?policy guard:appliesTo \\[\\] \\}\\) derives guard:appliesTo a blank node, but a principal must be an agent IRI or a group name \\(bind it in the premise\\)$`,
      ),
    );
    const unbound = fixture('rules', 'derives-unbound-graph.n3');
    await refuses(
      load([fixture('targeting.ttl')], [unbound]),
      new RegExp(
        `^${unbound}: rule 1 \\(.*\\) derives guard:grantsGraph \\?graph, unbound by the premise \\(a blank node to N3\\), but a graph must be an IRI`,
      ),
    );
  });

  it('refuses a rule that declares a guard:Policy (the loader would ignore it)', async () => {
    const file = fixture('rules', 'derives-policy.n3');
    await refuses(
      load([fixture('targeting.ttl')], [file]),
      new RegExp(`^${file}: rule 1 \\(.*\\) declares a guard:Policy, which the loader never reads from rules`),
    );
  });

  it('hands every triple to EYE when a rule has a variable predicate', async () => {
    const set = await load([fixture('targeting.ttl')], [fixture('rules', 'variable-predicate.n3')]);
    assert.deepEqual(policy(set, `${EX}everyone`)?.graphs, [`${EX}public`, `${EX}via-variable`]);
    assert.deepEqual(policy(set, `${EX}alice`)?.graphs, [`${EX}alice-graph`]);
  });

  it('hands EYE the rdf:type triples when a rule reads them (they are left out otherwise)', async () => {
    const set = await load([fixture('targeting.ttl')], [fixture('rules', 'typed-policies.n3')]);
    for (const compiled of set.policies) {
      assert.ok(
        compiled.principals.some((p) => p.kind === 'group' && p.group === 'every-policy-group'),
        compiled.iri,
      );
    }
  });

  it('applies copy-only rule files without EYE, and gets what EYE gets', async () => {
    const direct = await load([fixture('targeting.ttl'), fixture('order-a.ttl')]);
    const throughEye = await load([fixture('targeting.ttl'), fixture('order-a.ttl')], [fixture('rules', 'no-op.n3')]);
    const view = (set: PolicySet) => set.policies.map((p) => [p.iri, p.principals, [...p.graphs].sort()]);
    assert.deepEqual(view(direct), view(throughEye));
  });

  it('chains copy rules: an operator copy rule into guard:readGraph grants the graph', async () => {
    const set = await load([fixture('copy-rules.ttl')], [fixture('rules', 'grants-copy.n3')]);
    assert.deepEqual(policy(set, `${EX}via-copy`)?.graphs, [`${EX}copied-graph`]);
    // Without the operator rule, ex:grants means nothing.
    assert.deepEqual(policy(await load([fixture('copy-rules.ttl')]), `${EX}via-copy`)?.graphs, []);
  });

  it('lets EYE apply the shipped rules to what operator rules derive', async () => {
    const set = await load([fixture('copy-rules.ttl')], [fixture('rules', 'team-lead-agent.n3'), fixture('rules', 'grants-copy.n3')]);
    const principals = policy(set, `${EX}via-team`)?.principals ?? [];
    assert.ok(
      principals.some((p) => p.kind === 'agent' && p.agent === `${EX}carol`),
      JSON.stringify(principals),
    );
    assert.ok(
      principals.some((p) => p.kind === 'group' && p.group === 'unused'),
      JSON.stringify(principals),
    );
    assert.deepEqual(policy(set, `${EX}via-copy`)?.graphs, [`${EX}copied-graph`]);
  });

  it('names the rule files of config rules when a load takes too long, and how to find the one at fault', async () => {
    const worker = createPolicyWorker({ loadTimeoutMs: 1500 });
    const file = fixture('rules', 'never-ends.n3');
    try {
      const sources = { policyFiles: [fixture('targeting.ttl')], ruleFiles: [...shippedRuleFiles(), file] };
      const error = await refuses(
        loadPolicySetWithStats(sources, { worker }),
        new RegExp(
          `^${file}: policy load took longer than 1500 ms and was abandoned: a rule of config rules that never ends is the likely cause \\(find it with sparql-guard check and the same configuration, leaving out one rule file at a time\\)$`,
        ),
      );
      assert.equal(error.file, file);
    } finally {
      await worker.close();
    }
  });

  it('loads again after a failed load (the worker survives or is replaced)', async () => {
    await assert.rejects(load([fixture('targeting.ttl')], [fixture('rules', 'broken-syntax.n3')]));
    const set = await load([fixture('targeting.ttl')]);
    assert.equal(set.policies.length, 7);
  });
});

describe('loadPolicySet: a refusal caused by a fact source names the source', () => {
  const projects = resolve('policies/examples/project-membership.ttl');
  const projectRules = resolve('rules/examples/project-membership.n3');
  const APOLLO = '<https://example.org/projects/apollo>';
  const MEMBER_OF = '<https://example.org/projects#memberOf>';
  const loadWithFacts = (nTriples: string) =>
    loadPolicySetWithStats(
      {
        policyFiles: [projects],
        ruleFiles: [...shippedRuleFiles(), projectRules],
        facts: [
          {
            name: 'projects',
            query: '',
            refreshMs: 1000,
            timeoutMs: 1000,
            maxTriples: 100,
            maxBytes: 1 << 20,
            maxStaleMs: 10_000,
            policies: false,
          },
        ],
      },
      {
        inputs: {
          facts: [
            { name: 'projects', contentType: 'application/n-triples', body: Buffer.from(nTriples), fetchMs: 1, fetchedAt: Date.now() },
          ],
        },
      },
    );

  it('blames facts:projects, not the policy file, for a blank node member the rules make a principal', async () => {
    const error = await refuses(
      loadWithFacts(`_:c ${MEMBER_OF} ${APOLLO} .\n`),
      /^facts:projects: policy <https:\/\/example\.org\/policies\/project-apollo>: the rules derived guard:appliesTo a blank node from this fact source's answer: a principal must be .* \(fix the data in the store, or the source's CONSTRUCT; the policy is in .*project-membership\.ttl\)$/,
    );
    assert.equal(error.file, 'facts:projects');
    assert.equal(error.policy, 'https://example.org/policies/project-apollo');
  });

  it('blames facts:projects for an agent IRI of its answer that no caller can be', async () => {
    await refuses(
      loadWithFacts(`<https://example.org/agents/a\u200bb> ${MEMBER_OF} ${APOLLO} .\n`),
      /^facts:projects: policy <[^>]+>: the rules derived guard:appliesTo <https:\/\/example\.org\/agents\/a\u200bb> from this fact source's answer: the agent IRI holds an invisible/,
    );
  });

  it('still loads the same facts when they are good', async () => {
    const { set } = await loadWithFacts(`<https://example.org/agents/ann> ${MEMBER_OF} ${APOLLO} .\n`);
    assert.ok(
      set.policies.some((p) =>
        p.principals.some((principal) => principal.kind === 'agent' && principal.agent === 'https://example.org/agents/ann'),
      ),
    );
  });
});
