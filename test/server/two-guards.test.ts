// Two guards in one process: each loads its own policies on its own policy worker, and closing one leaves the other loading and serving.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { select, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

/** Everyone reads one graph of the integration data. */
function everyoneReads(graph: string): string {
  return `@prefix guard: <https://w3id.org/sparql-guard#> .
<http://example.org/policies/everyone> a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <http://example.org/graphs/${graph}> .
`;
}

/** The graphs an anonymous caller sees through `guard`, by the `ex:seenIn` each graph states. */
async function seenIn(guard: TestGuard): Promise<string[]> {
  const { status, rows, body } = await select(
    guard.endpoint,
    'SELECT ?where WHERE { GRAPH ?g { <http://example.org/ns#shared> <http://example.org/ns#seenIn> ?where } }',
  );
  assert.equal(status, 200, body);
  return rows.map((row) => row.where ?? '').sort();
}

describe('two guards in one process', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-two-guards-'));
  const policiesOfA = join(folder, 'a.ttl');
  const policiesOfB = join(folder, 'b.ttl');
  let a: TestGuard;
  let b: TestGuard;

  before(async () => {
    writeFileSync(policiesOfA, everyoneReads('a'));
    writeFileSync(policiesOfB, everyoneReads('b'));
    [a, b] = await Promise.all([startTestGuard({ policies: [policiesOfA] }), startTestGuard({ policies: [policiesOfB] })]);
  });

  after(async () => {
    await Promise.all([a.close(), b.close()]);
    rmSync(folder, { recursive: true, force: true });
  });

  it('each serves the policies it loaded', async () => {
    assert.deepEqual(await seenIn(a), ['a']);
    assert.deepEqual(await seenIn(b), ['b']);
  });

  it('reloading both at once leaves each with its own files', async () => {
    writeFileSync(policiesOfB, everyoneReads('secret'));
    assert.deepEqual(await Promise.all([a.guard.reload(), b.guard.reload()]), [true, true]);
    assert.deepEqual(await seenIn(a), ['a']);
    assert.deepEqual(await seenIn(b), ['CANARY-SECRET-SHARED']);
  });

  it('closing one leaves the other loading and serving', async () => {
    await a.close();
    writeFileSync(policiesOfB, everyoneReads('b'));
    assert.equal(await b.guard.reload(), true, JSON.stringify(b.logs.filter((line) => line.event !== 'request')));
    assert.deepEqual(await seenIn(b), ['b']);
    // A reload of the closed guard loads nothing, and says so rather than hanging.
    assert.equal(await a.guard.reload(), false);
  });
});
