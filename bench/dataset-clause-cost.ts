// Benchmark (j): what the dataset clause costs the store: per BSBM query and caller, the forwarded text in each dataset form (config
// `datasetForm`: clauses, graph filters) against the caller's text over a materialised view, side by side.

import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';
import { percentile } from './_util/percentile.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CALLERS, COUNTRIES, GRAPHS, generateBsbmData, viewGraph, writeNQuads, type BenchCaller } from './bsbm-data.js';
import { BSBM_BI, BSBM_EXPLORE, seededRandom, type BsbmQuery } from './bsbm-mix.js';
import { GuardError } from '../src/guard-error.js';
import type { Grant } from '../src/policy/policy-set.js';
import { createPlanner } from '../src/sparql/create-planner.js';
import type { DatasetForm } from '../src/sparql/graph-filter-form.js';

/** Timed runs of each text per cell (after one warm-up of each), alternating forwarded and view. */
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Untimed passes over every cell's texts before the timed one (`BENCH_WARM_PASSES`). */
const WARM_PASSES = Number(process.env.BENCH_WARM_PASSES ?? 2);
/** A cell whose slower text takes longer than this per run is timed with fewer runs (at least one). */
const CELL_BUDGET_MS = Number(process.env.BENCH_CELL_MS ?? 4000);
const TIMEOUT_MS = 120_000;
/** The targets of the scenario, with six graphs granted: no query above MAX, the median at most MEDIAN. */
const TARGET_MAX = 3;
const TARGET_MEDIAN = 1.5;

/** The lab stores this scenario measures, by the variable that names their query URL (a lab of BSBM data, bench/README.md). */
const STORES: readonly (readonly [name: string, variable: string])[] = [
  ['oxigraph', 'RIG_OXIGRAPH_QUERY'],
  ['virtuoso', 'RIG_VIRTUOSO_QUERY'],
  ['jena', 'RIG_JENA_QUERY'],
];

/**
 * The variable naming the stores that hold the views apart from the data (`RIG_OXIGRAPH_QUERY` →
 * `RIG_OXIGRAPH_VIEWS`): query URLs, comma-separated, each a store of the same kind loaded with
 * one view (`--write-split`). Unset, each view is read from the store of the data.
 */
function viewsVariable(variable: string): string {
  return variable.replace(/_QUERY$/, '_VIEWS');
}

interface Cell {
  query: string;
  caller: string;
  /** FROM clauses of the forwarded text. */
  fromClauses: number;
  /** 'ok', 'refused <code>' (the guard answers, the store is not asked), 'differs' (answers not equal), or the store's failure. */
  outcome: string;
  forwardedMs?: number;
  /** The text in the graph-filter form; undefined when the form keeps the clauses (then the same text as forwarded). */
  filtersMs?: number;
  /** 'ok', 'clauses kept', 'differs' or the store's failure, for the graph-filter form. */
  filtersOutcome?: string;
  viewMs?: number;
}

/** One text of a cell, the store it is sent to, and its timed runs. */
interface TimedText {
  text: string;
  url: string;
  times: number[];
}

const planners: Record<DatasetForm, ReturnType<typeof createPlanner>> = {
  clauses: createPlanner({ baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 0, maxBytes: 1 } }),
  'graph-filters': createPlanner({
    baseIri: 'http://localhost/',
    maxQueryDepth: 64,
    planCache: { maxEntries: 0, maxBytes: 1 },
    datasetForm: 'graph-filters',
  }),
};

function grantOf(caller: BenchCaller): Grant {
  return {
    policies: ['urn:x-bench:policy'],
    graphs: new Set(caller.graphs),
    hiddenByGraph: caller.hiddenByGraph as Grant['hiddenByGraph'],
  };
}

