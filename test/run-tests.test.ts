// `npm test` runs every test file but the store and scale-out suites; .ci/run's --skip leaves named folders out and says so.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { reachesLab } from './helpers/reaches-lab.js';

const run = (...args: string[]) => spawnSync(process.execPath, ['dist/test/run-tests.js', '--list', ...args], { encoding: 'utf8' });

describe('test/run-tests.ts', () => {
  it('lists every test file but test/stores/ and test/scale-out/, this one included', () => {
    const files = run().stdout.trim().split('\n');
    assert.ok(files.includes('dist/test/run-tests.test.js'), files.join('\n'));
    assert.ok(files.some((file) => file.startsWith('dist/test/w3c/')));
    assert.ok(!files.some((file) => /^dist\/test\/(stores|scale-out)\//.test(file)));
  });

  it('--stores lists the store suite only', () => {
    const files = run('--stores').stdout.trim().split('\n');
    assert.ok(files.length > 0 && files.every((file) => file.startsWith('dist/test/stores/')), files.join('\n'));
  });

  it('--skip leaves the named top folders out and says so', () => {
    const all = run().stdout.trim().split('\n');
    const result = run('--skip=w3c', '--skip=fuzz');
    assert.match(result.stdout, /^# run-tests: not run here \(--skip\): test\/w3c\/, test\/fuzz\/$/m);
    const files = result.stdout.split('\n').filter((line) => line.startsWith('dist/'));
    assert.deepEqual(
      files,
      all.filter((file) => !/^dist\/test\/(w3c|fuzz)\//.test(file)),
    );
    assert.ok(files.length < all.length);
  });

  it('--skip leaves a folder inside a top folder out, the rest of the top folder in', () => {
    const all = run().stdout.trim().split('\n');
    const files = run('--skip=security/rows')
      .stdout.split('\n')
      .filter((line) => line.startsWith('dist/'));
    assert.ok(all.some((file) => file.startsWith('dist/test/security/rows/')));
    assert.deepEqual(
      files,
      all.filter((file) => !file.startsWith('dist/test/security/rows/')),
    );
    assert.ok(files.some((file) => file.startsWith('dist/test/security/')));
  });

  it('refuses a --concurrency that is no whole number from 1', () => {
    for (const value of ['0', '1.5', 'two', '']) {
      const result = run(`--concurrency=${value}`);
      assert.equal(result.status, 2, value);
      assert.match(result.stderr, /--concurrency=\S* is no whole number from 1/);
    }
    assert.equal(run('--concurrency=2').status, 0);
  });

  it('refuses a --skip that names no folder, so a typo in .ci/run cannot silently run everything', () => {
    const result = run('--skip=w3cc');
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--skip=w3cc names no folder of test\//);
  });

  it('an unknown option or a missing value is one line with the usage, not a stack trace; --help prints the usage', () => {
    for (const args of [['--bogus'], ['--skip']]) {
      const result = run(...args);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /^run-tests: .+; usage: run-tests \[--stores\]/, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    }
    const help = run('--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: run-tests /);
  });

  it('finds the files that reach the store lab, through helpers at any depth, and no other', () => {
    const root = resolve('dist/test');
    const known = new Map<string, boolean>();
    const reaches = (file: string) => reachesLab(resolve(root, file), root, known);
    // Directly (rig-stores names the variables), through one helper, through two (rows-stores imports rig-stores).
    assert.equal(reaches('helpers/rig-stores.js'), true);
    assert.equal(reaches('cli/check-why-virtuoso.test.js'), true);
    assert.equal(reaches('security/rows/oracle.test.js'), true);
    // Files that start guards of their own on the embedded store only.
    assert.equal(reaches('run-tests.test.js'), false);
    assert.equal(reaches('http/http-edge.test.js'), false);
    assert.equal(reaches('policy/check-vocabulary.test.js'), false);
    // A cycle of imports ends, and a file reaching the lab through it is found.
    const folder = mkdtempSync(join(tmpdir(), 'reaches-lab-'));
    try {
      writeFileSync(join(folder, 'a.js'), "import { b } from './b.js';\n");
      writeFileSync(join(folder, 'b.js'), "import { a } from './a.js';\nimport { c } from './c.js';\n");
      // The variable's name is put together, so that this file itself does not name one.
      writeFileSync(join(folder, 'c.js'), `export const c = process.env.${['RIG', 'JENA', 'QUERY'].join('_')};\n`);
      writeFileSync(join(folder, 'd.js'), "import { e } from './e.js';\n");
      writeFileSync(join(folder, 'e.js'), "import { d } from './d.js';\n");
      assert.equal(reachesLab(join(folder, 'a.js'), folder), true);
      assert.equal(reachesLab(join(folder, 'd.js'), folder), false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
