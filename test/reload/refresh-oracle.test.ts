// A refresh is a reload: after random writes to the store, the set a guard's schedules built (each fact source read on its own, the others' answers reused; the graphs under each prefix listed again) answers as a guard started on the same store now.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { random } from '../helpers/query-corpus.js';
import { scrapeSample } from '../helpers/scrape-sample.js';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startWritableStore, type WritableStore } from '../helpers/start-writable-store.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 32);
const STEPS = Number(process.env['REFRESH_ORACLE_STEPS'] ?? 6);

const POLICIES = resolve('policies/examples/project-membership.ttl');
const RULES = resolve('rules/examples/project-membership.n3');
const DATA = resolve('policies/examples/project-membership.trig');
const APP = 'https://example.org/app/projects';
const PREFIXES = `PREFIX app: <https://example.org/app#>
PREFIX proj: <https://example.org/projects#>
`;
/** Two sources on their own schedules: a refresh of one reuses the other's answer in force. */
const FACTS = [
  {
    name: 'members',
    query: `${PREFIXES}CONSTRUCT { ?agent proj:memberOf ?project } WHERE { GRAPH <${APP}> { ?agent app:memberOf ?project } }`,
    refreshMs: 1000,
  },
  {
    name: 'parts',
    query: `${PREFIXES}CONSTRUCT { ?graph proj:belongsTo ?project } WHERE { GRAPH <${APP}> { ?graph app:partOf ?project } }`,
    refreshMs: 1300,
  },
];
const AGENTS = ['alice', 'bob', 'carol', 'dave', 'mallory'];
const PROJECTS = ['apollo', 'gemini'];
const GRAPHS = ['apollo-plans', 'gemini-plans', 'extra-plans'];
const LABELS = 'SELECT ?label WHERE { GRAPH ?g { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label } } ORDER BY ?label';
const TRUSTED = { trustedHeaders: { agent: 'x-remote-user', agentPrefix: 'https://example.org/agents/' } };

const agent = (name: string) => `<https://example.org/agents/${name}>`;
const project = (name: string) => `<https://example.org/projects/${name}>`;
const graph = (name: string) => `<https://example.org/graphs/${name}>`;

/** What each agent reads through `t`: its labels, or the status of a refusal. */
async function answers(t: TestGuard): Promise<Record<string, string>> {
  const all: Record<string, string> = {};
  for (const name of AGENTS) {
    const response = await fetch(t.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json', 'x-remote-user': name },
      body: LABELS,
    });
    const body = await response.text();
    all[name] =
      response.status === 200
        ? (JSON.parse(body) as { results: { bindings: { label: { value: string } }[] } }).results.bindings
            .map((row) => row.label.value)
            .join('|')
        : String(response.status);
  }
  return all;
}

describe('a refresh is a reload: the scheduled set against a guard started now', { timeout: 300_000 }, () => {
  let store: WritableStore;
  let t: TestGuard;
  const config = { policies: [POLICIES], rules: [RULES], facts: FACTS, auth: TRUSTED, watchPolicies: false };
  before(async () => {
    store = await startWritableStore([DATA]);
    await store.update(
      `INSERT DATA { GRAPH ${graph('extra-plans')} { <https://example.org/plans/extra> <http://www.w3.org/2000/01/rdf-schema#label> "Extra plan" } }`,
    );
    t = await startTestGuard({ ...config, upstream: store.queryUrl, metrics: { port: 0 } });
  });
  after(async () => {
    await t?.close();
    await store?.close();
  });

  /** Successful reads of each source so far, as the guard counts them once their load is in force. */
  const reads = async () => {
    const text = await (await fetch(`${t.guard.metricsUrl}/metrics`)).text();
    return FACTS.map((source) => scrapeSample(text, 'sparql_guard_fact_source_reads_total', `source="${source.name}",result="success"`));
  };

  /**
   * Waits until every source was read twice more: the first of those reads may have begun before
   * the write, the second began after the first's load ended, so it saw the write, and it is
   * counted once its set is in force.
   */
  const refreshed = async () => {
    const from = await reads();
    const started = Date.now();
    while ((await reads()).some((count, at) => count < (from[at] ?? 0) + 2)) {
      if (Date.now() - started > 20_000) assert.fail('the sources were not read twice within 20 s');
      await new Promise((done) => setTimeout(done, 100));
    }
  };

  it(`answers alike after each of ${STEPS} random writes (seed ${SEED})`, async () => {
    const next = random(SEED);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    for (let step = 0; step < STEPS; step += 1) {
      const triple =
        next() < 0.5
          ? `${agent(pick(AGENTS.slice(0, 4)))} app:memberOf ${project(pick(PROJECTS))} .`
          : `${graph(pick(GRAPHS))} app:partOf ${project(pick(PROJECTS))} .`;
      const write = next() < 0.6 ? 'INSERT' : 'DELETE';
      await store.update(`${PREFIXES}${write} DATA { GRAPH <${APP}> { ${triple} } }`);
      // Every third step asks for a reload; the others wait for the schedules.
      if (step % 3 === 2) assert.equal(await t.guard.reload(), true);
      else await refreshed();
      const fresh = await startTestGuard({ ...config, upstream: store.queryUrl });
      try {
        assert.deepEqual(await answers(t), await answers(fresh), `step ${step}: ${write} ${triple}`);
      } finally {
        await fresh.close();
      }
    }
  });
});

