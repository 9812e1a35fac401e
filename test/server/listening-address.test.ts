// The `listening` lines name the address the socket is really bound to, so an operator checking exposure is not misled: tried from another address of the host.

import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, it } from 'node:test';
import { makeFolder, spawnGuard } from '../helpers/spawn-guard.js';

/** An IPv4 address of this host other than loopback, or undefined when it has none. */
function otherAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const each of list ?? []) if (each.family === 'IPv4' && !each.internal) return each.address;
  }
  return undefined;
}

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const other = otherAddress();

describe('the listening line', () => {
  for (const host of ['0.0.0.0', '127.0.0.1']) {
    it(
      `names ${host} when bound to ${host}, for the query port and the metrics port`,
      { skip: other === undefined ? 'no address other than loopback here' : false },
      async () => {
        const folder = makeFolder();
        const guard = spawnGuard(folder.folder, { host, metrics: { port: 0 } });
        try {
          const line = await guard.waitFor((entry) => entry.event === 'listening', 0, 60_000);
          const metrics = await guard.waitFor((entry) => entry.event === 'metrics-listening', 0, 60_000);
          for (const each of [line, metrics]) {
            const match = /^(.+):(\d+)$/.exec(String(each.address));
            assert.ok(match, `address ${String(each.address)}`);
            assert.equal(match[1], host);
            // What the line says is what another address of the host finds.
            assert.equal(await accepts(other!, Number(match[2])), host === '0.0.0.0', `reachable from ${other}`);
            assert.equal(await accepts('127.0.0.1', Number(match[2])), true);
          }
        } finally {
          await guard.stop();
          folder.remove();
        }
      },
    );
  }
});

/** A port that something else listens on, for as long as the test holds the server. */
async function occupiedPort(): Promise<{ port: number; close(): void }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

describe('a listener that cannot open', () => {
  // Node's words alone, "failed to start: listen EADDRINUSE: address already in use 0.0.0.0:8080",
  // said neither which listener (the query port or the metrics port) nor what to change.
  const cases: [string, (port: number) => Record<string, unknown>, (port: number) => string][] = [
    [
      'the query port in use',
      (port) => ({ port }),
      (port) =>
        `sparql-guard: config port: 127.0.0.1:${port} is already in use (EADDRINUSE) (stop what listens there, or set port (or the environment variable PORT) to a free port)\n`,
    ],
    [
      'the query port in use, with workers',
      (port) => ({ port, workers: 2 }),
      (port) =>
        `sparql-guard: config port: 127.0.0.1:${port} is already in use (EADDRINUSE) (stop what listens there, or set port (or the environment variable PORT) to a free port)\n`,
    ],
    [
      'the metrics port in use',
      (port) => ({ metrics: { port } }),
      (port) =>
        `sparql-guard: config metrics.port: 127.0.0.1:${port} is already in use (EADDRINUSE) (stop what listens there, or set metrics.port to a free port)\n`,
    ],
    [
      'the metrics port in use, with workers',
      (port) => ({ workers: 2, metrics: { port } }),
      (port) =>
        `sparql-guard: config metrics.port: 127.0.0.1:${port} is already in use (EADDRINUSE) (stop what listens there, or set metrics.port to a free port)\n`,
    ],
    [
      'a host name that does not resolve',
      () => ({ host: 'no-such-host.invalid' }),
      () =>
        'sparql-guard: config host: the name no-such-host.invalid does not resolve (ENOTFOUND) (give an address of this host, or a name that resolves to one)\n',
    ],
  ];
  for (const [name, config, line] of cases) {
    it(`stops the start with one line naming the key and the fix: ${name}`, async () => {
      const occupied = await occupiedPort();
      const folder = makeFolder();
      const guard = spawnGuard(folder.folder, config(occupied.port));
      try {
        assert.equal(await guard.exited(), 1);
        // With workers, each worker that failed before the primary stopped the others says the same line.
        const lines = guard
          .stderr()
          .replaceAll('(EAI_AGAIN)', '(ENOTFOUND)')
          .split(/(?<=\n)/);
        assert.ok(lines.length >= 1 && lines.every((each) => each === line(occupied.port)), guard.stderr());
      } finally {
        await guard.stop();
        occupied.close();
        folder.remove();
      }
    });
  }
});
