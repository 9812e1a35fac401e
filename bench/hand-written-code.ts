// Benchmark: the hand-written form parser, form encoder, log writer, connection-gone signal and forward chainer beside the library each replaces (URLSearchParams, fast-querystring, encodeURIComponent, pino, AbortController, N3.Reasoner), and what each saves of the guard's CPU per request.

import { EventEmitter } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastQuerystring from 'fast-querystring';
import pino from 'pino';
import { Parser, type Quad } from 'n3';
import { classifyRules, premisePredicates, type HornRule } from '../src/policy/rules/classify-rules.js';
import { forwardChain } from '../src/policy/rules/forward-chain.js';
import { shippedRuleFiles } from '../src/policy/rules/shipped-rule-files.js';
import { ClientGone } from '../src/http/client-gone.js';
import { createLogWriter } from '../src/server/create-log-writer.js';
import type { AbortLike } from '../src/upstream/create-upstream.js';
import { guard } from '../src/vocabulary.js';
import { generatePolicySet, organisationShape } from '../test/helpers/generate-policy-set.js';
import { runN3Reasoner } from './_util/run-n3-reasoner.js';
import { BSBM_SHAPES, seededRandom } from './bsbm-mix.js';
import { encodeQueryForm, parseForm } from '../src/url-encoded-form.js';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { runScenario, scenarioArguments } from './_util/fresh-process.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';
import { percentile } from './_util/percentile.js';

/** Time spent measuring each alternative, after as long a warm-up. */
const MEASURE_MS = 1_000;
/** Calls per timed batch: long enough for the clock, short enough for a spread. */
const BATCH = 200;
/** Log lines per timed batch (about 40 writes of 4096 bytes when batched). */
const LOG_BATCH = 1_000;

const SMALL_QUERY = 'SELECT * WHERE { ?s ?p ?o } LIMIT 10';
/** The medium query of the templated workload's size (30 patterns), with a non-ASCII literal. */
const MEDIUM_QUERY = [
  'PREFIX ex: <https://example.org/ns#>',
  'PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>',
  'SELECT ?product ?label ?price WHERE {',
  ...Array.from({ length: 28 }, (_, i) => `  ?product ex:feature${i} ?f${i} .`),
  '  ?product rdfs:label ?label ; ex:price ?price .',
  '  FILTER (?price < 500 && lang(?label) = "de" && ?label != "Straße")',
  '} ORDER BY ?price LIMIT 10',
].join('\n');
const GRAPHS = ['https://example.org/graphs/a', 'https://example.org/graphs/b'];

/** A form body as a client sends it: the query and two default graphs. */
function formBody(query: string): Buffer {
  const form = new URLSearchParams({ query });
  for (const graph of GRAPHS) form.append('default-graph-uri', graph);
  return Buffer.from(form.toString());
}

/** The templated workload's repeated query (bench/templated-workload.ts), the body the guard's CPU per request below is measured on. */
const WORKLOAD_QUERY = BSBM_SHAPES[0]!(seededRandom(1));

const INPUTS = { small: SMALL_QUERY, medium: MEDIUM_QUERY, workload: WORKLOAD_QUERY } as const;
type Input = keyof typeof INPUTS;

type Params = Map<string, string[]>;
/** Form parsers, each from the request body's bytes (as fastify hands them over) to every value of each name. */
const PARSERS = {
  parseForm: (body: Buffer): Params => parseForm(body) as Params,
  URLSearchParams: (body: Buffer): Params => {
    const params: Params = new Map();
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
      const values = params.get(name);
      if (values === undefined) params.set(name, [value]);
      else values.push(value);
    }
    return params;
  },
  'fast-querystring': (body: Buffer): Params => {
    const params: Params = new Map();
    for (const [name, value] of Object.entries(fastQuerystring.parse(body.toString('utf8')))) {
      params.set(name, Array.isArray(value) ? (value as string[]) : [String(value)]);
    }
    return params;
  },
} as const;

/** Form encoders of the query sent to the store, each to the bytes undici sends. */
const ENCODERS = {
  encodeQueryForm: (text: string): Buffer => encodeQueryForm(text),
  URLSearchParams: (text: string): Buffer => Buffer.from(new URLSearchParams({ query: text }).toString()),
  encodeURIComponent: (text: string): Buffer => Buffer.from(`query=${encodeURIComponent(text)}`),
} as const;

