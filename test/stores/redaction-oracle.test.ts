// The redaction oracle on every rig store that is up: the guard in front of the store answers as a redacted embedded copy of the rig dataset does.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { oracleCorpus, runOracle, sampleOf, type OracleVocabulary } from '../helpers/redaction-oracle.js';
import { labStoresUnderTest, SECURITY_DATA } from '../helpers/rig-stores.js';
import { sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const EX = 'http://example.org/';
const TEAM_A = `${EX}g/teamA`;
const SECRET = `${EX}g/secret`;
/** Everyone reads public1 (rig-policies.ttl), nothing hidden there. */
const PUBLIC1 = `${EX}g/public1`;
const SEED = Number(process.env['ORACLE_SEED'] ?? 10);
/** Queries per store (ORACLE_STORE_QUERIES overrides): each is asked twice, for staff and for HR. */
const SAMPLE = Number(process.env['ORACLE_STORE_QUERIES'] ?? 60);

const KEYS = { staff: 'oracle-store-key-staff-0123456789abcdef', hr: 'oracle-store-key-hr-0123456789abcdef' } as const;
const API_KEYS = [
  { agent: 'http://example.org/agents/sam', groups: ['staff'], sha256: sha256(KEYS.staff) },
  { agent: 'http://example.org/agents/hana', groups: ['hr'], sha256: sha256(KEYS.hr) },
];

const VOCABULARY: OracleVocabulary = {
  namespace: EX,
  locals: ['salary', 'age', 'worksOn', 'memberOf', 'value', 'status', 'owner', 'relatedTo', 'classification', 'nothing'],
  nodes: ['?a', '?b', '?c', '[]', `<${EX}res/person1>`, `<${EX}res/item1>`, 'ex:teamA', '51000', '21', '"Person 1"@en'],
  graphs: [TEAM_A, SECRET],
};

const ATTACKS = [
  'SELECT ?x WHERE { ?x <urn:x:nothing>* ?x }',
  `SELECT (COUNT(?x) AS ?n) WHERE { ?x <${EX}age>? ?x FILTER(isNumeric(?x)) }`,
  'SELECT ?x WHERE { ?x <urn:x:nothing>* 51000 }',
  `SELECT ?x WHERE { GRAPH ?g { ?x (!<${EX}age>)* ?x } }`,
  'SELECT * WHERE { ?s ?p ?o }',
  `DESCRIBE <${EX}res/person1>`,
];

const hiddenSalary = new Map([
  [PUBLIC1, new Set<string>()],
  [TEAM_A, new Set([`${EX}salary`])],
  [SECRET, new Set([`${EX}salary`])],
]);

for (const store of labStoresUnderTest().filter(({ name }) => name !== 'jena-union')) {
  describe(`redaction oracle [${store.name}]`, () => {
    let guard: TestGuard;
    before(async () => {
      guard = await startTestGuard({
        policies: [resolve('test/fixtures/sparql/hidden-paths/rig-policies.ttl')],
        auth: { apiKeys: API_KEYS },
        upstream: store.queryUrl,
        embedded: undefined,
      });
    });
    after(async () => {
      await guard?.close();
    });

    it(
      'staff (salary hidden) gets the answers of the redacted rig dataset, where the store agrees with Oxigraph',
      { timeout: 300_000 },
      async () => {
        const queries = sampleOf(oracleCorpus(SEED, VOCABULARY, ATTACKS, 150), SAMPLE, SEED);
        const { counts, failures, deviations } = await runOracle({
          endpoint: guard.endpoint,
          key: KEYS.staff,
          fullKey: KEYS.hr,
          data: readFileSync(SECURITY_DATA, 'utf8'),
          granted: [PUBLIC1, SECRET, TEAM_A],
          hidden: hiddenSalary,
          queries,
          store: store.name,
        });
        process.stdout.write(`# redaction oracle, ${store.name}: ${queries.length} queries ${JSON.stringify(counts)}\n`);
        for (const deviation of deviations) process.stdout.write(`#   store-deviates: ${deviation}\n`);
        assert.deepEqual(failures, []);
        assert.ok(counts.equal > 0, 'some queries are compared');
      },
    );
  });
}
