// The `listening` lines name the address the socket is really bound to, so an operator checking exposure is not misled: tried from another address of the host.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
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
