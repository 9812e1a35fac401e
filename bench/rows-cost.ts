// Benchmark (l): the cost of row and column rules: the store's time for the rewritten query against the unrewritten one over the materialised view (BSBM-shaped data, each lab store that is up), and the guard's CPU per request on a plan-cache hit with and without the rules.

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import autocannon from 'autocannon';
import oxigraph from 'oxigraph';
import { updateLabStore } from '../test/helpers/lab-update.js';
import { buildView, readRowPolicies } from '../test/helpers/row-view.js';
import { canonical } from '../test/helpers/redaction-oracle.js';
import { BSBM_SHAPES, seededRandom } from './bsbm-mix.js';
import { cpuSeconds } from './_util/cpu-seconds.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';

const markdownTable = (columns: readonly string[], rows: readonly (readonly string[])[]): string =>
  [tableHeader(columns, 'lrrrr'), ...rows.map((row) => tableRow(row))].join('\n');
import { percentile } from './_util/percentile.js';
import { startBenchGuard, startBenchServer, type BenchServer } from './_util/start-bench-server.js';

/** Most the rewritten query may take, as a multiple of the unrewritten one over the view, at the median of the mix. */
const STORE_TARGET = 2;
/** Most the guard's CPU per request may be with row and column rules, as a multiple of the same caller's without. */
const CPU_TARGET = 1.2;
/** Requests per shape and variant, after WARM_UP each (BENCH_ROWS_REQUESTS overrides). */
const REQUESTS = Number(process.env.BENCH_ROWS_REQUESTS ?? 15);
/** BENCH_ROWS_TEXTS names a folder: each shape's last texts are written there and the run's graphs kept, to time or profile a cell by hand. */
const TEXTS = process.env.BENCH_ROWS_TEXTS;
const WARM_UP = 3;
/** The BSBM explore query each shape of `BSBM_SHAPES` is (query 9, a DESCRIBE, is not in the mix). */
const SHAPE_NAMES = ['Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6', 'Q7', 'Q8', 'Q10', 'Q11'];
const RATE_PER_S = 300;
const CONNECTIONS = 8;
const MEASURE_S = 6;
const ORDER = ['plain', 'rows', 'rows', 'plain', 'plain', 'rows'] as const;
type Variant = (typeof ORDER)[number];

const BSBM = 'http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/';
const INST = `${BSBM}instances/`;
const VOC = `${BSBM}vocabulary/`;
const RDFS = 'http://www.w3.org/2000/01/rdf-schema#';
const DC = 'http://purl.org/dc/elements/1.1/';
const REV = 'http://purl.org/stuff/rev#';
const FOAF = 'http://xmlns.com/foaf/0.1/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const ACL = 'https://bench.example.org/acl#';
/** BENCH_ROWS_SCALE multiplies the products, offers, reviews and reviewers (and the rows the rule admits): 1 gives 52,280 triples. */
const SCALE = Number(process.env.BENCH_ROWS_SCALE ?? 1);
if (!Number.isInteger(SCALE) || SCALE < 1)
  throw new Error(`BENCH_ROWS_SCALE must be a whole number from 1, not ${process.env.BENCH_ROWS_SCALE}`);
const SIZES = {
  products: 1000 * SCALE,
  producers: 20,
  types: 20,
  features: 100,
  vendors: 20,
  offers: 4000 * SCALE,
  reviews: 2000 * SCALE,
  reviewers: 200 * SCALE,
};
const WORDS = ['alarm', 'shiny', 'grey', 'bright', 'heavy', 'compact', 'quiet'];
const COUNTRIES = ['US', 'DE', 'GB', 'JP', 'FR', 'AT'];

/** The predicates the explore mix names: the column list (rdf:type included); two more in the data stay hidden. */
const LISTED = [
  'http://www.w3.org/1999/02/22-rdf-syntax-ns#type',
  `${RDFS}label`,
  `${RDFS}comment`,
  `${VOC}producer`,
  `${DC}publisher`,
  `${VOC}productFeature`,
  ...[1, 2, 3].map((n) => `${VOC}productPropertyNumeric${n}`),
  ...[1, 4].map((n) => `${VOC}productPropertyTextual${n}`),
  `${VOC}product`,
  `${VOC}price`,
  `${VOC}vendor`,
  `${VOC}validTo`,
  `${VOC}country`,
  `${VOC}deliveryDays`,
  `${VOC}reviewFor`,
  `${REV}reviewer`,
  `${DC}title`,
  `${REV}text`,
  `${VOC}reviewDate`,
  `${VOC}rating1`,
  `${FOAF}name`,
];