/** A request log line as the guard writes one per request. */
const ENTRY = {
  method: 'POST',
  path: '/sparql',
  agent: 'https://bench.example.org/agents/caller',
  status: 200,
  durationMs: 1.87,
  outcome: 'completed',
  bytes: 1482,
};

/**
 * A log line formatted as createLogWriter formats it (the time written once per millisecond and
 * spliced in front of the entry's JSON), so that the destinations below differ only in how
 * they write.
 */
function createLineFormat(): (entry: object) => string {
  let stampedAt = Number.NaN;
  let stamp = '';
  return (entry) => {
    const now = Date.now();
    if (now !== stampedAt) {
      stampedAt = now;
      stamp = `{"time":"${new Date(now).toISOString()}"`;
    }
    return `${stamp},${JSON.stringify(entry).slice(1)}\n`;
  };
}

/**
 * Log writers, each writing request lines with the time to a file synchronously (as stdout
 * redirected to a file or a pipe is written). Each returns its `log` and a final flush.
 */
const LOG_WRITERS = {
  createLogWriter: (fd: number) => {
    const writer = createLogWriter((text) => writeSync(fd, text));
    return { log: writer.log, end: writer.flush };
  },
  'one write per line': (fd: number) => {
    const format = createLineFormat();
    return { log: (entry: object) => writeSync(fd, format(entry)), end: () => undefined };
  },
  'pino.destination (SonicBoom), 4096-byte buffer': (fd: number) => {
    const format = createLineFormat();
    const destination = pino.destination({ dest: fd, sync: true, minLength: 4096 });
    return { log: (entry: object) => destination.write(format(entry)), end: () => destination.flushSync() };
  },
  'pino logger on that destination': (fd: number) => {
    const destination = pino.destination({ dest: fd, sync: true, minLength: 4096 });
    const logger = pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime }, destination);
    return { log: (entry: object) => logger.info(entry), end: () => destination.flushSync() };
  },
} as const;

/** What upstream's send does with the signal of one query: listens for an abort while the answer streams, then stops. */
const SEND_LISTENER = { handleEvent: () => undefined };

/**
 * The connection-gone signal of one query, each made from the response as the query route makes
 * it, read and listened to as the route and upstream's send do, then the response closes after
 * the answer (the stand-in response is an EventEmitter with the members the signal reads).
 */
const SIGNALS = {
  ClientGone: (response: ServerResponse): AbortLike => new ClientGone(response),
  'AbortController (the platform signal)': (response: ServerResponse): AbortLike => {
    const controller = new AbortController();
    if (response.closed || response.socket?.destroyed === true) controller.abort();
    else
      response.once('close', () => {
        if (!response.writableFinished) controller.abort();
      });
    return controller.signal;
  },
} as const;

/** One query's life of the signal: made, read twice, listened to and left, and the response closed. */
function signalLife(make: (response: ServerResponse) => AbortLike, response: ServerResponse): boolean {
  const signal = make(response);
  if (signal.aborted) return false;
  signal.addEventListener('abort', SEND_LISTENER, { once: true });
  signal.removeEventListener('abort', SEND_LISTENER);
  const aborted = signal.aborted;
  response.emit('close');
  return aborted;
}

/** A response as the signal sees one: open, answered to the end when it closes. */
function standInResponse(finished: boolean): ServerResponse {
  return Object.assign(new EventEmitter(), {
    closed: false,
    socket: { destroyed: false },
    writableFinished: finished,
  }) as unknown as ServerResponse;
}

/**
 * The rule engines of the Horn fragment, each from the loader's input (the policy triples the
 * rules read, and the rules and facts of the shipped and example rule files) to the closure.
 */
const RULE_ENGINES = {
  forwardChain: (input: RuleInput) => forwardChain([...input.quads, ...input.facts], input.rules),
  'N3.Reasoner (n3 Store)': (input: RuleInput) => runN3Reasoner(input.quads, input.rules, input.facts),
} as const;

interface RuleInput {
  readonly quads: readonly Quad[];
  readonly rules: readonly HornRule[];
  readonly facts: readonly Quad[];
}

