// Facts from the store: an application's memberships written with SPARQL Update reach the guard at its next refresh, and no source can do more than a policy file could.

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startWritableStore, type WritableStore } from '../helpers/start-writable-store.js';

const POLICIES = resolve('policies/examples/project-membership.ttl');
const RULES = resolve('rules/examples/project-membership.n3');
const DATA = resolve('policies/examples/project-membership.trig');
const APP = 'https://example.org/app/projects';
const ADMIN = 'https://example.org/app/admin';
const PREFIXES = `PREFIX app: <https://example.org/app#>
PREFIX proj: <https://example.org/projects#>
PREFIX guard: <https://w3id.org/sparql-guard#>
PREFIX pol: <https://example.org/policies/>
`;
/** The example's source: the application's vocabulary mapped to the rules'. */
const PROJECTS_QUERY = `${PREFIXES}CONSTRUCT { ?agent proj:memberOf ?project. ?graph proj:belongsTo ?project }
WHERE { GRAPH <${APP}> { { ?agent app:memberOf ?project } UNION { ?graph app:partOf ?project } } }`;
/** A careless source that copies whatever the application wrote: the attacks go through it. */
const COPY_QUERY = `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <${APP}> { ?s ?p ?o } }`;
const ADMIN_QUERY = `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <${ADMIN}> { ?s ?p ?o } }`;
const LABELS = 'SELECT ?label WHERE { GRAPH ?g { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label } } ORDER BY ?label';
const APOLLO = 'Apollo launch plan';
const GEMINI = 'Gemini docking plan';
const TRUSTED = { trustedHeaders: { agent: 'x-remote-user', agentPrefix: 'https://example.org/agents/' } };

/** The labels `agent` reads through the guard, or the status and first line of a refusal. */
async function labelsOf(t: TestGuard, agent: string): Promise<string[] | string> {
  const response = await fetch(t.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json', 'x-remote-user': agent },
    body: LABELS,
  });
  const body = await response.text();
  if (response.status !== 200) return `${response.status} ${body.trim()}`;
  return (JSON.parse(body) as { results: { bindings: { label: { value: string } }[] } }).results.bindings.map((row) => row.label.value);
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
  return Date.now() - started;
}

const insert = (triples: string) => `${PREFIXES}INSERT DATA { GRAPH <${APP}> { ${triples} } }`;
const remove = (triples: string) => `${PREFIXES}DELETE DATA { GRAPH <${APP}> { ${triples} } }`;

describe('a membership the application writes into the store', () => {
  let store: WritableStore;
  let t: TestGuard;
  before(async () => {
    store = await startWritableStore([DATA]);
    t = await startTestGuard({
      upstream: store.queryUrl,
      policies: [POLICIES],
      rules: [RULES],
      facts: [{ name: 'projects', query: PROJECTS_QUERY, refreshMs: 1000 }],
      auth: TRUSTED,
      metrics: { port: 0 },
    });
  });
  after(async () => {
    await t.close();
    await store.close();
  });

  it('is granted after one refresh and revoked as fast', async () => {
    assert.deepEqual(await labelsOf(t, 'alice'), [APOLLO]);
    assert.match(String(await labelsOf(t, 'carol')), /^403 /);
    const carol = '<https://example.org/agents/carol> app:memberOf <https://example.org/projects/apollo> .';
    await store.update(insert(carol));
    const granted = await until(async () => (await labelsOf(t, 'carol')).toString() === APOLLO, 3000, 'carol granted');
    await store.update(remove(carol));
    const revoked = await until(async () => String(await labelsOf(t, 'carol')).startsWith('403 '), 3000, 'carol revoked');
    assert.ok(granted <= 2500 && revoked <= 2500, `granted after ${granted} ms, revoked after ${revoked} ms (refreshMs 1000)`);
  });

  it('grants a graph the application adds to a project, without touching a file', async () => {
    const graph = '<https://example.org/graphs/gemini-plans> app:partOf <https://example.org/projects/apollo> .';
    await store.update(insert(graph));
    await until(async () => (await labelsOf(t, 'alice')).toString() === [APOLLO, GEMINI].toString(), 3000, 'gemini graph granted');
    await store.update(remove(graph));
    await until(async () => (await labelsOf(t, 'alice')).toString() === APOLLO, 3000, 'gemini graph withdrawn');
  });

  it('swaps nothing when a refresh reads the same facts: one CONSTRUCT, the same set, counted as unchanged', async () => {
    const set = t.guard.policies.current();
    const constructs = store.constructs();
    assert.equal(await t.guard.reload(), true);
    assert.equal(t.guard.policies.current(), set, 'the set in force is the same object');
    // The schedule may have run one more read meanwhile; a reload adds exactly one.
    assert.ok(store.constructs() - constructs >= 1 && store.constructs() - constructs <= 2);
    const text = await (await fetch(`${t.guard.metricsUrl}/metrics`)).text();
    assert.match(text, /^sparql_guard_policy_unchanged_reloads_total [1-9]\d*$/m);
    assert.match(text, /^sparql_guard_fact_source_triples\{source="projects"\} 4$/m);
    assert.match(text, /^sparql_guard_fact_source_age_seconds\{source="projects"\} \d/m);
    assert.match(text, /^sparql_guard_fact_source_reads_total\{source="projects",result="success"\} [1-9]/m);
  });
});

