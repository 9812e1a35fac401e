// The redaction oracle: asks a guard with hidden paths every query of a corpus and compares each answer with a redacted embedded Oxigraph's.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import oxigraph from 'oxigraph';
import sparqljs from 'sparqljs';
import { Agent, fetch } from 'undici';
import { rewriteDescribe } from '../../src/sparql/rewrite-describe.js';
import { W3C_SUITE, mulberry32, readW3cTests } from '../w3c/w3c-evaluation.js';

/** The data a corpus is aimed at: its namespace, predicate local names, nodes and graphs. */
export interface OracleVocabulary {
  readonly namespace: string;
  /** Predicate local names, hidden ones included. */
  readonly locals: readonly string[];
  /** Subjects and objects as written in a query: variables, `[]`, `ex:` names, literals. */
  readonly nodes: readonly string[];
  readonly graphs: readonly string[];
}

/** One query and where it comes from (attack, golden, tests, w3c, w3c-mutated, generated). */
export interface OracleQuery {
  readonly source: string;
  readonly query: string;
}

/** Paths that reach the data every way SPARQL 1.1 §9.1 allows, zero-length ones included. */
function randomPath(pick: <T>(items: readonly T[]) => T, vocabulary: OracleVocabulary): string {
  const iri = (): string => (pick([0, 1, 2]) === 0 ? 'a' : `ex:${pick(vocabulary.locals)}`);
  const shapes = [
    () => '?p',
    () => '?q',
    iri,
    () => `${iri()}*`,
    () => `${iri()}?`,
    () => `${iri()}+`,
    () => `^${iri()}`,
    () => `!${iri()}`,
    () => `!(${iri()}|^${iri()})`,
    () => `(!${iri()})*`,
    () => `(!^${iri()})?`,
    () => `${iri()}/${iri()}`,
    () => `(${iri()}|${iri()}*)`,
    () => `(${iri()}?/^${iri()}*)`,
    () => `^(${iri()}*)`,
  ];
  return pick(shapes)();
}

/** A random query over the vocabulary: every query form, nested groups, datasets. */
export function randomQuery(random: () => number, vocabulary: OracleVocabulary): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const triple = (): string => `${pick(vocabulary.nodes)} ${randomPath(pick, vocabulary)} ${pick(vocabulary.nodes)} .`;
  const element = (): string =>
    pick([
      triple,
      triple,
      () => `OPTIONAL { ${triple()} }`,
      () => `GRAPH ?g { ${triple()} }`,
      () => `GRAPH <${pick(vocabulary.graphs)}> { ${triple()} }`,
      () => `FILTER EXISTS { ${triple()} }`,
      () => `FILTER NOT EXISTS { ${triple()} }`,
      () => `MINUS { ${triple()} }`,
      () => `{ ${triple()} } UNION { ${triple()} }`,
      () => `{ SELECT ?a ?b WHERE { ${triple()} } }`,
      // DISTINCT and grouped sub-selects joined with the rest (Virtuoso 7.2.5 dropped a FILTER(EXISTS) inside them).
      () => `{ SELECT DISTINCT ?a WHERE { ${triple()} ${triple()} } }`,
      () => `{ SELECT ?a (COUNT(*) AS ?c) WHERE { ${triple()} } GROUP BY ?a }`,
      () => 'FILTER(isNumeric(?b))',
      () => `VALUES ?a { ${vocabulary.nodes.filter((node) => /^(?:ex:|<|\d)/.test(node)).join(' ')} }`,
    ])();
  const body = Array.from({ length: 1 + Math.floor(random() * 3) }, element).join(' ');
  const where = `WHERE { ${triple()} ${body} }`;
  const [first = '', second = first] = vocabulary.graphs;
  const dataset = pick([
    '',
    '',
    '',
    `FROM <${first}> `,
    `FROM <${second}> FROM NAMED <${first}> `,
    `FROM <${first}> FROM <${second}> FROM NAMED <${second}> `,
  ]);
  const form = pick([
    `SELECT * ${dataset}${where}`,
    `SELECT DISTINCT ?a ?b ${dataset}${where}`,
    `SELECT (COUNT(*) AS ?n) (SUM(?b) AS ?s) ${dataset}${where}`,
    `SELECT ?a (COUNT(?b) AS ?n) ${dataset}${where} GROUP BY ?a`,
    `ASK ${dataset}${where}`,
    `CONSTRUCT { ?a <urn:x:r> ?b } ${dataset}${where}`,
    `DESCRIBE ?a ${dataset}${where}`,
  ]);
  return `PREFIX ex: <${vocabulary.namespace}>\n${form}`;
}

