// Asks the store a query of the guard's own (not a caller's) and reads the whole answer, bounded in time and size.

import { createPacer } from '../create-pacer.js';
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
    const response = await upstream.send(
      { query: queryText },
      { accept: options.accept, signal: controller.signal, timeoutMs: options.timeoutMs },
    );
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
    const body = options.sharedMemory === true ? new SharedBody(options.maxBytes, response.contentLength) : new ChunkedBody();
    if (whole !== undefined) {
      body.append(whole);
      return { contentType, body: body.done() };
    }
    // The chunks a fast store has sent are all iterated in one go: the read gives way by time.
    const pace = createPacer();
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      if (body.bytes + chunk.length > options.maxBytes) {
        response.body.destroy();
        throw tooLarge(options.maxBytes);
      }
      body.append(chunk);
      const turn = pace();
      if (turn !== undefined) await turn;
    }
    return { contentType, body: body.done() };
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason instanceof UpstreamError) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** A body collected as chunks and joined at the end. */
class ChunkedBody {
  private readonly chunks: Buffer[] = [];
  bytes = 0;

  append(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  done(): Buffer {
    return Buffer.concat(this.chunks, this.bytes);
  }
}

/** Room reserved first when the store sends no Content-Length; the buffer doubles from there. */
const FIRST_SHARED_BYTES = 1 << 20;

/**
 * A body written into a growable SharedArrayBuffer as it arrives. Each chunk is copied when it
 * comes: writing 20 MB of fresh memory in one go after the last chunk (page faults included) held
 * the event loop for 70 to 170 ms. Growing in place copies nothing; only `maxBytes` of address
 * space is reserved, and memory is committed as the body grows.
 */
class SharedBody {
  private readonly memory: SharedArrayBuffer;
  private readonly view: Uint8Array;
  bytes = 0;

  constructor(maxBytes: number, contentLength: number | undefined) {
    this.memory = new SharedArrayBuffer(Math.min(contentLength ?? FIRST_SHARED_BYTES, maxBytes), { maxByteLength: maxBytes });
    // A view without a length follows the buffer as it grows.
    this.view = new Uint8Array(this.memory);
  }

  append(chunk: Buffer): void {
    const end = this.bytes + chunk.length;
    if (end > this.memory.byteLength) this.memory.grow(Math.min(Math.max(end, this.memory.byteLength * 2), this.memory.maxByteLength));
    this.view.set(chunk, this.bytes);
    this.bytes = end;
  }

  done(): Buffer {
    return Buffer.from(this.memory, 0, this.bytes);
  }
}

function tooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError('failed', `the store's answer is larger than ${maxBytes} bytes`);
}