/** The forwarded text for a caller in a dataset form (clauses by default), or the guard's refusal. */
function forwardedText(query: string, caller: BenchCaller, form: DatasetForm = 'clauses'): string | GuardError {
  try {
    return planners[form].plan({ query, defaultGraphs: [], namedGraphs: [] }, grantOf(caller)).query;
  } catch (error) {
    if (error instanceof GuardError) return error;
    throw error;
  }
}

/** The caller's text over its view: the same generator's text with the view graph as the whole dataset. */
function viewText(query: string, caller: BenchCaller): string {
  const view: BenchCaller = { name: 'view', graphs: [viewGraph(caller)], hiddenByGraph: new Map() };
  const text = forwardedText(query, view);
  if (text instanceof GuardError) throw text;
  return text;
}

async function ask(url: string, query: string): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: /^\s*(?:BASE\s*<[^>]*>\s*)?(?:CONSTRUCT|DESCRIBE)/i.test(query) ? 'application/n-triples' : 'application/sparql-results+json',
    },
    body: new URLSearchParams({ query }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const body = await response.text();
  return { ms: performance.now() - started, status: response.status, body };
}

/**
 * A warning when the store holds a reused connection back (three or more of nine `ASK {}` on
 * one kept-alive connection at 30 ms or more): the timed requests pay it, on alternate requests
 * or on all, whatever the query, so the ratios measure the stall. The lab's Jena endpoint does it
 * (Java's built-in HTTP server without TCP_NODELAY: Nagle holds its response's second write until
 * the client's delayed ACK, 40 ms); bench/README.md says how to start it without.
 */
async function keepAliveStall(url: string): Promise<string | undefined> {
  const times: number[] = [];
  for (let i = 0; i < 9; i++) times.push((await ask(url, 'ASK {}')).ms);
  const stalled = times.filter((ms) => ms >= 30).length;
  if (stalled < 3) return undefined;
  return `warning: ${stalled} of 9 ASK {} on a reused connection took 30 ms or more (${times.map((ms) => ms.toFixed(0)).join(', ')} ms): the store stalls kept-alive requests and the ratios below measure that (bench/README.md, the lab's Jena)`;
}

/** An answer in a canonical form: SPARQL JSON bindings or N-Triples lines, sorted. */
function canonical(body: string): string {
  try {
    const json = JSON.parse(body) as { boolean?: boolean; results?: { bindings: unknown[] } };
    if (json.results === undefined) return String(json.boolean);
    // Averages of floats summed in another order differ in their last digits: compared to 4 significant digits.
    const rounded = (term: { type?: string; value?: string; datatype?: string }) =>
      /#(?:float|double|decimal)$/.test(term.datatype ?? '') ? { ...term, value: Number(term.value).toPrecision(4) } : term;
    return json.results.bindings
      .map((row) =>
        JSON.stringify(
          Object.entries(row as Record<string, { value?: string }>)
            .map(([name, term]) => [name, rounded(term)] as const)
            .sort(([x], [y]) => (x < y ? -1 : 1)),
        ),
      )
      .sort()
      .join('\n');
  } catch {
    return body
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .sort()
      .join('\n');
  }
}

/** The queries of both mixes, with the constants every run draws (seed 33). */
function benchQueries(): { name: string; text: string }[] {
  const data = generateBsbmData();
  const picks = { ...data, countries: COUNTRIES };
  const random = seededRandom(33);
  return [...BSBM_EXPLORE, ...BSBM_BI].map((q: BsbmQuery) => ({ name: q.name, text: q.text(picks, random) }));
}

/** Writes each cell's forwarded text and view text into `dir`, to be timed or explained by hand (bench/README.md). */
function writeTexts(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const slug = (name: string) => name.replace(/\W+/g, '-').replace(/^-|-$/g, '');
  let written = 0;
  for (const { name, text } of benchQueries()) {
    for (const caller of CALLERS) {
      const forwarded = forwardedText(text, caller);
      if (forwarded instanceof GuardError) continue;
      writeFileSync(join(dir, `${slug(name)}.${slug(caller.name)}.forwarded.rq`), forwarded);
      writeFileSync(join(dir, `${slug(name)}.${slug(caller.name)}.view.rq`), viewText(text, caller));
      const filters = forwardedText(text, caller, 'graph-filters');
      if (typeof filters === 'string' && filters !== forwarded)
        writeFileSync(join(dir, `${slug(name)}.${slug(caller.name)}.graph-filters.rq`), filters);
      written++;
    }
  }
  process.stdout.write(`${dir}: the forwarded and view texts of ${written} cells\n`);
}

