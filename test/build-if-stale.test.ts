// `npm start` builds only when a source is newer than the built bin: scripts/build-if-stale.mjs decides by modification times.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const SCRIPT = resolve('scripts/build-if-stale.mjs');

describe('scripts/build-if-stale.mjs --check', () => {
  let folder: string;
  const at = (path: string, seconds: number) => utimesSync(join(folder, path), seconds, seconds);
  const check = () => spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: folder, encoding: 'utf8' }).status;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-build-'));
    mkdirSync(join(folder, 'src', 'http'), { recursive: true });
    for (const file of ['src/cli.ts', 'src/http/route.ts', 'tsconfig.json', 'package.json', 'package-lock.json']) {
      writeFileSync(join(folder, file), '');
      at(file, 1_000);
    }
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('asks for a build when there is none (a fresh clone)', () => {
    assert.equal(check(), 1);
  });

  it('builds nothing when the bin is newer than every source', () => {
    mkdirSync(join(folder, 'dist', 'src'), { recursive: true });
    writeFileSync(join(folder, 'dist/src/cli.js'), '');
    at('dist/src/cli.js', 2_000);
    assert.equal(check(), 0);
  });

  for (const input of ['src/http/route.ts', 'tsconfig.json', 'package-lock.json']) {
    it(`asks for a build when ${input} changed after it`, () => {
      at(input, 3_000);
      assert.equal(check(), 1);
      at(input, 1_000);
      assert.equal(check(), 0);
    });
  }
});
