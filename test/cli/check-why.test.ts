// The real bin's `check` with fact sources and prefix grants, and `check --why`: the chain of facts and rules behind each graph.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const EXAMPLES = resolve('policies/examples');
const RULES = resolve('rules/examples');
const MEMBERSHIP_POLICIES = join(EXAMPLES, 'group-membership.ttl');
const HIERARCHY_POLICIES = join(EXAMPLES, 'group-hierarchy.ttl');
const HIERARCHY_FACTS = join(EXAMPLES, 'group-hierarchy.n3');
const TENANT_POLICIES = resolve('test/fixtures/graph-prefix/policies.ttl');
const MEMBERS_QUERY =
  'PREFIX groups: <https://example.org/groups#> CONSTRUCT { ?u groups:memberOf ?g } WHERE { GRAPH <https://example.org/app> { ?u <https://example.org/app#memberOf> ?g } }';

/** Runs the bin with GUARD_* variables of the test run cleared. */
function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, ...env } = process.env;
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: result.status, stdout: String(result.stdout), stderr: String(result.stderr) };
}

let folder: string;
let configFile: string;
before(() => {
  folder = mkdtempSync(join(tmpdir(), 'sparql-guard-why-'));
  configFile = join(folder, 'guard.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      policies: [MEMBERSHIP_POLICIES, HIERARCHY_POLICIES, join(EXAMPLES, 'graph-collections.ttl'), TENANT_POLICIES],
      rules: [join(RULES, 'group-membership.n3'), join(RULES, 'group-hierarchy.n3'), HIERARCHY_FACTS, join(RULES, 'graph-collections.n3')],
      facts: [{ name: 'members', query: MEMBERS_QUERY }],
      embedded: { data: [resolve('test/fixtures/graph-prefix/data.trig'), resolve('test/fixtures/check-why/app.trig')] },
    }),
  );
});
after(() => rmSync(folder, { recursive: true, force: true }));

describe('sparql-guard check with the store', () => {
  it('runs each fact source once and lists the graphs under the prefixes, with counts and times', () => {
    const result = run(['check', '--config', configFile]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^facts: members read 1 triples \(\d+ bytes\) in \d+ ms$/m);
    assert.match(result.stdout, /^prefixes: the store listed 3 graphs under 2 guard:readGraphPrefix value\(s\) in \d+ ms$/m);
    // The listing per principal shows the listed graphs, and bob's membership from the store.
    assert.match(
      result.stdout,
      /group "acme"\n {2}policies: <https:\/\/example\.org\/policies\/acme>\n {2}graphs: {3}<https:\/\/data\.example\.org\/tenants\/acme\/orders> <https:\/\/data\.example\.org\/tenants\/acme\/people>\n/,
    );
    assert.match(result.stdout, /^<https:\/\/example\.org\/agents\/bob>$/m);
    assert.match(result.stdout, /^ {2}prefixes: "https:\/\/data\.example\.org\/tenants\/acme\/"$/m);
    // The graph with dot segments under acme's prefix is named, not granted.
    assert.match(
      result.stdout,
      /^warning: graph <https:\/\/data\.example\.org\/tenants\/acme\/\.\.\/globex\/payroll> under guard:readGraphPrefix .* is not granted: it has dot segments/m,
    );
  });

  it('says the same in JSON', () => {
    const result = run(['check', '--json', '--config', configFile]);
    assert.equal(result.status, 0, result.stderr);
    const json = JSON.parse(result.stdout) as {
      facts: { name: string; triples: number; ms: number }[];
      prefixListing: { prefixes: number; graphs: number };
    };
    assert.equal(json.facts.length, 1);
    assert.equal(json.facts[0]?.name, 'members');
    assert.equal(json.facts[0]?.triples, 1);
    assert.deepEqual({ prefixes: json.prefixListing.prefixes, graphs: json.prefixListing.graphs }, { prefixes: 2, graphs: 3 });
  });

  it('fails with one line when the store cannot be read', () => {
    const down = join(folder, 'down.json');
    writeFileSync(down, JSON.stringify({ upstream: 'http://127.0.0.1:1/query', policies: [TENANT_POLICIES], timeoutMs: 2000 }));
    const result = run(['check', '--config', down]);
    assert.equal(result.status, 1);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^sparql-guard: the store could not list the graphs under guard:readGraphPrefix "https:\/\/data\.example\.org\/tenants\/acme\/": upstream unreachable \(connection refused\)\n$/,
    );
  });
});

