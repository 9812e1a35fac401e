// The audit records held to what happened, over policy sets drawn at random (direct grants, prefixes, templates, hidden
// paths, columns, row rules, several policies on one caller): each record's dataset is the one the store's query ran
// over, each graph there names exactly the policies that grant it, the answer reads no graph the record leaves out, and
// `check --why` names the same graphs and policies.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { mulberry32 } from '../w3c/w3c-evaluation.js';
import { startStoreLink, type StoreLink } from '../helpers/start-store-link.js';
import { sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 32);
/** Policy sets drawn (AUDIT_ORACLE_SETS). */
const SETS = Number(process.env['AUDIT_ORACLE_SETS'] ?? 4);

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const G = 'http://example.org/ao/';
const P = 'http://example.org/ao-policies/';
const A = 'http://example.org/ao-agents/';
const EX = 'http://example.org/ao-ns#';
const MEMBERS = `${G}members`;
const PLAIN = ['g0', 'g1', 'g2', 'g3', 'g4'].map((name) => `${G}${name}`);
const PREFIXES = { acme: `${G}t/acme/`, globex: `${G}t/globex/` };
const PREFIXED = [`${PREFIXES.acme}1`, `${PREFIXES.acme}2`, `${PREFIXES.globex}1`];
const GROUPS = ['red', 'blue'];

interface CallerSpec {
  readonly name: string;
  readonly agent: string | undefined;
  readonly groups: readonly string[];
  readonly key: string | undefined;
}
const CALLERS: readonly CallerSpec[] = [
  { name: 'alice', agent: `${A}alice`, groups: ['red'], key: 'audit-oracle-key-alice-0123456789' },
  { name: 'bob', agent: `${A}bob`, groups: ['blue', 'red'], key: 'audit-oracle-key-bob-0123456789ab' },
  { name: 'carol', agent: `${A}carol`, groups: [], key: 'audit-oracle-key-carol-0123456789' },
  { name: 'anonymous', agent: undefined, groups: [], key: undefined },
];
const TEMPLATE_GRAPHS = [
  ...GROUPS.map((group) => `${G}grp/${group}`),
  ...CALLERS.flatMap(({ agent }) => (agent === undefined ? [] : [`${G}users/${encodeURIComponent(agent)}`])),
];
const ALL_GRAPHS = [...PLAIN, ...PREFIXED, ...TEMPLATE_GRAPHS, MEMBERS];

/** Each graph holds rows of its own (one class, one hidden predicate), so every graph read shows in an answer. */
function dataset(): string {
  const lines: string[] = [`@prefix ex: <${EX}> .`, 'ex:d ex:p "store default graph" .'];
  for (const [at, graph] of ALL_GRAPHS.entries()) {
    if (graph === MEMBERS) continue;
    lines.push(
      `<${graph}> { ex:r${at} a ex:Row ; ex:p "in ${graph}" ; ex:hid "hidden ${at}" . ex:q${at} a ex:Other ; ex:p "other ${graph}" . }`,
    );
  }
  const members = ALL_GRAPHS.map((_, at) => `ex:r${at} ex:member <${CALLERS[at % 3]!.agent}> .`).join(' ');
  lines.push(`<${MEMBERS}> { ${members} }`);
  return `${lines.join('\n')}\n`;
}

interface PolicySpec {
  readonly iri: string;
  /** 'everyone', 'authenticated', an agent IRI, or a group name prefixed by 'group:'. */
  readonly target: string;
  readonly graphs: readonly string[];
  readonly prefix: string | undefined;
  readonly template: 'group' | 'agent' | undefined;
  readonly hidePath: boolean;
  readonly readPath: boolean;
  readonly row: 'class' | 'members' | undefined;
  readonly resultLimit: number | undefined;
}

