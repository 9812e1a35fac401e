// `sparql-guard check`: loads configuration, policies and rules as `serve` would, and lists what each principal gets.

import { once } from 'node:events';
import type { Caller } from '../auth/caller.js';
import { createCallerIdentifier } from '../auth/identify-caller.js';
import { findAgentIriProblem } from '../iri.js';
import { fetchPolicyInputs, type PolicyInputs } from '../policy/store-reads/fetch-policy-inputs.js';
import { loadPolicySetWithStats } from '../policy/load/load-policy-set.js';
import type { PolicySetSources } from '../policy/load/policy-set-sources.js';
import type { LoadStats } from '../policy/load/worker-messages.js';
import { grantFor, summariseViews, type ColumnsSummary, type GraphRestriction, type ViewSummary } from '../policy/grant.js';
import type { GraphView, PolicySet } from '../policy/policy-set.js';
import { readPolicyFiles } from '../policy/load/read-policy-files.js';
import { traceGrant, type GrantTrace, type TraceStep } from '../policy/trace/trace-grant.js';
import { ANONYMOUS_AGENT } from '../vocabulary.js';
import { openCommandStore, type CommandStore } from './open-command-store.js';
import type { GuardConfig } from '../config/read-config.js';
import { checkDatasetSupport, saysVirtuoso } from '../upstream/check-dataset-support.js';
import { createPlanner } from '../sparql/create-planner.js';
import { checksVariablePredicateWithExists } from '../sparql/write-row-filter.js';
import { readCommandConfig } from './read-command-config.js';
import { parseCommandArgs } from './parse-command-args.js';

export const CHECK_USAGE = `usage: sparql-guard check [--config FILE] [--json] [--offline] [--why AGENT [--group NAME]...]
  loads the configuration (--config, else GUARD_CONFIG, else the demo), the policies, the rules,
  the fact sources (run once) and the graphs under each guard:readGraphPrefix exactly as serve
  does, and prints per fact source the triples read and the time, which engine ran each rule
  file and its time, warnings about the rules, and for each principal the policies that name it
  and the graphs they grant; exits 1 with the error line when anything is wrong
  --why AGENT: instead of the listing, every graph that caller (an agent IRI, authenticated, with
  the groups of --group; or the word anonymous) gets, each with its policies and the chain of
  facts (file or fact source), rules, templates and prefixes that gave it, and the restrictions
  that apply there; and the caller's limits with the policies that set them`;

/**
 * Runs the command; returns the exit code. A bad configuration, policy or rule
 * file throws (ConfigError, PolicyLoadError) and the dispatcher prints its line.
 */