/** The organisation of `n` policies with the three example rule files, as the loader hands it to the engine. */
function ruleInput(n: number): RuleInput {
  const { policyTurtle, hierarchyN3 } = generatePolicySet(organisationShape(n));
  const files = [
    ...shippedRuleFiles(),
    ...['group-hierarchy.n3', 'group-membership.n3', 'graph-collections.n3'].map((name) => join('rules/examples', name)),
  ];
  const readings = [...files.map((file) => readFileSync(file, 'utf8')), hierarchyN3].map(classifyRules);
  const rules = readings.flatMap((reading) => reading.rules ?? []);
  const facts = readings.flatMap((reading) => reading.facts ?? []);
  const reads = premisePredicates({ fragment: true, rules, facts });
  const targets = new Set<string>([guard.appliesTo, guard.grantsGraph]);
  const quads = new Parser()
    .parse(policyTurtle)
    .filter(({ predicate }) => reads === 'any' || reads.has(predicate.value) || targets.has(predicate.value));
  return { quads, rules, facts };
}

/** The closure as sorted N3.js ids, to compare engines. */
function closureIds(quads: Iterable<Quad>): string[] {
  return [...quads].map(({ subject, predicate, object }) => `${subject.id} ${predicate.id} ${object.id}`).sort();
}

type Comparison = 'parse' | 'encode' | 'log' | 'signal' | 'rules' | 'guard';
interface Result {
  readonly comparison: Comparison;
  readonly input: string;
  readonly alternative: string;
  /** Per call: median and p99 over the timed batches, in ns. */
  readonly p50Ns: number;
  readonly p99Ns: number;
  /** CPU time (user + system) per call over the whole measurement, in ns. */
  readonly cpuNs: number;
  readonly calls: number;
}

/** Runs `call` in batches of `batch` for MEASURE_MS after as long a warm-up. */
function measure(call: () => unknown, batch: number): { p50Ns: number; p99Ns: number; cpuNs: number; calls: number } {
  let sink = 0;
  const warmUntil = performance.now() + MEASURE_MS;
  while (performance.now() < warmUntil) for (let i = 0; i < batch; i += 1) sink += call() === undefined ? 0 : 1;
  const perCall: number[] = [];
  const cpuBefore = process.cpuUsage();
  const until = performance.now() + MEASURE_MS;
  while (performance.now() < until) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < batch; i += 1) sink += call() === undefined ? 0 : 1;
    perCall.push(Number(process.hrtime.bigint() - started) / batch);
  }
  const cpu = process.cpuUsage(cpuBefore);
  if (sink < 0) throw new Error('unreachable');
  perCall.sort((a, b) => a - b);
  const calls = perCall.length * batch;
  return { p50Ns: percentile(perCall, 50), p99Ns: percentile(perCall, 99), cpuNs: ((cpu.user + cpu.system) * 1000) / calls, calls };
}

/** Same names, same values, same order of values. */
function sameParams(a: Params, b: Params): boolean {
  if (a.size !== b.size) return false;
  for (const [name, values] of a) if (JSON.stringify(b.get(name)) !== JSON.stringify(values)) return false;
  return true;
}

