// Runs one fact source's CONSTRUCT against the store and keeps its answer, unparsed, for the policy worker (on the serving thread).

import type { Upstream } from '../../upstream/create-upstream.js';
import { readStoreAnswer } from '../../upstream/read-store-answer.js';
import { PolicyLoadError } from '../policy-load-error.js';
import { factOrigin } from './fact-origin.js';

/**
 * One fact source as the load reads it: a CONSTRUCT the guard sends to its store, how often and
 * within which bounds. Configuration `facts` entries have this shape (the checks are the
 * configuration's, the type is the policy's: policy/ knows nothing of config/).
 */
export interface FactSource {
  /** Names the source in logs, metrics and the origin `facts:<name>`. */
  readonly name: string;
  /** One SPARQL 1.1 CONSTRUCT, checked before the guard starts. */
  readonly query: string;
  /** Milliseconds between two reads of the source. */
  readonly refreshMs: number;
  /** The whole answer must arrive within it, milliseconds. */
  readonly timeoutMs: number;
  readonly maxTriples: number;
  /** Bytes of one answer. */
  readonly maxBytes: number;
  /** How old the facts may grow before every query is refused, milliseconds. */
  readonly maxStaleMs: number;
  /** Whether the source may state policies (guard:Policy and the policy terms); false: facts only. */
  readonly policies: boolean;
}

/** One source's answer as the store sent it; parsed and checked on the policy worker (parseFactSource). */
export interface FetchedFacts {
  readonly name: string;
  /** Media type of the answer, lower-cased, no parameters. */
  readonly contentType: string;
  readonly body: Uint8Array;
  /** Time of the read, milliseconds. */
  readonly fetchMs: number;
  /** When the query was sent (Date.now()): the facts are at least this fresh. */
  readonly fetchedAt: number;
}

/**
 * Media types a CONSTRUCT answer is read in: N-Triples first (one triple per line, no prefixes,
 * no formulas), then Turtle; `text/plain` is what some stores call N-Triples.
 */
export const FACT_ACCEPT = 'application/n-triples, text/turtle;q=0.9, text/plain;q=0.5';

/**
 * Sends the source's query to the store through `upstream` (so with `upstreamHeaders`, never
 * through the caller rewrite) and reads the whole answer within the source's `timeoutMs` and
 * `maxBytes`. Throws PolicyLoadError naming the source (`facts:<name>: ...`), one line.
 */
export async function fetchFactSource(upstream: Upstream, source: FactSource): Promise<FetchedFacts> {
  const fetchedAt = Date.now();
  const started = performance.now();
  try {
    const answer = await readStoreAnswer(upstream, source.query, {
      accept: FACT_ACCEPT,
      timeoutMs: source.timeoutMs,
      maxBytes: source.maxBytes,
      // The answer goes to the policy worker at every refresh: shared, it is never copied.
      sharedMemory: true,
    });
    return { name: source.name, contentType: answer.contentType, body: answer.body, fetchMs: performance.now() - started, fetchedAt };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new PolicyLoadError(`${factOrigin(source.name)}: ${reason.split('\n')[0] ?? ''}`, factOrigin(source.name));
  }
}