function drawPolicies(random: () => number, count: number): PolicySpec[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const targets = ['everyone', 'authenticated', `${A}alice`, `${A}bob`, `${A}carol`, 'group:red', 'group:blue'];
  return Array.from({ length: count }, (_, at) => {
    const graphs = PLAIN.filter(() => random() < 0.3);
    const prefix = random() < 0.3 ? pick(Object.values(PREFIXES)) : undefined;
    const template = random() < 0.35 ? pick(['group', 'agent'] as const) : undefined;
    if (graphs.length === 0 && prefix === undefined && template === undefined) graphs.push(pick(PLAIN));
    return {
      iri: `${P}p${at}`,
      target: pick(targets),
      graphs,
      prefix,
      template,
      hidePath: random() < 0.3,
      readPath: random() < 0.2,
      row: random() < 0.25 ? pick(['class', 'members'] as const) : undefined,
      resultLimit: random() < 0.25 ? 1 + Math.floor(random() * 4) : undefined,
    };
  });
}

function policyText(policies: readonly PolicySpec[]): string {
  const lines = [`@prefix guard: <https://w3id.org/sparql-guard#> .`, `@prefix ex: <${EX}> .`];
  for (const policy of policies) {
    const terms = ['a guard:Policy'];
    if (policy.target === 'everyone') terms.push('guard:agent guard:Everyone');
    else if (policy.target === 'authenticated') terms.push('guard:agent guard:AuthenticatedAgent');
    else if (policy.target.startsWith('group:')) terms.push(`guard:group "${policy.target.slice('group:'.length)}"`);
    else terms.push(`guard:agent <${policy.target}>`);
    if (policy.graphs.length > 0) terms.push(`guard:readGraph ${policy.graphs.map((graph) => `<${graph}>`).join(', ')}`);
    if (policy.prefix !== undefined) terms.push(`guard:readGraphPrefix "${policy.prefix}"`);
    if (policy.template === 'group') terms.push(`guard:readGraphTemplate "${G}grp/{group}"`);
    if (policy.template === 'agent') terms.push(`guard:readGraphTemplate "${G}users/{agent}"`);
    if (policy.hidePath) terms.push('guard:hidePath ex:hid');
    if (policy.readPath) terms.push('guard:readPath ex:p, ex:hid');
    if (policy.row === 'class') terms.push('guard:rowClass ex:Row');
    if (policy.resultLimit !== undefined) terms.push(`guard:resultLimit ${policy.resultLimit}`);
    if (policy.row === 'members') terms.push(`guard:rowPattern "?this ex:member ?agent" ; guard:rowData <${MEMBERS}>`);
    lines.push(`<${policy.iri}> ${terms.join(' ;\n  ')} .`);
  }
  return `${lines.join('\n')}\n`;
}

/** The policies that apply to a caller, in order of listing (docs/policies.md). */
function applying(policies: readonly PolicySpec[], caller: CallerSpec): PolicySpec[] {
  return policies.filter(
    ({ target }) =>
      target === 'everyone' ||
      (caller.agent !== undefined &&
        (target === 'authenticated' || target === caller.agent || caller.groups.includes(target.replace(/^group:/, '')))),
  );
}

/** The graphs one policy grants a caller: written, listed under its prefix (the store's non-empty graphs), filled templates. */
function graphsOf(policy: PolicySpec, caller: CallerSpec): Set<string> {
  const graphs = new Set(policy.graphs);
  if (policy.prefix !== undefined) for (const graph of ALL_GRAPHS) if (graph.startsWith(policy.prefix)) graphs.add(graph);
  if (caller.agent !== undefined && policy.template === 'group') for (const group of caller.groups) graphs.add(`${G}grp/${group}`);
  if (caller.agent !== undefined && policy.template === 'agent') graphs.add(`${G}users/${encodeURIComponent(caller.agent)}`);
  return graphs;
}

type Columns = { readPath: string[] } | { hidePath: string[] };
type Restriction = { kind: string; predicates?: string[]; columns?: Columns } & Partial<Record<'readPath' | 'hidePath', string[]>>;

const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

