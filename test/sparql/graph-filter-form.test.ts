// The graph-filter form (config datasetForm): every text it sends holds every triple pattern in a GRAPH whose name a
// filter holds to the plan's dataset, read back from the text by a check of this file's own; where it cannot, the clauses stay.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sparqljs from 'sparqljs';
import { GuardError } from '../../src/guard-error.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { createPlanner } from '../../src/sparql/create-planner.js';
import { graphFilterText, MAX_GRAPH_FILTER_GRAPHS } from '../../src/sparql/graph-filter-form.js';
import type { Plan } from '../../src/sparql/plan.js';
import { EMPTY_GRAPH } from '../../src/vocabulary.js';
import { embeddedSources, goldenSources, w3cSources, type Source } from '../helpers/query-corpus.js';

const A = 'http://example.org/g/a';
const B = 'http://example.org/g/b';
const grantOf = (...graphs: string[]): Grant => ({ policies: ['urn:test:p'], graphs: new Set(graphs), hiddenByGraph: new Map() });
const options = { baseIri: 'http://localhost/', maxQueryDepth: 64, planCache: { maxEntries: 0, maxBytes: 1 } };
const clauses = createPlanner(options);
const filters = createPlanner({ ...options, datasetForm: 'graph-filters' });
const request = (query: string, defaultGraphs: string[] = [], namedGraphs: string[] = []) => ({ query, defaultGraphs, namedGraphs });

type Node = Record<string, unknown>;

/**
 * Why `text` could read past `dataset`, or undefined: a dataset clause, a triple pattern outside every GRAPH, or a GRAPH
 * not followed in its group by `FILTER(sameTerm(name, <g>) || …)` over graphs of `dataset` (or `false`). Written apart
 * from the rewrite's own check, over the text as the store receives it.
 */
function unheld(text: string, dataset: ReadonlySet<string>): string | undefined {
  const tree = new sparqljs.Parser().parse(text) as unknown as Node;
  if (tree['from'] !== undefined) return 'a dataset clause';
  const holds = (expression: Node, name: string): boolean => {
    if (expression['termType'] === 'Literal') return expression['value'] === 'false';
    const args = (expression['args'] ?? []) as Node[];
    if (expression['operator'] === '||') return args.every((arg) => holds(arg, name));
    const [held, graph] = args;
    return expression['operator'] === 'sameterm' && held?.['value'] === name && dataset.has(String(graph?.['value']));
  };
  let problem: string | undefined;
  const visit = (value: unknown, inGraph: boolean): void => {
    if (problem !== undefined || typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      value.forEach((item: unknown, index) => {
        const node = item as Node | null;
        if (node?.['type'] === 'graph') {
          const next = value[index + 1] as Node | undefined;
          const name = String((node['name'] as Node)['value']);
          if (next?.['type'] !== 'filter' || !holds(next['expression'] as Node, name)) problem ??= `GRAPH ${name} without its filter`;
          visit((node as Node)['patterns'], true);
        } else visit(item, inGraph);
      });
      return;
    }
    const node = value as Node;
    if (typeof node['termType'] === 'string') return;
    if (node['type'] === 'graph') problem ??= 'a GRAPH outside a group';
    // A BGP of no triple (`CONSTRUCT WHERE { }`) reads nothing.
    if (node['type'] === 'bgp' && !inGraph && (node['triples'] as unknown[]).length > 0) problem ??= 'a triple pattern outside every GRAPH';
    for (const key of Object.keys(node)) if (key !== 'template') visit(node[key], inGraph);
  };
  visit(tree, false);
  return problem;
}

/** The plan in each form, or the refusal both forms give. */
function bothForms(source: Pick<Source, 'query' | 'defaultGraphs' | 'namedGraphs'>, grant: Grant): [Plan, Plan] | undefined {
  const req = request(source.query, source.defaultGraphs, source.namedGraphs);
  let plain: Plan;
  try {
    plain = clauses.plan(req, grant);
  } catch (error) {
    assert.ok(error instanceof GuardError, String(error));
    assert.throws(() => filters.plan(req, grant), GuardError);
    return undefined;
  }
  return [plain, filters.plan(req, grant)];
}