const product = (i: number): string => `${INST}dataFromProducer${1 + (i % SIZES.producers)}/Product${i}`;
const offer = (o: number): string => `${INST}dataFromVendor${1 + (o % SIZES.vendors)}/Offer${o}`;

/** BSBM-shaped N-Triples in one graph (every kind of record together), and each subject's region for the row rule. */
function generateData(): { triples: string[]; regions: string[] } {
  const triples: string[] = [];
  const subjects: string[] = [];
  const add = (s: string, p: string, o: string) => triples.push(`<${s}> <${p}> ${o} .`);
  const literal = (text: string) => JSON.stringify(text);
  const integer = (n: number) => `"${n}"^^<${XSD}integer>`;
  const date = (n: number) => `"2008-0${1 + (n % 9)}-${10 + (n % 18)}T00:00:00"^^<${XSD}dateTime>`;
  for (let p = 1; p <= SIZES.producers; p += 1) {
    const s = `${INST}dataFromProducer${p}/Producer${p}`;
    subjects.push(s);
    add(s, `${RDFS}label`, literal(`Producer ${p}`));
    add(s, `${VOC}country`, `<http://downlode.org/rdf/iso-3166/countries#${COUNTRIES[p % 6]}>`);
  }
  for (let i = 1; i <= SIZES.products; i += 1) {
    const s = product(i);
    const producer = `${INST}dataFromProducer${1 + (i % SIZES.producers)}/Producer${1 + (i % SIZES.producers)}`;
    subjects.push(s);
    add(s, `${RDFS}label`, literal(`${WORDS[i % 7]} product ${i}`));
    add(s, `${RDFS}comment`, literal(`a ${WORDS[(i * 3) % 7]} thing`));
    add(s, 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', `<${VOC}Product>`);
    add(s, 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', `<${INST}ProductType${1 + (i % SIZES.types)}>`);
    add(s, `${VOC}producer`, `<${producer}>`);
    add(s, `${DC}publisher`, `<${producer}>`);
    for (let k = 0; k < 3; k += 1) add(s, `${VOC}productFeature`, `<${INST}ProductFeature${1 + ((i * 7 + k * 13) % SIZES.features)}>`);
    for (const n of [1, 2, 3]) add(s, `${VOC}productPropertyNumeric${n}`, integer(1 + ((i * 37 + n * 11) % 500)));
    for (const n of [1, 4]) add(s, `${VOC}productPropertyTextual${n}`, literal(`text ${i} ${n}`));
    add(s, `${VOC}productPropertyNumeric5`, integer(i % 97));
    add(s, `${VOC}secretCost`, integer(i * 3));
  }
  for (let v = 1; v <= SIZES.vendors; v += 1) {
    const s = `${INST}dataFromVendor${v}/Vendor${v}`;
    subjects.push(s);
    add(s, `${RDFS}label`, literal(`Vendor ${v}`));
    add(s, `${VOC}country`, `<http://downlode.org/rdf/iso-3166/countries#${COUNTRIES[v % 6]}>`);
  }
  for (let o = 1; o <= SIZES.offers; o += 1) {
    const s = offer(o);
    const vendor = `${INST}dataFromVendor${1 + (o % SIZES.vendors)}/Vendor${1 + (o % SIZES.vendors)}`;
    subjects.push(s);
    add(s, `${VOC}product`, `<${product(1 + (o % SIZES.products))}>`);
    add(s, `${VOC}vendor`, `<${vendor}>`);
    add(s, `${DC}publisher`, `<${vendor}>`);
    add(s, `${VOC}price`, `"${(o % 1000) + 0.5}"^^<${XSD}double>`);
    add(s, `${VOC}validTo`, date(o));
    add(s, `${VOC}deliveryDays`, integer(1 + (o % 7)));
  }
  for (let r = 1; r <= SIZES.reviewers; r += 1) {
    const s = `${INST}dataFromRatingSite1/Reviewer${r}`;
    subjects.push(s);
    add(s, `${FOAF}name`, literal(`Reviewer ${r}`));
  }
  for (let r = 1; r <= SIZES.reviews; r += 1) {
    const s = `${INST}dataFromRatingSite1/Review${r}`;
    subjects.push(s);
    add(s, `${VOC}reviewFor`, `<${product(1 + (r % SIZES.products))}>`);
    add(s, `${REV}reviewer`, `<${INST}dataFromRatingSite1/Reviewer${1 + (r % SIZES.reviewers)}>`);
    add(s, `${DC}title`, literal(`Review ${r}`));
    add(s, `${REV}text`, `${literal(`review text ${r}`)}@${r % 3 === 0 ? 'de' : 'en'}`);
    add(s, `${VOC}reviewDate`, date(r));
    add(s, `${VOC}rating1`, integer(1 + (r % 10)));
  }
  const regions = subjects.map((s, index) => `<${s}> <${ACL}region> "r${1 + (index % 4)}" .`);
  return { triples, regions };
}

/** A mix query with its constants moved onto the generated data. */
function onData(text: string): string {
  return text
    .replace(/dataFromProducer\d+\/Product(\d+)/g, (_m, n: string) => product(1 + (Number(n) % SIZES.products)).slice(INST.length))
    .replace(/dataFromVendor\d+\/Offer(\d+)/g, (_m, n: string) => offer(1 + (Number(n) % SIZES.offers)).slice(INST.length))
    .replace(/ProductType(\d+)/g, (_m, n: string) => `ProductType${1 + (Number(n) % SIZES.types)}`)
    .replace(/ProductFeature(\d+)/g, (_m, n: string) => `ProductFeature${1 + (Number(n) % SIZES.features)}`);
}

/** A lab store: its query URL and how to write to it (test/helpers/lab-update.ts: HTTP update, or isql for Virtuoso). */
interface LabStore {
  readonly name: string;
  readonly queryUrl: string;
  update(text: string): Promise<void>;
}

function labStores(): LabStore[] {
  const stores: LabStore[] = [];
  for (const name of ['oxigraph', 'virtuoso', 'jena'] as const) {
    const queryUrl = process.env[`RIG_${name.toUpperCase()}_QUERY`];
    if (!queryUrl || (name !== 'virtuoso' && !process.env[`RIG_${name.toUpperCase()}_UPDATE`])) continue;
    // The tests' writer: HTTP, or isql for Virtuoso with an update of several operations split into one statement each.
    stores.push({ name, queryUrl, update: (text) => updateLabStore({ name, queryUrl }, text) });
  }
  return stores;
}

async function insert(store: LabStore, graph: string, lines: readonly string[]): Promise<void> {
  // Virtuoso's SPARQL compiler runs out of memory on an INSERT DATA of about 5,000 triples.
  const chunk = store.name === 'virtuoso' ? 1_500 : 20_000;
  for (let from = 0; from < lines.length; from += chunk)
    await store.update(`INSERT DATA { GRAPH <${graph}> { ${lines.slice(from, from + chunk).join('\n')} } }`);
}

/** The row and column policy of the bench caller: rows of its regions (groups), the mix's columns. */
function rowsPolicy(main: string, acl: string): string {
  return `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix acl: <${ACL}> .
<https://bench.example.org/policies/rows> a guard:Policy ; guard:group "bench" ; guard:readGraph <${main}> ;
  guard:rowPattern "?this acl:region ?group" ; guard:rowData <${acl}> ;
  guard:readPath ${LISTED.map((iri) => `<${iri}>`).join(', ')} .
<https://bench.example.org/policies/plain> a guard:Policy ; guard:group "plain" ; guard:readGraph <${main}> .
`;
}
const ROWS_KEY = 'sg_bench_rows_caller_0123456789';
const PLAIN_KEY = 'sg_bench_plain_caller_0123456789';
const apiKeys = [
  {
    agent: 'https://bench.example.org/agents/rows',
    groups: ['bench', 'r1', 'r2'],
    sha256: createHash('sha256').update(ROWS_KEY).digest('hex'),
  },
  { agent: 'https://bench.example.org/agents/plain', groups: ['plain'], sha256: createHash('sha256').update(PLAIN_KEY).digest('hex') },
];

/** One POST of `query` to a store, timed; `dataset` as the protocol's default-graph-uri. */
async function timed(url: string, query: string, dataset?: string): Promise<{ ms: number; body: string; status: number }> {
  const body = new URLSearchParams({ query });
  if (dataset !== undefined) body.append('default-graph-uri', dataset);
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
    body,
  });
  const text = await response.text();
  return { ms: performance.now() - started, body: text, status: response.status };
}

