// Runs W3C query-evaluation tests through a real guard on the embedded Oxigraph store, and directly on that store, and compares both with the expected results.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
// Test-side only: Oxigraph parses the suite's data and expected results (src/ uses it only in src/embedded).
import oxigraph from 'oxigraph';
import { sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

/**
 * The W3C SPARQL 1.0 and 1.1 suites: the folder W3C_SPARQL names when it holds tests.json, else
 * the copy in the repository (test/fixtures/w3c-sparql: data files only, under the W3C test
 * suite licence, see its INDEX.md). Only a checkout without that folder skips the W3C tests.
 */
export const W3C_SUITE = [process.env.W3C_SPARQL ?? '', resolve('test/fixtures/w3c-sparql')].find(
  (folder) => folder !== '' && existsSafe(join(folder, 'tests.json')),
);

/** Why the W3C tests are skipped, or false when the suite is there. */
export const W3C_SKIP: string | false =
  W3C_SUITE === undefined ? 'no W3C suite: test/fixtures/w3c-sparql/tests.json is missing and W3C_SPARQL is not set' : false;

/** One record of tests.json (the fields used here). */
export interface W3cTest {
  readonly id: string;
  readonly type: string;
  readonly folder: string;
  readonly approved: boolean;
  readonly query: string | null;
  readonly data: readonly string[];
  readonly graphData: readonly { readonly path: string; readonly graph: string }[];
  readonly result: string | null;
}

/** Outcome of one evaluation test. */
export interface Outcome {
  readonly id: string;
  /** pass: guard = expected; store: guard = direct store answer != expected (store deviation); guard: guard != direct (guard bug); skip: not compared. */
  readonly verdict: 'pass' | 'store' | 'guard' | 'skip';
  readonly note: string;
}

const RS = 'http://www.w3.org/2001/sw/DataAccess/tests/result-set#';
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';
const FORMATS: Readonly<Record<string, string>> = { '.ttl': 'text/turtle', '.nt': 'application/n-triples', '.rdf': 'application/rdf+xml' };

/** All tests.json records. */
export function readW3cTests(): W3cTest[] {
  if (W3C_SUITE === undefined) return [];
  return JSON.parse(readFileSync(join(W3C_SUITE, 'tests.json'), 'utf8')) as W3cTest[];
}

/** The plain evaluation tests: no entailment regime, no SERVICE mock endpoints (INDEX.md section d). */
export function plainEvaluationTests(): W3cTest[] {
  return readW3cTests().filter(
    (t) =>
      (t.type === 'QueryEvaluationTest' || t.type === 'CSVResultFormatTest') &&
      !t.folder.endsWith('/entailment') &&
      !t.folder.endsWith('/service'),
  );
}

const fileIri = (path: string): string => pathToFileURL(join(W3C_SUITE ?? '', path)).href;

/** Graph IRI of a named-graph file: its own IRI, resolved against the manifest's folder (INDEX.md). */
const graphIri = (test: W3cTest, graph: string): string => new URL(graph, fileIri(`${test.folder}/manifest.ttl`)).href;

/** Data files a test reads, including files named by FROM / FROM NAMED in the query (sparql10/dataset). */
function filesOf(test: W3cTest, query: string): string[] {
  const files = [...test.data, ...test.graphData.map((g) => g.path)];
  for (const match of query.matchAll(/FROM\s+(?:NAMED\s+)?<([^>]*)>/gi)) {
    const iri = new URL(match[1] ?? '', fileIri(test.query ?? '')).href;
    if (iri.startsWith('file:')) files.push(decodeURIComponent(new URL(iri).pathname).slice((W3C_SUITE ?? '').length + 1));
  }
  return files;
}

/** A running guard over every graph the given tests need, each granted. */
export interface EvaluationRig {
  readonly guard: TestGuard;
  /** Callers with a random subset of the graphs each (seeded); differential() takes their index. */
  readonly callers: number;
  run(test: W3cTest): Promise<Outcome>;
  /**
   * The answer through the guard as caller `index` equals the answer of the store
   * asked directly with a dataset of exactly the granted part of the test's dataset.
   */
  /** `noNamed`: the caller reads no named graph of the test (the direct side names a stand-in, NO_NAMED). */
  differential(test: W3cTest, index: number): Promise<{ readonly same: boolean; readonly note: string; readonly noNamed: boolean }>;
  close(): Promise<void>;
}

/**
 * Loads every data file of `tests` into one N-Quads file, each file as a named graph named by
 * its file IRI (the default graph of a test is then `default-graph-uri` = its data files), grants
 * every one of them, and starts the guard on the embedded store with that data.
 */
export async function startEvaluationRig(
  tests: readonly W3cTest[],
  options: { callers?: number; seed?: number } = {},
): Promise<EvaluationRig> {
  const store = new oxigraph.Store();
  const graphs = new Set<string>();
  for (const test of tests) {
    const query = readFileSync(join(W3C_SUITE ?? '', test.query ?? ''), 'utf8');
    for (const file of filesOf(test, query)) {
      const iri = fileIri(file);
      if (graphs.has(iri)) continue;
      graphs.add(iri);
      const format = FORMATS[extname(file)];
      if (format === undefined) continue;
      try {
        store.load(readFileSync(join(W3C_SUITE ?? '', file), 'utf8'), { format, base_iri: iri, to_graph_name: oxigraph.namedNode(iri) });
      } catch {
        // A file Oxigraph cannot read: the tests that use it fail and are reported as such.
      }
    }
  }
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-w3c-'));
  const dataFile = join(folder, 'data.nq');
  writeFileSync(dataFile, store.dump({ format: 'application/n-quads' }));
  const policyFile = join(folder, 'policies.ttl');
  const random = mulberry32(options.seed ?? 20261121);
  const grants = Array.from({ length: options.callers ?? 0 }, () => new Set([...graphs].filter(() => random() < 0.5)));
  const policy = (name: string, agent: string, granted: Iterable<string>) =>
    `<urn:w3c:policy:${name}> a guard:Policy ; guard:agent ${agent} ;\n  guard:readGraph <urn:w3c:never>${[...granted].map((g) => `, <${g}>`).join('')} .\n`;
  writeFileSync(
    policyFile,
    '@prefix guard: <https://w3id.org/sparql-guard#> .\n' +
      policy('all', 'guard:Anonymous', graphs) +
      grants.map((granted, i) => policy(String(i), `<urn:w3c:agent:${i}>`, granted)).join(''),
  );
  const apiKeys = grants.map((_, i) => ({ agent: `urn:w3c:agent:${i}`, groups: [], sha256: sha256(callerKey(i)) }));
  const guard = await startTestGuard({ policies: [policyFile], embedded: { data: [dataFile] }, auth: { apiKeys }, maxQueryDepth: 256 });
  return {
    guard,
    callers: grants.length,
    run: (test) => runOne(guard, test),
    differential: (test, index) => runDifferential(guard, test, index, grants[index] ?? new Set(), graphs),
    async close() {
      await guard.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The named graph the direct side names when it should name none (the protocol has no empty list). */
const NO_NAMED = 'urn:w3c:no-named';
const callerKey = (index: number): string => `w3c-differential-key-${index}-0123456789abcdef`;

/** A small seeded generator, so a failing grant can be replayed (seed option, default fixed). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function runDifferential(
  guard: TestGuard,
  test: W3cTest,
  index: number,
  granted: ReadonlySet<string>,
  everyGraph: ReadonlySet<string>,
): Promise<{ same: boolean; note: string; noNamed: boolean }> {
  if (test.query === null || test.result === null) return { same: true, note: 'no query', noNamed: false };
  const text = readFileSync(join(W3C_SUITE ?? '', test.query), 'utf8');
  const query = `BASE <${fileIri(test.query)}>\n${text}`;
  const hasDataset = /^\s*(?:[^#\n]*\s)?FROM\s/im.test(text.replace(/"[^"\n]*"|<[^>\n]*>/g, ' '));
  let requestedDefault: string[];
  let requestedNamed: string[];
  const params: Record<string, string[]> = {};
  if (hasDataset) {
    const iris = (named: boolean) =>
      [...text.matchAll(named ? /FROM\s+NAMED\s+<([^>]*)>/gi : /FROM\s+(?!NAMED\b)<([^>]*)>/gi)].map(
        (m) => new URL(m[1] ?? '', fileIri(test.query ?? '')).href,
      );
    requestedDefault = iris(false);
    requestedNamed = iris(true);
  } else {
    requestedDefault = test.data.map(fileIri);
    requestedNamed = test.graphData.map((g) => graphIri(test, g.graph));
    params['default-graph-uri'] = requestedDefault.length > 0 ? requestedDefault : ['urn:w3c:empty-default'];
    params['named-graph-uri'] = requestedNamed.length > 0 ? requestedNamed : [NO_NAMED];
  }
  // Graphs the suite does not load (unknown to the store) count as granted-and-empty on both sides.
  const keep = (iri: string) => granted.has(iri) || !everyGraph.has(iri);
  const visibleDefault = requestedDefault.filter(keep);
  const visibleNamed = requestedNamed.filter(keep);
  const direct = {
    'default-graph-uri': visibleDefault.length > 0 ? visibleDefault : ['urn:w3c:empty-default'],
    'named-graph-uri': visibleNamed.length > 0 ? visibleNamed : [NO_NAMED],
  };
  const graphForm = /^\s*(?:[^#\n]*\s)?(CONSTRUCT|DESCRIBE)\b/im.test(text);
  const throughGuard = await ask(guard.endpoint, query, params, graphForm, callerKey(index));
  let answer = await ask(guard.guard.upstreamUrl, query, direct, graphForm);
  // The protocol cannot ask for no named graph: the stand-in is one, empty, and `GRAPH ?g { }` finds it. With no
  // named graph GRAPH ?g has no solution (§18.6), so a row that binds the stand-in is not in the reference.
  const noNamed = visibleNamed.length === 0;
  if (noNamed && answer.kind === 'rows') answer = { kind: 'rows', rows: answer.rows.filter((row) => !row.includes(`=<${NO_NAMED}>`)) };
  const same = canonical(throughGuard) === canonical(answer);
  return { same, note: same ? '' : `guard ${describe(throughGuard)} / direct ${describe(answer)}`, noNamed };
}

async function runOne(guard: TestGuard, test: W3cTest): Promise<Outcome> {
  const skip = (note: string): Outcome => ({ id: test.id, verdict: 'skip', note });
  if (test.result === null || test.query === null) return skip('no expected result');
  const ext = extname(test.result);
  if (ext === '.csv' || ext === '.tsv') return skip('CSV/TSV result-format test: the guard passes the store bytes through; not compared');
  const text = readFileSync(join(W3C_SUITE ?? '', test.query), 'utf8');
  // The query's relative IRIs resolve against its own file (W3C manifests' convention); a later BASE in the query wins.
  const query = `BASE <${fileIri(test.query)}>\n${text}`;
  const hasDataset = /^\s*(?:[^#\n]*\s)?FROM\s/im.test(text.replace(/"[^"\n]*"|<[^>\n]*>/g, ' '));
  const params: Record<string, string[]> = {};
  if (!hasDataset) {
    params['default-graph-uri'] = test.data.length > 0 ? test.data.map(fileIri) : ['urn:w3c:empty-default'];
    if (test.graphData.length > 0) params['named-graph-uri'] = test.graphData.map((g) => graphIri(test, g.graph));
    else params['named-graph-uri'] = ['urn:w3c:no-named'];
  }
  let expected: Answer;
  try {
    expected = readExpected(join(W3C_SUITE ?? '', test.result));
  } catch (error) {
    return skip(`expected result unreadable: ${(error as Error).message.slice(0, 80)}`);
  }
  const graphForm = expected.kind === 'graph';
  const throughGuard = await ask(guard.endpoint, query, params, graphForm);
  // Direct: the same query to the store itself, with the dataset of exactly the granted graphs.
  const direct = await ask(guard.guard.upstreamUrl, query, hasDataset ? {} : params, graphForm);
  const guardKey = canonical(throughGuard);
  const directKey = canonical(direct);
  if (guardKey === canonical(expected)) return { id: test.id, verdict: 'pass', note: '' };
  if (guardKey === directKey) return { id: test.id, verdict: 'store', note: describe(throughGuard) };
  return { id: test.id, verdict: 'guard', note: `guard ${describe(throughGuard)} / direct ${describe(direct)}` };
}

/** An answer reduced to what the comparison needs. */
type Answer =
  | { kind: 'boolean'; value: boolean }
  | { kind: 'rows'; rows: string[] }
  | { kind: 'graph'; triples: string[] }
  | { kind: 'error'; status: number; message: string };

async function ask(endpoint: string, query: string, params: Record<string, string[]>, graph: boolean, key?: string): Promise<Answer> {
  const body = new URLSearchParams({ query });
  for (const [name, values] of Object.entries(params)) for (const value of values) body.append(name, value);
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: graph ? 'application/n-triples' : 'application/sparql-results+json',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) return { kind: 'error', status: response.status, message: text.trim().slice(0, 120) };
  if (graph) return { kind: 'graph', triples: ntriplesKeys(text) };
  const json = JSON.parse(text) as { boolean?: boolean; results?: { bindings: Record<string, JsonTerm>[] } };
  if (typeof json.boolean === 'boolean') return { kind: 'boolean', value: json.boolean };
  return {
    kind: 'rows',
    rows: (json.results?.bindings ?? []).map((row) => rowKey(Object.entries(row).map(([k, t]) => [k, jsonTermKey(t)]))),
  };
}

interface JsonTerm {
  type: string;
  value: string;
  datatype?: string;
  'xml:lang'?: string;
}

function jsonTermKey(term: JsonTerm): string {
  if (term.type === 'uri') return `<${term.value}>`;
  if (term.type === 'bnode') return '_:';
  return literalKey(term.value, term['xml:lang'], term.datatype);
}

function literalKey(value: string, lang: string | undefined, datatype: string | undefined): string {
  if (lang) return `${JSON.stringify(value)}@${lang.toLowerCase()}`;
  if (datatype && datatype !== XSD_STRING && datatype !== RDF_LANG_STRING) return `${JSON.stringify(value)}^^<${datatype}>`;
  return JSON.stringify(value);
}

/** Blank nodes compare equal to each other: a weak form of "up to blank-node renaming", documented as such. */
function rowKey(entries: [string, string][]): string {
  return entries
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, term]) => `${name}=${term}`)
    .join(' ');
}