export async function checkCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: { config?: string; json?: boolean; why?: string; group?: string[]; offline?: boolean };
  try {
    values = parseCommandArgs(args, {
      config: { type: 'string' },
      json: { type: 'boolean' },
      why: { type: 'string' },
      group: { type: 'string', multiple: true },
      offline: { type: 'boolean' },
    });
  } catch (error) {
    return usageError((error as Error).message);
  }
  const caller = values.why === undefined ? undefined : readWhyCaller(values.why, values.group ?? []);
  if (typeof caller === 'string') return usageError(caller);
  if (caller === undefined && values.group !== undefined) return usageError('--group goes with --why');
  const config = readCommandConfig(env, values.config);
  // Compiled as serve compiles it, so a problem serve would meet here is met here too.
  createCallerIdentifier(config.auth);
  const store = openCommandStore(config);
  try {
    const { sources } = store;
    const inputs = await fetchPolicyInputs(store.upstream, sources);
    const { set, stats } = await loadPolicySetWithStats(sources, { inputs });
    const storeCheck = values.offline === true ? { url: storeUrl(config.upstream), contacted: false } : await checkStore(config, store);
    if (typeof storeCheck === 'string') {
      process.stderr.write(`sparql-guard check: ${storeCheck}\n`);
      return 1;
    }
    if (caller !== undefined) {
      const trace = await traceGrant(set, caller, await factGroups(sources, inputs), sources.ruleFiles);
      // The columns and row rules the caller's policies set, per graph (docs/policies.md, "Rows and columns").
      const graphViews = grantFor(set, caller)?.views ?? new Map();
      const views = summariseViews(graphViews);
      const refused = storeCheck.server === undefined ? [] : refusedBesideNegation(graphViews, caller);
      const refusedInDefault = storeCheck.server === undefined ? undefined : refusedInDefaultGraph(config, set, caller);
      await write(
        values.json === true
          ? [
              `${JSON.stringify(
                {
                  ...trace,
                  ...(views.length > 0 && { views }),
                  ...(refused.length > 0 && { refusedBesideNegation: refused }),
                  ...(refusedInDefault !== undefined && { refusedBesideNegationInDefaultGraph: refusedInDefault }),
                },
                null,
                2,
              )}\n`,
            ]
          : [...traceText(trace, config.timeoutMs), ...viewText(views), ...refusedText(refused), ...refusedInDefaultText(refusedInDefault)],
      );
      return 0;
    }
    const summary = {
      config: config.configFile ?? null,
      policyFiles: sources.policyFiles.length,
      ruleFiles: sources.ruleFiles.length,
      policies: set.policies.length,
    };
    const engines = engineRuns(stats);
    const reads = storeReads(stats);
    if (values.json === true) {
      // JSON.stringify's own layout (two spaces), with the listing written in pieces: under rules it is a hundred megabytes.
      const restrictions = restrictionsOf(set);
      const head = JSON.stringify(
        {
          ...summary,
          ...reads,
          store: storeCheck,
          engines,
          warnings: stats.warnings,
          ...(restrictions.length > 0 && { restrictions }),
          principals: [],
        },
        null,
        2,
      );
      if (set.listing.entries.length === 0) await write([`${head}\n`]);
      else await write(jsonListing(head.slice(0, head.length - '[]\n}'.length), set));
    } else {
      await write(text(summary, set, engines, stats.warnings, reads, storeCheck));
    }
    return 0;
  } finally {
    await store.close();
  }
}

/** What `check` found of the store: its URL (origin and path only), and whether it was asked. */
interface StoreCheck {
  /** Undefined for the embedded store. */
  readonly url: string | undefined;
  readonly contacted: boolean;
  /** When contacted: it answered, and honours FROM / FROM NAMED. */
  readonly datasetClauses?: 'honoured';
  /** When contacted and its Server header says Virtuoso: that header (refuse-for-store.ts refuses some queries there). */
  readonly server?: string;
  /** When contacted: the form serve sends the dataset in to this store (config datasetForm; "auto" decided by the check). */
  readonly datasetForm?: 'clauses' | 'graph-filters';
}

/** Longest the store check waits for the store, whatever timeoutMs says: an operator is waiting. */
const STORE_CHECK_TIMEOUT_MS = 10_000;

/**
 * Asks the configured store the dataset check serve runs at start (checkDatasetSupport): the
 * check, or the one-line problem that makes `check` fail. The embedded store (no upstream) is
 * the guard's own and is not asked: it is started, loading `embedded.data` as serve does.
 */
