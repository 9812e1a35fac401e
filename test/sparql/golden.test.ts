// Runs every golden rewrite case in test/fixtures/sparql/golden: one file per case, expected text or refusal.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import sparqljs from 'sparqljs';
import { GuardError } from '../../src/guard-error.js';
import type { Grant } from '../../src/policy/grant.js';
import { createPlanner, type Planner } from '../../src/sparql/create-planner.js';

const FOLDER = join('test', 'fixtures', 'sparql', 'golden');

/**
 * A case file: `# comment` lines, `grant: iri iri ...`, any number of
 * `hidden: graph predicate predicate ...` (the grant's hidden set of a
 * graph), `default: iri` / `named: iri` (protocol parameters, raw),
 * `allow: iri iri ...` (the planner's allowedFunctions), then
 * `--- query` and either `--- expect` (exact upstream text) or `--- status N`.
 * With UPDATE_GOLDEN=1 a missing `--- expect` block is written from the output.
 */
interface GoldenCase {
  readonly grant: Grant;
  readonly defaultGraphs: string[];
  readonly namedGraphs: string[];
  readonly allowedFunctions: string[];
  readonly query: string;
  readonly expect?: string;
  readonly status?: number;
}

function readCase(text: string): GoldenCase {
  const [head = '', ...sections] = text.split(/^--- /m);
  const graphs = new Set<string>();
  const hiddenByGraph = new Map<string, Set<string>>();
  const defaultGraphs: string[] = [];
  const namedGraphs: string[] = [];
  const allowedFunctions: string[] = [];
  for (const line of head.split('\n')) {
    const match = /^(grant|hidden|default|named|allow):\s?(.*)$/.exec(line);
    if (match === null) continue;
    const [, key, value = ''] = match;
    if (key === 'grant') for (const iri of value.split(/\s+/).filter(Boolean)) graphs.add(iri);
    else if (key === 'allow') allowedFunctions.push(...value.split(/\s+/).filter(Boolean));
    else if (key === 'hidden') {
      const [graph = '', ...paths] = value.split(/\s+/).filter(Boolean);
      hiddenByGraph.set(graph, new Set(paths));
    } else (key === 'default' ? defaultGraphs : namedGraphs).push(value);
  }
  let query = '';
  let expect: string | undefined;
  let status: number | undefined;
  for (const section of sections) {
    const newline = section.indexOf('\n');
    const title = section.slice(0, newline === -1 ? undefined : newline).trim();
    const body = newline === -1 ? '' : section.slice(newline + 1).replace(/\n$/, '');
    if (title === 'query') query = body;
    else if (title === 'expect') expect = body;
    else if (title.startsWith('status ')) status = Number(title.slice(7));
  }
  const grant: Grant = { policies: ['urn:test:policy'], graphs, hiddenByGraph };
  return {
    grant,
    defaultGraphs,
    namedGraphs,
    allowedFunctions,
    query,
    ...(expect === undefined ? {} : { expect }),
    ...(status === undefined ? {} : { status }),
  };
}

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
    const golden = readCase(text);
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