/** The triples of one graph of {@link dataset}, as `s p o` with IRIs bare and literals as their text, sorted. */
function triplesOf(graph: string): string[] {
  const at = ALL_GRAPHS.indexOf(graph);
  if (graph === MEMBERS) return ALL_GRAPHS.map((_, row) => `${EX}r${row} ${EX}member ${CALLERS[row % 3]!.agent}`).sort();
  return [
    `${EX}r${at} ${RDF_TYPE} ${EX}Row`,
    `${EX}r${at} ${EX}p in ${graph}`,
    `${EX}r${at} ${EX}hid hidden ${at}`,
    `${EX}q${at} ${RDF_TYPE} ${EX}Other`,
    `${EX}q${at} ${EX}p other ${graph}`,
  ].sort();
}

/**
 * The triples a caller reads in `GRAPH <graph>`, as triplesOf writes them: in pages of `page` (the caller's result
 * limit, which caps each answer), ordered, until one comes back short.
 */
async function graphTriples(endpoint: string, key: string | undefined, graph: string, page: number | undefined): Promise<string[]> {
  const all: string[] = [];
  for (let offset = 0; ; offset += page ?? 0) {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/sparql-query',
        accept: 'application/sparql-results+json',
        ...(key !== undefined && { 'x-api-key': key }),
      },
      body: `SELECT ?s ?p ?o WHERE { GRAPH <${graph}> { ?s ?p ?o } } ORDER BY ?s ?p ?o${page === undefined ? '' : ` OFFSET ${offset}`}`,
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const rows = (JSON.parse(text) as { results: { bindings: Record<string, { value: string }>[] } }).results.bindings;
    all.push(...rows.map((row) => `${row['s']!.value} ${row['p']!.value} ${row['o']!.value}`));
    if (page === undefined || rows.length < page) return all.sort();
  }
}

interface AuditRecord {
  requestId: string;
  traceId: string;
  decision: string;
  status: number;
  code: string | null;
  agent: string | null;
  policies: string[] | null;
  limitedTo: number | null;
  dataset: { default: string[]; named: string[] } | null;
  graphs?: Record<string, { grantedBy: string[]; rowDataOf?: string[]; restrictions: unknown[] }>;
}

/** The graphs of the FROM and FROM NAMED clauses of a query text the store received, without the reserved empty graph. */
function forwardedDataset(query: string): { default: string[]; named: string[] } {
  const empty = 'urn:x-sparql-guard:empty';
  const named = [...query.matchAll(/FROM\s+NAMED\s+<([^>]*)>/gi)].map((match) => match[1]!);
  const all = [...query.matchAll(/FROM\s+<([^>]*)>/gi)].map((match) => match[1]!);
  return { default: all.filter((graph) => graph !== empty), named: named.filter((graph) => graph !== empty) };
}

/** Queries asked of every caller: each reads graphs a different way. */
function queries(random: () => number): { query: string; params?: Record<string, string> }[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const [one, two] = [pick(ALL_GRAPHS), pick(ALL_GRAPHS)];
  return [
    { query: 'SELECT ?s ?p ?o WHERE { ?s ?p ?o }' },
    { query: 'SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s ?p ?o } }' },
    { query: `SELECT ?g ?s WHERE { GRAPH ?g { ?s <${EX}p> ?o } } ORDER BY ?g` },
    { query: `SELECT * FROM <${one}> FROM NAMED <${two}> WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }` },
    { query: `ASK { GRAPH <${one}> { ?s ?p ?o } }` },
    { query: `CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }` },
    { query: `DESCRIBE ?s WHERE { ?s a <${EX}Row> }` },
    { query: `SELECT ?o WHERE { ?s <${EX}hid> ?o }` },
    { query: `SELECT ?s ?o WHERE { ?s <${EX}p> ?o }`, params: { 'default-graph-uri': one, 'named-graph-uri': two } },
  ];
}

