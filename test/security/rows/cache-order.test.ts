// Rows bypass class "cache order": one query shape asked by callers with different rules, in both orders on fresh guards, answers each caller by its own rules and decides each refusal per request, never from a cached plan.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestIssuer, type TestIssuer } from '../../helpers/start-test-issuer.js';
import type { TestGuard } from '../../helpers/start-test-guard.js';
import {
  AGENTS,
  ROWS_EX,
  askRows,
  identityOf,
  rowsFixture,
  startRowsGuard,
  viewAnswer,
  type RowsCaller,
  type RowsCallerName,
} from '../../helpers/rows-stores.js';
import { canonical } from '../../helpers/redaction-oracle.js';
import type { RowCaller } from '../../helpers/row-view.js';

const P = `PREFIX ex: <${ROWS_EX}>\n`;
const EMBEDDED = { name: 'embedded', queryUrl: undefined };

/** One step: a caller, its identity, a query, and whether the guard must refuse it. */
interface Step {
  readonly caller: RowsCallerName | { readonly claims: Readonly<Record<string, string>> } | undefined;
  readonly query: string;
  /** The refusal's status: 403, or 401 for an anonymous caller no policy applies to (the guard asks for credentials). */
  readonly refused?: 401 | 403;
}

/** Pairs of steps of one shape (constants differ at most) whose callers have different rules. */
const PAIRS: readonly (readonly [string, Step, Step])[] = [
  [
    'member rows against class rows',
    { caller: 'alice', query: `${P}SELECT ?s ?n WHERE { ?s ex:name ?n }` },
    { caller: 'pub', query: `${P}SELECT ?s ?n WHERE { ?s ex:name ?n }` },
  ],
  [
    'constants differ, rules differ',
    { caller: 'alice', query: `${P}SELECT ?s WHERE { ?s ex:name "Apollo" }` },
    { caller: 'bob', query: `${P}SELECT ?s WHERE { ?s ex:name "Borealis" }` },
  ],
  [
    'an unlisted column: refused for one caller, answered for the other',
    { caller: 'pub', query: `${P}SELECT ?s ?e WHERE { ?s ex:email ?e }`, refused: 403 },
    { caller: 'cat', query: `${P}SELECT ?s ?e WHERE { ?s ex:email ?e }` },
  ],
  [
    'a variable-length path: refused where rows are restricted, answered where lifted',
    { caller: 'alice', query: `${P}SELECT ?s ?o WHERE { ?s ex:name+ ?o }`, refused: 403 },
    { caller: 'dan', query: `${P}SELECT ?s ?o WHERE { ?s ex:name+ ?o }` },
  ],
  [
    'one JWT shape, two claims',
    { caller: { claims: { region: 'north' } }, query: `${P}SELECT ?s ?b WHERE { ?s ex:budget ?b }` },
    { caller: { claims: { region: 'south' } }, query: `${P}SELECT ?s ?b WHERE { ?s ex:budget ?b }` },
  ],
  [
    'a hidden column of one caller, a listed one of another',
    { caller: 'bob', query: `${P}SELECT ?s ?x WHERE { ?s ex:salary ?x }`, refused: 403 },
    { caller: 'alice', query: `${P}SELECT ?s ?x WHERE { ?s ex:salary ?x }` },
  ],
  [
    'anonymous against a member',
    { caller: undefined, query: `${P}SELECT ?s WHERE { ?s a ex:Project }`, refused: 401 },
    { caller: 'alice', query: `${P}SELECT ?s WHERE { ?s a ex:Project }` },
  ],
];

describe('rows: plan cache order [embedded]', () => {
  let issuer: TestIssuer;
  const fixture = rowsFixture();
  const running: { guard: TestGuard; cleanup: () => void }[] = [];
  before(async () => {
    issuer = await startTestIssuer();
  });
  after(async () => {
    for (const { guard, cleanup } of running) {
      await guard.close();
      cleanup();
    }
    await issuer.close();
  });

  const run = async (endpoint: string, step: Step): Promise<void> => {
    let caller: RowsCaller;
    let identity: RowCaller;
    if (step.caller === undefined) {
      caller = undefined;
      identity = { agent: undefined, groups: [] };
    } else if (typeof step.caller === 'string') {
      caller = step.caller;
      identity = identityOf(step.caller);
    } else {
      caller = { token: await issuer.sign({ claims: { sub: 'jo', groups: ['regional'], ...step.caller.claims } }) };
      identity = { agent: `${AGENTS}jo`, groups: ['regional'], claims: new Map(Object.entries(step.caller.claims)) };
    }
    const answer = await askRows(endpoint, step.query, caller);
    const who = JSON.stringify(step.caller);
    if (step.refused !== undefined) {
      assert.equal(answer.status, step.refused, `${who}: ${answer.body}`);
      return;
    }
    assert.equal(answer.status, 200, `${who}: ${answer.body}`);
    assert.deepEqual(canonical(answer.body, false), viewAnswer(fixture, identity, step.query), who);
  };

  for (const [name, first, second] of PAIRS) {
    for (const [order, steps] of [
      ['first then second', [first, second, first, second]],
      ['second then first', [second, first, second, first]],
    ] as const) {
      it(`${name}: ${order}, on a fresh guard`, async () => {
        const started = await startRowsGuard(EMBEDDED, fixture, issuer);
        running.push(started);
        for (const step of steps) await run(started.guard.endpoint, step);
      });
    }
  }
});
