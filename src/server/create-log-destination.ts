// The guard's JSON log lines, each with its time, written in batches of whole lines by SonicBoom (pino's destination).

// sonic-boom is CommonJS: node gives its exports as the default export only.
import sonicBoom from 'sonic-boom';

/** Writes one structured log line (the entry plus `time`). */
export type LogLine = (entry: Readonly<Record<string, unknown>>) => void;

/** Log lines to one file descriptor. */
export interface LogDestination {
  /** Adds one line; request lines wait for the batch, lines with an `event` go out at once. */
  readonly log: LogLine;
  /** Adds one line made already: `fields` is the JSON text of an object (`{...}`) without `time`; it waits for the batch. */
  readonly logText: (fields: string) => void;
  /** Writes what is buffered now, synchronously. */
  flush(): void;
  /** Writes what is buffered and closes the descriptor (standard output and error stay open); later lines are dropped. */
  close(): void;
}

/** Options of {@link createLogDestination}. */
export interface LogDestinationOptions {
  /** Longest time a line waits in the buffer. */
  readonly flushIntervalMs: number;
  /** Largest write in bytes (a longer line goes alone): keeps writes atomic. */
  readonly maxBatchBytes: number;
  /** A write failed (a full disk, a closed pipe); the lines stay buffered, up to MAX_BUFFERED_BYTES, and go with the next write. */
  readonly onError?: (error: NodeJS.ErrnoException) => void;
  /** A write succeeded. */
  readonly onWrite?: () => void;
}

/**
 * 20 ms: a log collector sees a request's line almost at once. 4096 bytes: PIPE_BUF on Linux,
 * the largest write to a pipe that is atomic, so the lines of several workers sharing one
 * stdout pipe never interleave mid-line; about twenty request lines per write.
 */
export const STDOUT_BATCH: LogDestinationOptions = { flushIntervalMs: 20, maxBatchBytes: 4096 };

/** Lines kept while writes fail; past it new lines are dropped, so a dead destination cannot fill the memory. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/**
 * Log lines to `fd`, written synchronously in batches of whole lines, at most
 * `maxBatchBytes` per write (SonicBoom's buckets hold whole writes), when a batch is full or
 * `flushIntervalMs` after its first line; a line with an `event` field (start, reload,
 * shutdown, failures) goes out at once with the lines before it. One synchronous write per
 * request cost more of the guard's CPU (bench/README.md, (h)).
 */
export function createLogDestination(fd: number, options: LogDestinationOptions): LogDestination {
  const destination = new sonicBoom.SonicBoom({
    fd,
    sync: true,
    maxWrite: options.maxBatchBytes,
    // SonicBoom writes once minLength bytes wait, and wants minLength below maxWrite.
    minLength: options.maxBatchBytes - 1,
    periodicFlush: options.flushIntervalMs,
    maxLength: MAX_BUFFERED_BYTES,
  });
  // Without a listener an 'error' would throw out of the write, into the request that logs.
  destination.on('error', (error: NodeJS.ErrnoException) => options.onError?.(error));
  if (options.onWrite !== undefined) destination.on('write', options.onWrite);
  // A busy guard logs many lines per millisecond: format the time once per millisecond.
  let stampedAt = Number.NaN;
  let stamp = '';
  let closed = false;

  /** Splices the time into `fields` (no copy of an entry to add it) and writes the line. */
  const add = (fields: string): void => {
    if (closed) return;
    const now = Date.now();
    if (now !== stampedAt) {
      stampedAt = now;
      stamp = `{"time":"${new Date(now).toISOString()}"`;
    }
    destination.write(fields === '{}' ? `${stamp}}\n` : `${stamp},${fields.slice(1)}\n`);
  };

  const flush = (): void => {
    if (closed) return;
    try {
      destination.flushSync();
    } catch (error) {
      options.onError?.(error as NodeJS.ErrnoException);
    }
  };

  return {
    log: (entry) => {
      add(JSON.stringify(entry));
      // The batch, this line last, in one write (at most one batch waits: a full one is written at once).
      if (entry.event !== undefined && !closed) destination.flush();
    },
    logText: add,
    flush,
    close: () => {
      flush();
      closed = true;
      // Closes the descriptor once the buffer is written (never 1 or 2).
      destination.destroy();
    },
  };
}
