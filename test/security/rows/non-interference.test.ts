// Non-interference: changing only triples outside every view and outside the rules' data changes no answer any rows caller gets (same status, same rows), on a writable Oxigraph and each writable lab store.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { oracleCorpus, canonical, sampleOf, type OracleVocabulary } from '../../helpers/redaction-oracle.js';
import { labStoresUnderTest, type StoreUnderTest } from '../../helpers/rig-stores.js';
import {
  ROWS_EX,
  askRows,
  insertOf,
  rowsFixture,
  startRowsGuard,
  updateLabStore,
  type RowsFixture,
  type RowsCallerName,
} from '../../helpers/rows-stores.js';
import { startWritableStore, type WritableStore } from '../../helpers/start-writable-store.js';
import { startTestIssuer, type TestIssuer } from '../../helpers/start-test-issuer.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 32);
const SAMPLE = Number(process.env['ROWS_ORACLE_QUERIES'] ?? 120);
/** Callers none of whose views nor rules the change touches (cat and dan see every name, so a new record's name is theirs). */
const CALLERS: readonly RowsCallerName[] = ['alice', 'pub', 'bob', 'erin'];
const NONDETERMINISTIC = /\b(?:RAND|UUID|STRUUID|NOW|BNODE|SAMPLE|GROUP_CONCAT|LIMIT|OFFSET)\b/i;

/**
 * The change: a new record nobody's rule admits, a column of a visible public record that pub's
 * list leaves out and the others' rules hide, a hidden salary removed, a hidden blank node's e-mail
 * removed, a draft in g:second outside alice's and pub's class, and a graph granted to nobody.
 * The members and orgs graphs (the rules' data) are untouched.
 */
function change(fixture: RowsFixture): string {
  const { main, second } = fixture.graphs;
  const other = main.replace(/main$/, 'other');
  return `PREFIX ex: <${ROWS_EX}>
INSERT DATA { GRAPH <${main}> { ex:p9 a ex:Secret ; ex:budget 12345 ; ex:team "team-z" ; ex:region "west" ; ex:lead ex:alice . ex:r1 ex:phone "555-9999" ; ex:secretNote "x" }
  GRAPH <${second}> { ex:d3 a ex:Draft ; ex:name "Third draft" ; ex:budget 9 }
  GRAPH <${other}> { ex:p1 ex:name "Other Apollo" ; a ex:PublicRecord } };
DELETE DATA { GRAPH <${main}> { ex:bob ex:salary 8000 } };
DELETE WHERE { GRAPH <${main}> { ?ghost ex:name "Ghost" ; ex:email ?email } }`;
}

/** A store the test can write: the in-process Oxigraph, or a lab store with an update path. */
interface Target {
  readonly store: StoreUnderTest;
  readonly update: (text: string) => Promise<void>;
  readonly close: () => Promise<void>;
}

const targets: { name: string; open: () => Promise<Target> }[] = [
  {
    name: 'writable oxigraph',
    open: async () => {
      const writable: WritableStore = await startWritableStore();
      return {
        store: { name: 'writable', queryUrl: writable.queryUrl },
        update: (text) => writable.update(text),
        close: () => writable.close(),
      };
    },
  },
  ...labStoresUnderTest()
    .filter((store) => store.name !== 'jena-union')
    .map((store) => ({
      name: store.name,
      open: () => Promise.resolve({ store, update: (text: string) => updateLabStore(store, text), close: () => Promise.resolve() }),
    })),
];

for (const { name, open } of targets) {
  describe(`rows: non-interference [${name}]`, () => {
    let target: Target;
    let issuer: TestIssuer;
    const fixture = rowsFixture(`http://example.org/rows-ni-${process.pid}-${Date.now()}/`);
    before(async () => {
      target = await open();
      issuer = await startTestIssuer();
      await target.update(insertOf(fixture.data));
    });
    after(async () => {
      for (const graph of [...Object.values(fixture.graphs), fixture.graphs.main.replace(/main$/, 'other')])
        await target.update(`DROP SILENT GRAPH <${graph}>`);
      await target.close();
      await issuer.close();
    });

    it('no caller sees any answer change', { timeout: 600_000 }, async () => {
      const { guard, cleanup } = await startRowsGuard(target.store, fixture, issuer);
      try {
        const vocabulary: OracleVocabulary = {
          namespace: ROWS_EX,
          locals: ['name', 'budget', 'team', 'region', 'lead', 'phone', 'email', 'salary', 'secretNote', 'member', 'text'],
          nodes: ['?a', '?b', '?c', '[]', 'ex:p9', 'ex:r1', 'ex:bob', 'ex:Secret', 'ex:Draft', '"Ghost"', '12345', '"team-z"'],
          graphs: [fixture.graphs.main, fixture.graphs.second, fixture.graphs.main.replace(/main$/, 'other')],
        };
        const queries = sampleOf(
          oracleCorpus(SEED, vocabulary, [], 300),
          target.store.name === 'writable' ? SAMPLE : Math.ceil(SAMPLE / 3),
          SEED,
        )
          .map((item) => item.query)
          .filter((query) => !NONDETERMINISTIC.test(query));
        const token = await issuer.sign({ claims: { sub: 'jo', groups: ['regional'], region: 'north' } });
        const answers = async (): Promise<string[]> => {
          const seen: string[] = [];
          for (const query of queries) {
            for (const caller of [...CALLERS, { token }]) {
              const { status, body } = await askRows(guard.endpoint, query, caller);
              const graph = /^\s*(?:<|_:|$)/.test(body) || !body.trimStart().startsWith('{');
              seen.push(`${status} ${status === 200 ? JSON.stringify(canonical(body, graph)) : ''}`);
            }
          }
          return seen;
        };
        const before = await answers();
        await target.update(change(fixture));
        const afterChange = await answers();
        const differing = before.flatMap((answer, index) =>
          answer === afterChange[index]
            ? []
            : [
                `${queries[Math.floor(index / (CALLERS.length + 1))]}\n  before ${answer.slice(0, 300)}\n  after  ${afterChange[index]?.slice(0, 300)}`,
              ],
        );
        process.stdout.write(
          `# rows non-interference, ${name}: ${queries.length} queries x ${CALLERS.length + 1} callers, ${before.filter((answer) => answer.startsWith('200')).length} answered\n`,
        );
        assert.deepEqual(differing, []);
        // The change is real: the unrestricted caller of main sees it.
        const keeper = await askRows(guard.endpoint, `PREFIX ex: <${ROWS_EX}>\nASK { ex:p9 a ex:Secret }`, 'keeperMain');
        assert.match(keeper.body, /true/);
      } finally {
        await guard.close();
        cleanup();
      }
    });
  });
}