describe('what a fact source may not do (each refresh fails whole, the set in force stays)', () => {
  let store: WritableStore;
  let t: TestGuard;
  before(async () => {
    store = await startWritableStore([DATA]);
    t = await startTestGuard({
      upstream: store.queryUrl,
      policies: [POLICIES],
      rules: [RULES],
      facts: [
        { name: 'projects', query: PROJECTS_QUERY, refreshMs: 600_000 },
        { name: 'copy', query: COPY_QUERY, refreshMs: 600_000, maxTriples: 50, timeoutMs: 500 },
        { name: 'admin', query: ADMIN_QUERY, refreshMs: 600_000, policies: true },
      ],
      auth: TRUSTED,
    });
  });
  after(async () => {
    await t.close();
    await store.close();
  });

  /** Applies `attack`, expects the reload to fail naming `source` and `reason`, then undoes it and checks nothing changed. */
  const refused = async (attack: () => Promise<void>, undo: () => Promise<void>, reason: RegExp, source = 'copy', storeUp = true) => {
    const set = t.guard.policies.current();
    await attack();
    const from = t.logs.length;
    assert.equal(await t.guard.reload(), false);
    const line = t.logs.slice(from).find((entry) => entry.event === 'policies-reload-failed');
    assert.ok(line !== undefined, 'a failure line');
    assert.match(String(line.file), new RegExp(source.startsWith('.*') ? `^${source}$` : `^facts:(${source})$`));
    assert.match(String(line.error), reason);
    assert.doesNotMatch(String(line.error), /\n/);
    assert.equal(t.guard.policies.current(), set, 'the set in force stays');
    if (storeUp) {
      assert.deepEqual(await labelsOf(t, 'alice'), [APOLLO]);
      assert.match(String(await labelsOf(t, 'mallory')), /^403 /);
    }
    await undo();
    assert.equal(await t.guard.reload(), true);
  };
  const attackWith = (triples: string, reason: RegExp, source?: string) =>
    refused(
      () => store.update(insert(triples)),
      () => store.update(remove(triples)),
      reason,
      source,
    );

  it('declaring a policy', () =>
    attackWith(
      '<https://example.org/policies/evil> a guard:Policy . <https://example.org/agents/mallory> app:likes <https://example.org/x> .',
      /^facts:copy: declares <https:\/\/example\.org\/policies\/evil> a guard:Policy/,
    ));

  it('stating a policy term (guard:readGraph, guard:agent, guard:appliesTo, guard:grantsGraph, guard:readGraphPrefix) about any subject', async () => {
    for (const term of ['readGraph', 'agent', 'appliesTo', 'grantsGraph', 'readGraphPrefix', 'hidePath']) {
      await attackWith(
        `<https://example.org/x> guard:${term} <https://example.org/graphs/gemini-plans> .`,
        new RegExp(`states <https://w3id\\.org/sparql-guard#${term}> about <https://example\\.org/x>, a policy term`),
      );
    }
  });

  // The operator's rule makes a member's policy apply to the member: guard:Everyone as a member would grant Apollo to every caller.
  it('naming a principal or any other term of the vocabulary, in any place (guard:Everyone as a member of Apollo)', async () => {
    for (const triples of [
      'guard:Everyone app:memberOf <https://example.org/projects/apollo> .',
      'guard:AuthenticatedAgent app:memberOf <https://example.org/projects/apollo> .',
      '<https://example.org/agents/mallory> app:memberOf guard:Anonymous .',
      '<https://example.org/agents/mallory> app:likes guard:rowPattern .',
    ]) {
      const term = /guard:(\w+)/.exec(triples)![1]!;
      await attackWith(
        triples,
        new RegExp(`names <https://w3id\\.org/sparql-guard#${term}>, a term of the policy vocabulary`),
        'projects|copy',
      );
    }
  });

  it('saying anything about a policy written on disk (pointing Apollo at Gemini)', () =>
    attackWith(
      'pol:project-apollo proj:forProject <https://example.org/projects/gemini> .',
      /states <https:\/\/example\.org\/projects#forProject> about the policy <https:\/\/example\.org\/policies\/project-apollo>/,
    ));

  it('granting a reserved graph', () =>
    attackWith('<urn:x-sparql-guard:empty> proj:belongsTo <https://example.org/projects/apollo> .', /reserved by the rewriter/));

  // The fact passes (a blank node is a node); what the rules derive from it is refused, at the policy.
  it('a blank node where a graph IRI belongs', () =>
    refused(
      () => store.update(insert('_:g app:partOf <https://example.org/projects/apollo> .')),
      () =>
        store
          .update(`${PREFIXES}DELETE WHERE { GRAPH <${APP}> { ?g app:partOf ?p FILTER(isBlank(?g)) } }`.replace(' FILTER(isBlank(?g))', ''))
          .then(() =>
            store.update(
              insert(
                '<https://example.org/graphs/apollo-plans> app:partOf <https://example.org/projects/apollo> . <https://example.org/graphs/gemini-plans> app:partOf <https://example.org/projects/gemini> .',
              ),
            ),
          ),
      /policy <https:\/\/example\.org\/policies\/project-apollo>.*: the rules derived guard:grantsGraph .*blank node/,
      // Blamed on the source whose answer held the blank node, not on the policy file.
      'projects',
    ));

  it('flooding past maxTriples', async () => {
    const flood = Array.from({ length: 60 }, (_, i) => `<https://example.org/agents/m${i}> app:likes <https://example.org/x> .`).join(' ');
    await attackWith(flood, /more than maxTriples 50/);
  });

  for (const [fault, reason, source] of [
    ['formula', /cannot be read as text\/turtle/, 'projects|copy|admin'],
    ['html', /answered text\/html, not N-Triples or Turtle/, 'projects|copy|admin'],
    ['status-500', /answered with status 500/, 'projects|copy|admin'],
    ['hang', /did not answer whole within 500 ms/, 'copy'],
  ] as const) {
    it(`a store that answers ${fault}`, () =>
      refused(
        async () => store.fault(fault),
        async () => store.fault('none'),
        reason,
        source,
      ));
  }

  it('a store that is down', () =>
    refused(
      () => store.down(),
      () => store.up(),
      /^facts:\w+: upstream (unreachable|reset the connection|closed the connection)/,
      'projects|copy|admin',
      false,
    ));

  it('a source allowed policies declares one; a literal where the graph IRI belongs still fails', async () => {
    const policy = `<https://example.org/policies/admin-grant> a guard:Policy ; guard:agent <https://example.org/agents/mallory> ;
      guard:readGraph <https://example.org/graphs/gemini-plans> .`;
    await store.update(`${PREFIXES}INSERT DATA { GRAPH <${ADMIN}> { ${policy} } }`);
    assert.equal(await t.guard.reload(), true);
    assert.deepEqual(await labelsOf(t, 'mallory'), [GEMINI]);
    await store.update(`${PREFIXES}DELETE DATA { GRAPH <${ADMIN}> { ${policy} } }`);
    assert.equal(await t.guard.reload(), true);
    const literal = `<https://example.org/policies/admin-grant> a guard:Policy ; guard:agent <https://example.org/agents/mallory> ;
      guard:readGraph "https://example.org/graphs/gemini-plans" .`;
    await refused(
      () => store.update(`${PREFIXES}INSERT DATA { GRAPH <${ADMIN}> { ${literal} } }`),
      () => store.update(`${PREFIXES}DELETE DATA { GRAPH <${ADMIN}> { ${literal} } }`),
      /^facts:admin: policy <https:\/\/example\.org\/policies\/admin-grant>: guard:readGraph must be an IRI/,
      'admin',
    );
  });
});

