// Writes the guard's JSON log lines in batches: one write per batch instead of one per request.

/** Writes one structured log line (the entry plus `time`). */
export type LogLine = (entry: Readonly<Record<string, unknown>>) => void;

/** A batching log writer. */
export interface LogWriter {
  /** Adds one line; request lines wait for the batch, lines with an `event` go out at once. */
  readonly log: LogLine;
  /** Adds one line made already: `fields` is the JSON text of an object (`{...}`) without `time`; it waits for the batch. */
  readonly logText: (fields: string) => void;
  /** Writes what is buffered now (synchronously when `write` is). */
  flush(): void;
}

/** Options of {@link createLogWriter}. */
export interface LogWriterOptions {
  /** Longest time a line waits in the buffer. */
  readonly flushIntervalMs: number;
  /** Largest write in bytes (a longer line goes alone): bounds the memory used, and keeps writes atomic. */
  readonly maxBatchBytes: number;
}

/**
 * 20 ms: a log collector sees a request's line almost at once. 4096 bytes: PIPE_BUF on Linux,
 * the largest write to a pipe that is atomic, so the lines of several workers sharing one
 * stdout pipe never interleave mid-line; about twenty request lines per write.
 */
export const DEFAULT_LOG_WRITER_OPTIONS: LogWriterOptions = { flushIntervalMs: 20, maxBatchBytes: 4096 };

/**
 * Creates a writer that batches whole lines for `write` (e.g. process.stdout's, which is a
 * synchronous system call for files and pipes: one per request cost a twentieth of the
 * guard's CPU under load). A line with an `event` field (start, reload, shutdown, failures)
 * flushes the batch with it, so such lines are never late and the order is kept. The timer
 * does not keep the process alive; `flush` on exit (see logToStdout) loses nothing on a
 * graceful shutdown.
 */
export function createLogWriter(write: (text: string) => void, options: LogWriterOptions = DEFAULT_LOG_WRITER_OPTIONS): LogWriter {
  let buffered = '';
  let bufferedBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  // A busy guard logs many lines per millisecond: format the time once per millisecond.
  let stampedAt = Number.NaN;
  let stamp = '';

  const flush = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (buffered === '') return;
    const text = buffered;
    buffered = '';
    bufferedBytes = 0;
    write(text);
  };

  const stampNow = (): void => {
    const now = Date.now();
    if (now !== stampedAt) {
      stampedAt = now;
      stamp = `{"time":"${new Date(now).toISOString()}"`;
    }
  };

  const log: LogLine = (entry) => {
    stampNow();
    add(JSON.stringify(entry), entry.event !== undefined);
  };

  /** Splices the time into `fields` first (no copy of an entry to add it) and buffers the line. */
  const add = (fields: string, now: boolean): void => {
    const line = escapeLineBreakers(fields === '{}' ? `${stamp}}\n` : `${stamp},${fields.slice(1)}\n`);
    const bytes = Buffer.byteLength(line);
    if (bufferedBytes + bytes > options.maxBatchBytes) flush();
    buffered += line;
    bufferedBytes += bytes;
    if (now || bufferedBytes >= options.maxBatchBytes) return flush();
    if (timer === undefined) {
      timer = setTimeout(flush, options.flushIntervalMs);
      timer.unref();
    }
  };

  const logText = (fields: string): void => {
    stampNow();
    add(fields, false);
  };

  return { log, logText, flush };
}

/**
 * Characters JSON.stringify writes as they are that readers take as a line's end or a terminal's
 * command: DEL and the C1 controls (U+0085 is a line break to Python's splitlines, U+009B a
 * terminal's CSI), U+2028 and U+2029. A header (groups, a claim) can carry them. Only string
 * values can hold them, where `\u` escapes read back as the same value.
 */
const LINE_BREAKER = /[\u007f-\u009f\u2028\u2029]/;
const LINE_BREAKERS = new RegExp(LINE_BREAKER.source, 'g');

function escapeLineBreakers(line: string): string {
  if (!LINE_BREAKER.test(line)) return line;
  return line.replace(LINE_BREAKERS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