describe('datasetForm graph-filters', () => {
  it('holds every triple pattern of every corpus query in a GRAPH whose filter names graphs of the dataset only', () => {
    const counts = { filters: 0, clauses: 0, refused: 0 };
    // Every third W3C query: the form's cases are in the golden and embedded ones, and CI's time is bounded.
    const sources = [...goldenSources(), ...w3cSources().filter((_, index) => index % 3 === 0), ...embeddedSources()];
    for (const source of sources) {
      for (const grant of source.grants.slice(0, 1)) {
        const plans = bothForms(source, grant);
        if (plans === undefined) {
          counts.refused++;
          continue;
        }
        const [plain, held] = plans;
        if (held.query === plain.query) {
          counts.clauses++;
          continue;
        }
        counts.filters++;
        const dataset = new Set([...plain.dataset.default, ...plain.dataset.named, EMPTY_GRAPH]);
        const problem = unheld(held.query, dataset);
        assert.equal(problem, undefined, `${source.name}: ${problem}\n${held.query}`);
        // The rest of the plan is the same: what counts the dataset, the form, the body sent.
        assert.deepEqual(held.dataset, plain.dataset);
        assert.equal(held.form, plain.form);
        assert.equal(new URLSearchParams(held.formBody.toString()).get('query'), held.query);
        assert.equal(held.formBytes, held.formBody.length);
      }
    }
    process.stdout.write(`# graph-filter form over ${sources.length} queries: ${JSON.stringify(counts)}\n`);
    assert.ok(counts.filters > counts.clauses, 'most answered queries are sent in the form');
  });

  it('writes a GRAPH per triple pattern of the default graph, and holds the caller’s GRAPH ?g to the named graphs', () => {
    const plan = filters.plan(request(`SELECT ?s ?o WHERE { ?s <urn:p> ?o . OPTIONAL { GRAPH ?g { ?s <urn:q> ?z } } }`), grantOf(A, B));
    assert.doesNotMatch(plan.query, /\bFROM\b/);
    assert.equal(plan.query.match(/GRAPH \?graph_\d+/g)?.length, 1, plan.query);
    assert.match(
      plan.query,
      new RegExp(`GRAPH \\?g \\{[^}]*\\}\\s*FILTER\\(\\(SAMETERM\\(\\?g, <${A}>\\)\\) \\|\\| \\(SAMETERM\\(\\?g, <${B}>\\)\\)\\)`),
    );
    assert.equal(unheld(plan.query, new Set([A, B])), undefined);
  });

  it('a cached form is the cold form, per grant, and a text kept with its clauses stays so', () => {
    const cached = createPlanner({ ...options, planCache: { maxEntries: 100, maxBytes: 1 << 20 }, datasetForm: 'graph-filters' });
    for (const query of ['SELECT ?s WHERE { ?s <urn:p> ?o }', 'SELECT ?s WHERE { ?s <urn:p>/<urn:q> ?o }']) {
      for (const grant of [grantOf(A), grantOf(A, B), grantOf(A), grantOf(B)]) {
        const cold = filters.plan(request(query), grant);
        for (let i = 0; i < 2; i++) {
          const plan = cached.plan(request(query), grant);
          assert.equal(plan.query, cold.query);
          assert.deepEqual(plan.formBody, cold.formBody);
          assert.deepEqual(plan.dataset, cold.dataset);
        }
      }
    }
  });

  it('a form asked per plan (config "auto") switches both ways, cold and cached, each plan equal to its fixed form', () => {
    let form: 'clauses' | 'graph-filters' = 'clauses';
    const query = 'SELECT ?s WHERE { ?s <urn:p> ?o }';
    for (const planCache of [options.planCache, { maxEntries: 100, maxBytes: 1 << 20 }]) {
      const asked = createPlanner({ ...options, planCache, datasetForm: () => form });
      for (const next of ['clauses', 'graph-filters', 'graph-filters', 'clauses', 'graph-filters'] as const) {
        form = next;
        const plan = asked.plan(request(query), grantOf(A, B));
        const fixed = (next === 'clauses' ? clauses : filters).plan(request(query), grantOf(A, B));
        assert.equal(plan.query, fixed.query, `${next}, cache of ${planCache.maxEntries}`);
        assert.equal(/\bFROM\b/.test(plan.query), next === 'clauses', plan.query);
      }
    }
  });

  it('a NUL in a literal or a SEPARATOR keeps its escape (Virtuoso ends a string at a raw NUL), and the value', () => {
    for (const query of [
      'SELECT ?s WHERE { ?s <urn:p> "x\\u0000y" }',
      'SELECT ?s WHERE { ?s <urn:p> ?o FILTER(?o IN ("x\\u0000y")) }',
      'SELECT (GROUP_CONCAT(?o; SEPARATOR = "x\\u0000y") AS ?all) WHERE { ?s <urn:p> ?o }',
    ]) {
      const plan = filters.plan(request(query), grantOf(A));
      assert.doesNotMatch(plan.query, /\u0000/, plan.query);
      assert.match(plan.query, /"x\\u0000y"/, plan.query);
      assert.equal(unheld(plan.query, new Set([A])), undefined);
      const values = [...JSON.stringify(new sparqljs.Parser().parse(plan.query)).matchAll(/"(?:value|separator)":"(x[^"]*y)"/g)].map(
        (m) => m[1],
      );
      assert.deepEqual(values, ['x\\u0000y'], plan.query);
    }
  });

  it('spells out SELECT * as the in-scope variables, the graph variables left out', () => {
    const plan = filters.plan(request('SELECT * WHERE { ?s ?p ?o OPTIONAL { ?s <urn:q> ?z } BIND(1 AS ?one) }'), grantOf(A));
    assert.match(plan.query, /^SELECT \?s \?p \?o \?z \?one WHERE/m, plan.query);
  });

  it('blank nodes of one BGP become one variable across the GRAPH elements it is split into', () => {
    const plan = filters.plan(request('SELECT ?x WHERE { ?x <urn:p> _:b . _:b <urn:q> 1 }'), grantOf(A));
    const [first, second] = [...plan.query.matchAll(/GRAPH \?graph_\d+ \{ (\S+) (\S+) ([^\s.]+)/g)];
    assert.ok(first && second, plan.query);
    assert.equal(first[3], second[1], plan.query);
    assert.match(first[3] ?? '', /^\?graph_\d+$/);
  });

  for (const [what, query, grant] of [
    ['a path over the default graph (it may cross graphs of the merge)', 'SELECT ?s WHERE { ?s <urn:p>/<urn:q> ?o }', grantOf(A, B)],
    ['COUNT(DISTINCT *)', 'SELECT (COUNT(DISTINCT *) AS ?n) WHERE { ?s ?p ?o }', grantOf(A, B)],
    ['a GRAPH holding no triple pattern (Virtuoso refuses its test, SP031)', 'SELECT ?g WHERE { GRAPH ?g { } }', grantOf(A, B)],
    ['SELECT * with a VALUES after the query', 'SELECT * WHERE { ?s ?p ?o } VALUES ?s { <urn:x> }', grantOf(A)],
    [
      `more than ${MAX_GRAPH_FILTER_GRAPHS} graphs`,
      'SELECT ?s WHERE { ?s ?p ?o }',
      grantOf(...Array.from({ length: MAX_GRAPH_FILTER_GRAPHS + 1 }, (_, i) => `http://example.org/g/${i}`)),
    ],
  ] as const) {
    it(`keeps the clauses for ${what}`, () => {
      const plain = clauses.plan(request(query), grant);
      assert.equal(filters.plan(request(query), grant).query, plain.query);
      assert.match(plain.query, /\bFROM\b/);
    });
  }

  it('a path inside the caller’s GRAPH stays in that one graph, as it is read there', () => {
    const plan = filters.plan(request('SELECT ?s WHERE { GRAPH <' + A + '> { ?s <urn:p>+ ?o } }'), grantOf(A));
    assert.doesNotMatch(plan.query, /\bFROM\b/);
    assert.equal(unheld(plan.query, new Set([A])), undefined);
  });

  it('the check of this file finds a GRAPH left without its filter and a pattern left outside (it can fail)', () => {
    const text = graphFilterText(`SELECT ?s FROM <${A}> FROM NAMED <${B}> WHERE { ?s ?p ?o }`, [A], [B]) ?? '';
    assert.equal(unheld(text, new Set([A, B])), undefined);
    assert.match(unheld(text.replace(/FILTER\(.*\)\n/, ''), new Set([A, B])) ?? '', /without its filter/);
    assert.match(unheld(text, new Set([B])) ?? '', /without its filter/);
    assert.match(unheld('SELECT ?s WHERE { ?s ?p ?o }', new Set([A])) ?? '', /outside every GRAPH/);
  });
});
