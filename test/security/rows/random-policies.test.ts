// The rows oracle over policies nobody wrote by hand: policy sets drawn at random (row rules, column lists, hidden
// paths, several policies per graph, lifts, grants by agent, group and AuthenticatedAgent), each caller's answers held
// to the view the definition gives for that set (row-view.ts), on the embedded store and each lab store that is up.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import oxigraph from 'oxigraph';
import { embeddedSources } from '../../helpers/query-corpus.js';
import { mulberry32 } from '../../w3c/w3c-evaluation.js';
import { oracleCorpus, runOracle, sampleOf, type OracleVocabulary } from '../../helpers/redaction-oracle.js';
import { buildView, grantedGraphs, readRowPolicies } from '../../helpers/row-view.js';
import { CALLERS, keeperOf, randomPolicies } from '../../helpers/random-row-policies.js';
import { sha256 } from '../../helpers/start-test-guard.js';
import { oneStorePerEngine } from '../../helpers/rig-stores.js';
import { ROWS_CALLERS, ROWS_EX, describeRowsOnEveryStore, keyOf, rowsAttacks } from '../../helpers/rows-stores.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 32);
/** Policy sets drawn (RANDOM_POLICY_SETS) and queries per caller and set (RANDOM_POLICY_QUERIES). */
const SETS = Number(process.env['RANDOM_POLICY_SETS'] ?? 4);
const SAMPLE = Number(process.env['RANDOM_POLICY_QUERIES'] ?? 40);

for (let set = 0; set < SETS; set++) {
  describeRowsOnEveryStore(
    `rows oracle over random policies, seed ${SEED}, set ${set}`,
    (rows, store) => {
      for (const [index, caller] of CALLERS.entries()) {
        it(`${caller}: no answer holds more or less than the view's`, { timeout: 600_000 }, async (t) => {
          const { fixture, endpoint } = rows();
          const data = new oxigraph.Store();
          data.load(fixture.data, { format: 'application/trig' });
          const policies = readRowPolicies(fixture.policies);
          const identity = ROWS_CALLERS[caller];
          const granted = grantedGraphs(policies, identity);
          const vocabulary: OracleVocabulary = {
            namespace: ROWS_EX,
            locals: ['name', 'budget', 'team', 'region', 'lead', 'note', 'text', 'email', 'phone', 'salary', 'member', 'nothing'],
            nodes: ['?a', '?b', '?c', '[]', 'ex:p1', 'ex:p2', 'ex:alice', 'ex:Project', 'ex:PublicRecord', '"Apollo"', '100', '"team-a"'],
            graphs: [fixture.graphs.main, fixture.graphs.second, fixture.graphs.members],
          };
          const corpus = [
            ...oracleCorpus(SEED + set, vocabulary, rowsAttacks(fixture.graphs), 300),
            ...embeddedSources().map((source) => ({ source: 'corpus', query: source.query })),
          ];
          const queries = sampleOf(corpus, store.queryUrl === undefined ? SAMPLE : Math.ceil(SAMPLE / 3), SEED + set * 10 + index);
          const { counts, failures } = await runOracle({
            endpoint,
            key: keyOf(caller),
            ...(store.queryUrl !== undefined && { fullKey: keeperOf(caller).key }),
            data: fixture.data,
            granted,
            hidden: new Map(),
            view: buildView(data, policies, identity),
            queries,
            store: store.name,
          });
          t.diagnostic(`${caller}: ${queries.length} queries ${JSON.stringify(counts)}`);
          assert.deepEqual(failures, [], `the policies of set ${set} (seed ${SEED}):\n${fixture.policies}`);
          const answered = queries.length - counts.refused - counts.invalid - counts['store-deviates'];
          assert.ok(counts.equal >= answered / 2, `most answered queries are compared (${counts.equal} of ${answered})`);
        });
      }
    },
    // API keys only: the callers and their keepers.
    {
      auth: {
        apiKeys: CALLERS.flatMap((caller) => [
          { ...ROWS_CALLERS[caller], groups: [...ROWS_CALLERS[caller].groups], sha256: sha256(keyOf(caller)) },
          { agent: keeperOf(caller).agent, groups: [], sha256: sha256(keeperOf(caller).key) },
        ]),
      },
    },
    // Every engine, Virtuoso too (it found the fault refuse-for-store.ts names; Jena's variants left out, rig-stores.ts
    // oneStorePerEngine). Virtuoso's deviations that depend on the
    // view show under no keeper. SUM over no row is unbound, not 0, and MAX over stored strings is not always the string
    // order: counted as the store's where the guard's answer to the same WHERE without aggregation is the view's
    // (runOracle; seeds 211, 313, 523 and 601 met them). Numbers join by value, 5 = 5.0 (docs/operations.md): seed 32's
    // sets and seed 77's (twelve each) meet none; another seed may, and a failure there names its query to judge by hand.
    oneStorePerEngine,
    (base) => randomPolicies(mulberry32(SEED * 1000 + set), base),
  );
}