/** Maps a query's prefixes onto the vocabulary's namespace and its local names onto the vocabulary's, by the seed. */
export function mutate(query: string, random: () => number, vocabulary: OracleVocabulary): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const names = new Map<string, string>();
  return query
    .replace(/PREFIX\s+([A-Za-z]*):\s*<[^>]*>/gi, `PREFIX $1: <${vocabulary.namespace}>`)
    .replace(/(^|[\s({;,/|^!])([A-Za-z]*):([A-Za-z][\w-]*)/g, (_match, before: string, prefix: string, local: string) => {
      if (!names.has(local)) names.set(local, pick(vocabulary.locals));
      return `${before}${prefix}:${names.get(local)}`;
    });
}

/** Query texts written out in the project's test sources (no template placeholders). */
function queriesInSources(folders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders) {
    for (const file of readdirSync(folder)
      .filter((name) => name.endsWith('.ts'))
      .sort()) {
      const text = readFileSync(join(folder, file), 'utf8');
      for (const match of text.matchAll(/[`'](\s*(?:PREFIX|SELECT|ASK|CONSTRUCT|DESCRIBE|BASE)\b[^`']*)[`']/g)) {
        const query = match[1] ?? '';
        if (!query.includes('${') && query.includes('{')) found.push(query.replace(/\\n/g, '\n'));
      }
    }
  }
  return found;
}

/** The golden fixtures' queries (written against http://example.org/ns# and the g/people, g/hr graphs). */
function goldenQueries(): string[] {
  const folder = 'test/fixtures/sparql/golden';
  return readdirSync(folder)
    .sort()
    .flatMap((file) => {
      const match = /--- query\n([\s\S]*?)\n---/.exec(readFileSync(join(folder, file), 'utf8'));
      return match?.[1] === undefined ? [] : [match[1]];
    });
}

/**
 * Every query the project holds, in a fixed order: `attacks`, the golden fixtures, the query texts
 * of test/security and test/integration, the W3C syntax and evaluation queries, the W3C queries
 * mutated onto the vocabulary, and `generated` random queries (bench shapes belong in `attacks`).
 */
export function oracleCorpus(seed: number, vocabulary: OracleVocabulary, attacks: readonly string[], generated: number): OracleQuery[] {
  const random = mulberry32(seed);
  const w3cFiles = [...new Set(readW3cTests().flatMap((test) => (test.query?.endsWith('.rq') ? [test.query] : [])))].sort();
  const w3c = w3cFiles.map((file) => readFileSync(join(W3C_SUITE ?? '', file), 'utf8'));
  return [
    ...attacks.map((query) => ({ source: 'attack', query })),
    ...goldenQueries().map((query) => ({ source: 'golden', query })),
    ...queriesInSources(['test/security', 'test/integration']).map((query) => ({ source: 'tests', query })),
    ...w3c.map((query) => ({ source: 'w3c', query })),
    ...w3c.map((query) => ({ source: 'w3c-mutated', query: mutate(query, random, vocabulary) })),
    ...Array.from({ length: generated }, () => ({ source: 'generated', query: randomQuery(random, vocabulary) })),
  ];
}

/** Answers that differ between two evaluations of the same query for reasons other than the data. */
const NONDETERMINISTIC = /\b(?:RAND|UUID|STRUUID|NOW|BNODE|SAMPLE|GROUP_CONCAT|LIMIT|OFFSET)\b/i;

/**
 * True when a sub-select stands inside `GRAPH ?var`, or ?var occurs in its own pattern: Oxigraph 0.5
 * evaluates the sub-select once over all named graphs instead of once per graph, and reads ?var in
 * the pattern as the graph's name (SPARQL 1.1 §18.6 joins it afterwards), so the embedded reference
 * cannot judge them (the guard writes such an element per graph where the graphs hide different sets).
 */