describe('a listing is a reload: the graphs under each prefix after random creations and drops', { timeout: 300_000 }, () => {
  const TENANTS = resolve('policies/examples/tenant-prefix');
  const TENANT_GRAPHS = ['acme/orders', 'acme/invoices', 'acme-evil/orders', 'globex/orders', 'globex/acme/', 'acme/notes#x'];
  const config = {
    policies: [`${TENANTS}.ttl`],
    prefixRefreshMs: 1000,
    auth: { trustedHeaders: { agent: 'x-remote-user', groups: 'x-remote-groups', agentPrefix: 'https://example.org/agents/' } },
    watchPolicies: false,
  };
  let store: WritableStore;
  let t: TestGuard;
  before(async () => {
    store = await startWritableStore([`${TENANTS}.trig`]);
    t = await startTestGuard({ ...config, upstream: store.queryUrl, metrics: { port: 0 } });
  });
  after(async () => {
    await t?.close();
    await store?.close();
  });

  /** What a member of each tenant reads through `guard`: every value of every graph it may read. */
  const tenantAnswers = async (guard: TestGuard) => {
    const all: Record<string, string> = {};
    for (const group of ['acme', 'globex']) {
      const response = await fetch(guard.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/sparql-query',
          accept: 'application/sparql-results+json',
          'x-remote-user': `${group}-user`,
          'x-remote-groups': group,
        },
        body: 'SELECT ?g ?o WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g ?o',
      });
      const body = await response.text();
      all[group] = response.status === 200 ? body : String(response.status);
    }
    return all;
  };
  /** Loads that ended in force (a listing that found the same graphs counts too). */
  const loads = async () =>
    scrapeSample(await (await fetch(`${t.guard.metricsUrl}/metrics`)).text(), 'sparql_guard_policy_reloads_total', 'result="success"');

  it(`answers alike after each of ${STEPS} random creations and drops (seed ${SEED})`, async () => {
    const next = random(SEED + 1);
    for (let step = 0; step < STEPS; step += 1) {
      const name = `https://data.example.org/tenants/${TENANT_GRAPHS[Math.floor(next() * TENANT_GRAPHS.length)]!}`;
      const update =
        next() < 0.6
          ? `INSERT DATA { GRAPH <${name}> { <${name}#r> <http://www.w3.org/2000/01/rdf-schema#label> "step ${step}" } }`
          : `DROP SILENT GRAPH <${name}>`;
      await store.update(update);
      if (step % 3 === 2) assert.equal(await t.guard.reload(), true);
      else {
        // Two listings more: the second began after the first ended, so after the write.
        const from = await loads();
        const started = Date.now();
        while ((await loads()) < from + 2) {
          if (Date.now() - started > 20_000) assert.fail('no two listings within 20 s');
          await new Promise((done) => setTimeout(done, 100));
        }
      }
      const fresh = await startTestGuard({ ...config, upstream: store.queryUrl });
      try {
        assert.deepEqual(await tenantAnswers(t), await tenantAnswers(fresh), `step ${step}: ${update}`);
      } finally {
        await fresh.close();
      }
    }
  });
});
