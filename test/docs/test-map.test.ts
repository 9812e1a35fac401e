// test/README.md, the map of the tests, names every folder of test/ and only test files that exist.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const MAP = readFileSync('test/README.md', 'utf8');
/** Folders that hold no tests of their own kind: data, installed packages, scratch. */
const NOT_KINDS = new Set(['fixtures', 'helpers', 'node_modules', '.tmp']);

describe('test/README.md', () => {
  it('names every folder of test/ as `test/<folder>/`', () => {
    const folders = readdirSync('test', { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !NOT_KINDS.has(entry.name))
      .map((entry) => entry.name);
    assert.ok(folders.length > 10, folders.join(', '));
    const missing = folders.filter((folder) => !MAP.includes(`\`test/${folder}/\``));
    assert.deepEqual(missing, [], `folders of test/ the map does not name: ${missing.join(', ')}`);
  });

  it('every test file and helper it names exists', () => {
    // Paths from the repository root (`test/...`, `src/...`), from test/ (`integration/access.test.ts`), or helpers by name.
    const named = [...MAP.matchAll(/`([a-z/-]+\.(?:test\.)?ts)`/g)].map((match) => match[1] ?? '');
    assert.ok(named.length > 10, named.join(', '));
    const absent = named.filter(
      (path) => ![path, join('test', path), join('test', 'helpers', path)].some((candidate) => existsSync(candidate)),
    );
    assert.deepEqual(absent, [], `the map names files that are not there: ${absent.join(', ')}`);
  });

  it('names each shared helper of test/helpers/', () => {
    const helpers = readdirSync('test/helpers').filter((name) => name.endsWith('.ts'));
    const unnamed = helpers.filter((name) => !MAP.includes(`\`${name}\``));
    assert.deepEqual(unnamed, [], `helpers the map does not name: ${unnamed.join(', ')}`);
  });

  it('"a test that needs something absent says it was skipped and why": each lab store a suite run on every store would reach', () => {
    // Without the lab, the security suites run on every store named the embedded store alone: the lab's stores vanished unsaid.
    // NODE_TEST_CONTEXT would make the child report to this runner instead of printing TAP.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^RIG_/.test(name) && name !== 'NODE_TEST_CONTEXT'));
    // dataset-clauses runs on Jena's variants too, and on Virtuoso once more with datasetForm graph-filters; literal-subjects
    // on each engine once (rig-stores.ts, JENA_VARIANTS).
    for (const [file, stores] of [
      ['security/dataset-clauses.test.js', ['oxigraph', 'jena', 'virtuoso', 'jena-arq', 'jena-union', 'virtuoso']],
      ['security/literal-subjects.test.js', ['oxigraph', 'jena', 'virtuoso']],
    ] as const) {
      const run = spawnSync(
        process.execPath,
        [
          '--test',
          '--test-reporter=tap',
          '--test-name-pattern=runs against this store',
          fileURLToPath(new URL(`../${file}`, import.meta.url)),
        ],
        { encoding: 'utf8', env, timeout: 120_000 },
      );
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const skipped = [
        ...run.stdout.matchAll(
          /^ *# Subtest: .*\[([a-z-]+)\]\n(?: *# Subtest: runs against this store\n) *ok 1 - runs against this store # SKIP (.*)$/gm,
        ),
      ];
      for (const store of stores) {
        const entry = skipped.find(([, name]) => name === store);
        assert.ok(entry, `${file}: no skipped test for the lab's ${store}\n${run.stdout}`);
        assert.match(entry[2]!, / is not set \(the store lab is not up\)$/);
      }
      // A store the suite does not run on is not said to be skipped either: the list is the suite's.
      assert.deepEqual(skipped.map(([, name]) => name).sort(), [...stores].sort(), `${file}\n${run.stdout}`);
    }
  });
});
