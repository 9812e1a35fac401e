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
import { sha256 } from '../../helpers/start-test-guard.js';
import {
  AGENTS,
  ROWS_CALLERS,
  ROWS_EX,
  describeRowsOnEveryStore,
  keyOf,
  rowsAttacks,
  type RowsCallerName,
} from '../../helpers/rows-stores.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 32);
/** Policy sets drawn (RANDOM_POLICY_SETS) and queries per caller and set (RANDOM_POLICY_QUERIES). */
const SETS = Number(process.env['RANDOM_POLICY_SETS'] ?? 4);
const SAMPLE = Number(process.env['RANDOM_POLICY_QUERIES'] ?? 40);

const CALLERS: readonly RowsCallerName[] = ['alice', 'pub', 'bob', 'cat', 'dan', 'erin'];
const PREDICATES = [
  'rdf:type',
  'ex:name',
  'ex:budget',
  'ex:team',
  'ex:region',
  'ex:lead',
  'ex:note',
  'ex:text',
  'ex:email',
  'ex:phone',
  'ex:salary',
];

/** Row rules as a policy file writes them: the rule's terms, and whether it reads graphs of its own. */
const ROW_RULES: readonly string[] = [
  'guard:rowClass ex:Project',
  'guard:rowClass ex:PublicRecord',
  'guard:rowClass ex:Person',
  'guard:rowClass ex:Draft',
  'guard:rowPattern "?this ex:member ?agent" ; guard:rowData g:members',
  'guard:rowPattern "?this ex:member ?agent"',
  'guard:rowPattern "?this ex:team ?group"',
  'guard:rowPattern "?this ex:region \'north\'"',
  'guard:rowPattern "?this ex:budget ?b . VALUES ?b { 100 5 3 12 }"',
  'guard:rowPattern "?this ex:owner ?org . ?agent ex:memberOf ?org" ; guard:rowData g:members, g:orgs',
  'guard:rowPattern "?this ex:lead ?l . ?l ex:team \'team-a\'"',
  'guard:rowPattern "?this ex:note ?n"',
  'guard:rowPattern "?x ex:lead ?this"',
  "guard:rowPattern \"?this ex:name ?n . VALUES ?n { 'Apollo' 'Alice' 'Second public' }\"",
  'guard:rowPattern "?this a ex:Project ; ex:team ?group"',
  'guard:rowPattern "?this ex:name ?n" ; guard:rowData g:second',
  'guard:rowPattern "?this a ex:Project" ; guard:rowData g:orgs',
  'guard:rowPattern "?this a ?t . VALUES ?t { ex:Project ex:Draft }"',
  'guard:rowPattern "?this ex:note ?n . ?n ex:team \'team-b\'"',
  'guard:rowPattern "?this ex:lead ?l . ?l ex:salary ?s ."',
  "guard:rowPattern \"?this ex:budget ?b . VALUES (?b ?c) { (100 'x') (5 UNDEF) (3 'y'@en) }\"",
];

/** One policy set drawn with `random`: one to three policies per caller, and now and then one for every authenticated agent. */
function randomPolicies(random: () => number, base: string): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const some = <T>(items: readonly T[], most: number): T[] => items.filter(() => random() < most / items.length);
  const policy = (name: string, target: string): string => {
    const graphs = pick([['g:main'], ['g:second'], ['g:main', 'g:second'], ['g:main'], ['g:main', 'g:members'], ['g:orgs', 'g:second']]);
    const terms = [`a guard:Policy`, target, `guard:readGraph ${graphs.join(', ')}`];
    if (random() < 0.6) terms.push(pick(ROW_RULES));
    if (random() < 0.45) terms.push(`guard:readPath ${[...new Set([pick(PREDICATES), ...some(PREDICATES, 3)])].join(', ')}`);
    if (random() < 0.3) terms.push(`guard:hidePath ${[...new Set([pick(PREDICATES), ...some(PREDICATES, 1)])].join(', ')}`);
    return `pol:${name} ${terms.join(' ;\n    ')} .`;
  };
  const policies = CALLERS.flatMap((caller) => {
    const { agent, groups } = ROWS_CALLERS[caller];
    const targets = [`guard:agent <${agent}>`, ...groups.map((group) => `guard:group "${group}"`)];
    return Array.from({ length: 1 + Math.floor(random() * 3) }, (_, index) => policy(`${caller}-${index}`, pick(targets)));
  });
  if (random() < 0.3) policies.push(policy('everyone-signed-in', 'guard:agent guard:AuthenticatedAgent'));
  const text = (more: readonly string[]) =>
    [
      '@prefix guard: <https://w3id.org/sparql-guard#> .',
      '@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .',
      `@prefix ex: <${ROWS_EX}> .`,
      `@prefix g: <${base}> .`,
      '@prefix pol: <http://example.org/policies/random/> .',
      '',
      ...policies,
      ...more,
      '',
    ].join('\n');
  // Each caller's keeper reads the same graphs unrestricted: on a lab store, an answer of the keeper's that is not the
  // data's is the store's own deviation, not compared.
  const drawn = readRowPolicies(text([]));
  return text(
    CALLERS.map((caller) => {
      const graphs = grantedGraphs(drawn, ROWS_CALLERS[caller]).map((graph) => `<${graph}>`);
      return `pol:keeper-${caller} a guard:Policy ; guard:agent <${keeperOf(caller).agent}> ; guard:readGraph ${graphs.join(', ')} .`;
    }),
  );
}

/** The unrestricted caller of `caller`'s graphs. */
const keeperOf = (caller: RowsCallerName) => ({ agent: `${AGENTS}keeper-${caller}`, key: `rows-key-keeper-${caller}-0123456789abcdef` });

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
    // Every store, Virtuoso too (it found the fault refuse-for-store.ts names). Virtuoso's deviations that depend on the
    // view show under no keeper. SUM over no row is unbound, not 0, and MAX over stored strings is not always the string
    // order: counted as the store's where the guard's answer to the same WHERE without aggregation is the view's
    // (runOracle; seeds 211, 313, 523 and 601 met them). Numbers join by value, 5 = 5.0 (docs/operations.md): seed 32's
    // sets and seed 77's (twelve each) meet none; another seed may, and a failure there names its query to judge by hand.
    () => true,
    (base) => randomPolicies(mulberry32(SEED * 1000 + set), base),
  );
}
