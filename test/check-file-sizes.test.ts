// `npm run lint` fails on a tracked file over 1 MB unless test/fixtures/large-files.txt declares it test data.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const SCRIPT = resolve('scripts/check-file-sizes.mjs');

describe('scripts/check-file-sizes.mjs', () => {
  let folder: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: folder, encoding: 'utf8' });
  const check = () => spawnSync(process.execPath, [SCRIPT], { cwd: folder, encoding: 'utf8' });
  const declare = (...paths: string[]) => {
    writeFileSync(join(folder, 'test/fixtures/large-files.txt'), ['# declared test data', ...paths, ''].join('\n'));
    git('add', 'test/fixtures/large-files.txt');
  };
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-sizes-'));
    git('init', '--quiet');
    mkdirSync(join(folder, 'test', 'fixtures', 'big'), { recursive: true });
    writeFileSync(join(folder, 'small.txt'), 'x'.repeat(1_000_000));
    git('add', 'small.txt');
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('passes when no tracked file is over 1 MB (a file of exactly 1,000,000 bytes is not)', () => {
    const result = check();
    assert.equal(result.status, 0, result.stderr);
  });

  it('fails on a 2 MB tracked file that is not declared, naming it and the fix', () => {
    writeFileSync(join(folder, 'test/fixtures/big/answers.json'), Buffer.alloc(2_000_000, 'a'));
    git('add', 'test/fixtures/big/answers.json');
    const result = check();
    assert.equal(result.status, 1);
    assert.match(result.stderr, /test\/fixtures\/big\/answers\.json is 2\.0 MB \(over 1 MB\)/);
    assert.match(result.stderr, /add its path to test\/fixtures\/large-files\.txt/);
  });

  it('passes once the file is declared test data', () => {
    declare('test/fixtures/big/answers.json  # the expected answers of a large query');
    const result = check();
    assert.equal(result.status, 0, result.stderr);
  });

  it('reads what git holds, not the working file: an untracked 2 MB profile is not its business, a staged one is', () => {
    writeFileSync(join(folder, 'guard.heapsnapshot'), Buffer.alloc(2_000_000, 'h'));
    assert.equal(check().status, 0);
    git('add', 'guard.heapsnapshot');
    const result = check();
    assert.equal(result.status, 1);
    assert.match(result.stderr, /guard\.heapsnapshot is 2\.0 MB/);
    git('rm', '--cached', '--quiet', 'guard.heapsnapshot');
  });

  it('refuses to declare a file outside test/, and a declared path git does not track', () => {
    writeFileSync(join(folder, 'dump.bin'), Buffer.alloc(1_500_000, 'd'));
    git('add', 'dump.bin');
    declare('test/fixtures/big/answers.json', 'dump.bin', 'test/fixtures/gone.json');
    const result = check();
    assert.equal(result.status, 1);
    assert.match(result.stderr, /declares dump\.bin: only test data \(a path under test\/\) may be declared/);
    assert.match(result.stderr, /dump\.bin is 1\.5 MB/);
    assert.match(result.stderr, /declares test\/fixtures\/gone\.json, which git does not track/);
  });
});