/** One store: every query of both mixes for every caller. Prints its table and returns its cells. */
async function measureStore(store: string, url: string, viewUrls: ReadonlyMap<string, string>): Promise<Cell[]> {
  const queries = benchQueries();
  const cells: Cell[] = [];
  const timed: { cell: Cell; slowestMs: number; texts: TimedText[] }[] = [];
  for (const { name, text } of queries) {
    for (const caller of CALLERS) {
      const forwarded = forwardedText(text, caller);
      if (forwarded instanceof GuardError) {
        cells.push({ query: name, caller: caller.name, fromClauses: 0, outcome: `refused ${forwarded.code}` });
        continue;
      }
      const fromClauses = (forwarded.match(/\bFROM </g) ?? []).length;
      const view = viewText(text, caller);
      const viewUrl = viewUrls.get(viewGraph(caller)) ?? url;
      const filtersText = forwardedText(text, caller, 'graph-filters');
      const filters = typeof filtersText === 'string' && filtersText !== forwarded ? filtersText : undefined;
      const cell: Cell = {
        query: name,
        caller: caller.name,
        fromClauses,
        outcome: 'ok',
        filtersOutcome: filters === undefined ? 'clauses kept' : 'ok',
      };
      cells.push(cell);
      // Checked first: each text answers, and answers the same (a LIMIT after ORDER BY with ties may pick other rows: 'differs').
      const [a, b] = [await ask(url, forwarded), await ask(viewUrl, view)];
      if (a.status !== 200 || b.status !== 200) {
        cell.outcome = `store ${a.status}/${b.status}: ${(a.status !== 200 ? a.body : b.body).replace(/\s+/g, ' ').slice(0, 60)}`;
        continue;
      }
      if (canonical(a.body) !== canonical(b.body)) cell.outcome = 'differs';
      const c = filters === undefined ? undefined : await ask(url, filters);
      if (c !== undefined && c.status !== 200) cell.filtersOutcome = `store ${c.status}: ${c.body.replace(/\s+/g, ' ').slice(0, 60)}`;
      else if (c !== undefined && canonical(c.body) !== canonical(b.body)) cell.filtersOutcome = 'differs';
      const timeFilters = filters !== undefined && c?.status === 200;
      timed.push({
        cell,
        slowestMs: Math.max(a.ms, b.ms, timeFilters ? (c?.ms ?? 1) : 1, 1),
        texts: [
          { text: forwarded, url, times: [] },
          { text: view, url: viewUrl, times: [] },
          ...(timeFilters ? [{ text: filters, url, times: [] }] : []),
        ],
      });
    }
  }
  // Warm-up passes over every cell, untimed: with the views in stores of their own, the store of the
  // data would otherwise meet each text warmer (its caches, a JVM's compiled code) than a view's store.
  for (let pass = 0; pass < WARM_PASSES; pass++) for (const { texts } of timed) for (const { text, url: at } of texts) await ask(at, text);
  for (const { cell, slowestMs, texts } of timed) {
    const runs = Math.max(1, Math.min(RUNS, Math.floor(CELL_BUDGET_MS / slowestMs)));
    for (let i = 0; i < runs; i++) {
      // Rotate which text goes first, so none always meets another's warm caches.
      for (let j = 0; j < texts.length; j++) {
        const next = texts[(i + j) % texts.length] as TimedText;
        next.times.push((await ask(next.url, next.text)).ms);
      }
    }
    const median = (times: number[]) =>
      percentile(
        times.sort((x, y) => x - y),
        50,
      );
    cell.forwardedMs = median(texts[0]?.times ?? []);
    cell.viewMs = median(texts[1]?.times ?? []);
    cell.filtersMs = texts.length > 2 ? median(texts[2]?.times ?? []) : cell.forwardedMs;
  }
  return cells;
}