function referenceMisreadsGraphVariable(node: unknown, inGraphVariable = false): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some((item) => referenceMisreadsGraphVariable(item, inGraphVariable));
  const record = node as Record<string, unknown>;
  if (inGraphVariable && record['type'] === 'query') return true;
  const name = record['name'] as { termType?: unknown; value?: unknown } | undefined;
  const graphVariable = record['type'] === 'graph' && name?.termType === 'Variable';
  // The same holds for the graph variable inside its own pattern: Oxigraph reads it as bound to the graph name there.
  if (graphVariable && JSON.stringify(record['patterns']).includes(JSON.stringify({ termType: 'Variable', value: name.value })))
    return true;
  const inside = inGraphVariable || graphVariable;
  return Object.values(record).some((value) => referenceMisreadsGraphVariable(value, inside));
}

/**
 * True when a basic graph pattern joins four or more parts that share no variable or blank node: the reference
 * evaluates in this process, synchronously and unbounded, and a cross product of the whole data (the corpus scrapes
 * `SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ... }` from a test of store refusals) held the test for minutes.
 */
export function isLargeCrossProduct(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some(isLargeCrossProduct);
  const record = node as Record<string, unknown>;
  if (record['type'] === 'bgp' && Array.isArray(record['triples']) && partsOf(record['triples']) >= 4) return true;
  return Object.values(record).some(isLargeCrossProduct);
}

/** How many parts a list of triple patterns falls into when patterns sharing a variable or blank node are joined. */
function partsOf(triples: readonly unknown[]): number {
  const parent = triples.map((_, index) => index);
  const root = (index: number): number => (parent[index] === index ? index : (parent[index] = root(parent[index] ?? index)));
  const seen = new Map<string, number>();
  triples.forEach((triple, index) => {
    for (const term of Object.values(triple as Record<string, { termType?: string; value?: string }>)) {
      if (term.termType !== 'Variable' && term.termType !== 'BlankNode') continue;
      const key = `${term.termType}:${term.value}`;
      const other = seen.get(key);
      if (other === undefined) seen.set(key, index);
      else parent[root(index)] = root(other);
    }
  });
  return new Set(triples.map((_, index) => root(index))).size;
}

/** An embedded store holding `data` (TriG) minus the triples whose predicate `hiddenIn` their graph lists. */
export function redactedStore(data: string, hiddenIn: (graph: string) => ReadonlySet<string>): oxigraph.Store {
  const store = new oxigraph.Store();
  store.load(data, { format: 'application/trig' });
  for (const quad of store.match(null, null, null, null)) {
    if (quad.graph.termType === 'NamedNode' && hiddenIn(quad.graph.value).has(quad.predicate.value)) store.delete(quad);
  }
  return store;
}

/** A canonical answer: sorted solution lines (JSON) or sorted triples (N-Triples), blank node labels dropped. */
export function canonical(text: string, graph: boolean): string[] {
  if (graph) {
    return (
      text
        .split('\n')
        // Virtuoso 7.2 separates terms by tabs (a literal holds a tab only escaped) and writes `# Empty NT` for no triples.
        .map((line) =>
          unescapeCodepoints(
            line
              .trim()
              .replaceAll('\t', ' ')
              .replace(/_:[^\s]+/g, '_:'),
          ),
        )
        .filter((line) => line !== '' && !line.startsWith('#'))
        .sort()
    );
  }
  const json = JSON.parse(text) as { boolean?: boolean; results?: { bindings: Record<string, Record<string, string>>[] } };
  if (json.boolean !== undefined) return [String(json.boolean)];
  return (json.results?.bindings ?? [])
    .map((row) =>
      Object.keys(row)
        .sort()
        .map((name) => {
          const term = row[name] ?? {};
          // Virtuoso writes some typed literals as the 2007 JSON results format's "typed-literal": the same term.
          const type = term['type'] === 'typed-literal' ? 'literal' : term['type'];
          // Virtuoso 7.2 answers a CONSTRUCT asked for JSON results as s/p/o bindings, its template's blank nodes as
          // "uri" terms labelled `_:vb<n>`, fresh per answer (no IRI starts with `_:`: a scheme begins with a letter).
          const blank = type === 'bnode' || (type === 'uri' && term['value']?.startsWith('_:') === true);
          return `${name}=${blank ? '_:' : JSON.stringify([type, term['value'], term['xml:lang'], term['datatype']])}`;
        })
        .join(' '),
    )
    .sort();
}