describe('a guard whose fact source cannot be read', () => {
  let store: WritableStore;
  let t: TestGuard | undefined;
  before(async () => {
    store = await startWritableStore([DATA]);
  });
  after(async () => {
    await t?.close();
    await store.close();
  });

  it('starts unready (503) when the first read fails, and serves once the store answers', async () => {
    store.fault('status-500');
    t = await startTestGuard({
      upstream: store.queryUrl,
      policies: [POLICIES],
      rules: [RULES],
      facts: [{ name: 'projects', query: PROJECTS_QUERY, refreshMs: 1000, maxStaleMs: 2000 }],
      auth: TRUSTED,
      metrics: { port: 0 },
    });
    const guard = t;
    assert.equal(guard.guard.policies.current(), undefined);
    assert.ok(guard.logs.some((line) => line.event === 'policies-load-failed' && line.file === 'facts:projects'));
    const ready = await fetch(`${guard.guard.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(await ready.text(), /policies are not loaded yet/);
    // Alive (liveness): a restart would not bring the store back.
    assert.equal((await fetch(`${guard.guard.url}/healthz`)).status, 200);
    assert.match(String(await labelsOf(guard, 'alice')), /^503 /);
    const failedLoads = () => guard.logs.filter((line) => line.event === 'policies-load-failed').length;
    await until(async () => failedLoads() >= 2, 4000, 'the first load tried again');
    store.fault('none');
    await until(async () => (await labelsOf(guard, 'alice')).toString() === APOLLO, 4000, 'served after the store came back');
    assert.equal((await fetch(`${guard.guard.url}/readyz`)).status, 200);
    // The first set in force is loaded, not reloaded: whatever waits for policies-loaded sees it.
    const events = guard.logs.map((line) => line.event).filter((event) => typeof event === 'string' && event.startsWith('policies-'));
    assert.deepEqual(
      events.filter((event) => event !== 'policies-load-failed'),
      ['policies-loaded'],
    );
    // Nor are its retries reloads: a first set that took several tries counts no reload, failed or not.
    const text = await (await fetch(`${guard.guard.metricsUrl}/metrics`)).text();
    assert.match(text, /^sparql_guard_policy_reloads_total\{result="failure"\} 0$/m);
    assert.match(text, /^sparql_guard_policy_reloads_total\{result="success"\} 0$/m);
    assert.match(text, /^sparql_guard_fact_source_reads_total\{source="projects",result="failure"\} [2-9]/m);
  });

  it('refuses every query (503) and turns /readyz to 503 once the facts are older than maxStaleMs', async () => {
    const guard = t!;
    store.fault('status-500');
    const stale = await until(async () => String(await labelsOf(guard, 'alice')).startsWith('503 '), 5000, 'stale');
    assert.ok(stale <= 3500, `refused ${stale} ms after the store failed (maxStaleMs 2000)`);
    assert.match(String(await labelsOf(guard, 'alice')), /the policies are stale/);
    const ready = await fetch(`${guard.guard.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(await ready.text(), /stale/);
    assert.equal((await fetch(`${guard.guard.url}/healthz`)).status, 200);
    store.fault('none');
    await until(async () => (await labelsOf(guard, 'alice')).toString() === APOLLO, 4000, 'fresh again');
  });
});

describe('a policy file saved while fact sources refresh (watchPolicies off)', () => {
  let store: WritableStore;
  let t: TestGuard;
  let folder: string;
  let policyFile: string;
  before(async () => {
    store = await startWritableStore([DATA]);
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-facts-'));
    policyFile = join(folder, 'policies.ttl');
    copyFileSync(POLICIES, policyFile);
    t = await startTestGuard({
      upstream: store.queryUrl,
      policies: [policyFile],
      rules: [RULES],
      facts: [{ name: 'projects', query: PROJECTS_QUERY, refreshMs: 1000, maxStaleMs: 2000 }],
      auth: TRUSTED,
      watchPolicies: false,
    });
  });
  after(async () => {
    await t.close();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  /** Waits until the source has been read `reads` more times, past maxStaleMs: every answer since was built on a schedule. */
  const schedulesPass = async (reads: number) => {
    const from = store.constructs();
    await until(async () => store.constructs() >= from + reads, 6000, `${reads} scheduled reads`);
  };

  it('takes a saved file only at a reload: the schedules build on the files as loaded', async () => {
    assert.deepEqual(await labelsOf(t, 'alice'), [APOLLO]);
    // A valid file in which no policy is for Apollo's project any more: Alice, a member of Apollo only, is refused.
    const swapped = readFileSync(POLICIES, 'utf8').replace(
      'proj:forProject <https://example.org/projects/apollo>',
      'proj:forProject <https://example.org/projects/gemini>',
    );
    assert.notEqual(swapped, readFileSync(POLICIES, 'utf8'));
    writeFileSync(policyFile, swapped);
    await schedulesPass(3);
    assert.deepEqual(await labelsOf(t, 'alice'), [APOLLO], 'no schedule read the saved file');
    assert.equal(await t.guard.reload(), true);
    assert.match(String(await labelsOf(t, 'alice')), /^403 /, 'the reload did');
    copyFileSync(POLICIES, policyFile);
    assert.equal(await t.guard.reload(), true);
    assert.deepEqual(await labelsOf(t, 'alice'), [APOLLO]);
  });

  it('keeps serving fresh facts over a file saved broken, before and after a reload that fails on it', async () => {
    const broken = '@prefix guard: <https://w3id.org/sparql-guard#> .\n<p> a guard:Policy ; guard:readGraph .\n';
    writeFileSync(policyFile, broken);
    await schedulesPass(3);
    assert.deepEqual(await labelsOf(t, 'alice'), [APOLLO], 'not stale: the schedules read the store, not the file');
    const from = t.logs.length;
    assert.equal(await t.guard.reload(), false);
    const line = t.logs.slice(from).find((entry) => entry.event === 'policies-reload-failed');
    assert.equal(line?.file, policyFile);
    // A membership written now still arrives: the facts are refreshed on the set in force.
    const carol = '<https://example.org/agents/carol> app:memberOf <https://example.org/projects/apollo> .';
    await store.update(insert(carol));
    await until(async () => (await labelsOf(t, 'carol')).toString() === APOLLO, 4000, 'carol granted over the broken file');
    await schedulesPass(3);
    assert.deepEqual(await labelsOf(t, 'alice'), [APOLLO]);
    assert.equal((await fetch(`${t.guard.url}/readyz`)).status, 200);
    await store.update(remove(carol));
    copyFileSync(POLICIES, policyFile);
    assert.equal(await t.guard.reload(), true);
  });
});
