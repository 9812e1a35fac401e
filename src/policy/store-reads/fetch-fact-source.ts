// Runs one fact source's CONSTRUCT against the store and keeps its answer, unparsed, for the policy worker (on the serving thread).

import type { FactSourceConfig } from '../../config/read-config.js';
import type { Upstream } from '../../upstream/create-upstream.js';
import { readStoreAnswer } from '../../upstream/read-store-answer.js';
import { PolicyLoadError } from '../policy-load-error.js';

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

/** The origin of a fact from a source, as logs and `check --why` name it. */
export function factOrigin(name: string): string {
  return `facts:${name}`;
}

/**
 * Sends the source's query to the store through `upstream` (so with `upstreamHeaders`, never
 * through the caller rewrite) and reads the whole answer within the source's `timeoutMs` and
 * `maxBytes`. Throws PolicyLoadError naming the source (`facts:<name>: ...`), one line.
 */
export async function fetchFactSource(upstream: Upstream, source: FactSourceConfig): Promise<FetchedFacts> {
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