describe('audit records against what the store ran, over random policy sets', () => {
  let folder: string;
  let store: TestGuard;
  let link: StoreLink;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-oracle-'));
    const data = join(folder, 'data.trig');
    writeFileSync(data, dataset());
    store = await startTestGuard({ embedded: { data: [data] } });
    link = await startStoreLink(store.guard.upstreamUrl);
  });
  after(async () => {
    await link?.close();
    await store?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  for (let round = 0; round < SETS; round += 1) {
    it(`policy set ${round} of seed ${SEED}`, async () => {
      const random = mulberry32(SEED * 1000 + round);
      const policies = drawPolicies(random, 3 + Math.floor(random() * 4));
      const policyFile = join(folder, `policies-${round}.ttl`);
      writeFileSync(policyFile, policyText(policies));
      const auditFile = join(folder, `audit-${round}.jsonl`);
      const apiKeys = CALLERS.filter(({ key }) => key !== undefined).map(({ agent, groups, key }) => ({
        agent,
        groups,
        sha256: sha256(key!),
      }));
      const guard = await startTestGuard({
        upstream: link.url,
        policies: [policyFile],
        auth: { apiKeys },
        audit: { file: auditFile },
        explain: true,
      });
      const context = `policies:\n${policyText(policies)}`;
      try {
        const explained: { form: URLSearchParams; caller: CallerSpec; dataset: AuditRecord['dataset'] }[] = [];
        const asked: {
          form: URLSearchParams;
          caller: CallerSpec;
          id: string;
          traceId: string;
          status: number;
          code: string | null;
          body: string;
          query: string;
        }[] = [];
        let serial = 0;
        for (const caller of CALLERS) {
          for (const { query, params } of queries(random)) {
            serial += 1;
            const traceId = `${round.toString(16).padStart(4, '0')}${serial.toString(16).padStart(4, '0')}${'a'.repeat(24)}`;
            const form = new URLSearchParams({ query, ...params });
            const response = await fetch(guard.endpoint, {
              method: 'POST',
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                accept: 'application/sparql-results+json, application/n-triples;q=0.9',
                traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
                ...(caller.key !== undefined && { 'x-api-key': caller.key }),
              },
              body: form,
            });
            const body = await response.text();
            asked.push({
              caller,
              id: response.headers.get('x-request-id')!,
              traceId,
              status: response.status,
              code: response.headers.get('sparql-guard-error'),
              body,
              query,
              form,
            });
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 80));
        const records = existsSync(auditFile)
          ? readFileSync(auditFile, 'utf8')
              .split('\n')
              .filter((line) => line !== '')
              .map((line) => JSON.parse(line) as AuditRecord)
          : [];
        assert.equal(records.length, asked.length, `one record per request\n${context}`);
        for (const request of asked) {
          const what = `${request.caller.name}: ${request.query}\n${context}`;
          const found = records.filter((record) => record.requestId === request.id);
          assert.equal(found.length, 1, `one record for ${what}`);
          const record = found[0]!;
          assert.equal(record.traceId, request.traceId, what);
          assert.equal(record.status, request.status, what);
          assert.equal(record.code, request.code, what);
          assert.equal(record.decision, request.status < 400 ? 'allowed' : request.status < 500 ? 'refused' : 'failed', what);
          const own = applying(policies, request.caller);
          if (own.length === 0) {
            assert.equal(record.policies, null, what);
            continue;
          }
          assert.deepEqual(
            record.policies,
            own.map(({ iri }) => iri),
            `policies of ${what}`,
          );
          const reached = link.received.flatMap((headers, at) =>
            String(headers['traceparent'] ?? '').includes(request.traceId) ? [at] : [],
          );
          const sent = reached.map((at) => link.queries[at]!);
          // The store's span is a child of the guard's, whose id is the record's requestId.
          for (const at of reached)
            assert.equal(link.received[at]!['traceparent'], `00-${request.traceId}-${record.requestId}-01`, `traceparent of ${what}`);
          if (request.status !== 200) {
            assert.equal(sent.length, 0, `a refused query never reaches the store: ${what}`);
            continue;
          }
          assert.equal(sent.length, 1, `one query to the store for ${what}`);
          // The dataset is the one the store's query ran over.
          assert.deepEqual(record.dataset, forwardedDataset(sent[0]!), `dataset of ${what}\nsent: ${sent[0]}`);
          // The caller's result limit (the largest its policies set) is the LIMIT the store ran for a query without one.
          const limits = own.flatMap(({ resultLimit }) => (resultLimit === undefined ? [] : [resultLimit]));
          const cap = limits.length === 0 ? null : Math.max(...limits);
          if (request.query === 'SELECT ?s ?p ?o WHERE { ?s ?p ?o }') {
            assert.equal(record.limitedTo, cap, `limitedTo of ${what}`);
            if (cap !== null) assert.match(sent[0]!, new RegExp(`LIMIT ${cap}\\s*$`), `the store's LIMIT for ${what}`);
          }
          explained.push({ form: request.form, caller: request.caller, dataset: record.dataset });
          const graphs = new Set([...record.dataset!.default, ...record.dataset!.named]);
          assert.deepEqual(Object.keys(record.graphs ?? {}).sort(), [...graphs].sort(), `graphs table of ${what}`);
          for (const graph of graphs) {
            const entry = record.graphs![graph]!;
            const granters = own.filter((policy) => graphsOf(policy, request.caller).has(graph)).map(({ iri }) => iri);
            assert.deepEqual(entry.grantedBy, granters, `grantedBy of ${graph} for ${what}`);
            const readers = own.filter(({ row }) => row === 'members').map(({ iri }) => iri);
            for (const reader of entry.rowDataOf ?? []) assert.ok(readers.includes(reader), `rowDataOf ${reader} in ${graph}: ${what}`);
            if (granters.length === 0) {
              assert.equal(graph, MEMBERS, `only a rule's data graph is read ungranted: ${graph} for ${what}`);
              assert.ok((entry.rowDataOf ?? []).length > 0, `an ungranted graph names the rule that reads it: ${what}`);
            }
          }
          // No graph the record leaves out is read: every graph an answer names is granted in the record.
          for (const match of request.body.matchAll(/"(?:in|other) (http:[^"]*)"/g)) {
            const graph = match[1]!;
            assert.ok(graphs.has(graph) && record.graphs![graph]!.grantedBy.length > 0, `answer reads ${graph} for ${what}`);
          }
        }
        // Explain shows the query the store got: its dataset is the record's.
        for (const { form, caller, dataset: recorded } of explained) {
          const response = await fetch(`${guard.endpoint}/explain`, {
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              ...(caller.key !== undefined && { 'x-api-key': caller.key }),
            },
            body: form,
          });
          const text = await response.text();
          assert.equal(response.status, 200, text);
          const shown = forwardedDataset((JSON.parse(text) as { query: string }).query);
          assert.deepEqual(shown, recorded, `explain's dataset for ${caller.name}: ${form.get('query')}\n${context}`);
        }
        // check --why names, per graph, the policies the records name (the same grant, the same table).
        for (const caller of CALLERS) {
          const own = applying(policies, caller);
          const configFile = join(folder, `check-${round}.json`);
          writeFileSync(configFile, JSON.stringify({ upstream: link.url, policies: [policyFile] }));
          const args = ['check', '--offline', '--json', '--config', configFile, '--why', caller.agent ?? 'anonymous'];
          for (const group of caller.groups) args.push('--group', group);
          const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, ...env } = process.env;
          // Asynchronously: the store's link runs in this process.
          const result = await promisify(execFile)(process.execPath, [BIN, ...args], { encoding: 'utf8', env, timeout: 60_000 });
          if (own.length === 0) continue;
          const trace = JSON.parse(result.stdout) as {
            limits: { kind: string; value: number; policies: string[] }[];
            graphs: { graph: string; policies: { policy: string }[]; restrictions: Restriction[] }[];
          };
          const limits = own.flatMap(({ resultLimit }) => (resultLimit === undefined ? [] : [resultLimit]));
          const cap = Math.max(...limits);
          assert.deepEqual(
            trace.limits.filter(({ kind }) => kind === 'resultLimit'),
            limits.length === 0
              ? []
              : [{ kind: 'resultLimit', value: cap, policies: own.filter(({ resultLimit }) => resultLimit === cap).map(({ iri }) => iri) }],
            `check --why's result limit for ${caller.name}\n${context}`,
          );
          const expected = new Map<string, string[]>();
          for (const policy of own) {
            for (const graph of graphsOf(policy, caller)) expected.set(graph, [...(expected.get(graph) ?? []), policy.iri]);
          }
          const told = new Map(trace.graphs.map(({ graph, policies: list }) => [graph, list.map(({ policy }) => policy)]));
          assert.deepEqual(
            [...told.keys()].sort(),
            [...expected.keys()].sort(),
            `check --why's graphs for ${caller.name}\n${context}\n${result.stdout}`,
          );
          for (const [graph, list] of expected)
            assert.deepEqual(told.get(graph), list, `check --why on ${graph} for ${caller.name}\n${context}`);
          const page = limits.length === 0 ? undefined : cap;
          const reads = new Map<string, Promise<string[]>>();
          const liveRead = (graph: string): Promise<string[]> => {
            let read = reads.get(graph);
            if (read === undefined) reads.set(graph, (read = graphTriples(guard.endpoint, caller.key, graph, page)));
            return read;
          };
          // The service description names the same graphs, with columns that are what the caller reads there.
          const description = await fetch(guard.endpoint, {
            headers: { accept: 'application/ld+json', ...(caller.key !== undefined && { 'x-api-key': caller.key }) },
          });
          const described = new Map(
            (
              (await description.json()) as {
                'sd:defaultDataset': {
                  'sd:namedGraph': {
                    'sd:name': { '@id': string };
                    'guard:hidePath'?: { '@id': string }[];
                    'guard:readPath'?: { '@id': string }[];
                    'guard:rowsRestricted'?: boolean;
                  }[];
                };
              }
            )['sd:defaultDataset']['sd:namedGraph'].map((entry) => [entry['sd:name']['@id'], entry]),
          );
          assert.deepEqual([...described.keys()].sort(), [...expected.keys()].sort(), `service description of ${caller.name}\n${context}`);
          for (const [graph, entry] of described) {
            if (entry['guard:rowsRestricted'] === true) continue;
            const live = await liveRead(graph);
            const hidden = (entry['guard:hidePath'] ?? []).map((each) => each['@id']);
            const read = entry['guard:readPath']?.map((each) => each['@id']);
            const visible = triplesOf(graph).filter((triple) => {
              const predicate = triple.split(' ')[1]!;
              return read === undefined ? !hidden.includes(predicate) : read.includes(predicate);
            });
            assert.deepEqual(live, visible, `the service description's columns of ${graph} for ${caller.name}\n${context}`);
          }
          // What check --why says of each graph is what a live query of that caller reads there.
          const restrictionsOf = new Map(trace.graphs.map(({ graph, restrictions }) => [graph, restrictions]));
          for (const graph of ALL_GRAPHS) {
            const live = await liveRead(graph);
            const what = `GRAPH <${graph}> read by ${caller.name}\n${context}\n${JSON.stringify(restrictionsOf.get(graph))}`;
            const restrictions = restrictionsOf.get(graph);
            if (restrictions === undefined) {
              assert.deepEqual(live, [], `not granted by check --why, nothing read: ${what}`);
              continue;
            }
            const data = triplesOf(graph);
            for (const triple of live) assert.ok(data.includes(triple), `a triple of the graph: ${triple}: ${what}`);
            const shown = (triple: string, columns: Columns): boolean => {
              const predicate = triple.split(' ')[1]!;
              return 'readPath' in columns ? columns.readPath.includes(predicate) : !columns.hidePath.includes(predicate);
            };
            const rows = restrictions.filter((each) => each.kind === 'rows');
            const open = restrictions.filter((each) => each.kind !== 'rows');
            const openShows = (triple: string): boolean =>
              open.every((each) =>
                each.kind === 'hidePath' ? !each.predicates!.includes(triple.split(' ')[1]!) : shown(triple, each as unknown as Columns),
              );
            if (rows.length === 0) {
              assert.deepEqual(live, data.filter(openShows), `what check --why says is read: ${what}`);
            } else {
              // A row rule shows its rows' columns; the policies without one, theirs: nothing else is read.
              for (const triple of live)
                assert.ok(openShows(triple) || rows.some((row) => shown(triple, row.columns!)), `${triple} shown by none: ${what}`);
            }
          }
        }
      } finally {
        await guard.close();
      }
    });
  }
});
