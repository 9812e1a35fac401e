// `sparql-guard explain`: the explain JSON of one query for one caller, offline, through the server's own explain route.

import { readFileSync } from 'node:fs';
import type { Caller } from '../auth/caller.js';
import { ANONYMOUS_AGENT } from '../vocabulary.js';
import { findAgentIriProblem } from '../iri.js';
import { decodeUtf8Text, NotUtf8Error } from '../decode-utf8-text.js';
import {
  authChallenge,
  createCallerIdentifier,
  credentialHeaderNames,
  type CallerOrPromise,
  type RequestHeaders,
} from '../auth/identify-caller.js';
import type { GuardConfig } from '../config/read-config.js';
import { GuardError } from '../guard-error.js';
import { fetchPolicyInputs } from '../policy/store-reads/fetch-policy-inputs.js';
import { loadPolicySetWithStats } from '../policy/load/load-policy-set.js';
import { createApp } from '../server/create-app.js';
import { createPolicyHolder } from '../server/policy-holder.js';
import { createPlanner } from '../sparql/create-planner.js';
import type { DatasetForm } from '../sparql/graph-filter-form.js';
import { checkDatasetSupport } from '../upstream/check-dataset-support.js';
import type { Upstream } from '../upstream/create-upstream.js';
import { openCommandStore } from './open-command-store.js';
import { readCommandConfig } from './read-command-config.js';
import { parseCommandArgs } from './parse-command-args.js';

export const EXPLAIN_USAGE = `usage: sparql-guard explain [--config FILE] [--key KEY | --header 'Name: value'... | --agent IRI [--group NAME]...]
                            [--query TEXT | --query-file FILE] [--default-graph-uri IRI]... [--named-graph-uri IRI]...
  the caller: --key or --header identified as the server would; --agent and --group taken as given; none: anonymous
  the query: --query or --query-file; neither: read from stdin
  prints the JSON that {path}/explain would answer (whatever the config's explain says); never runs the query
  (the store is read only as serve loads the policies: fact sources, graphs under guard:readGraphPrefix)`;

/** Explain never forwards a plan: the route gets no store. */
const NO_STORE: Upstream = {
  send: () => Promise.reject(new GuardError(502, 'upstream_failed', 'explain runs offline: there is no store')),
  store: 'none (explain runs offline)',
  close: () => Promise.resolve(),
};

interface ExplainArgs {
  config?: string;
  key?: string;
  header?: string[];
  agent?: string;
  group?: string[];
  query?: string;
  'query-file'?: string;
  'default-graph-uri'?: string[];
  'named-graph-uri'?: string[];
}

/**
 * Runs the command; returns the exit code. The request goes through the same
 * fastify route, pipeline and error renderer as `{path}/explain`, injected into the
 * app without a port, so the answer and the refusals are the server's own.
 */