/**
 * An N-Triples line with its \u and \U escapes written as the characters (Virtuoso 7.2 escapes every non-ASCII character,
 * Oxigraph and Jena write UTF-8): one text per triple whichever the store. An escaped backslash is passed over whole, so
 * the literal `\\u0022` (a backslash, then u0022) stays as it is; a character N-Triples must escape keeps its escape.
 */
function unescapeCodepoints(line: string): string {
  return line.replace(/\\(\\|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})/g, (escape, body: string) => {
    if (body === '\\') return escape;
    const code = Number.parseInt(body.slice(1), 16);
    return code < 0x20 || code === 0x22 || code === 0x5c || code === 0x7f ? escape : String.fromCodePoint(code);
  });
}

/** True when every item of `small` occurs in `big` at least as often. */
function submultiset(small: readonly string[], big: readonly string[]): boolean {
  const counts = new Map<string, number>();
  for (const item of big) counts.set(item, (counts.get(item) ?? 0) + 1);
  for (const item of small) {
    const left = counts.get(item) ?? 0;
    if (left === 0) return false;
    counts.set(item, left - 1);
  }
  return true;
}

/**
 * Whether `answer` is `expected` with more duplicates, for a query with an alternative path: the same set of rows,
 * each at least as often. Only then is the difference the reference's set evaluation of `P|Q`, not a leak.
 */
function alternativeDuplicates(where: unknown, answer: readonly string[], expected: readonly string[]): boolean {
  if (!JSON.stringify(where ?? null).includes('"pathType":"|"')) return false;
  if (!submultiset(expected, answer)) return false;
  const set = (items: readonly string[]) => JSON.stringify([...new Set(items)].sort());
  return set(answer) === set(expected);
}

/** The stores that run the reference's engine (Oxigraph): they aggregate as the reference does. */
const REFERENCE_ENGINES = new Set(['embedded', 'oxigraph']);

/**
 * For a SELECT whose top level aggregates: whether the guard's answer to the same WHERE without the aggregation
 * (`SELECT *`, no GROUP BY, HAVING, ORDER BY or LIMIT) equals the reference's over the view. Then the store got the
 * view's solutions and a difference in the aggregated answer is how the store aggregates, not what it was given.
 */
async function aggregatesTheViewsSolutions(
  tree: sparqljs.SparqlQuery | undefined,
  guard: (text: string) => Promise<{ readonly status: number; readonly body: string }>,
  reference: (text: string) => string[] | undefined,
): Promise<boolean> {
  if (tree?.type !== 'query' || tree.queryType !== 'SELECT') return false;
  const select = tree as sparqljs.SelectQuery & Record<string, unknown>;
  if (select.group === undefined && !JSON.stringify(select.variables).includes('"type":"aggregate"')) return false;
  const { group: _group, having: _having, order: _order, limit: _limit, offset: _offset, distinct: _d, reduced: _r, ...rest } = select;
  const inner = new sparqljs.Generator().stringify({ ...rest, variables: [new sparqljs.Wildcard()] } as sparqljs.SelectQuery);
  const answer = await guard(inner);
  const expected = reference(inner);
  if (answer.status !== 200 || expected === undefined) return false;
  return JSON.stringify(canonical(answer.body, false)) === JSON.stringify(expected);
}

/** How one query ended: compared equal, refused, invalid, not compared, or a failure. */
export type Verdict = 'equal' | 'refused' | 'invalid' | 'skipped' | 'store-deviates' | 'leak' | 'over-filtered';

/** What {@link runOracle} needs: the guard, the caller, and the reference data. */
export interface OracleRun {
  readonly endpoint: string;
  /** The API key of the caller with hidden paths. */
  readonly key: string;
  /** With `fullKey`, a caller granted the same graphs with nothing hidden: a query whose answer for it differs from the unredacted embedded store's is a store deviation, not compared. */
  readonly fullKey?: string;
  /** The data (TriG text) the store behind the guard holds. */
  readonly data: string;
  /** The caller's granted graphs, sorted. */
  readonly granted: readonly string[];
  /** Its hidden set per granted graph. */
  readonly hidden: ReadonlyMap<string, ReadonlySet<string>>;
  /** The reference the answers are held to, when not the data redacted by `hidden`: the caller's view of rows and columns (row-view.ts). */
  readonly view?: oxigraph.Store;
  readonly queries: readonly OracleQuery[];
  /**
   * The store's name (rig-stores.ts). Only a store other than Oxigraph, the reference's engine, may aggregate the
   * view's solutions otherwise (aggregatesTheViewsSolutions); on Oxigraph such a difference is the guard's.
   */
  readonly store?: string;
}