async function checkStore(config: GuardConfig, store: CommandStore): Promise<StoreCheck | string> {
  const url = storeUrl(config.upstream);
  if (url === undefined) {
    // serve starts the embedded store with the data of embedded.data before it listens: a file
    // it cannot load stops serve, so it fails check too.
    try {
      await store.open();
    } catch (error) {
      return `embedded store: ${(error as Error).message} (serve would not start either: fix embedded.data; --offline skips this check)`;
    }
    return { url, contacted: false };
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.min(config.timeoutMs, STORE_CHECK_TIMEOUT_MS));
  try {
    const support = await checkDatasetSupport(store.upstream, controller.signal, config.rowChecks, config.datasetForm);
    if (support.kind === 'honoured') {
      return {
        url,
        contacted: true,
        datasetClauses: 'honoured',
        ...(saysVirtuoso(support.server) && { server: support.server }),
        datasetForm: support.graphFilters ? 'graph-filters' : 'clauses',
      };
    }
    if (support.kind === 'ignored') return `store ${url}: ${support.reason} (serve refuses such a store: ${support.fix})`;
    const why = controller.signal.aborted
      ? `no answer within ${Math.min(config.timeoutMs, STORE_CHECK_TIMEOUT_MS)} ms`
      : support.error.message;
    return `store ${url} does not answer the dataset check: ${why} (check the upstream URL and that the store runs; --offline skips this check)`;
  } finally {
    clearTimeout(timer);
  }
}

/** The store's URL as printed: origin and path, never a query string (which may carry a token). */
function storeUrl(upstream: string | undefined): string | undefined {
  if (upstream === undefined) return undefined;
  const url = new URL(upstream);
  return `${url.origin}${url.pathname}`;
}

function usageError(message: string): number {
  process.stderr.write(`sparql-guard check: ${message}\n${CHECK_USAGE}\n`);
  return 2;
}

/** The caller of `--why`: an agent IRI (authenticated) with its groups, or the anonymous caller; else why not, as a phrase. */
function readWhyCaller(agent: string, groups: readonly string[]): Caller | string {
  if (agent === 'anonymous') {
    if (groups.length > 0) return 'the anonymous caller has no groups (--group goes with an agent IRI)';
    return { agent: ANONYMOUS_AGENT, groups: [], authenticated: false };
  }
  const problem = findAgentIriProblem(agent);
  if (problem !== undefined) return `--why ${problem} (give an agent IRI, or anonymous)`;
  if (groups.some((group) => group === '')) return '--group must not be empty';
  return { agent, groups: [...new Set(groups)], authenticated: true };
}

/** What the load read from the store: per fact source, and the prefix listing. */
function storeReads(stats: LoadStats) {
  return {
    facts: stats.facts.map(({ name, triples, bytes, fetchMs }) => ({ name, triples, bytes, ms: Math.round(fetchMs) })),
    ...(stats.prefixListing !== undefined && {
      prefixListing: { ...stats.prefixListing, ms: Math.round(stats.prefixListing.ms) },
    }),
  };
}

/** The triples the load read, by where they came from: each policy file, each fact source (read again here, on this thread). */
async function factGroups(sources: PolicySetSources, inputs: PolicyInputs) {
  const configs = new Map((sources.facts ?? []).map((source) => [source.name, source]));
  const document = await readPolicyFiles(
    sources.policyFiles,
    inputs.facts.map((fetched) => ({
      name: fetched.name,
      contentType: fetched.contentType,
      body: fetched.body,
      fetchMs: fetched.fetchMs,
      maxTriples: configs.get(fetched.name)?.maxTriples ?? 0,
      policies: configs.get(fetched.name)?.policies ?? false,
    })),
  );
  return document.origins.map(({ origin, first, count }) => ({ origin, quads: document.quads.slice(first, first + count) }));
}

