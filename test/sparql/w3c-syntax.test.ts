// Runs the W3C SPARQL 1.0 / 1.1 syntax suites through plan(): positives plan and re-parse, negatives are 400, updates 403.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import sparqljs from 'sparqljs';
import { GuardError } from '../../src/guard-error.js';
import { createPlanner, type Planner } from '../../src/sparql/create-planner.js';
import { EXTENSION_FUNCTION_TESTS, W3C_ALLOWED_FUNCTIONS } from '../w3c/w3c-extension-functions.js';
import { W3C_SKIP, W3C_SUITE } from '../w3c/w3c-evaluation.js';

const SUITE = W3C_SUITE ?? '';

interface W3cTest {
  readonly id: string;
  readonly type: string;
  readonly folder: string;
  readonly query?: string | null;
}

const tests = W3C_SKIP === false ? (JSON.parse(readFileSync(join(SUITE, 'tests.json'), 'utf8')) as W3cTest[]) : [];
const options = { baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 0, maxBytes: 1 } };
const planner = createPlanner({ ...options, allowedFunctions: W3C_ALLOWED_FUNCTIONS });
const closedPlanner = createPlanner({ ...options, allowedFunctions: [] });
const grant = {
  policies: ['urn:test:p'],
  graphs: new Set(['http://example.org/g/public1', 'http://example.org/g/public2']),
  hiddenByGraph: new Map(),
};

/** Known, decided exceptions: test id suffix -> why the guard's answer differs from the suite's. */
const EMPTY_UPDATE =
  'an update holding only comments or a prologue is an empty request: 400 (rule: empty is 400), there is no operation to refuse';
const EXCEPTIONS: Readonly<Record<string, string>> = {
  'syntax-update-1/manifest#test_38': EMPTY_UPDATE,
  'syntax-update-1/manifest#test_39': EMPTY_UPDATE,
  'syntax-update-1/manifest#test_40': EMPTY_UPDATE,
};

function outcome(file: string, through: Planner = planner): string {
  const query = readFileSync(join(SUITE, file), 'utf8');
  try {
    const plan = through.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant);
    new sparqljs.Parser().parse(plan.query);
    return 'planned';
  } catch (error) {
    if (error instanceof GuardError) return String(error.status);
    return `crash ${(error as Error).message.slice(0, 80)}`;
  }
}

test('W3C syntax suites', { skip: W3C_SKIP }, () => {
  const counts: Record<string, number> = {};
  const mismatches: string[] = [];
  const seen = new Set<string>();
  for (const t of tests) {
    const file = t.query ?? '';
    if (!file.endsWith('.rq') && !file.endsWith('.ru')) continue;
    const isUpdate = file.endsWith('.ru');
    let expected: string[];
    if (isUpdate) expected = ['403'];
    else if (t.type === 'PositiveSyntaxTest' || t.type === 'PositiveSyntaxTest11') {
      expected = t.folder.endsWith('syntax-fed') ? ['403'] : ['planned'];
    } else if (t.type === 'NegativeSyntaxTest' || t.type === 'NegativeSyntaxTest11') expected = ['400'];
    else continue;
    const key = `${t.type} ${file}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const got = outcome(file);
    const label = `${t.type}${isUpdate ? ' .ru' : ''}`;
    counts[`${label} total`] = (counts[`${label} total`] ?? 0) + 1;
    const exception = Object.keys(EXCEPTIONS).find((suffix) => t.id.endsWith(suffix));
    if (exception !== undefined) {
      // A decided exception must still be the exception it describes (and never a crash).
      assert.equal(got, '400', t.id);
      counts[`${label} decided exception`] = (counts[`${label} decided exception`] ?? 0) + 1;
    } else if (expected.includes(got)) counts[`${label} ok`] = (counts[`${label} ok`] ?? 0) + 1;
    else mismatches.push(`${t.id} (${file}): expected ${expected.join('|')}, got ${got}`);
  }
  console.log(JSON.stringify(counts, null, 1));
  assert.deepEqual(mismatches, []);
});

test(
  'without allowedFunctions the positives that call made-up functions are 400 (fail closed), with it they plan',
  { skip: W3C_SKIP },
  () => {
    const calling = tests.filter(
      (t) => EXTENSION_FUNCTION_TESTS.some((suffix) => t.id.endsWith(suffix)) && (t.query ?? '').endsWith('.rq'),
    );
    assert.equal(new Set(calling.map((t) => t.query)).size, EXTENSION_FUNCTION_TESTS.length);
    for (const t of calling) {
      const file = t.query ?? '';
      assert.equal(outcome(file, closedPlanner), '400', t.id);
      assert.equal(outcome(file), 'planned', t.id);
    }
  },
);