function ratioOf(cell: Cell, form: DatasetForm = 'clauses'): number | undefined {
  const ms = form === 'clauses' ? cell.forwardedMs : cell.filtersMs;
  return ms !== undefined && cell.viewMs !== undefined ? ms / Math.max(cell.viewMs, 0.001) : undefined;
}

function report(store: string, cells: readonly Cell[]): string {
  const lines = [
    `#### ${store}`,
    '',
    tableHeader(
      ['query', 'caller', 'FROM', 'clauses ms', 'graph filters ms', 'view ms', 'ratio clauses', 'ratio filters', 'outcome', 'filters'],
      'llrrrrrrll',
    ),
  ];
  for (const cell of cells) {
    const ratio = ratioOf(cell);
    const filtersRatio = ratioOf(cell, 'graph-filters');
    lines.push(
      tableRow([
        cell.query,
        cell.caller,
        cell.fromClauses,
        cell.forwardedMs?.toFixed(1) ?? '',
        cell.filtersOutcome === 'clauses kept' ? '' : (cell.filtersMs?.toFixed(1) ?? ''),
        cell.viewMs?.toFixed(1) ?? '',
        ratio === undefined ? '' : ratio.toFixed(2),
        filtersRatio === undefined ? '' : filtersRatio.toFixed(2),
        cell.outcome,
        cell.filtersOutcome ?? '',
      ]),
    );
  }
  lines.push('', tableHeader(['dataset form', 'caller', 'queries', 'median ratio', 'max ratio (query)', 'over 3x', 'target'], 'llrrrrl'));
  for (const form of ['clauses', 'graph-filters'] as const) {
    for (const caller of CALLERS) {
      const timed = cells.filter((c) => c.caller === caller.name && ratioOf(c, form) !== undefined);
      const ratios = timed.map((c) => ratioOf(c, form) ?? 0).sort((x, y) => x - y);
      if (ratios.length === 0) continue;
      const worst = timed.reduce((w, c) => ((ratioOf(c, form) ?? 0) > (ratioOf(w, form) ?? 0) ? c : w));
      const median = percentile(ratios, 50);
      const max = ratios[ratios.length - 1] ?? 0;
      const sixGraphs = caller.graphs.length === 6;
      const met = max <= TARGET_MAX && median <= TARGET_MEDIAN;
      lines.push(
        tableRow([
          form,
          caller.name,
          ratios.length,
          median.toFixed(2),
          `${max.toFixed(2)} (${worst.query})`,
          ratios.filter((r) => r > TARGET_MAX).length,
          sixGraphs ? `max <= ${TARGET_MAX}, median <= ${TARGET_MEDIAN}: ${met ? 'met' : 'missed'}` : 'shown',
        ]),
      );
    }
  }
  return lines.join('\n') + '\n';
}

function viewSlug(caller: BenchCaller): string {
  return (caller.viewOf ?? caller.name).replace(/\W+/g, '-');
}

async function holdsGraph(url: string, graph: string): Promise<boolean> {
  const probe = await ask(url, `ASK { GRAPH <${graph}> { ?s ?p ?o } }`).catch(() => undefined);
  return probe?.status === 200 && probe.body.includes('true');
}

/**
 * Where each view graph is read: from the first of `views` (comma-separated query URLs) that holds
 * it, else from the store of the data. A message when a view is in neither.
 */
