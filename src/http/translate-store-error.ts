// An error status of the store on a forwarded query, in the guard's shape: the store's status, one line of the guard's own, never the store's text unless explain is on.

import { StoreError } from '../guard-error.js';
import type { Plan } from '../sparql/plan.js';

/**
 * From this many granted graphs in the forwarded dataset (FROM and FROM NAMED clauses), a
 * refusal the table below does not name is put down to the query's size: the smallest limit
 * measured is Virtuoso's, 4,094 graphs per list (docs/operations.md#grant-size); 1,000 leaves
 * room for the other stores' limits on the whole text.
 */
export const LARGE_DATASET_GRAPHS = 1_000;

/** Why a store refused a query it could parse. */
type Refusal = 'cost' | 'time' | 'memory' | 'size' | 'answer';

/**
 * The refusals the lab's stores answer, matched on the first line of the store's text (the
 * lines after it often quote the query). Each pattern is the store's own wording.
 */
const REFUSALS: readonly { readonly pattern: RegExp; readonly refusal: Refusal }[] = [
  // Virtuoso, MaxQueryCostEstimationTime: "Virtuoso 42000 Error The estimated execution time 1234 (sec) exceeds the limit of 400 (sec)."
  { pattern: /estimated execution time .*exceeds the limit/i, refusal: 'cost' },
  // Virtuoso, MaxQueryExecutionTime past the anytime answer: "Virtuoso S1T00 Error SR171: Transaction timed out".
  { pattern: /\bSR171\b|transaction timed out/i, refusal: 'time' },
  // Jena: ARQ's query timeout (Fuseki: "The query timed out (restricted to 1000 ms)"; a bare ARQ server: QueryCancelledException).
  { pattern: /QueryCancelledException|query timed out|query execution cancelled/i, refusal: 'time' },
  // Virtuoso, MaxQueryMem and its memory pool: "SR...: ... out of memory", "Out of memory for ...";
  // Jena past its heap: "Error 500: java.lang.OutOfMemoryError: Java heap space".
  { pattern: /out of memory|OutOfMemoryError|memory pool|MaxQueryMem/i, refusal: 'memory' },
  // The embedded store, an answer over one JavaScript string (512 MiB): "the answer is too large for the embedded store: …";
  // a store hosted in Node (the lab's Oxigraph) passes on V8's words: "Cannot create a string longer than 0x1fffffe8 characters".
  { pattern: /^the answer is too large|cannot create a string longer than/i, refusal: 'answer' },
  // Virtuoso past 4,094 graphs in one list: "Virtuoso 37000 Error SP030: SPARQL compiler: Too many arguments".
  { pattern: /too many arguments/i, refusal: 'size' },
  // Oxigraph (the lab's server): "SPARQL body payloads are limited to 134217728 bytes"; Jena: "Error 413: request body too large".
  { pattern: /payloads are limited to|request body too large|too large|exceeds the maximum/i, refusal: 'size' },
];

/** Statuses that say "too large" whatever the text. */
const SIZE_STATUSES = new Set([413, 414, 431]);
/** The statuses stores answer a query too long or with too many dataset clauses with. */
const SIZE_REFUSALS = new Set([400, 413, 414, 431, 500]);

const WHY: Readonly<Record<Refusal, string>> = {
  cost: "its estimated cost is over the store's limit",
  time: "it ran past the store's time limit",
  memory: 'it needs more memory than the store allows',
  size: 'it is larger than the store accepts',
  answer: 'its answer is larger than the store can send',
};

/** The most of the store's text a caller sees with explain on (one line). */
const MAX_SHOWN_CHARS = 2_000;

/** How the guard answers a store's error. */
export interface StoreErrorOptions {
  /** The deployment's explain setting: only then may the caller see the store's own text (which may quote the rewrite). */
  readonly explain: boolean;
}

/**
 * The StoreError that replaces a status of the store that is no answer (300 to 599): the store's status,
 * code `store_refused` when the store refused the query as forwarded for its cost, time,
 * memory or size (at any grant size), else `store_error`. The message is the guard's one line;
 * the store's text (which echoes the forwarded query, FROM list and hidden predicates included)
 * is added only when explain is on; the operator finds it in the log.
 */
export function translateStoreError(status: number, storeText: string, plan: Plan, options: StoreErrorOptions): StoreError {
  const firstLine = /^\s*(.*)/.exec(storeText)?.[1] ?? '';
  const refusal =
    REFUSALS.find((each) => each.pattern.test(firstLine))?.refusal ??
    (SIZE_STATUSES.has(status) || (SIZE_REFUSALS.has(status) && plan.datasetGraphs >= LARGE_DATASET_GRAPHS) ? 'size' : undefined);
  const said = options.explain && storeText.trim() !== '' ? `; the store said: ${oneLine(storeText)}` : '';
  if (refusal === undefined) {
    // The store's 401 or 407 refuses the guard's own credential (upstreamHeaders), not the caller's.
    const whose =
      status === 401 || status === 407 ? " (it refused the guard's own credential, upstreamHeaders: the caller's were accepted)" : '';
    const answered = `the store answered HTTP ${status} to the query as forwarded${whose}`;
    const inLog = `${answered}; its message is in the guard's log`;
    return new StoreError(status, 'store_error', said === '' ? inLog : `${answered}${said}`, inLog);
  }
  const graphs = plan.datasetGraphs.toLocaleString('en-US');
  const size = `${graphs} graph${plan.datasetGraphs === 1 ? '' : 's'} in its dataset, ${Math.ceil(plan.formBytes / 1024).toLocaleString('en-US')} KiB`;
  const refused = `the store refused the query as forwarded (HTTP ${status}): with ${size}, ${WHY[refusal]}; narrow the query or name fewer graphs with FROM / FROM NAMED, or ask the operator (store limits, docs/operations.md)`;
  return new StoreError(status, 'store_refused', `${refused}${said}`, refused);
}

/** The store's text as one line, bounded, without control characters (a NUL or an ESC of the store's is no part of a line). */
function oneLine(text: string): string {
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return flat.length > MAX_SHOWN_CHARS ? `${flat.slice(0, MAX_SHOWN_CHARS)}…` : flat;
}
