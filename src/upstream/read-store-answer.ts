// Asks the store a query of the guard's own (not a caller's) and reads the whole answer, bounded in time and size.

import { UpstreamError, type Upstream } from './create-upstream.js';

/** The store's whole answer to a query of the guard's own. */
export interface StoreAnswer {
  /** The media type, lower-cased, without parameters ('' when the store sent none). */
  readonly contentType: string;
  readonly body: Buffer;
}

/** Bounds of one read. */
export interface StoreReadOptions {
  /** The Accept header sent. */
  readonly accept: string;
  /** The whole answer, headers and body, must arrive within it. */
  readonly timeoutMs: number;
  /** Bytes past which the read is abandoned. */
  readonly maxBytes: number;
  /**
   * Puts the body in a SharedArrayBuffer: handing it to a worker thread then copies nothing
   * (a structured clone of a 20 MB answer is a stall of the event loop).
   */
  readonly sharedMemory?: boolean;
}

/**
 * Sends `queryText` as it stands (no caller, no rewrite; the configured upstream headers go
 * with it) and collects the body. Throws UpstreamError with a one-line message when the store
 * cannot be reached, answers with a status other than 2xx, is slower than `timeoutMs` in all,
 * or sends more than `maxBytes`; the message never quotes the store's body.
 */
export async function readStoreAnswer(upstream: Upstream, queryText: string, options: StoreReadOptions): Promise<StoreAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new UpstreamError('timeout', `the store did not answer whole within ${options.timeoutMs} ms`)),
    options.timeoutMs,
  );
  try {
    const response = await upstream.send(queryText, options.accept, controller.signal, options.timeoutMs);
    if (response.status < 200 || response.status > 299) {
      response.body.destroy();
      throw new UpstreamError('failed', `the store answered with status ${response.status}`);
    }
    if (response.contentLength !== undefined && response.contentLength > options.maxBytes) {
      response.body.destroy();
      throw tooLarge(options.maxBytes);
    }
    const contentType = (response.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const whole = response.takeWhole();
    if (whole !== undefined) return { contentType, body: options.sharedMemory === true ? join([whole], whole.length, true) : whole };
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) {
        response.body.destroy();
        throw tooLarge(options.maxBytes);
      }
      chunks.push(chunk);
    }
    return { contentType, body: join(chunks, bytes, options.sharedMemory === true) };
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason instanceof UpstreamError) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The chunks in one buffer, in shared memory when asked. */
function join(chunks: readonly Buffer[], bytes: number, shared: boolean): Buffer {
  if (!shared) return Buffer.concat(chunks, bytes);
  const body = Buffer.from(new SharedArrayBuffer(bytes));
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(body, at);
  return body;
}

function tooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError('failed', `the store's answer is larger than ${maxBytes} bytes`);
}