function canonical(answer: Answer): string {
  if (answer.kind === 'boolean') return `ask:${answer.value}`;
  if (answer.kind === 'rows') return `rows:${[...answer.rows].sort().join('\n')}`;
  if (answer.kind === 'graph') return `graph:${[...new Set(answer.triples)].sort().join('\n')}`;
  return `error:${answer.status}`;
}

function describe(answer: Answer): string {
  if (answer.kind === 'error') return `${answer.status} ${answer.message}`;
  if (answer.kind === 'boolean') return `ASK ${answer.value}`;
  if (answer.kind === 'rows') return `${answer.rows.length} rows`;
  return `${answer.triples.length} triples`;
}

function ntriplesKeys(text: string): string[] {
  const store = new oxigraph.Store();
  store.load(text, { format: 'application/n-triples' });
  return store.match(null, null, null, null).map((q) => [termKey(q.subject), termKey(q.predicate), termKey(q.object)].join(' '));
}

function termKey(term: { termType: string; value: string; language?: string; datatype?: { value: string } }): string {
  if (term.termType === 'NamedNode') return `<${term.value}>`;
  if (term.termType === 'BlankNode') return '_:';
  return literalKey(term.value, term.language, term.datatype?.value);
}

/** Reads an expected result: SPARQL XML / JSON results, a DAWG result-set graph, or an RDF graph. */
function readExpected(file: string): Answer {
  const text = readFileSync(file, 'utf8');
  const ext = extname(file);
  if (ext === '.srj') {
    const json = JSON.parse(text) as { boolean?: boolean; results?: { bindings: Record<string, JsonTerm>[] } };
    if (typeof json.boolean === 'boolean') return { kind: 'boolean', value: json.boolean };
    return {
      kind: 'rows',
      rows: (json.results?.bindings ?? []).map((row) => rowKey(Object.entries(row).map(([k, t]) => [k, jsonTermKey(t)]))),
    };
  }
  if (ext === '.srx') return readSrx(text);
  const format = FORMATS[ext];
  if (format === undefined) throw new Error(`unknown result format ${ext}`);
  const store = new oxigraph.Store();
  store.load(text, { format, base_iri: pathToFileURL(file).href });
  const isResultSet =
    store.match(null, oxigraph.namedNode('http://www.w3.org/1999/02/22-rdf-syntax-ns#type'), oxigraph.namedNode(`${RS}ResultSet`), null)
      .length > 0;
  if (!isResultSet)
    return {
      kind: 'graph',
      triples: store.match(null, null, null, null).map((q) => [termKey(q.subject), termKey(q.predicate), termKey(q.object)].join(' ')),
    };
  const booleans = store.match(null, oxigraph.namedNode(`${RS}boolean`), null, null);
  if (booleans[0] !== undefined) return { kind: 'boolean', value: booleans[0].object.value === 'true' };
  const rows = new Map<string, [string, string][]>();
  for (const solution of store.match(null, oxigraph.namedNode(`${RS}solution`), null, null)) rows.set(solution.object.value, []);
  for (const [id, entries] of rows) {
    const node = id.startsWith('_:') || !/^[a-z]+:/i.test(id) ? oxigraph.blankNode(id.replace(/^_:/, '')) : oxigraph.namedNode(id);
    for (const binding of store.match(node, oxigraph.namedNode(`${RS}binding`), null, null)) {
      const b = binding.object as Parameters<typeof store.match>[0];
      const name = store.match(b, oxigraph.namedNode(`${RS}variable`), null, null)[0]?.object.value;
      const value = store.match(b, oxigraph.namedNode(`${RS}value`), null, null)[0]?.object;
      if (name !== undefined && value !== undefined) entries.push([name, termKey(value as Parameters<typeof termKey>[0])]);
    }
  }
  return { kind: 'rows', rows: [...rows.values()].map(rowKey) };
}