/** The trace of `--why` as indented lines: per graph, per policy, the chain that applies it and the one that grants the graph. */
function* traceText(trace: GrantTrace, ceilingMs: number) {
  const who = trace.authenticated ? `<${trace.agent}>, authenticated` : 'the anonymous caller';
  yield `caller ${who}, groups: ${trace.groups.map((group) => JSON.stringify(group)).join(' ') || '(none)'}\n`;
  if (trace.graphs.length === 0 && trace.policies.length === 0) {
    yield 'no policy applies to this caller: it gets no graph (the guard answers 401 anonymous, 403 identified)\n';
    return;
  }
  yield `policies: ${trace.policies.map((policy) => `<${policy}>`).join(' ')}\n`;
  // The largest value per kind among the policies that set one; a kind none sets does not limit (docs/policies.md).
  const limits = trace.limits.map(({ kind, value, policies }) => {
    const capped = kind === 'timeoutMs' && value > ceilingMs ? `; the configuration's timeoutMs ${ceilingMs} caps it` : '';
    return `${kind} ${value} (${policies.map((policy) => `<${policy}>`).join(' ')}${capped})`;
  });
  yield `limits: ${limits.length === 0 ? 'none (no policy of this caller sets one)' : limits.join(', ')}\n`;
  if (trace.graphs.length === 0) yield 'graphs: (none)\n';
  for (const { graph, policies, restrictions } of trace.graphs) {
    const lines = [`graph <${graph}>`];
    // What applies to this caller in the graph, before the policies behind it.
    lines.push(`  restrictions: ${restrictions.length === 0 ? 'none' : restrictions.map(restrictionText).join('; ')}`);
    for (const policy of policies) {
      lines.push(`  policy <${policy.policy}> (${policy.file}), applies as ${policy.appliesAs}`);
      lines.push('    applies:');
      stepLines(policy.applies, '      ', lines);
      lines.push('    grants:');
      stepLines(policy.grants, '      ', lines);
    }
    yield `${lines.join('\n')}\n`;
  }
}

/** One restriction of a graph as a line's part: its kind, then what it names. */
function restrictionText(restriction: GraphRestriction): string {
  const iris = (list: readonly string[]) => list.map((iri) => `<${iri}>`).join(' ') || '(none)';
  const columns = (value: { readonly readPath: readonly string[] } | { readonly hidePath: readonly string[] }) =>
    'readPath' in value ? `readPath ${iris(value.readPath)}` : `hidePath ${iris(value.hidePath)}`;
  switch (restriction.kind) {
    case 'hidePath':
      return `hidePath ${iris(restriction.predicates)}`;
    case 'columns':
      return `columns ${columns(restriction)}`;
    case 'rows':
      return `rows of <${restriction.policy}> where ${restriction.rule}, ${columns(restriction.columns)}`;
  }
}

function stepLines(step: TraceStep, indent: string, lines: string[]): void {
  if ('fact' in step) lines.push(`${indent}${step.triple}   [fact from ${step.fact}]`);
  else if ('shownAbove' in step) lines.push(`${indent}${step.triple}   [shown above]`);
  else if ('eye' in step) {
    lines.push(
      `${indent}${step.triple}   [${step.eye.length > 0 ? `derived in EYE by ${step.eye.join(', ')}: no chain shown` : 'not derived by any rule'}]`,
    );
  } else if ('rule' in step) {
    lines.push(`${indent}${step.triple}`, `${indent}  by rule ${step.rule.number} of ${step.rule.file}: ${step.rule.text}`);
    for (const premise of step.from) stepLines(premise, `${indent}    `, lines);
  } else {
    lines.push(`${indent}${step.triple}`);
    for (const premise of step.from) stepLines(premise, `${indent}    `, lines);
  }
}

const ENGINE_NAMES = { copy: 'copy rules (applied directly)', chain: 'forward chainer', eye: 'EYE' } as const;

/** Per engine that ran, in order: its time and files, each EYE file with the reason it is not the forward chainer's. */
function engineRuns(stats: LoadStats) {
  return stats.stages.map((stage) => ({
    engine: ENGINE_NAMES[stage.engine],
    ms: Math.round(stage.ms),
    inputTriples: stage.inputTriples,
    files: stage.files.map((file) => {
      const reason = stats.ruleRuns.find((run) => run.file === file)?.reason;
      return reason === undefined ? { file } : { file, reason };
    }),
  }));
}

/**
 * Writes the pieces to stdout in chunks of about a megabyte, waiting whenever the stream asks to.
 * A reader that stops early (`check | head`) closes the pipe: the rest is dropped and the command
 * still exits 0, as when the output went out in one write.
 */
