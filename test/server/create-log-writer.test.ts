// The batching log writer: order, batching, prompt event lines, the bound, and no line lost at exit (real child process).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLogWriter } from '../../src/server/create-log-writer.js';

const parseLines = (texts: readonly string[]) =>
  texts
    .join('')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('createLogWriter', () => {
  it('batches request lines into one write, in order, each a JSON object with time', async () => {
    const writes: string[] = [];
    const writer = createLogWriter((text) => writes.push(text), { flushIntervalMs: 10, maxBatchBytes: 1 << 20 });
    for (let i = 0; i < 100; i += 1) writer.log({ n: i });
    assert.equal(writes.length, 0, 'nothing written before the interval');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(writes.length, 1);
    const lines = parseLines(writes);
    assert.deepEqual(
      lines.map((line) => line.n),
      Array.from({ length: 100 }, (_, i) => i),
    );
    for (const line of lines) assert.ok(!Number.isNaN(Date.parse(String(line.time))));
  });

  it('escapes what a reader takes as a line break or a terminal command, and the line reads back as the same value', () => {
    const writes: string[] = [];
    const writer = createLogWriter((text) => writes.push(text), { flushIntervalMs: 10, maxBatchBytes: 1 << 20 });
    const groups = ['hr\u0085g', '\u009bx', 'a\u2028b\u2029c\u007f', 'plain'];
    writer.log({ event: 'x', groups });
    writer.logText(`{"groups":${JSON.stringify(groups)}}`);
    const text = writes.join('');
    assert.doesNotMatch(text, /[\u007f-\u009f\u2028\u2029]/);
    assert.match(text, /"hr\\u0085g","\\u009bx","a\\u2028b\\u2029c\\u007f"/);
    writer.flush();
    const lines = parseLines(writes);
    assert.equal(lines.length, 2);
    for (const line of lines) assert.deepEqual(line.groups, groups);
  });

  it('writes an event line at once, after the request lines before it', () => {
    const writes: string[] = [];
    const writer = createLogWriter((text) => writes.push(text), { flushIntervalMs: 60_000, maxBatchBytes: 1 << 20 });
    writer.log({ status: 200 });
    writer.log({ event: 'policies-reloaded' });
    assert.equal(writes.length, 1);
    assert.deepEqual(
      parseLines(writes).map((line) => line.status ?? line.event),
      [200, 'policies-reloaded'],
    );
  });

  it('never writes more than the bound (whole lines only), and writes as soon as it is reached', () => {
    const writes: string[] = [];
    const writer = createLogWriter((text) => writes.push(text), { flushIntervalMs: 60_000, maxBatchBytes: 1000 });
    for (let i = 0; i < 100; i += 1) writer.log({ padding: 'é'.repeat(45) }); // 90 bytes, 45 characters
    assert.ok(writes.length >= 9, `${writes.length} writes`);
    for (const text of writes) {
      assert.ok(Buffer.byteLength(text) <= 1000, `a batch of ${Buffer.byteLength(text)} bytes`);
      assert.ok(text.endsWith('\n'));
    }
    writer.log({ padding: 'y'.repeat(2000) });
    assert.equal(parseLines([writes.at(-1) ?? '']).length, 1, 'a longer line goes alone');
    assert.equal(parseLines([writes.at(-1) ?? ''])[0]?.padding, 'y'.repeat(2000));
    writer.flush();
    assert.equal(parseLines(writes).length, 101);
  });

  it('loses no line when the process exits right after logging (stdout a pipe)', () => {
    const startGuard = fileURLToPath(new URL('../../src/server/start-guard.js', import.meta.url));
    const script = `
      const { logToStdout } = await import(${JSON.stringify(startGuard)});
      for (let i = 0; i < 500; i += 1) logToStdout({ n: i });
      process.exit(0);
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(
      parseLines([result.stdout]).map((line) => line.n),
      Array.from({ length: 500 }, (_, i) => i),
    );
  });
});