export async function explainCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: ExplainArgs;
  try {
    values = parseCommandArgs(args, {
      config: { type: 'string' },
      key: { type: 'string' },
      header: { type: 'string', multiple: true },
      agent: { type: 'string' },
      group: { type: 'string', multiple: true },
      query: { type: 'string' },
      'query-file': { type: 'string' },
      'default-graph-uri': { type: 'string', multiple: true },
      'named-graph-uri': { type: 'string', multiple: true },
    });
  } catch (error) {
    return usageError((error as Error).message);
  }
  const problem = findArgumentProblem(values);
  if (problem !== undefined) return usageError(problem);
  let query: string | undefined;
  try {
    query = readQueryText(values);
  } catch (error) {
    const source = values['query-file'] === undefined ? 'the query on stdin' : '--query-file';
    if (error instanceof NotUtf8Error) return usageError(`${source} is ${error.message}`);
    return usageError(`${source} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'read error'})`);
  }
  if (query === undefined || query.trim() === '') return usageError('give the query with --query, --query-file or on stdin');

  const config = readCommandConfig(env, values.config);
  const policies = createPolicyHolder(authChallenge(config.auth));
  // The set serve would load: the fact sources and the prefix listings read the store once (the query never goes there).
  const store = openCommandStore(config);
  let datasetForm: DatasetForm;
  try {
    const inputs = await fetchPolicyInputs(store.upstream, store.sources);
    policies.replace((await loadPolicySetWithStats(store.sources, { inputs })).set);
    datasetForm = await chooseDatasetForm(config, store.upstream);
  } finally {
    await store.close();
  }
  const planner = createPlanner({
    baseIri: config.baseIri,
    maxQueryDepth: config.maxQueryDepth,
    planCache: config.planCache,
    allowedFunctions: config.allowedFunctions,
    rowChecks: config.rowChecks,
    datasetForm,
  });
  const identifyCaller: (headers: RequestHeaders) => CallerOrPromise =
    values.agent === undefined ? createCallerIdentifier(config.auth) : constantCaller(values.agent, values.group ?? []);

  const app = createApp(
    { path: config.path, explain: true, cors: { origins: undefined, credentials: false }, ui: false },
    {
      identifyCaller,
      credentialHeaders: credentialHeaderNames(config.auth),
      grant: (caller) => policies.grant(caller),
      plan: (request, grant, caller) => planner.plan(request, grant, caller),
      upstream: NO_STORE,
      notReadyReason: () => undefined,
      log: () => undefined,
    },
  );
  try {
    const form = new URLSearchParams({ query });
    for (const iri of values['default-graph-uri'] ?? []) form.append('default-graph-uri', iri);
    for (const iri of values['named-graph-uri'] ?? []) form.append('named-graph-uri', iri);
    // Injected (fastify's inject): no port is opened; the route reads the same raw header list.
    const response = await app.inject({
      method: 'POST',
      url: `${config.path}/explain`,
      headers: { ...requestHeaders(values), 'content-type': 'application/x-www-form-urlencoded' },
      payload: form.toString(),
    });
    const body = response.body;
    if (response.statusCode !== 200) {
      process.stderr.write(`sparql-guard explain: ${response.statusCode}: ${body.trim()}\n`);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(JSON.parse(body), null, 2)}\n`);
    return 0;
  } finally {
    await app.close();
  }
}

function findArgumentProblem(values: ExplainArgs): string | undefined {
  if (values.agent !== undefined && (values.key !== undefined || values.header !== undefined)) {
    return '--agent names the caller directly: leave out --key and --header';
  }
  if (values.group !== undefined && values.agent === undefined) return '--group needs --agent';
  if (values.query !== undefined && values['query-file'] !== undefined) return 'give either --query or --query-file';
  if (values.agent !== undefined && values.agent !== ANONYMOUS_AGENT) {
    const problem = findAgentIriProblem(values.agent);
    if (problem !== undefined) return `--agent ${problem}`;
  }
  for (const header of values.header ?? []) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(header)) return "--header must look like 'Name: value'";
  }
  return undefined;
}

/** The caller named by --agent: authenticated unless it is the anonymous agent itself. */
function constantCaller(agent: string, groups: readonly string[]): () => Caller {
  const caller: Caller = Object.freeze({
    agent,
    groups: Object.freeze([...new Set(groups)]),
    authenticated: agent !== ANONYMOUS_AGENT,
  });
  return () => caller;
}

function requestHeaders(values: ExplainArgs): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const colon = header.indexOf(':');
    headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }
  if (values.key !== undefined) headers['x-api-key'] = values.key;
  return headers;
}

function readQueryText(values: ExplainArgs): string | undefined {
  if (values.query !== undefined) return values.query;
  if (values['query-file'] !== undefined) return decodeUtf8Text(readFileSync(values['query-file']));
  if (process.stdin.isTTY) return undefined;
  return decodeUtf8Text(readFileSync(0));
}

function usageError(message: string): number {
  process.stderr.write(`sparql-guard explain: ${message}\n${EXPLAIN_USAGE}\n`);
  return 2;
}

/** Longest explain waits for the store's dataset check (datasetForm "auto"): an operator is waiting. */
const SERVER_CHECK_TIMEOUT_MS = 10_000;

/**
 * The dataset form serve would send to this store: config "auto" asks the store the dataset check
 * serve runs (its Server header, and the graph-filter probe). A store that does not answer leaves
 * the clauses, which serve sends too until its check finds the store.
 */
async function chooseDatasetForm(config: GuardConfig, upstream: Upstream): Promise<DatasetForm> {
  if (config.datasetForm !== 'auto') return config.datasetForm;
  if (config.upstream === undefined) return 'clauses';
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.min(config.timeoutMs, SERVER_CHECK_TIMEOUT_MS));
  try {
    const support = await checkDatasetSupport(upstream, controller.signal, 'join', 'auto');
    return support.kind === 'honoured' && support.graphFilters ? 'graph-filters' : 'clauses';
  } finally {
    clearTimeout(timer);
  }
}
