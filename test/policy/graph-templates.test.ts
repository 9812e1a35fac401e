// Proves guard:readGraphTemplate at load and in grants: only simple expansion, every value percent-encoded, refusals in one line.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Caller } from '../../src/auth/caller.js';
import { compileGraphTemplate, TemplateValueError } from '../../src/policy/compile-graph-template.js';
import { grantFor, restrictionsIn } from '../../src/policy/grant.js';
import { loadPolicies } from '../helpers/load-policies.js';
import { PolicyLoadError } from '../../src/policy/policy-load-error.js';
import { shippedRuleFiles } from '../../src/policy/rules/shipped-rule-files.js';
import { createPolicyHolder } from '../../src/server/policy-holder.js';
import { GuardError } from '../../src/guard-error.js';
import { ANONYMOUS_AGENT } from '../../src/vocabulary.js';

const POLICIES = resolve('test/fixtures/policy/graph-templates/policies.ttl');
const D = 'https://data.example.org/';
const ID = 'https://id.example.org/users/';
const load = (file: string) => loadPolicies({ policyFiles: [file], ruleFiles: shippedRuleFiles() });
const jwtCaller = (sub: string, claims: Record<string, unknown> = {}, groups: string[] = []): Caller => ({
  agent: ID + sub,
  groups,
  authenticated: true,
  claims: new Map(Object.entries({ sub, ...claims }).map(([name, value]) => [name, typeof value === 'string' ? value : null])),
});
const sorted = (graphs: Iterable<string> | undefined) => [...(graphs ?? [])].sort();

describe('graph templates at load', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-graph-templates-'));
  after(() => rmSync(folder, { recursive: true, force: true }));
  const cases: [string, string, RegExp][] = [
    ['reserved expansion', '"https://d.example.org/{+claim.path}"', /only \{agent\}, \{group\} and \{claim\.NAME\}/],
    ['fragment expansion', '"https://d.example.org/{#agent}"', /without operator or modifier/],
    ['path expansion', '"https://d.example.org{/agent}"', /without operator or modifier/],
    ['prefix modifier', '"https://d.example.org/{agent:3}"', /without operator or modifier/],
    ['explode modifier', '"https://d.example.org/{group*}"', /without operator or modifier/],
    ['two variables in one expression', '"https://d.example.org/{agent,group}"', /one per pair of braces/],
    ['an unknown variable', '"https://d.example.org/{user}"', /only \{agent\}/],
    ['an unclosed expression', '"https://d.example.org/{agent"', /a \{ without its \}/],
    ['a stray brace', '"https://d.example.org/}{agent}"', /a \} without its \{/],
    ['no variable', '"https://d.example.org/fixed"', /no \{variable\}.*guard:readGraph/],
    ['no scheme before the variable', '"{claim.iss}/graph"', /begin with a scheme/],
    ['a space in the literal text', '"https://d.example.org/my graph/{agent}"', /not a URI character/],
    ['non-ASCII literal text', '"https://d.example.org/ü/{agent}"', /not a URI character/],
    ['a dot segment', '"https://d.example.org/a/../{agent}"', /dot segments/],
    ['a reserved IRI', '"urn:x-sparql-guard:{agent}"', /reserved by the rewriter/],
    ['an IRI instead of a string', '<https://d.example.org/x>', /must be a plain string literal/],
    ['a language-tagged string', '"https://d.example.org/{agent}"@en', /must be a plain string literal/],
    // agent .../a with group bc and agent .../ab with group c gave one graph
    ['two variables side by side', '"https://d.example.org/{agent}{group}/"', /no reserved character between them/],
    ['two variables apart by unreserved text', '"https://d.example.org/{group}-{claim.sub}/"', /no reserved character between them/],
    ['two variables apart by a %-escape', '"https://d.example.org/{group}%2F{claim.sub}/"', /no reserved character between them/],
    ['a very long template', `"https://d.example.org/${'x'.repeat(2100)}{agent}"`, /longer than 1800/],
  ];
  for (const [name, object, reason] of cases) {
    it(`refuses ${name}, naming the file and the policy`, async () => {
      const file = join(folder, `${name.replace(/\W+/g, '-')}.ttl`);
      writeFileSync(
        file,
        `@prefix guard: <https://w3id.org/sparql-guard#> .\n<https://example.org/p> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraphTemplate ${object} .\n`,
      );
      await assert.rejects(load(file), (error: unknown) => {
        assert.ok(error instanceof PolicyLoadError, String(error));
        assert.ok(error.message.includes(file), error.message);
        assert.ok(error.message.includes('policy <https://example.org/p>'), error.message);
        assert.match(error.message, /guard:readGraphTemplate/);
        assert.match(error.message, reason);
        assert.doesNotMatch(error.message, /\n/);
        return true;
      });
    });
  }

  it('keeps the templates of each policy, compiled', async () => {
    const set = await load(POLICIES);
    const perUser = set.policies.find((policy) => policy.iri === 'http://example.org/policies/perUser');
    assert.deepEqual(
      perUser?.graphTemplates.map((template) => template.text),
      [`${D}users/{claim.sub}/`, `${D}tenants/{claim.tenant}/graph`],
    );
    assert.deepEqual(set.lookup.templateClaims, ['sub', 'tenant']);
    assert.equal(set.lookup.baseTemplates, true);
  });
});

