// The log lines on standard output and in files: whole JSON lines in order, event lines at once, request lines within the interval, nothing lost at exit or on a crash (real files and pipes).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLogDestination } from '../../src/server/create-log-destination.js';

const parseLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const startGuard = fileURLToPath(new URL('../../src/server/start-guard.js', import.meta.url));

/** Runs `body` in a child process that has logToStdout, its stdout a pipe; the lines it printed. */
function runChild(body: string): { status: number | null; lines: Record<string, unknown>[]; stderr: string } {
  const script = `const { logToStdout } = await import(${JSON.stringify(startGuard)});\n${body}`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return { status: result.status, lines: parseLines(result.stdout), stderr: result.stderr };
}

describe('log lines', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-log-'));
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('writes request lines within the interval and an event line at once, after the lines before it, each a JSON object with time', async () => {
    const file = join(folder, 'order.jsonl');
    const destination = createLogDestination(openSync(file, 'a'), { flushIntervalMs: 30, maxBatchBytes: 4096 });
    for (let i = 0; i < 5; i += 1) destination.log({ n: i });
    assert.equal(readFileSync(file, 'utf8'), '', 'request lines wait for the batch');
    destination.log({ event: 'policies-reloaded' });
    const lines = parseLines(readFileSync(file, 'utf8'));
    assert.deepEqual(
      lines.map((line) => line.n ?? line.event),
      [0, 1, 2, 3, 4, 'policies-reloaded'],
    );
    for (const line of lines) assert.ok(!Number.isNaN(Date.parse(String(line.time))));
    destination.logText('{"audit":1}');
    destination.logText('{}');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const later = parseLines(readFileSync(file, 'utf8')).slice(6);
    assert.deepEqual(
      later.map(({ time, ...fields }) => (assert.ok(!Number.isNaN(Date.parse(String(time)))), fields)),
      [{ audit: 1 }, {}],
      'lines made already, with the time spliced in, within the interval',
    );
    destination.close();
  });

  it('writes a full batch at once, whole lines only, and loses none when closed', () => {
    const file = join(folder, 'batches.jsonl');
    const destination = createLogDestination(openSync(file, 'a'), { flushIntervalMs: 60_000, maxBatchBytes: 1000 });
    for (let i = 0; i < 100; i += 1) destination.log({ padding: 'é'.repeat(45) }); // about 100 bytes
    const written = readFileSync(file, 'utf8');
    assert.ok(Buffer.byteLength(written) >= 9000, `${Buffer.byteLength(written)} bytes written before any flush`);
    assert.ok(written.endsWith('\n'), 'whole lines');
    destination.log({ padding: 'y'.repeat(2000) });
    destination.close();
    const lines = parseLines(readFileSync(file, 'utf8'));
    assert.equal(lines.length, 101);
    assert.equal(lines.at(-1)?.padding, 'y'.repeat(2000));
  });

  it('loses no line when the process exits right after logging (stdout a pipe)', () => {
    const { status, lines, stderr } = runChild('for (let i = 0; i < 500; i += 1) logToStdout({ n: i });\nprocess.exit(0);');
    assert.equal(status, 0, stderr);
    assert.deepEqual(
      lines.map((line) => line.n),
      Array.from({ length: 500 }, (_, i) => i),
    );
  });

  it('loses no line when the process dies of an uncaught error', () => {
    const { status, lines, stderr } = runChild("for (let i = 0; i < 50; i += 1) logToStdout({ n: i });\nthrow new Error('crash');");
    assert.equal(status, 1);
    assert.match(stderr, /crash/);
    assert.deepEqual(
      lines.map((line) => line.n),
      Array.from({ length: 50 }, (_, i) => i),
    );
  });
});