async function findViews(url: string, views: string | undefined): Promise<Map<string, string> | string> {
  const candidates = [
    ...(views ?? '')
      .split(',')
      .map((at) => at.trim())
      .filter((at) => at !== ''),
    url,
  ];
  const found = new Map<string, string>();
  for (const graph of new Set(CALLERS.map(viewGraph))) {
    let holder: string | undefined;
    for (const at of candidates) {
      if (await holdsGraph(at, graph)) {
        holder = at;
        break;
      }
    }
    if (holder === undefined) return `no view <${graph}> at ${candidates.join(', ')}`;
    found.set(graph, holder);
  }
  return found;
}

async function main(): Promise<void> {
  const writeAt = process.argv.indexOf('--write-data');
  if (writeAt !== -1) {
    // The lab's data: `DATA=<this file> up.sh oxigraph virtuoso` loads it (bench/README.md).
    const file = process.argv[writeAt + 1] ?? 'bsbm.nq';
    writeFileSync(file, writeNQuads(generateBsbmData()));
    process.stdout.write(
      `${file}: the BSBM data in six graphs and the views of ${CALLERS.filter((c) => c.viewOf === undefined).length} callers\n`,
    );
    return;
  }
  const splitAt = process.argv.indexOf('--write-split');
  if (splitAt !== -1) {
    // A lab of its own per file: the data store, and one store per view (bench/README.md).
    const dir = process.argv[splitAt + 1] ?? 'bsbm-split';
    mkdirSync(dir, { recursive: true });
    const data = generateBsbmData();
    writeFileSync(join(dir, 'data.nq'), writeNQuads(data, []));
    const views = CALLERS.filter((c) => c.viewOf === undefined);
    for (const caller of views) writeFileSync(join(dir, `view-${viewSlug(caller)}.nq`), writeNQuads(data, [caller], false));
    process.stdout.write(`${dir}: data.nq (the BSBM data in six graphs) and the views of ${views.length} callers, a file each\n`);
    return;
  }
  const textsAt = process.argv.indexOf('--write-texts');
  if (textsAt !== -1) {
    writeTexts(process.argv[textsAt + 1] ?? 'bsbm-texts');
    return;
  }
  const scenario = scenarioArguments();
  if (scenario !== undefined) {
    const [store, url, views] = scenario as [string, string, string];
    process.stdout.write(JSON.stringify(await measureStore(store, url, new Map(JSON.parse(views) as [string, string][]))));
    return;
  }
  process.stdout.write(
    `### (j) What the dataset clause costs the store (BSBM explore and BI mixes)\n\nmachine: ${describeMachine()}\nload: ${describeLoad()}\n\n`,
  );
  let measured = 0;
  for (const [store, variable] of STORES) {
    const url = process.env[variable];
    if (url === undefined || url === '') {
      process.stdout.write(`${store}: not measured (${variable} unset)\n\n`);
      continue;
    }
    if (!(await holdsGraph(url, GRAPHS[0] as string))) {
      process.stdout.write(`${store}: not measured (no BSBM data at ${url}: see bench/README.md)\n\n`);
      continue;
    }
    const viewUrls = await findViews(url, process.env[viewsVariable(variable)]);
    if (typeof viewUrls === 'string') {
      process.stdout.write(`${store}: not measured (${viewUrls}: see bench/README.md)\n\n`);
      continue;
    }
    for (const at of new Set([url, ...viewUrls.values()])) {
      const stall = await keepAliveStall(at);
      if (stall !== undefined) process.stdout.write(`${store} (${at}): ${stall}\n\n`);
    }
    const apart = [...viewUrls.values()].some((at) => at !== url);
    process.stdout.write(
      `${store}: the views read from ${apart ? 'stores of their own, a view each (' + viewsVariable(variable) + ')' : 'the store of the data (the views beside it make it four times larger)'}\n\n`,
    );
    process.stdout.write(report(store, runScenario<Cell[]>(import.meta.url, store, url, JSON.stringify([...viewUrls]))) + '\n');
    measured++;
  }
  if (measured === 0) process.stdout.write('no lab store with the BSBM data: nothing measured\n');
}

await main();