function scenario(comparison: Comparison, input: string, alternative: string): Result {
  if (comparison === 'rules') {
    const rules = ruleInput(Number(input));
    const run = RULE_ENGINES[alternative as keyof typeof RULE_ENGINES];
    // Checked first: both engines give the same closure.
    const ours = closureIds(forwardChain([...rules.quads, ...rules.facts], rules.rules).quads());
    const theirs = closureIds(runN3Reasoner(rules.quads, rules.rules, rules.facts).getQuads(null, null, null, null));
    if (ours.length !== theirs.length || ours.some((id, index) => id !== theirs[index])) {
      throw new Error(`forwardChain gives ${ours.length} triples, N3.Reasoner ${theirs.length}, for ${input} policies`);
    }
    const runs = Number(input) >= 10_000 ? 3 : 10;
    run(rules);
    const perRun: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < runs; i += 1) {
      const started = process.hrtime.bigint();
      run(rules);
      perRun.push(Number(process.hrtime.bigint() - started));
    }
    const cpu = process.cpuUsage(cpuBefore);
    perRun.sort((a, b) => a - b);
    return {
      comparison,
      input: `organisation ${Number(input).toLocaleString('en')} policies, ${ours.length.toLocaleString('en')} triples in the closure`,
      alternative,
      p50Ns: percentile(perRun, 50),
      p99Ns: percentile(perRun, 99),
      cpuNs: ((cpu.user + cpu.system) * 1000) / runs,
      calls: runs,
    };
  }
  if (comparison === 'guard') {
    // The guard's CPU per request on the templated workload, its own bench in a fresh process.
    const row = runScenario<{ cpuUsPerRequest?: number; requestsPerS: number }>(
      new URL('./templated-workload.js', import.meta.url).href,
      input,
    );
    return {
      comparison,
      input,
      alternative,
      p50Ns: Number.NaN,
      p99Ns: Number.NaN,
      cpuNs: (row.cpuUsPerRequest ?? Number.NaN) * 1000,
      calls: 0,
    };
  }
  if (comparison === 'signal') {
    const make = SIGNALS[alternative as keyof typeof SIGNALS];
    // Checked first: a response closed before its end aborts the signal and calls the listener; one answered to the end does not.
    const cut = standInResponse(false);
    const signal = make(cut);
    let heard = 0;
    signal.addEventListener('abort', () => (heard += 1), { once: true });
    cut.emit('close');
    if (!signal.aborted || heard !== 1) throw new Error(`${alternative} missed the client going away`);
    const answered = standInResponse(true);
    if (signalLife(make, answered)) throw new Error(`${alternative} aborted an answered query`);
    return { comparison, input, alternative, ...measure(() => signalLife(make, answered), BATCH) };
  }
  if (comparison === 'parse') {
    const body = formBody(INPUTS[input as Input]);
    const parse = PARSERS[alternative as keyof typeof PARSERS];
    // Checked first: every parser reads the body as parseForm does.
    if (!sameParams(parse(body), PARSERS.parseForm(body)) || parseForm(body).get('query')?.[0] !== INPUTS[input as Input]) {
      throw new Error(`${alternative} reads the ${input} form differently`);
    }
    return { comparison, input, alternative, ...measure(() => parse(body), BATCH) };
  }
  if (comparison === 'encode') {
    const text = INPUTS[input as Input];
    const encode = ENCODERS[alternative as keyof typeof ENCODERS];
    // Checked first: the bytes decode back to the query; ours are the very bytes of URLSearchParams.
    if (parseForm(encode(text)).get('query')?.[0] !== text) throw new Error(`${alternative} does not round-trip`);
    if (!encodeQueryForm(text).equals(ENCODERS.URLSearchParams(text))) throw new Error('encodeQueryForm differs from URLSearchParams');
    return { comparison, input, alternative, ...measure(() => encode(text), BATCH) };
  }
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-bench-log-'));
  try {
    const file = join(folder, 'guard.log');
    const fd = openSync(file, 'w');
    const writer = LOG_WRITERS[alternative as keyof typeof LOG_WRITERS](fd);
    let lines = 0;
    const result = measure(() => {
      lines += 1;
      return writer.log(ENTRY);
    }, LOG_BATCH);
    writer.end();
    closeSync(fd);
    // Checked after: every line arrived whole, as JSON with the entry's fields and a time.
    const written = readFileSync(file, 'utf8').split('\n');
    if (written.pop() !== '' || written.length !== lines) throw new Error(`${alternative} wrote ${written.length} of ${lines} lines`);
    for (const line of [written[0]!, written[written.length - 1]!]) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.agent !== ENTRY.agent || typeof parsed.time !== 'string') throw new Error(`${alternative} wrote ${line}`);
    }
    return { comparison, input, alternative, ...result };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = scenarioArguments();
  if (args !== undefined) {
    process.stdout.write(JSON.stringify(scenario(args[0] as Comparison, args[1]!, args[2]!)));
    return;
  }
  console.log('### (h) Hand-written code beside the libraries\n');
  console.log(`machine: ${describeMachine()}`);
  console.log(`load: ${describeLoad()} at the start`);
  console.log(
    `each alternative in a fresh process: ${MEASURE_MS / 1000} s warm-up, then ${MEASURE_MS / 1000} s of batches (${BATCH} calls, ${LOG_BATCH} log lines); per call: p50 and p99 wall time over the batches, CPU = user + system time per call (the steadier figure on a busy machine); each output checked against ours first\n`,
  );
  const plan: [Comparison, string, readonly string[]][] = [
    ['parse', 'small', Object.keys(PARSERS)],
    ['parse', 'medium', Object.keys(PARSERS)],
    ['parse', 'workload', Object.keys(PARSERS)],
    ['encode', 'small', Object.keys(ENCODERS)],
    ['encode', 'medium', Object.keys(ENCODERS)],
    ['log', 'request line', Object.keys(LOG_WRITERS)],
    ['signal', 'one query', Object.keys(SIGNALS)],
    ['rules', '1000', Object.keys(RULE_ENGINES)],
    ['rules', '10000', Object.keys(RULE_ENGINES)],
  ];
  const titles: Record<Comparison, string> = {
    parse: 'form body -> every value of each name (query + 2 default-graph-uri)',
    encode: 'query text -> `query=` form bytes for the store',
    signal:
      'the connection-gone signal of one query: made from the response, read, listened to and left by the send, the response closed after the answer',
    guard: "the guard's CPU per request (front CPU, bench/templated-workload.ts, one run each)",
    log: 'one request log line with its time, to a file, synchronously (the destinations get the line formatted as ours formats it; the pino logger formats its own)',
    rules:
      'Horn rules to their closure: the organisation (500 groups per 10,000 policies, 9 levels, a quarter members, a third collections) with the shipped and the three example rule files, the triples the loader hands the engine; one warm-up run, then 10 runs (3 at 10,000); per run, in ms',
  };
  // The guard's CPU per request, the scale of every saving below: the repeated query's (the
  // smaller figure, so the larger share: the one most in favour of the hand-written code).
  const guardRows = (['guard-repeated', 'guard-templated'] as const).map((workload) =>
    runScenario<Result>(import.meta.url, 'guard', workload, 'sparql-guard serve'),
  );
  console.log(`${titles.guard}\n`);
  console.log(tableHeader(['workload', 'guard CPU us/request'], 'lr'));
  for (const row of guardRows) console.log(tableRow([row.input, (row.cpuNs / 1000).toFixed(0)]));
  console.log('');
  const guardNs = guardRows[0]!.cpuNs;
  let last: Comparison | undefined;
  for (const [comparison, input, alternatives] of plan) {
    if (comparison !== last) {
      if (last !== undefined) console.log('');
      console.log(`${titles[comparison]}\n`);
      const unit = comparison === 'rules' ? 'ms/run' : 'ns/call';
      const headers = ['input', 'alternative', `p50 ${unit}`, `p99 ${unit}`, `CPU ${unit}`, 'CPU vs ours'];
      if (comparison !== 'rules') headers.push("ours saves, of the guard's CPU per request");
      console.log(tableHeader([...headers, comparison === 'rules' ? 'runs' : 'calls'], comparison === 'rules' ? 'llrrrrr' : 'llrrrrrr'));
      last = comparison;
    }
    const bytes =
      comparison === 'parse'
        ? formBody(INPUTS[input as Input]).length
        : comparison === 'encode'
          ? Buffer.byteLength(INPUTS[input as Input])
          : undefined;
    let ours: Result | undefined;
    const scale = comparison === 'rules' ? 1e6 : 1;
    for (const alternative of alternatives) {
      const r = runScenario<Result>(import.meta.url, comparison, input, alternative);
      ours ??= r;
      const label = bytes === undefined ? (comparison === 'rules' ? r.input : input) : `${input} (${bytes} bytes)`;
      const cells = [
        label,
        alternative,
        (r.p50Ns / scale).toFixed(0),
        (r.p99Ns / scale).toFixed(0),
        (r.cpuNs / scale).toFixed(0),
        `${(r.cpuNs / ours.cpuNs).toFixed(2)} x`,
      ];
      // One call per request: a form read, a form written, a log line, a signal.
      if (comparison !== 'rules') cells.push(r === ours ? '' : `${(((r.cpuNs - ours.cpuNs) / guardNs) * 100).toFixed(2)} %`);
      console.log(tableRow([...cells, r.calls]));
    }
  }
  console.log(`\nload: ${describeLoad()} at the end\n`);
}

await main();
