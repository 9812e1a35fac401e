// Every mutant of `npm run mutants` still applies to the build: a refactor that moves a mutant's text makes this fail, not the mutant silently vanish.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { KILLING_TESTS, REWRITER_MUTANTS } from './rewriter-mutants.js';
import { mutated } from './run-mutants.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const TESTS = fileURLToPath(new URL('../', import.meta.url));

test('each mutant changes its module at exactly one place, and the ids are distinct', () => {
  for (const mutant of REWRITER_MUTANTS) {
    const source = readFileSync(`${SRC}${mutant.file}`, 'utf8');
    const result = mutated(mutant, source);
    assert.ok(!(result instanceof Error), result instanceof Error ? result.message : '');
    assert.notEqual(result, source, `${mutant.id} changes nothing`);
  }
  assert.equal(new Set(REWRITER_MUTANTS.map((mutant) => mutant.id)).size, REWRITER_MUTANTS.length);
});

test('the killing tests exist in the build', () => {
  for (const file of KILLING_TESTS) assert.doesNotThrow(() => readFileSync(`${TESTS}${file}`), file);
});
