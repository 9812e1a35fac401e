// Policies mounted from a Kubernetes ConfigMap: the kubelet swaps a `..data` symlink, and watchPolicies must apply the new set.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { startTestGuard } from '../helpers/start-test-guard.js';

const fixture = (name: string) => readFileSync(resolve('test/fixtures/reload', name), 'utf8');

/**
 * The layout the kubelet writes for a ConfigMap volume (its atomic writer): the files live in a
 * timestamped folder, `..data` points to it, and each key is a symlink `name -> ..data/name`.
 */
function writeVersion(mount: string, version: string, files: Record<string, string>): void {
  const folder = join(mount, `..${version}`);
  mkdirSync(folder);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
}

/** An update as the kubelet makes it: a new timestamped folder, `..data_tmp` pointing to it, renamed over `..data`, the old folder removed. */
function swapTo(mount: string, version: string, previous: string, files: Record<string, string>): void {
  writeVersion(mount, version, files);
  symlinkSync(`..${version}`, join(mount, '..data_tmp'));
  renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
  rmSync(join(mount, `..${previous}`), { recursive: true });
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe('watchPolicies with a ConfigMap mount', () => {
  it('applies the new set after a ..data symlink swap, and again after a second one', { timeout: 30_000 }, async () => {
    const mount = mkdtempSync(join(tmpdir(), 'sparql-guard-configmap-'));
    writeVersion(mount, '2026_01_01_00_00_00.1', { 'policies.ttl': fixture('policies-v1.ttl') });
    symlinkSync('..2026_01_01_00_00_00.1', join(mount, '..data'));
    symlinkSync('..data/policies.ttl', join(mount, 'policies.ttl'));
    const t = await startTestGuard({ policies: [join(mount, 'policies.ttl')], watchPolicies: true });
    try {
      const count = () => t.guard.policies.current()?.policies.length;
      assert.equal(count(), 2);
      swapTo(mount, '2026_01_01_00_01_00.2', '2026_01_01_00_00_00.1', { 'policies.ttl': fixture('policies-v2.ttl') });
      await until(() => count() === 3, 10_000);
      assert.ok(t.logs.some((line) => line.event === 'policies-reloaded'));
      swapTo(mount, '2026_01_01_00_02_00.3', '2026_01_01_00_01_00.2', { 'policies.ttl': fixture('policies-v1.ttl') });
      await until(() => count() === 2, 10_000);
    } finally {
      await t.close();
      rmSync(mount, { recursive: true, force: true });
    }
  });
});
