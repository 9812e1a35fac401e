// Lists the store's graphs under each guard:readGraphPrefix of the policies, at load time, bounded (on the serving thread).

import { graphPrefixProblem, iriSpliceProblem, storeAliasProblem, storeReadingProblem } from '../../iri.js';
import { isReservedIri } from '../../vocabulary.js';
import { policyLoadError, type PolicyLoadError } from '../policy-load-error.js';

/**
 * A query of the guard's own sent to its upstream store (with `upstreamHeaders`, never through
 * the caller rewrite): resolves to the whole answer as text, at most `maxBytes` long, or rejects
 * with a one-line error. The server and the command line build it from the upstream.
 */
export type StoreQuery = (queryText: string, accept: string, maxBytes: number) => Promise<string>;

/** What one listing found. */
export interface PrefixListing {
  /** Per prefix, the graph IRIs under it, sorted, each once. */
  readonly graphs: ReadonlyMap<string, readonly string[]>;
  /** One line per listed graph that was not granted (an IRI the guard cannot splice safely), at most a few. */
  readonly skipped: readonly string[];
  /** How many graphs were listed under all prefixes together. */
  readonly graphCount: number;
  /** Wall time of the listing, milliseconds. */
  readonly ms: number;
}

/** Errors of the store's part of a listing (unreachable, refused, garbled, too many graphs), as opposed to a policy file's. */
const storeFailures = new WeakSet<Error>();

/** Whether `error` is a listing's failure on the store's side: a refresh then keeps trying, as for a fact source. */
export function isPrefixListingFailure(error: unknown): boolean {
  return error instanceof Error && storeFailures.has(error);
}

/** Marks a load error as the store's part of a listing. */
function storeFailure(error: PolicyLoadError): PolicyLoadError {
  storeFailures.add(error);
  return error;
}

/** The default of config `maxPrefixGraphs`: the most graphs one prefix may grant. */
export const DEFAULT_MAX_PREFIX_GRAPHS = 10_000;

/** Room per listed graph in the answer (an IRI and the JSON around it), and for the rest of the answer. */
const BYTES_PER_GRAPH = 4096;
const BYTES_OF_FRAME = 64 * 1024;
/** Skipped graphs named in the load's warnings; the rest are counted. */
const SKIPPED_NAMED = 5;

/**
 * Asks the store once per distinct prefix for its graphs whose IRI starts with it:
 * `SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRSTARTS(STR(?g), "prefix")) } LIMIT max+1`.
 * Nothing the store answers is trusted: a binding that is not an IRI, or an IRI that does not
 * start with the prefix byte for byte, fails the load like a garbled answer; an IRI that a
 * policy could not grant (reserved, or refused by iriSpliceProblem, such as one with dot
 * segments a store may normalise into another tenant's graph) or that a store may refuse to
 * read back in a query (storeReadingProblem) is left out and named in `skipped`. More than
 * `maxGraphs` graphs under one prefix, or any failure of the store, throws PolicyLoadError:
 * the load fails and the set in force stays.
 */
export async function listPrefixGraphs(query: StoreQuery, prefixes: Iterable<string>, maxGraphs: number): Promise<PrefixListing> {
  const started = performance.now();
  const graphs = new Map<string, readonly string[]>();
  const skipped: string[] = [];
  let skippedCount = 0;
  let graphCount = 0;
  for (const prefix of new Set(prefixes)) {
    // Checked at policy load already; checked again since the text goes into a query.
    const problem = graphPrefixProblem(prefix);
    if (problem !== undefined) throw policyLoadError(`guard:readGraphPrefix ${JSON.stringify(prefix)} ${problem}`);
    let answer: string;
    try {
      answer = await query(listingQuery(prefix, maxGraphs), ACCEPT, BYTES_OF_FRAME + (maxGraphs + 1) * BYTES_PER_GRAPH);
    } catch (error) {
      throw storeFailure(
        policyLoadError(`the store could not list the graphs under guard:readGraphPrefix ${JSON.stringify(prefix)}: ${oneLine(error)}`),
      );
    }
    const listed = readGraphBindings(answer, prefix);
    if (listed.length > maxGraphs) {
      throw storeFailure(
        policyLoadError(
          `guard:readGraphPrefix ${JSON.stringify(prefix)} matches more than ${maxGraphs} graphs (raise maxPrefixGraphs, or grant narrower prefixes)`,
        ),
      );
    }
    const granted: string[] = [];
    for (const graph of listed) {
      // Granted, a graph the store cannot read back in a query would fail every query of every caller of the prefix
      // (FROM and FROM NAMED list it): whoever can make the application create one would stop the tenant's queries.
      const why = isReservedIri(graph)
        ? 'is reserved by the rewriter (urn:x-sparql-guard:)'
        : (iriSpliceProblem(graph) ?? storeReadingProblem(graph) ?? storeAliasProblem(graph));
      if (why === undefined) granted.push(graph);
      else if ((skippedCount += 1) <= SKIPPED_NAMED)
        skipped.push(`graph <${graph}> under guard:readGraphPrefix ${JSON.stringify(prefix)} is not granted: it ${why}`);
    }
    granted.sort();
    graphs.set(prefix, Object.freeze(granted));
    graphCount += granted.length;
  }
  if (skippedCount > SKIPPED_NAMED) skipped.push(`${skippedCount - SKIPPED_NAMED} more graphs under guard:readGraphPrefix are not granted`);
  return { graphs, skipped, graphCount, ms: performance.now() - started };
}

const ACCEPT = 'application/sparql-results+json';

/**
 * The listing query of one prefix: the named graphs of the store's default dataset that hold a
 * triple. `GRAPH ?g { }` (one solution per graph, SPARQL 1.1 Query section 18.6) would also list
 * empty graphs without reading triples, but Virtuoso answers it with no solution at all; an
 * empty graph grants nothing anyway. The prefix holds none of `"` `\` or a line break
 * (graphPrefixProblem), so it is a safe string literal as it is.
 */
function listingQuery(prefix: string, maxGraphs: number): string {
  return `SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRSTARTS(STR(?g), "${prefix}")) } LIMIT ${maxGraphs + 1}`;
}

/** The `?g` IRIs of a SPARQL JSON results answer (SPARQL 1.1 Query Results JSON Format section 3), each once. */
function readGraphBindings(answer: string, prefix: string): string[] {
  const garbled = (what: string) =>
    storeFailure(policyLoadError(`the store's list of the graphs under guard:readGraphPrefix ${JSON.stringify(prefix)} ${what}`));
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    throw garbled('is not SPARQL JSON results');
  }
  const bindings = (parsed as { results?: { bindings?: unknown } } | null)?.results?.bindings;
  if (!Array.isArray(bindings)) throw garbled('is not SPARQL JSON results');
  const graphs = new Set<string>();
  for (const binding of bindings as unknown[]) {
    const term = (binding as { g?: { type?: unknown; value?: unknown } } | null)?.g;
    if (term === undefined || term === null) throw garbled('holds a solution without ?g');
    if (term.type !== 'uri' || typeof term.value !== 'string') throw garbled('holds a ?g that is not an IRI');
    // The store's FILTER is a hint; the guard's own comparison decides.
    if (!term.value.startsWith(prefix)) throw garbled(`holds <${term.value.slice(0, 200)}>, which does not start with the prefix`);
    graphs.add(term.value);
  }
  return [...graphs];
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? '';
}
