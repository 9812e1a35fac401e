// Answers one SPARQL 1.1 Protocol query request against the embedded Oxigraph store, as `oxigraph serve` does.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { namedNode, type NamedNode, type Store } from 'oxigraph';
import { firstLine } from './first-line.js';

/** The largest request body read; the guard's own requests are at most 1 MiB plus its FROM clauses. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The first line of the embedded store's refusal of an answer longer than one JavaScript string (the guard reads it as a size refusal). */
export const ANSWER_TOO_LARGE =
  'the answer is too large for the embedded store: it holds an answer as one text of at most 512 MiB (oxigraph serve streams)';

/** A refusal of the embedded endpoint: written as text/plain with this status. */
export class ProtocolError extends Error {
  constructor(
    readonly status: 400 | 404 | 405 | 406 | 413 | 415 | 500,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

type MediaTable = ReadonlyMap<string, string>;

/** SELECT and ASK answers (SPARQL 1.1 Query Results JSON, XML, CSV and TSV). */
const RESULT_TYPES: MediaTable = new Map([
  ['application/sparql-results+json', 'application/sparql-results+json'],
  ['application/json', 'application/sparql-results+json'],
  ['application/sparql-results+xml', 'application/sparql-results+xml'],
  ['application/xml', 'application/sparql-results+xml'],
  ['text/csv', 'text/csv'],
  ['text/tab-separated-values', 'text/tab-separated-values'],
]);

/** CONSTRUCT and DESCRIBE answers. */
const GRAPH_TYPES: MediaTable = new Map([
  ['text/turtle', 'text/turtle'],
  ['application/n-triples', 'application/n-triples'],
  ['application/n-quads', 'application/n-quads'],
  ['application/rdf+xml', 'application/rdf+xml'],
]);

/**
 * Serves `POST` (form or application/sparql-query) and `GET ?query=` on the query path.
 * Writes the whole answer or throws a ProtocolError; nothing is written before the query has
 * been evaluated, so an error always gets its own status.
 */
export async function answerQuery(
  store: Store,
  req: IncomingMessage,
  res: ServerResponse,
  baseIri: string,
  evaluating: (running: boolean) => void = () => undefined,
): Promise<void> {
  const questionMark = (req.url ?? '').indexOf('?');
  const urlParams = questionMark < 0 ? '' : (req.url ?? '').slice(questionMark + 1);
  let params: Array<[string, string]>;
  let directQuery: string | undefined;
  if (req.method === 'GET') {
    params = [...new URLSearchParams(urlParams)];
  } else if (req.method === 'POST') {
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (contentType === 'application/x-www-form-urlencoded') {
      // Parameters may come from both the URL and the body (SPARQL 1.1 Protocol 2.1.2).
      params = [...new URLSearchParams(urlParams), ...new URLSearchParams(await readBody(req))];
    } else if (contentType === 'application/sparql-query') {
      params = [...new URLSearchParams(urlParams)];
      directQuery = await readBody(req);
    } else {
      throw new ProtocolError(415, 'Content-Type must be application/x-www-form-urlencoded or application/sparql-query');
    }
  } else {
    throw new ProtocolError(405, `${req.method ?? 'this method'} is not supported here`, { allow: 'GET, POST' });
  }

  let query = directQuery;
  const defaultGraphs: NamedNode[] = [];
  const namedGraphs: NamedNode[] = [];
  for (const [name, value] of params) {
    if (name === 'query') {
      if (query !== undefined) throw new ProtocolError(400, 'Multiple query parameters provided');
      query = value;
    } else if (name === 'default-graph-uri') defaultGraphs.push(graphIri(value, name));
    else if (name === 'named-graph-uri') namedGraphs.push(graphIri(value, name));
    // Anything else (update, union-default-graph, format, ...) is ignored: this endpoint is
    // read-only and knows no store-specific switches.
  }
  if (query === undefined) throw new ProtocolError(400, "You should set the 'query' parameter");

  const form = queryForm(query);
  const graphForm = form === 'CONSTRUCT' || form === 'DESCRIBE';
  const mediaType = graphForm
    ? negotiate(req.headers.accept, GRAPH_TYPES, 'text/turtle')
    : negotiate(req.headers.accept, RESULT_TYPES, 'application/sparql-results+json');

  const options: Parameters<Store['query']>[1] = { base_iri: baseIri, results_format: mediaType };
  // The protocol's dataset replaces the query's FROM / FROM NAMED; naming only one kind leaves
  // the other empty (SPARQL 1.1 Protocol 2.1.4, as the Oxigraph server does).
  if (defaultGraphs.length > 0 || namedGraphs.length > 0) {
    options.default_graph = defaultGraphs;
    options.named_graphs = namedGraphs;
  }
  let answer: unknown;
  try {
    evaluating(true);
    answer = store.query(query, options);
  } catch (error) {
    // A trap of the WASM engine (stack overflow, out of bounds) leaves the instance unusable:
    // let the worker die so that a fresh one takes over.
    // (WebAssembly.RuntimeError; the name is checked because this project's lib has no WebAssembly types.)
    if (error instanceof Error && error.name === 'RuntimeError') throw error;
    // The answer was evaluated but is longer than a JavaScript string (V8's limit, 512 MiB):
    // the query is valid, the store cannot send it (a 400 would blame the query).
    if ((error as { code?: unknown } | null)?.code === 'ERR_STRING_TOO_LONG') {
      throw new ProtocolError(500, ANSWER_TOO_LARGE);
    }
    throw new ProtocolError(400, firstLine(error));
  } finally {
    evaluating(false);
  }
  // Oxigraph 0.5.11 serialises the whole answer into one string; there is no iterator to stream
  // from, so the best is to send it once with its length (keep-alive without chunking).
  const body = typeof answer === 'string' ? answer : String(answer);
  res.writeHead(200, { 'content-type': mediaType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function graphIri(value: string, parameter: string): NamedNode {
  // An absolute IRI without characters that IRIREF excludes (SPARQL 1.1 Query 19.8, [139]).
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`]*$/.test(value)) throw new ProtocolError(400, `invalid IRI in ${parameter}`);
  return namedNode(value);
}

/**
 * Picks the answer's media type from Accept: the highest q wins, the first listed on a tie;
 * `*` / `*`, `application/*` and `text/*` mean the default (as `oxigraph serve`); q=0 refuses.
 */
function negotiate(accept: string | undefined, table: MediaTable, fallback: string): string {
  if (accept === undefined || accept.trim() === '') return fallback;
  let best: string | undefined;
  let bestQ = 0;
  for (const entry of accept.split(',')) {
    const [range = '', ...parameters] = entry.split(';').map((part) => part.trim());
    let q = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=').map((part) => part.trim());
      if (key?.toLowerCase() !== 'q') continue;
      q = Number(value);
      if (!Number.isFinite(q) || q < 0 || q > 1) throw new ProtocolError(400, 'Invalid q value in Accept');
    }
    if (q <= bestQ) continue;
    const mediaRange = range.toLowerCase();
    const candidate = mediaRange === '*/*' || mediaRange === 'application/*' || mediaRange === 'text/*' ? fallback : table.get(mediaRange);
    if (candidate !== undefined) {
      best = candidate;
      bestQ = q;
    }
  }
  if (best === undefined) throw new ProtocolError(406, `No acceptable media type; try ${fallback}`);
  return best;
}

/** The query form keyword after the prologue (comments, BASE, PREFIX), or undefined. */
function queryForm(query: string): 'SELECT' | 'ASK' | 'CONSTRUCT' | 'DESCRIBE' | undefined {
  const prologue = /^(?:\s+|#[^\n\r]*|BASE\s*<[^>]*>|PREFIX\s+[^\s:]*:\s*<[^>]*>)*/iy;
  prologue.lastIndex = 0;
  const start = prologue.exec(query)?.[0].length ?? 0;
  const keyword = /^(SELECT|ASK|CONSTRUCT|DESCRIBE)\b/i.exec(query.slice(start, start + 16));
  return keyword?.[1]?.toUpperCase() as 'SELECT' | 'ASK' | 'CONSTRUCT' | 'DESCRIBE' | undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ProtocolError(413, `Request body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