async function write(pieces: Iterable<string>): Promise<void> {
  let closed = false;
  const onError = () => {
    closed = true;
  };
  process.stdout.on('error', onError);
  /** Writes one chunk; false once the stream is gone. */
  const flush = async (chunk: string): Promise<boolean> => {
    if (closed) return false;
    if (!process.stdout.write(chunk)) {
      try {
        await once(process.stdout, 'drain');
      } catch {
        return false;
      }
    }
    return !closed;
  };
  try {
    let chunk = '';
    for (const piece of pieces) {
      chunk += piece;
      if (chunk.length < CHUNK_CHARACTERS) continue;
      if (!(await flush(chunk))) return;
      chunk = '';
    }
    if (chunk !== '') await flush(chunk);
  } finally {
    process.stdout.off('error', onError);
  }
}

const CHUNK_CHARACTERS = 1 << 20;

/**
 * Per principal, in order of its first policy: the policies that name it and their graphs, each
 * IRI written (`<iri>`, through `format`) once however many principals list it.
 */
function* listing(set: PolicySet, format: (iri: string) => string) {
  const { graphs, entries } = set.listing;
  const graphTexts = graphs.map((graph) => format(`<${graph}>`));
  const policyTexts = set.policies.map((policy) => format(`<${policy.iri}>`));
  for (const entry of entries) {
    const listedGraphs = new Array<string>(entry.graphs.length);
    for (let at = 0; at < listedGraphs.length; at += 1) listedGraphs[at] = graphTexts[entry.graphs[at] as number] as string;
    const prefixes = [...new Set(entry.policies.flatMap((policy) => policy.graphPrefixes))].map((prefix) => JSON.stringify(prefix));
    // Graphs named per caller (guard:readGraphTemplate): no graph until a caller fills them in.
    const templates = [...new Set(entry.policies.flatMap((policy) => policy.graphTemplates.map((template) => template.text)))].map(
      (template) => JSON.stringify(template),
    );
    yield {
      label: entry.label,
      policies: entry.policies.map((policy) => policyTexts[policy.order] as string),
      graphs: listedGraphs,
      prefixes,
      templates,
    };
  }
}

/** The listing as JSON.stringify(…, null, 2) lays out the `principals` member, after `head` (everything before its value). */
function* jsonListing(head: string, set: PolicySet) {
  const array = (items: readonly string[]) => (items.length === 0 ? '[]' : `[\n        ${items.join(',\n        ')}\n      ]`);
  yield `${head}[`;
  let separator = '\n';
  for (const entry of listing(set, (iri) => JSON.stringify(iri))) {
    // Prefixes and templates (as JSON strings already) only where a policy has them, so a listing without them keeps its layout.
    const more =
      (entry.prefixes.length === 0 ? '' : `,\n      "prefixes": ${array(entry.prefixes)}`) +
      (entry.templates.length === 0 ? '' : `,\n      "templates": ${array(entry.templates)}`);
    yield `${separator}    {\n      "principal": ${JSON.stringify(entry.label)},\n      "policies": ${array(entry.policies)},\n      "graphs": ${array(entry.graphs)}${more}\n    }`;
    separator = ',\n';
  }
  yield '\n  ]\n}\n';
}