const XML_ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const unxml = (s: string): string =>
  s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (_, e: string) =>
    e[0] === '#'
      ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)))
      : (XML_ENTITIES[e] ?? `&${e};`),
  );

function readSrx(text: string): Answer {
  const boolean = /<boolean>\s*(true|false)\s*<\/boolean>/.exec(text);
  if (boolean) return { kind: 'boolean', value: boolean[1] === 'true' };
  const rows: string[] = [];
  for (const result of text.matchAll(/<result>([\s\S]*?)<\/result>|<result\s*\/>/g)) {
    const entries: [string, string][] = [];
    for (const binding of (result[1] ?? '').matchAll(/<binding\s+name\s*=\s*["']([^"']+)["']\s*>([\s\S]*?)<\/binding>/g)) {
      const inner = binding[2] ?? '';
      const uri = /<uri>([\s\S]*?)<\/uri>/.exec(inner);
      const literal = /<literal([^>]*?)(?:\/>|>([\s\S]*?)<\/literal>)/.exec(inner);
      let key = '_:';
      if (uri) key = `<${unxml(uri[1]?.trim() ?? '')}>`;
      else if (literal) {
        const attrs = literal[1] ?? '';
        const lang = /xml:lang\s*=\s*["']([^"']+)["']/.exec(attrs)?.[1];
        const datatype = /datatype\s*=\s*["']([^"']+)["']/.exec(attrs)?.[1];
        key = literalKey(unxml(literal[2] ?? ''), lang, datatype ? unxml(datatype) : undefined);
      }
      entries.push([binding[1] ?? '', key]);
    }
    rows.push(rowKey(entries));
  }
  return { kind: 'rows', rows };
}

function existsSafe(file: string): boolean {
  try {
    readFileSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Sums outcomes into the figures the report quotes. */
export function tally(outcomes: readonly Outcome[]): Record<Outcome['verdict'], number> {
  const counts = { pass: 0, store: 0, guard: 0, skip: 0 };
  for (const outcome of outcomes) counts[outcome.verdict]++;
  return counts;
}
