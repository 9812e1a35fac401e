// Sends one query of the guard's own to the store and reads its whole answer, bounded in size and time.

import { GuardError } from '../guard-error.js';
import { UpstreamError, type Upstream } from './create-upstream.js';

/** How to ask, and the bounds of one answer the guard reads whole. */
export interface StoreAnswerOptions {
  readonly accept: string;
  /** The whole exchange, body included, must end within this (a store trickling bytes is cut). */
  readonly timeoutMs: number;
  /** An answer longer than this fails the read (the store is flooding, or the question was too wide). */
  readonly maxBytes: number;
}

/** A whole answer of the store. */
export interface StoreAnswer {
  readonly contentType: string;
  readonly body: Buffer;
}

/**
 * POSTs `queryText` as it is (no caller rewrite: the text is the guard's own) with the
 * configured upstream headers, and resolves to the whole body once all of it has arrived.
 * Rejects with a one-line GuardError (502) when the store cannot be reached, answers another
 * status than 2xx, sends more than `maxBytes`, or does not finish within `timeoutMs`; the
 * message never holds the store's own text.
 */
export async function readStoreAnswer(upstream: Upstream, queryText: string, options: StoreAnswerOptions): Promise<StoreAnswer> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new UpstreamError('timeout', `upstream did not finish its answer within ${options.timeoutMs} ms`)),
    options.timeoutMs,
  );
  try {
    const answer = await upstream.send(queryText, options.accept, deadline.signal);
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) {
        answer.body.destroy();
        throw new GuardError(502, `upstream answer is larger than ${options.maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    if (answer.status < 200 || answer.status > 299) throw new GuardError(502, `upstream answered with status ${answer.status}`);
    return { contentType: answer.contentType ?? '', body: Buffer.concat(chunks, bytes) };
  } finally {
    clearTimeout(timer);
  }
}