function* text(
  summary: { config: string | null; policyFiles: number; ruleFiles: number; policies: number },
  set: PolicySet,
  engines: ReturnType<typeof engineRuns>,
  warnings: readonly string[],
  store: ReturnType<typeof storeReads>,
  storeCheck: StoreCheck,
) {
  const lines = [
    `ok: ${summary.policies} policies from ${summary.policyFiles} policy file(s), ${summary.ruleFiles} rule file(s); config ${summary.config ?? '(defaults)'}`,
    storeCheck.url === undefined
      ? 'store: the embedded store (no upstream configured)'
      : storeCheck.contacted
        ? `store: ${storeCheck.url} answers and honours dataset clauses (FROM, FROM NAMED)`
        : `store: ${storeCheck.url} not contacted (--offline)`,
  ];
  if (storeCheck.datasetForm === 'graph-filters') {
    lines.push(
      `store: queries name their dataset as graph filters, not FROM (config datasetForm${storeCheck.server === undefined ? '' : '; the store says it is Virtuoso'})`,
    );
  }
  const restricts = (policy: PolicySet['policies'][number]) =>
    policy.rowRule !== undefined || policy.readPaths !== undefined || policy.hidePaths.length > 0;
  if (storeCheck.server !== undefined && set.policies.some(restricts)) {
    lines.push(
      `store: says it is Virtuoso (${storeCheck.server.trim().slice(0, 80)}): beside some row and column checks, queries with EXISTS, NOT EXISTS or MINUS are refused there; check --why AGENT names the graphs`,
    );
  }
  for (const { name, triples, bytes, ms } of store.facts) lines.push(`facts: ${name} read ${triples} triples (${bytes} bytes) in ${ms} ms`);
  if (store.prefixListing !== undefined) {
    const { prefixes, graphs, ms } = store.prefixListing;
    lines.push(`prefixes: the store listed ${graphs} graphs under ${prefixes} guard:readGraphPrefix value(s) in ${ms} ms`);
  }
  for (const run of engines) {
    for (const { file, reason } of run.files) lines.push(`rules: ${run.engine} ran ${file}${reason === undefined ? '' : ` (${reason})`}`);
    lines.push(`rules: ${run.engine} took ${run.ms} ms over ${run.inputTriples} triples for ${run.files.length} file(s)`);
  }
  for (const warning of warnings) lines.push(`warning: ${warning}`);
  for (const { policy, readPath, hidePath, rowRule, rowData } of restrictionsOf(set)) {
    const rows = rowRule === undefined ? '' : ` rows ${JSON.stringify(rowRule)} in ${rowData.join(' ')}`;
    const hidden = hidePath === undefined ? '' : ` hidePath ${hidePath.join(' ')}`;
    lines.push(`restricts: ${policy}${readPath === undefined ? '' : ` readPath ${readPath.join(' ') || '(none)'}`}${hidden}${rows}`);
  }
  yield `${lines.join('\n')}\n`;
  for (const entry of listing(set, (iri) => iri)) {
    // The graphs listed under a prefix are among the graphs; the prefixes say which were listed from the store.
    const prefixes = entry.prefixes.length === 0 ? '' : `  prefixes: ${entry.prefixes.join(' ')}\n`;
    const templates = entry.templates.length === 0 ? '' : `  templates: ${entry.templates.join(' ')}\n`;
    const none = entry.templates.length === 0 ? '(none)' : '(none by name: per caller, from the templates)';
    yield `${entry.label}\n  policies: ${entry.policies.join(' ')}\n  graphs:   ${entry.graphs.join(' ') || none}\n${prefixes}${templates}`;
  }
  // The listing is per principal; a caller's grant is a union of several of them (docs/design/policy.md#vocabulary).
  yield 'a caller gets the union of Everyone, AuthenticatedAgent (when authenticated), its agent IRI and its groups\n';
}

/**
 * The policies that list columns or have a row rule, in order of listing (rowData empty: the graph granted): the
 * columns each shows (its readPath less its hidePath: hidden wins) and the predicates it hides.
 */
function restrictionsOf(set: PolicySet) {
  return set.policies
    .filter((policy) => policy.readPaths !== undefined || policy.rowRule !== undefined)
    .map((policy) => ({
      policy: `<${policy.iri}>`,
      ...(policy.readPaths !== undefined && {
        readPath: policy.readPaths.filter((iri) => !policy.hidePaths.includes(iri)).map((iri) => `<${iri}>`),
      }),
      ...(policy.hidePaths.length > 0 && { hidePath: [...policy.hidePaths].sort().map((iri) => `<${iri}>`) }),
      ...(policy.rowRule !== undefined && { rowRule: policy.rowRule.source }),
      rowData:
        policy.rowRule === undefined || policy.rowRule.data.length === 0
          ? ['(the graph granted)']
          : policy.rowRule.data.map((iri) => `<${iri}>`),
    }));
}

