// Runs the commands of docs/policies.md as written: the guard through the real bin, then curl as the caller.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { codeBlockAfter, readDoc } from '../helpers/markdown-table.js';

const page = readDoc('docs/policies.md');

/** Runs a shell script to its end, without blocking this process. */
async function runScript(script: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

describe('docs/policies.md, run as written', () => {
  it('the facts example: the guard started as written, then curl as alice sees her project graph only', async () => {
    const block = codeBlockAfter(page, 'runs these commands as written', 'sh');
    const [server, ...client] = block.split('\n');
    assert.match(server!, /^GUARD_CONFIG=\S+ npx sparql-guard$/);
    // The one change: any free port instead of 8080, through the PORT override.
    // A process group of its own: npx starts the bin as a child, and the whole group is stopped at the end.
    const guard = spawn('bash', ['-c', `exec env PORT=0 ${server!}`], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    try {
      let url: string | undefined;
      for await (const line of createInterface({ input: guard.stdout })) {
        const event = JSON.parse(line) as { event?: string; url?: string };
        if (event.event === 'listening') {
          url = event.url;
          break;
        }
      }
      assert.ok(url !== undefined, 'the guard printed no listening line');
      // Facts are read at start: wait until the guard is ready (up to 60 s on a loaded machine), as a load balancer would.
      for (let attempt = 0; attempt < 600 && (await fetch(`${url}/readyz`)).status !== 200; attempt++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      const script = client.join('\n').replaceAll('http://127.0.0.1:8080', url).replaceAll('curl -s ', 'curl -sS --fail-with-body ');
      const run = await runScript(script);
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const graphs = (JSON.parse(run.stdout) as { results: { bindings: { g: { value: string } }[] } }).results.bindings.map(
        (binding) => binding.g.value,
      );
      assert.deepEqual(graphs, ['https://example.org/graphs/apollo-plans']);
    } finally {
      const exited = once(guard, 'exit');
      process.kill(-guard.pid!, 'SIGTERM');
      await exited;
    }
  });
});