describe('sparql-guard check --why', () => {
  it('traces a membership read from the store through the rules to the policy written on disk', () => {
    const result = run(['check', '--config', configFile, '--why', 'https://example.org/agents/bob']);
    assert.equal(result.status, 0, result.stderr);
    const text = result.stdout;
    assert.match(text, /^caller <https:\/\/example\.org\/agents\/bob>, authenticated, groups: \(none\)$/m);
    assert.match(text, /^graph <https:\/\/example\.org\/graphs\/wiki>$/m);
    assert.match(text, /^graph <https:\/\/example\.org\/graphs\/handbook>$/m);
    assert.match(
      text,
      /^ {2}policy <https:\/\/example\.org\/policies\/staff-wiki> \(.*group-membership\.ttl\), applies as <https:\/\/example\.org\/agents\/bob>$/m,
    );
    assert.match(
      text,
      /by rule 1 of .*rules\/examples\/group-membership\.n3: \{ \?agent <https:\/\/example\.org\/groups#memberOf> \?group\. \?policy guard:appliesTo \?group \} => \{ \?policy guard:appliesTo \?agent \}/,
    );
    assert.match(
      text,
      /<https:\/\/example\.org\/agents\/bob> <https:\/\/example\.org\/groups#memberOf> "staff" {3}\[fact from facts:members\]/,
    );
    assert.match(text, /<https:\/\/example\.org\/policies\/staff-wiki> guard:group "staff" {3}\[fact from .*group-membership\.ttl\]/);
    assert.match(
      text,
      /<https:\/\/example\.org\/policies\/staff-wiki> guard:readGraph <https:\/\/example\.org\/graphs\/wiki> {3}\[fact from .*group-membership\.ttl\]/,
    );
    // The membership is explained once; the second graph points back to it.
    assert.match(text, /<https:\/\/example\.org\/agents\/bob> <https:\/\/example\.org\/groups#memberOf> "staff" {3}\[shown above\]/);
    assert.doesNotMatch(text, /tenants/);
  });

  it('traces a group hierarchy step by step, with the facts of the rule file', () => {
    const result = run(['check', '--config', configFile, '--why', 'https://example.org/agents/tom', '--group', 'trainees']);
    assert.equal(result.status, 0, result.stderr);
    const text = result.stdout;
    assert.match(text, /^graph <https:\/\/example\.org\/graphs\/intern-desk>$/m);
    assert.match(
      text,
      /<https:\/\/example\.org\/policies\/staff-handbook> guard:appliesTo "trainees"\n.*by rule 1 of .*group-hierarchy\.n3/,
    );
    assert.match(
      text,
      /"trainees" <https:\/\/example\.org\/groups#subGroupOf> "interns" {3}\[fact from .*policies\/examples\/group-hierarchy\.n3\]/,
    );
    assert.match(
      text,
      /"interns" <https:\/\/example\.org\/groups#subGroupOf> "staff" {3}\[fact from .*policies\/examples\/group-hierarchy\.n3\]/,
    );
  });

  it('traces a collection grant and a prefix grant, in JSON', () => {
    const result = run([
      'check',
      '--json',
      '--config',
      configFile,
      '--why',
      'https://example.org/agents/ann',
      '--group',
      'research',
      '--group',
      'acme',
    ]);
    assert.equal(result.status, 0, result.stderr);
    interface Step {
      triple: string;
      fact?: string;
      listedUnder?: string;
      rule?: { file: string; number: number };
      from?: Step[];
    }
    const trace = JSON.parse(result.stdout) as { graphs: { graph: string; policies: { policy: string; grants: Step; applies: Step }[] }[] };
    assert.deepEqual(
      trace.graphs.map((entry) => entry.graph),
      [
        'https://data.example.org/tenants/acme/orders',
        'https://data.example.org/tenants/acme/people',
        'https://example.org/graphs/trial-1',
        'https://example.org/graphs/trial-2',
      ],
    );
    const orders = trace.graphs[0]?.policies[0];
    assert.equal(orders?.policy, 'https://example.org/policies/acme');
    assert.equal(orders?.grants.listedUnder, 'https://data.example.org/tenants/acme/');
    assert.equal(orders?.grants.from?.[0]?.fact, TENANT_POLICIES);
    assert.equal(
      orders?.grants.from?.[0]?.triple,
      '<https://example.org/policies/acme> guard:readGraphPrefix "https://data.example.org/tenants/acme/"',
    );
    const trial = trace.graphs[2]?.policies[0]?.grants;
    assert.match(trial?.rule?.file ?? '', /graph-collections\.n3$/);
    assert.deepEqual(trial?.from?.map((step) => step.triple).sort(), [
      '<https://example.org/graphs/trial-1> <https://example.org/graph-collections#inCollection> <https://example.org/collections/research>',
      '<https://example.org/policies/research-collection> <https://example.org/graph-collections#readCollection> <https://example.org/collections/research>',
    ]);
  });

  it('names EYE for what only an EYE rule file derives', () => {
    const eyeConfig = join(folder, 'eye.json');
    const nicknames = resolve('test/fixtures/check-why/nicknames.n3');
    writeFileSync(eyeConfig, JSON.stringify({ policies: [MEMBERSHIP_POLICIES], rules: [nicknames] }));
    const result = run(['check', '--config', eyeConfig, '--why', 'https://example.org/agents/bea']);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^graph <https:\/\/example\.org\/graphs\/wiki>$/m);
    assert.match(
      result.stdout,
      /<https:\/\/example\.org\/policies\/staff-wiki> guard:appliesTo <https:\/\/example\.org\/agents\/bea> {3}\[derived in EYE by .*nicknames\.n3: no chain shown\]/,
    );
    // What the forward chainer derives keeps its chain.
    assert.match(result.stdout, /guard:grantsGraph <https:\/\/example\.org\/graphs\/wiki>\n {8}by rule 3 of .*policy-targets\.n3/);
  });

  it("names each graph's columns and row rules: the rule, its policy, the graphs it reads and its columns, (none) for none", () => {
    const rowsConfig = join(folder, 'rows.json');
    writeFileSync(
      rowsConfig,
      JSON.stringify({ upstream: 'http://127.0.0.1:9/sparql', policies: [resolve('test/fixtures/security/rows/policies.ttl')] }),
    );
    const result = run(['check', '--config', rowsConfig, '--offline', '--why', 'http://example.org/agents/gil']);
    assert.equal(result.status, 0, result.stderr);
    // gil-projects shows every column of the projects; gil-open every record without its type and salary.
    assert.match(
      result.stdout,
      /^ {2}restrictions: columns hidePath <http:\/\/example\.org\/rows#salary> <http:\/\/www\.w3\.org\/1999\/02\/22-rdf-syntax-ns#type>; rows of <http:\/\/example\.org\/policies\/rows\/gil-projects> where \?this a <http:\/\/example\.org\/rows#Project>, hidePath \(none\)$/m,
    );
    assert.match(
      result.stdout,
      /^view of <http:\/\/example\.org\/rows\/main>\n {2}without a row rule: hidePath .*salary.*\n {2}rows of policy <http:\/\/example\.org\/policies\/rows\/gil-projects>: "\?this a <http:\/\/example\.org\/rows#Project>" in <http:\/\/example\.org\/rows\/main>, hidePath \(none\)$/m,
    );
    const alice = run(['check', '--config', rowsConfig, '--offline', '--why', 'http://example.org/agents/alice']);
    assert.match(
      alice.stdout,
      /rows of policy <http:\/\/example\.org\/policies\/rows\/members-main>: "\?this ex:member \?agent" in <http:\/\/example\.org\/rows\/members>/,
    );
  });

  it("names the caller's limits: per kind the largest its policies set, the policies that set it, and the global ceiling", () => {
    // Several policies set limits for one caller; --why named none, so a 429 or a capped answer had no explanation there.
    const tiersConfig = join(folder, 'tiers.json');
    writeFileSync(
      tiersConfig,
      JSON.stringify({
        upstream: 'http://127.0.0.1:9/sparql',
        timeoutMs: 20000,
        policies: [resolve('test/fixtures/policy/limits/tiers.ttl')],
      }),
    );
    const staff = run(['check', '--config', tiersConfig, '--offline', '--why', 'https://example.org/alice', '--group', 'staff']);
    assert.equal(staff.status, 0, staff.stderr);
    assert.match(
      staff.stdout,
      /^limits: timeoutMs 30000 \(<https:\/\/example\.org\/staff>; the configuration's timeoutMs 20000 caps it\), resultLimit 10000 \(<https:\/\/example\.org\/staff>\), maxConcurrent 8 \(<https:\/\/example\.org\/alice>\)$/m,
    );
    const json = run(['check', '--config', tiersConfig, '--offline', '--json', '--why', 'anonymous']);
    assert.deepEqual((JSON.parse(json.stdout) as { limits: unknown }).limits, [
      { kind: 'timeoutMs', value: 2000, policies: ['https://example.org/public'] },
      { kind: 'resultLimit', value: 100, policies: ['https://example.org/public'] },
      { kind: 'maxConcurrent', value: 2, policies: ['https://example.org/public'] },
    ]);
  });

  it('lists a policy that lists columns and hides one of them with what it shows: hidden wins', () => {
    // contractor-columns lists salary and hides it; the listing said "readPath … salary", as if contractors read salaries.
    const rowsConfig = join(folder, 'rows-listing.json');
    writeFileSync(
      rowsConfig,
      JSON.stringify({ upstream: 'http://127.0.0.1:9/sparql', policies: [resolve('test/fixtures/security/rows/policies.ttl')] }),
    );
    const result = run(['check', '--config', rowsConfig, '--offline']);
    assert.equal(result.status, 0, result.stderr);
    assert.match(
      result.stdout,
      /^restricts: <http:\/\/example\.org\/policies\/rows\/contractor-columns> readPath <http:\/\/example\.org\/rows#email> <http:\/\/example\.org\/rows#name> hidePath <http:\/\/example\.org\/rows#salary>$/m,
    );
  });

  it('says when no policy applies', () => {
    const result = run(['check', '--config', configFile, '--why', 'anonymous']);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /no policy applies to this caller: it gets no graph/);
  });

  it('refuses bad arguments with exit 2', () => {
    for (const args of [
      ['--why', 'not-an-iri'],
      ['--group', 'staff'],
      ['--why', 'anonymous', '--group', 'staff'],
      ['--why', 'https://w3id.org/sparql-guard#Everyone'],
    ]) {
      const result = run(['check', '--config', configFile, ...args]);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /^sparql-guard check: /);
    }
  });
});