/** The counts per verdict and the failures (leaks and over-filtering), each with its query. */
export interface OracleResult {
  readonly counts: Record<Verdict, number>;
  readonly failures: string[];
  /** The store deviations, each with why and its query (on one line), to be printed: they are counted, not compared. */
  readonly deviations: string[];
}

const BASE = 'http://localhost/';

/**
 * Asks every query through the guard and compares the answer with the redacted store's for the
 * caller's effective dataset (requested ∩ granted, or all granted, as the guard computes it):
 * every graph redacted by its own hidden set, the default graph their merge. Any difference is a
 * failure: a leak when the guard's answer holds something the redacted one lacks, else
 * over-filtering.
 */
export async function runOracle(run: OracleRun): Promise<OracleResult> {
  const parser = new sparqljs.Parser({ baseIRI: BASE });
  const generator = new sparqljs.Generator();
  const exact = run.view ?? redactedStore(run.data, (graph) => run.hidden.get(graph) ?? new Set());
  const full = run.fullKey === undefined ? undefined : redactedStore(run.data, () => new Set());
  const counts: Record<Verdict, number> = {
    equal: 0,
    refused: 0,
    invalid: 0,
    skipped: 0,
    'store-deviates': 0,
    leak: 0,
    'over-filtered': 0,
  };
  const failures: string[] = [];
  const deviations: string[] = [];
  const ask = (key: string, query: string) => askGuard(run.endpoint, query, key);
  for (const { source, query } of run.queries) {
    let tree: sparqljs.SparqlQuery | undefined;
    try {
      tree = parser.parse(query);
    } catch {
      tree = undefined; // codepoint escapes, which the guard decodes and this parser does not
    }
    if (tree?.type === 'query' && isLargeCrossProduct(tree.where)) {
      // Not compared (below), and not asked: the store may spend timeoutMs on it.
      counts.skipped++;
      continue;
    }
    const started = performance.now();
    const { status, body } = await ask(run.key, query);
    const seconds = (performance.now() - started) / 1000;
    // A query the store takes long over is named: a run of another seed that stalls says on what.
    if (seconds > 5)
      process.stdout.write(`# slow (${seconds.toFixed(1)} s, ${status}, ${source}): ${query.replace(/\s+/g, ' ').slice(0, 400)}\n`);
    if (status === 403) {
      counts.refused++;
      continue;
    }
    if (status === 400) {
      counts.invalid++;
      continue;
    }
    if (
      tree === undefined ||
      tree.type !== 'query' ||
      NONDETERMINISTIC.test(query) ||
      status !== 200 ||
      isLargeCrossProduct(tree.where) ||
      referenceMisreadsGraphVariable(tree.where)
    ) {
      // A store error (5xx) is no answer to compare: lab stores refuse some paths themselves.
      counts.skipped++;
      continue;
    }
    const from = tree.from;
    const given = from !== undefined && (from.default.length > 0 || from.named.length > 0);
    const effective = (requested: readonly { value: string }[] | undefined): string[] => {
      const graphs = given ? (requested ?? []).map((term) => term.value).filter((graph) => run.granted.includes(graph)) : run.granted;
      return graphs.length === 0 ? ['urn:x-oracle:empty'] : [...new Set(graphs)];
    };
    const defaults = effective(from?.default);
    const named = effective(from?.named);
    const graph = tree.queryType === 'CONSTRUCT' || tree.queryType === 'DESCRIBE';
    // DESCRIBE means the guard's documented CONSTRUCT (docs/design/sparql.md, "DESCRIBE"), on the redacted data too.
    const asked =
      tree.queryType === 'DESCRIBE'
        ? generator.stringify(rewriteDescribe(tree as sparqljs.DescribeQuery) as unknown as sparqljs.SparqlQuery)
        : query;
    const options = {
      base_iri: BASE,
      default_graph: defaults.map((iri) => oxigraph.namedNode(iri)),
      named_graphs: named.map((iri) => oxigraph.namedNode(iri)),
      results_format: graph ? 'application/n-triples' : 'application/sparql-results+json',
    };
    const same = (a: readonly string[], b: readonly string[]): boolean => JSON.stringify(a) === JSON.stringify(b);
    const reference = (store: oxigraph.Store, text = asked): string[] | undefined => {
      try {
        return canonical(store.query(text, options) as string, graph);
      } catch {
        return undefined; // text a lab store takes and Oxigraph does not: nothing to compare with
      }
    };
    const expected = reference(exact);
    if (expected === undefined) {
      counts.skipped++;
      continue;
    }
    if (full !== undefined && run.fullKey !== undefined) {
      const unhidden = await ask(run.fullKey, query);
      // Only an answer is compared: a query the store gave up on (502 at timeoutMs) is one the reference would
      // evaluate in this process, unbounded (a five-way cross product of the whole data took over 15 minutes).
      const unredacted = unhidden.status === 200 ? reference(full) : undefined;
      if (unhidden.status !== 200 || unredacted === undefined || !same(canonical(unhidden.body, graph), unredacted)) {
        counts['store-deviates']++;
        const why =
          unhidden.status !== 200
            ? `the unrestricted caller got ${unhidden.status}`
            : "the unrestricted caller's answer is not the store's";
        deviations.push(`${why} (${source}): ${query.replace(/\s+/g, ' ').slice(0, 300)}`);
        continue;
      }
    }
    const answer = canonical(body, graph);
    if (same(answer, expected)) counts.equal++;
    else if (alternativeDuplicates(tree.where, answer, expected)) {
      // The reference (Oxigraph) evaluates an alternative path as a set of pairs; §18.5 writes it as a Union, a bag,
      // which the guard's expansion for a restricted caller keeps (docs/design/sparql.md, "Fixed-length paths").
      counts['store-deviates']++;
      deviations.push(`the reference drops an alternative path's duplicates (${source}): ${query.replace(/\s+/g, ' ').slice(0, 300)}`);
    } else if (
      !REFERENCE_ENGINES.has(run.store ?? 'embedded') &&
      (await aggregatesTheViewsSolutions(
        tree,
        (text) => ask(run.key, text),
        (text) => reference(exact, text),
      ))
    ) {
      // The guard hands the store the view's solutions, which the store aggregates unlike the reference: Virtuoso 7.2
      // leaves SUM and AVG over no solution unbound (§18.5.1.3: 0), and its MAX of stored strings is not their order.
      counts['store-deviates']++;
      deviations.push(`the store aggregates the view's solutions otherwise (${source}): ${query.replace(/\s+/g, ' ').slice(0, 300)}`);
    } else {
      const verdict = submultiset(answer, expected) ? 'over-filtered' : 'leak';
      counts[verdict]++;
      failures.push(
        `${verdict} (${source}): ${query}\n  guard: ${answer.slice(0, 6).join(' | ')}\n  redacted: ${expected.slice(0, 6).join(' | ')}`,
      );
    }
  }
  return { counts, failures, deviations };
}

/** One POST of `query` to the guard at `endpoint` as the caller of API key `key`, asking for results or N-Triples. */
/**
 * A connection per query: the oracle evaluates each expected answer in this process, synchronously, and a heavy one
 * holds the event loop past the guard's idle time (10 s); a pooled connection would then be written to as the
 * guard's overdue keep-alive timer closes it (ECONNRESET, a race of the test's own making).
 */
const ONE_CONNECTION_PER_QUERY = new Agent({ pipelining: 0 });

export async function askGuard(endpoint: string, query: string, key: string): Promise<{ readonly status: number; readonly body: string }> {
  const response = await fetch(endpoint, {
    dispatcher: ONE_CONNECTION_PER_QUERY,
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/sparql-results+json, application/n-triples;q=0.9',
      authorization: `Bearer ${key}`,
    },
    body: new URLSearchParams({ query }),
  });
  return { status: response.status, body: await response.text() };
}

/** A deterministic sample of about `size` queries; attacks always. */
export function sampleOf(queries: readonly OracleQuery[], size: number, seed: number): OracleQuery[] {
  const random = mulberry32(seed);
  return queries.filter((item) => item.source === 'attack' || random() < size / queries.length);
}
