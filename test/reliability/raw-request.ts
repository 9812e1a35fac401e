// A client on a bare TCP socket: it sends exactly the bytes a test gives, as slowly as it says, and reads what comes back.

import { connect, type Socket } from 'node:net';

/** What came back on the connection before it closed. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: string;
  readonly body: string;
  /** Milliseconds from the first byte sent to the connection's close. */
  readonly closedAfterMs: number;
}

/**
 * Connects to `url`'s host and port, writes `head`, then each of `drip` (one every
 * `dripEveryMs`), and resolves once the server closes the connection (or after `limitMs`,
 * with status 0).
 */
export function rawRequest(
  url: string,
  head: string | Buffer,
  options: { drip?: string[]; dripEveryMs?: number; limitMs?: number } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = performance.now();
    const socket: Socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const drip = [...(options.drip ?? [])];
    const limit = setTimeout(() => socket.destroy(), options.limitMs ?? 20_000);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        const next = drip.shift();
        if (next === undefined) return clearInterval(timer);
        if (socket.writable) socket.write(next);
      }, options.dripEveryMs ?? 200);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(limit);
      const text = Buffer.concat(chunks).toString('latin1');
      const [headers = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), headers, body, closedAfterMs: performance.now() - started });
    });
  });
}

/** Opens a connection that sends `head` and then reads nothing at all; `close()` destroys it. */
export function stalledReader(url: string, head: string): Promise<{ close(): void }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.pause();
      socket.write(head);
      resolve({ close: () => socket.destroy() });
    });
    socket.once('error', reject);
  });
}
