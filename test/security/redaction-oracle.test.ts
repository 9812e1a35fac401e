// The redaction oracle on the embedded store: for four policy sets, every query the project holds answers through the guard as a redacted copy of the data does.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { oracleCorpus, runOracle, sampleOf, type OracleVocabulary } from '../helpers/redaction-oracle.js';
import { sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const FIXTURES = resolve('test/fixtures/security/oracle');
const EX = 'http://example.org/ns#';
const PEOPLE = 'http://example.org/g/people';
const HR = 'http://example.org/g/hr';
const SEED = Number(process.env['ORACLE_SEED'] ?? 10);
/** Queries per policy set, sampled from the corpus with the seed (ORACLE_QUERIES overrides). */
const SAMPLE = Number(process.env['ORACLE_QUERIES'] ?? 300);

/** A policy set of policies.ttl: its caller group and the hidden set per granted graph that policies.ttl gives it. */
interface PolicySet {
  readonly name: string;
  readonly group: string;
  readonly hidden: ReadonlyMap<string, ReadonlySet<string>>;
}

const hidden = (people: readonly string[], hr: readonly string[]): ReadonlyMap<string, ReadonlySet<string>> =>
  new Map([
    [PEOPLE, new Set(people.map((local) => EX + local))],
    [HR, new Set(hr.map((local) => EX + local))],
  ]);

const POLICY_SETS: readonly PolicySet[] = [
  { name: 'one hidden predicate', group: 'one', hidden: hidden(['salary'], ['salary']) },
  { name: 'several hidden predicates', group: 'several', hidden: hidden(['salary', 'bonus', 'knows'], ['salary', 'bonus', 'knows']) },
  { name: 'hidden in one graph of two', group: 'half', hidden: hidden(['salary'], []) },
  { name: 'lifted by a second policy', group: 'lifted', hidden: hidden(['bonus'], ['salary', 'bonus']) },
];
const keyOf = (group: string): string => `oracle-key-${group}-0123456789abcdef`;

const VOCABULARY: OracleVocabulary = {
  namespace: EX,
  locals: ['name', 'knows', 'age', 'salary', 'bonus', 'grade', 'amount', 'contract', 'reviewed', 'nothing'],
  nodes: ['?a', '?b', '?c', '[]', 'ex:ann', 'ex:dan', 'ex:hiddenA', 'ex:fay', '71234', '"Ann"', '50001'],
  graphs: [PEOPLE, HR],
};

/** The attacks of the hidden-path suites and the bench query shapes, spelt out. */
const ATTACKS = [
  'SELECT ?x WHERE { ?x <urn:x:nothing>* ?x }',
  'SELECT ?x ?y WHERE { ?x <urn:x:nothing>? ?y }',
  `SELECT ?x WHERE { GRAPH ?g { ?x (!<${EX}name>)* ?x } }`,
  `SELECT (SUM(?x) AS ?s) WHERE { ?x (<${EX}age>|<urn:x:n>*) ?x FILTER(isNumeric(?x)) }`,
  'CONSTRUCT { ?x <urn:x:is> ?x } WHERE { ?x <urn:x:nothing>* ?x }',
  'ASK { FILTER EXISTS { ?x <urn:x:nothing>* ?x FILTER(?x = 71234) } }',
  'SELECT ?x WHERE { ?x <urn:x:nothing>* 71234 }',
  `SELECT ?x WHERE { ?x <urn:x:nothing>* <${EX}dan> }`,
  `SELECT ?x WHERE { ?x (^!<${EX}name>)? ?x }`,
  'SELECT * WHERE { ?s ?p ?o }',
  'SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }',
  `SELECT ?o WHERE { <${EX}ann> !<${EX}name> ?o }`,
  `SELECT ?o WHERE { ?o !^<${EX}name> <${EX}ann> }`,
  `DESCRIBE <${EX}ann> <${EX}dan>`,
  'DESCRIBE ?x WHERE { ?x <urn:x:nothing>* ?x }',
  `PREFIX ex: <${EX}>\nSELECT ?s ?o0 ?o1 WHERE { ?s ex:name ?o0 . ?s ex:age ?o1 . }`,
  // Per-graph hidden sets: where a graph does not hide a predicate, its triples are the caller's.
  `SELECT ?s ?o WHERE { GRAPH <${HR}> { ?s <${EX}salary> ?o } }`,
  `SELECT ?s ?o WHERE { GRAPH <${HR}> { ?s <${EX}salary>* ?o } }`,
  `SELECT ?o WHERE { GRAPH <${HR}> { { SELECT ?o WHERE { ?s (<${EX}salary>|<${EX}bonus>)? ?o } } } }`,
  `SELECT ?s WHERE { GRAPH <${HR}> { ?s ?p ?o FILTER EXISTS { ?s <${EX}salary> 71234 } } }`,
  'SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }',
  'SELECT ?g ?x WHERE { GRAPH ?g { ?x <urn:x:nothing>* ?x } }',
  `SELECT ?g ?x WHERE { GRAPH ?g { ?s !<${EX}name> ?x } }`,
  `SELECT ?x WHERE { GRAPH <${PEOPLE}> { ?s ?p ?o } GRAPH <${HR}> { ?t ?p ?x } }`,
  `SELECT ?x WHERE { GRAPH <${HR}> { GRAPH <${PEOPLE}> { ?s ?p ?x } } }`,
  `SELECT (SUM(?x) AS ?n) WHERE { GRAPH ?g { ?s ?p ?x FILTER(isNumeric(?x)) } }`,
  `SELECT ?o FROM <${HR}> FROM NAMED <${PEOPLE}> WHERE { ?s <${EX}salary> ?o }`,
  `PREFIX ex: <${EX}>\nSELECT * WHERE { ?s ex:name ?o0 . OPTIONAL { ?s ex:missing ?m . ?m ex:age ?x . } FILTER(?o0 != "x" || BOUND(?m)) }`,
];

/** The oracle over one guard configuration: every policy set, `sample` queries of the corpus each. */
function redactionOracle(title: string, config: Record<string, unknown>, sample: number): void {
  describe(title, () => {
    let guard: TestGuard;
    const data = readFileSync(join(FIXTURES, 'data.trig'), 'utf8');
    const corpus = oracleCorpus(SEED, VOCABULARY, ATTACKS, 400);
    before(async () => {
      guard = await startTestGuard({
        policies: [join(FIXTURES, 'policies.ttl')],
        auth: {
          apiKeys: POLICY_SETS.map(({ group }) => ({
            agent: `http://example.org/agents/${group}`,
            groups: [group],
            sha256: sha256(keyOf(group)),
          })),
        },
        embedded: { data: [join(FIXTURES, 'data.trig')] },
        ...config,
      });
    });
    after(async () => {
      await guard?.close();
    });

    for (const [index, set] of POLICY_SETS.entries()) {
      it(`${set.name}: no answer holds more or less than the redacted store's`, { timeout: 120_000 }, async () => {
        const queries = sampleOf(corpus, sample, SEED + index);
        const { counts, failures, deviations } = await runOracle({
          endpoint: guard.endpoint,
          key: keyOf(set.group),
          data,
          granted: [HR, PEOPLE],
          hidden: set.hidden,
          queries,
        });
        process.stdout.write(`# ${title}, ${set.name}: ${queries.length} queries ${JSON.stringify(counts)}\n`);
        for (const deviation of deviations) process.stdout.write(`#   store-deviates: ${deviation}\n`);
        assert.deepEqual(failures, []);
        assert.ok(counts.equal > queries.length / 3, 'most queries are compared');
      });
    }
  });
}

redactionOracle('redaction oracle: the guard with hidden paths answers as the redacted store does (embedded Oxigraph)', {}, SAMPLE);
// The dataset as graph filters (config datasetForm): the same answers, over a store read without a dataset clause.
redactionOracle(
  'redaction oracle, datasetForm graph-filters: the same answers with a filter per GRAPH for the dataset (embedded Oxigraph)',
  { datasetForm: 'graph-filters' },
  Math.ceil(SAMPLE / 4),
);
