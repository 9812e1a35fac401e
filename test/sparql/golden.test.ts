// Runs every golden rewrite case in test/fixtures/sparql/golden: one file per case, expected text or refusal.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import sparqljs from 'sparqljs';
import { GuardError } from '../../src/guard-error.js';
import { createPlanner, type Planner } from '../../src/sparql/create-planner.js';
import { readGoldenCase } from '../helpers/golden-case.js';

const FOLDER = join('test', 'fixtures', 'sparql', 'golden');

/** One planner per allow-list, as a process has one (allowedFunctions is fixed per planner). */
const planners = new Map<string, Planner>();
function plannerFor(allowedFunctions: readonly string[]): Planner {
  const key = JSON.stringify(allowedFunctions);
  let planner = planners.get(key);
  if (planner === undefined) {
    planner = createPlanner({
      baseIri: 'http://localhost/',
      maxQueryDepth: 64,
      planCache: { maxEntries: 0, maxBytes: 1 },
      allowedFunctions,
    });
    planners.set(key, planner);
  }
  return planner;
}

const files = readdirSync(FOLDER)
  .filter((name) => name.endsWith('.txt'))
  .sort();

test('the golden folder holds the cases', () => {
  assert.ok(files.length >= 40, `only ${files.length} golden cases`);
});

for (const file of files) {
  test(`golden ${file}`, () => {
    const path = join(FOLDER, file);
    const text = readFileSync(path, 'utf8');
    const golden = readGoldenCase(text);
    const request = { query: golden.query, defaultGraphs: golden.defaultGraphs, namedGraphs: golden.namedGraphs };
    const planner = plannerFor(golden.allowedFunctions);
    if (golden.status !== undefined) {
      assert.throws(
        () => planner.plan(request, golden.grant),
        (error: unknown) => error instanceof GuardError && error.status === golden.status && !error.message.includes('\n'),
      );
      return;
    }
    const plan = planner.plan(request, golden.grant);
    // Rule 1: whatever leaves re-parses as SPARQL 1.1.
    new sparqljs.Parser().parse(plan.query);
    if (golden.expect === undefined && process.env['UPDATE_GOLDEN'] === '1') {
      writeFileSync(path, text.replace(/\n?$/, '\n') + '--- expect\n' + plan.query + '\n');
      return;
    }
    assert.equal(plan.query, golden.expect, `${file}: upstream text differs`);
  });
}