describe('graph templates in grants', async () => {
  const set = await load(POLICIES);

  it('gives each caller the graphs its identity names, and hides paths in them as the policy says', () => {
    const grant = grantFor(set, jwtCaller('alice', { tenant: 'acme' }, ['staff', 'admins']));
    assert.deepEqual(sorted(grant?.graphs), [
      `${D}agents/https%3A%2F%2Fid.example.org%2Fusers%2Falice`,
      `${D}groups/admins/`,
      `${D}groups/staff/`,
      `${D}public`,
      `${D}tenants/acme/graph`,
      `${D}users/alice/`,
    ]);
    assert.deepEqual(
      grant?.templateGraphs,
      sorted(grant?.graphs).filter((graph) => graph !== `${D}public`),
    );
    assert.deepEqual(sorted(grant?.hiddenByGraph.get(`${D}users/alice/`)), ['http://example.org/ns#secretNote']);
    assert.equal(grant?.hiddenByGraph.get(`${D}groups/staff/`), undefined);
    assert.equal(grant?.limits?.resultLimit, 50);
  });

  it('percent-encodes every value so it stays in its place', () => {
    const cases: [string, string][] = [
      ['a/b', `${D}users/a%2Fb/`],
      ['%2F', `${D}users/%252F/`],
      ['alice/../bob', `${D}users/alice%2F..%2Fbob/`],
      ['#frag', `${D}users/%23frag/`],
      ['q?x=1', `${D}users/q%3Fx%3D1/`],
      ['a>b', `${D}users/a%3Eb/`],
      ['a b', `${D}users/a%20b/`],
      ['ümit', `${D}users/%C3%BCmit/`],
      ['...', `${D}users/.../`],
      ['a\u0000b', `${D}users/a%00b/`],
    ];
    for (const [sub, graph] of cases) {
      const grant = grantFor(set, jwtCaller(sub));
      assert.ok(grant?.graphs.has(graph), `${JSON.stringify(sub)} -> ${graph}: ${sorted(grant?.graphs).join(' ')}`);
      assert.equal(grant?.templateGraphs?.filter((iri) => iri.startsWith(`${D}users/`)).length, 1);
    }
  });

  it('names no graph for a missing or empty claim, and none for the anonymous caller', () => {
    const missing = grantFor(set, jwtCaller('dave'));
    assert.ok(!sorted(missing?.graphs).some((graph) => graph.startsWith(`${D}tenants/`)));
    const empty = grantFor(set, jwtCaller('dave', { tenant: '' }));
    assert.ok(!empty?.graphs.has(`${D}tenants//graph`));
    const anonymous = grantFor(set, { agent: ANONYMOUS_AGENT, groups: [], authenticated: false });
    assert.deepEqual(sorted(anonymous?.graphs), [`${D}public`]);
    assert.equal(anonymous?.templateGraphs, undefined);
  });

  it('refuses a value that cannot make a graph, in one line that repeats no value', () => {
    const refused: [string, Caller, RegExp][] = [
      ['a dot segment', jwtCaller('..'), /dot segments/],
      ['a single dot', jwtCaller('.'), /dot segments/],
      ['an array claim', jwtCaller('erin', { tenant: ['acme', 'globex'] }), /tenant claim.*is not a string/],
      ['a number claim', jwtCaller('erin', { tenant: 5 }), /tenant claim.*is not a string/],
      ['an object claim', jwtCaller('erin', { tenant: { name: 'acme' } }), /tenant claim.*is not a string/],
      ['an unpaired surrogate', jwtCaller('x\ud800y'), /cannot encode/],
      ['a very long value', jwtCaller('x'.repeat(3000)), /longer than 1800/],
      ['a dot-segment group', jwtCaller('erin', {}, ['..']), /dot segments/],
    ];
    const holder = createPolicyHolder();
    holder.replace(set);
    for (const [name, caller, reason] of refused) {
      assert.throws(
        () => grantFor(set, caller),
        (error: unknown) => error instanceof TemplateValueError && reason.test(error.message),
        name,
      );
      assert.throws(
        () => holder.grant(caller),
        (error: unknown) => {
          assert.ok(error instanceof GuardError, name);
          assert.equal(error.status, 403);
          assert.match(error.message, reason);
          assert.doesNotMatch(error.message, /\n|acme|erin|xxxx/);
          return true;
        },
        name,
      );
    }
  });

  it('gives a graph another caller also gets only when the template or a policy says so', () => {
    // bob's claims can be spelled to look like alice's graph: each spelling stays in bob's place.
    for (const sub of ['alice/', 'alice%2F', '../alice', 'alice/x', '%61lice']) {
      const grant = grantFor(set, jwtCaller(sub));
      assert.ok(!grant?.graphs.has(`${D}users/alice/`), sub);
      assert.ok(!grant?.graphs.has(`${D}users/alice/x/`), sub);
    }
    // A tenant claim cannot climb into the users' graphs.
    assert.ok(!grantFor(set, jwtCaller('erin', { tenant: '../../users/alice' }))?.graphs.has(`${D}users/alice/`));
    // Two callers with the same tenant share its graph: that is what the template says.
    assert.ok(grantFor(set, jwtCaller('erin', { tenant: 'acme' }))?.graphs.has(`${D}tenants/acme/graph`));
    // bob reads alice's graph because a policy names it, and his own from the template.
    const bob = grantFor(set, { ...jwtCaller('bob'), agent: `${ID}bob` });
    assert.ok(bob?.graphs.has(`${D}users/alice/`));
    assert.ok(bob?.graphs.has(`${D}users/bob/`));
    // Only the template graph is reported as coming from a template (alice's is named by a policy).
    assert.ok(!bob?.templateGraphs?.includes(`${D}users/alice/`));
  });

  it('remembers grants by identity in the holder, so a new Caller object gets the same grant object', () => {
    const holder = createPolicyHolder();
    holder.replace(set);
    const first = holder.grant(jwtCaller('alice', { tenant: 'acme' }));
    assert.equal(holder.grant(jwtCaller('alice', { tenant: 'acme' })), first);
    // A claim no template reads does not split the cache; one a template reads does.
    assert.equal(holder.grant(jwtCaller('alice', { tenant: 'acme', email: 'a@example.org' })), first);
    assert.notEqual(holder.grant(jwtCaller('alice', { tenant: 'globex' })), first);
    // A missing claim and a claim that is not a string are different identities: the second is refused.
    holder.grant(jwtCaller('frank'));
    assert.throws(() => holder.grant(jwtCaller('frank', { tenant: ['x'] })), /not a string/);
  });
});