const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Part (a) on one lab store: write the data, the rule data and the view, time both variants shape by shape, remove the graphs. */
async function storeTimes(store: LabStore): Promise<void> {
  const base = `https://bench.example.org/rows-${process.pid}-${Date.now()}/`;
  const [main, acl, viewGraph] = [`${base}main`, `${base}acl`, `${base}view`];
  const { triples, regions } = generateData();
  const policies = rowsPolicy(main, acl);
  const data = new oxigraph.Store();
  data.load(triples.join('\n'), { format: 'application/n-triples', to_graph_name: oxigraph.namedNode(main) });
  data.load(regions.join('\n'), { format: 'application/n-triples', to_graph_name: oxigraph.namedNode(acl) });
  const view = buildView(data, readRowPolicies(policies), { agent: apiKeys[0]!.agent, groups: apiKeys[0]!.groups });
  const viewLines = view
    .dump({ format: 'application/n-triples', from_graph_name: oxigraph.namedNode(main) })
    .split('\n')
    .filter((line) => line !== '');
  const loadStarted = performance.now();
  try {
    await insert(store, main, triples);
    await insert(store, acl, regions);
    await insert(store, viewGraph, viewLines);
  } catch (error) {
    // A load that fails halfway leaves no graph of the run behind in a shared lab.
    for (const graph of [main, acl, viewGraph]) await store.update(`DROP SILENT GRAPH <${graph}>`);
    throw error;
  }
  const loadS = (performance.now() - loadStarted) / 1000;
  const guard = await startBenchGuard(store.queryUrl, 1, { policies, apiKeys, explain: true });
  // rowChecks "exists" beside the default join, where the configuration docs allow it (never Virtuoso 7.2, which drops it in OPTIONAL).
  const existsGuard =
    store.name === 'virtuoso'
      ? undefined
      : await startBenchGuard(store.queryUrl, 1, { policies, apiKeys, explain: true, rowChecks: 'exists' });
  const explain = async (server: BenchServer, query: string, index: number): Promise<string> => {
    const explained = await fetch(`${server.url}/sparql/explain`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${ROWS_KEY}` },
      body: new URLSearchParams({ query }),
    });
    if (explained.status !== 200) throw new Error(`explain of shape ${index + 1}: ${explained.status} ${await explained.text()}`);
    return ((await explained.json()) as { query: string }).query;
  };
  try {
    const random = seededRandom(7);
    const rows: string[][] = [];
    const all = { view: [] as number[], rewritten: [] as number[], exists: [] as number[] };
    let checked = 0;
    let equal = 0;
    const unequal: string[] = [];
    for (const [index, shape] of BSBM_SHAPES.entries()) {
      const times = { view: [] as number[], rewritten: [] as number[], exists: [] as number[] };
      for (let n = 0; n < WARM_UP + REQUESTS; n += 1) {
        const query = onData(shape(random));
        const variants: { name: 'view' | 'rewritten' | 'exists'; text: string; dataset?: string }[] = [
          { name: 'view', text: query, dataset: viewGraph },
          { name: 'rewritten', text: await explain(guard, query, index) },
        ];
        if (existsGuard !== undefined) variants.push({ name: 'exists', text: await explain(existsGuard, query, index) });
        // Rotate which variant goes first, so a warm cache favours none.
        const order = variants.map((_, k) => variants[(k + n) % variants.length]!);
        const answers = new Map<string, { ms: number; body: string; status: number }>();
        for (const variant of order) answers.set(variant.name, await timed(store.queryUrl, variant.text, variant.dataset));
        const reference = answers.get('view')!;
        for (const variant of variants.slice(1)) {
          const guarded = answers.get(variant.name)!;
          if (guarded.status !== 200 || reference.status !== 200)
            throw new Error(
              `shape ${index + 1} on ${store.name} (${variant.name}): ${guarded.status} / ${reference.status} ${guarded.body.slice(0, 200)}`,
            );
          // Checked before it counts: the rewritten query's answer is the view's (ORDER BY with LIMIT may break ties apart).
          checked += 1;
          const same = JSON.stringify(canonical(guarded.body, false)) === JSON.stringify(canonical(reference.body, false));
          if (same) equal += 1;
          else if (!/LIMIT/.test(query)) {
            unequal.push(`shape ${index + 1} (${variant.name})`);
            // BENCH_ROWS_DIFFERENCES names a file that collects each difference, to look into.
            const file = process.env.BENCH_ROWS_DIFFERENCES;
            if (file !== undefined)
              appendFileSync(
                file,
                `${store.name} shape ${index + 1} (${variant.name})\n${query}\n--- rewritten\n${variant.text}\n--- guard\n${guarded.body}\n--- view\n${reference.body}\n\n`,
              );
          }
        }
        if (TEXTS !== undefined && n === WARM_UP + REQUESTS - 1) {
          mkdirSync(TEXTS, { recursive: true });
          for (const variant of variants)
            writeFileSync(
              join(TEXTS, `${store.name}-${SHAPE_NAMES[index]?.toLowerCase()}-${variant.name}.rq`),
              `# dataset: ${variant.dataset ?? 'as written'}\n${variant.text}\n`,
            );
        }
        if (n < WARM_UP) continue;
        for (const [name, answer] of answers) times[name as keyof typeof times].push(answer.ms);
      }
      all.view.push(...times.view);
      all.rewritten.push(...times.rewritten);
      all.exists.push(...times.exists);
      const [v, r] = [median(times.view), median(times.rewritten)];
      const e = existsGuard === undefined ? undefined : median(times.exists);
      rows.push([
        SHAPE_NAMES[index] ?? `shape ${index + 1}`,
        v.toFixed(2),
        r.toFixed(2),
        (r / v).toFixed(2),
        e === undefined ? '-' : e.toFixed(2),
        e === undefined ? '-' : (e / v).toFixed(2),
      ]);
    }
    const [v, r] = [median(all.view), median(all.rewritten)];
    const e = existsGuard === undefined ? undefined : median(all.exists);
    rows.push([
      '**mix median**',
      v.toFixed(2),
      r.toFixed(2),
      `**${(r / v).toFixed(2)}**`,
      e === undefined ? '-' : e.toFixed(2),
      e === undefined ? '-' : `**${(e / v).toFixed(2)}**`,
    ]);
    console.log(
      `#### ${store.name}: ${triples.length} triples in one graph, ${regions.length} rule triples, view ${viewLines.length} triples (loaded in ${loadS.toFixed(1)} s); ${REQUESTS} requests per shape and variant after ${WARM_UP} warm-up\n`,
    );
    console.log(
      markdownTable(
        [
          'shape',
          'view, unrewritten: p50 ms',
          'rewritten (rowChecks join): p50 ms',
          'ratio',
          'rewritten (rowChecks exists): p50 ms',
          'ratio',
        ],
        rows,
      ),
    );
    console.log(
      `\nanswers equal to the view's: ${equal} of ${checked}${unequal.length > 0 ? `; DIFFERENT without LIMIT: ${[...new Set(unequal)].join(', ')}` : ''}`,
    );
    const verdict = (ratio: number) => (ratio <= STORE_TARGET ? 'met' : `MISSED by ${(ratio - STORE_TARGET).toFixed(2)}`);
    console.log(
      `${store.name}: rewritten / view at the median of the mix, rowChecks join ${(r / v).toFixed(2)} x (target <= ${STORE_TARGET} x: ${verdict(r / v)})` +
        (e === undefined
          ? '; rowChecks exists not measured (never with Virtuoso 7.2)\n'
          : `, rowChecks exists ${(e / v).toFixed(2)} x (${verdict(e / v)})\n`),
    );
  } finally {
    await guard.stop();
    await existsGuard?.stop();
    if (TEXTS === undefined) for (const graph of [main, acl, viewGraph]) await store.update(`DROP SILENT GRAPH <${graph}>`);
    else console.log(`graphs kept for ${TEXTS}: ${main} ${acl} ${viewGraph} (drop them after)\n`);
  }
}