/**
 * The graphs where this caller's queries with an EXISTS, a NOT EXISTS or a MINUS are refused in front of
 * Virtuoso when they read the graph with a variable predicate (Plan.existsBesideNegation, refuse-for-store.ts).
 */
function refusedBesideNegation(views: ReadonlyMap<string, GraphView>, caller: Caller): string[] {
  return [...views]
    .filter(([graph, view]) => checksVariablePredicateWithExists(view, graph, caller))
    .map(([graph]) => `<${graph}>`)
    .sort();
}

/** The probe: a negation beside a variable predicate read in the default graph. */
const NEGATION_PROBE = 'SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { ?s ?p ?o } }';

/**
 * The graphs of this caller's default graph (all granted) when they hide different predicates from it, so that a
 * query with an EXISTS, a NOT EXISTS or a MINUS reading it with a variable predicate is refused in front of
 * Virtuoso; else undefined. The planner's own decision on a probe (Plan.existsBesideNegation), not a copy of it.
 */
function refusedInDefaultGraph(config: GuardConfig, set: PolicySet, caller: Caller): string[] | undefined {
  const grant = grantFor(set, caller);
  if (grant === undefined || grant.graphs.size < 2) return undefined;
  const planner = createPlanner({
    baseIri: config.baseIri,
    maxQueryDepth: config.maxQueryDepth,
    planCache: { maxEntries: 0, maxBytes: 1 },
    allowedFunctions: config.allowedFunctions,
    rowChecks: config.rowChecks,
  });
  let plan;
  try {
    plan = planner.plan({ query: NEGATION_PROBE, defaultGraphs: [], namedGraphs: [] }, grant, caller);
  } catch {
    return undefined; // refused for every store (a 403 of its own): nothing Virtuoso-specific to name
  }
  // Two graphs or more: only the per-graph hidden-path checks mark it (a row check marks it in one graph alone).
  if (!plan.existsBesideNegation) return undefined;
  return [...grant.graphs].map((graph) => `<${graph}>`).sort();
}

function* refusedInDefaultText(graphs: readonly string[] | undefined) {
  if (graphs === undefined) return;
  yield `in front of this store (Virtuoso), a query with an EXISTS, a NOT EXISTS or a MINUS that reads the default graph with a variable predicate is refused (403): it merges ${graphs.join(' ')}, which hide different predicates from this caller (docs/operations.md)\n`;
}

function* refusedText(graphs: readonly string[]) {
  if (graphs.length === 0) return;
  yield `in front of this store (Virtuoso), a query with an EXISTS, a NOT EXISTS or a MINUS that reads ${graphs.join(' ')} with a variable predicate is refused (403): Virtuoso answers such a query wrongly beside this caller's row checks there (docs/operations.md)\n`;
}

/** `--why`'s view lines: per graph with columns or rows, the columns and each row rule with its policy. */
function* viewText(views: readonly ViewSummary[]) {
  const columns = (value: ColumnsSummary) =>
    'readPath' in value ? `readPath ${value.readPath.join(' ') || '(none)'}` : `hidePath ${value.hidePath.join(' ') || '(none)'}`;
  for (const { graph, open, rows } of views) {
    const lines = [`view of ${graph}`];
    lines.push(`  without a row rule: ${open === null ? 'nothing (every policy granting it has a row rule)' : columns(open)}`);
    for (const row of rows)
      lines.push(`  rows of policy ${row.policy}: ${JSON.stringify(row.rule)} in ${row.data.join(' ')}, ${columns(row.columns)}`);
    yield `${lines.join('\n')}\n`;
  }
}