describe('a graph one policy gives twice', async () => {
  // A policy naming a graph both directly and through its template, or through two templates, grants it once: its row
  // rule was listed twice in the graph's view, so check --why, explain and the audit record showed the same rule twice,
  // as if two policies restricted the graph, and the forwarded query checked it twice.
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-graph-templates-twice-'));
  after(() => rmSync(folder, { recursive: true, force: true }));
  const file = join(folder, 'policies.ttl');
  writeFileSync(
    file,
    `@prefix guard: <https://w3id.org/sparql-guard#> .
<https://example.org/policies/twice> a guard:Policy ; guard:group "staff" ; guard:readGraph <${D}groups/staff/> ;
    guard:readGraphTemplate "${D}groups/{group}/", "${D}groups/{claim.unit}/" ;
    guard:rowClass <http://example.org/ns#Record> ; guard:readPath <http://example.org/ns#name> .
`,
  );
  const set = await load(file);

  it('holds its row rule once in the view, and its restriction once', () => {
    const grant = grantFor(set, jwtCaller('alice', { unit: 'staff' }, ['staff']));
    assert.ok(grant?.graphs.has(`${D}groups/staff/`));
    assert.equal(grant?.views?.get(`${D}groups/staff/`)?.rows.length, 1);
    assert.deepEqual(
      restrictionsIn(grant, `${D}groups/staff/`).map(({ kind }) => kind),
      ['rows'],
    );
  });
});

describe('compileGraphTemplate', () => {
  it('reads claim names with dots as one top-level claim', () => {
    const template = compileGraphTemplate('https://d.example.org/{claim.org.id}/');
    assert.deepEqual(template.claims, ['org.id']);
    const claims = new Map<string, string | null>([['org.id', 'o1']]);
    assert.deepEqual(template.expand({ agent: 'https://a.example/x', groups: [], claims }), ['https://d.example.org/o1/']);
  });

  it('keeps percent-encoded literal text as written', () => {
    const template = compileGraphTemplate('https://d.example.org/%C3%BC/{group}');
    assert.deepEqual(template.expand({ agent: 'https://a.example/x', groups: ['a', 'b'], claims: undefined }), [
      'https://d.example.org/%C3%BC/a',
      'https://d.example.org/%C3%BC/b',
    ]);
  });
});