/** Part (b): one fresh guard in front of the stand-in store, one caller, one query repeated (a plan-cache hit). */
async function cpuScenario(variant: Variant): Promise<{ cpuUsPerRequest: number; requests: number; failures: number }> {
  const store = await startBenchServer('fixed-upstream');
  const servers: BenchServer[] = [store];
  try {
    const guard = await startBenchGuard(`${store.url}/sparql`, 1, {
      policies: rowsPolicy('https://bench.example.org/main', 'https://bench.example.org/acl'),
      apiKeys,
    });
    servers.push(guard);
    const request = {
      method: 'POST' as const,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/sparql-results+json',
        authorization: `Bearer ${variant === 'rows' ? ROWS_KEY : PLAIN_KEY}`,
      },
      body: new URLSearchParams({ query: onData(BSBM_SHAPES[2]!(seededRandom(3))) }).toString(),
    };
    const target = `${guard.url}/sparql`;
    const check = await fetch(target, request);
    if (check.status !== 200) throw new Error(`${variant}: ${check.status} ${await check.text()}`);
    await check.arrayBuffer();
    await autocannon({ url: target, connections: CONNECTIONS, duration: 2, overallRate: RATE_PER_S, ...request });
    const before = cpuSeconds(guard.pid);
    const result = await autocannon({ url: target, connections: CONNECTIONS, duration: MEASURE_S, overallRate: RATE_PER_S, ...request });
    const after = cpuSeconds(guard.pid);
    if (before === undefined || after === undefined) throw new Error('no /proc: this benchmark needs Linux');
    return {
      cpuUsPerRequest: ((after - before) * 1e6) / result.requests.total,
      requests: result.requests.total,
      failures: result.non2xx + result.errors + result.timeouts,
    };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(await cpuScenario(args[0] as Variant)));
    return;
  }
  console.log('### (l) Row and column rules\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start\n`);
  console.log(
    "Store time: the BSBM explore mix (`bsbm-mix.ts`, constants moved onto the generated data) asked by a caller with a row rule (`?this acl:region ?group`, two of four regions, over a rule graph) and a column list (the mix's 24 predicates; two more in the data hidden); each query's rewritten text (from explain) sent directly to the store, against the unrewritten text over a graph holding only the caller's materialised view (test/helpers/row-view.ts), alternating which goes first; p50 per shape, and the median over the whole mix.\n",
  );
  const stores = labStores();
  if (stores.length === 0) console.log('skipped: no lab store (RIG_OXIGRAPH_QUERY / RIG_VIRTUOSO_QUERY / RIG_JENA_QUERY are not set)\n');
  for (const store of stores) await storeTimes(store);

  console.log(
    `Guard CPU on a plan-cache hit: \`sparql-guard serve\` (1 worker) in front of the Node stand-in store, BSBM Q3 repeated at a fixed ${RATE_PER_S} req/s over ${CONNECTIONS} connections for ${MEASURE_S} s after 2 s, as the caller with the row rule and the column list and as a caller of the same graph without them; runs in the order ${ORDER.join(', ')}, each in a fresh guard process, median per variant\n`,
  );
  const runs: Record<Variant, { cpuUsPerRequest: number; requests: number; failures: number }[]> = { plain: [], rows: [] };
  for (const variant of ORDER) runs[variant].push(runScenario(import.meta.url, variant));
  const cpu = (variant: Variant) => median(runs[variant].map((run) => run.cpuUsPerRequest));
  console.log(
    markdownTable(
      ['caller', 'guard CPU us/req (median)', 'runs (us/req)', 'requests', 'failed'],
      (['plain', 'rows'] as const).map((variant) => [
        variant === 'rows' ? 'row rule + column list' : 'same graph, no rules',
        cpu(variant).toFixed(0),
        runs[variant].map((run) => run.cpuUsPerRequest.toFixed(0)).join(', '),
        String(runs[variant].reduce((sum, run) => sum + run.requests, 0)),
        String(runs[variant].reduce((sum, run) => sum + run.failures, 0)),
      ]),
    ),
  );
  const ratio = cpu('rows') / cpu('plain');
  console.log(
    `\nguard CPU with rules / without: ${ratio.toFixed(2)} x (target <= ${CPU_TARGET} x: ${ratio <= CPU_TARGET ? 'met' : `MISSED by ${(ratio - CPU_TARGET).toFixed(2)}`})\n`,
  );
}

await main();
