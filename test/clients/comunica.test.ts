// Comunica, a client nobody here wrote, runs every query form through the guard with a key and finds the service description.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type * as Comunica from '@comunica/query-sparql';
import { after, before, describe, it } from 'node:test';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { CLIENT_PACKAGE_SKIP, importClientLibrary } from './import-client-library.js';

let t: TestGuard;
let QueryEngine: typeof Comunica.QueryEngine;

/** Comunica's context for one caller: its own fetch adds the key (one engine per caller, see docs/authentication.md). */
type Context = NonNullable<Parameters<Comunica.QueryEngine['queryBindings']>[1]>;

function contextFor(key: string | undefined, messages: string[]): Context {
  const note = (level: string) => (message: string) => messages.push(`${level}: ${message}`);
  return {
    // The bare URL, as a user types it: Comunica dereferences it and learns from the
    // service description that it is a SPARQL endpoint.
    sources: [t.endpoint],
    fetch: (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
      return fetch(input, { ...init, headers });
    },
    log: {
      trace() {},
      debug() {},
      info() {},
      flush() {},
      warn: note('warn'),
      error: note('error'),
      fatal: note('fatal'),
    } as unknown as Context['log'],
  };
}

describe('Comunica through the guard', { skip: CLIENT_PACKAGE_SKIP }, () => {
  before(async () => {
    ({ QueryEngine } = await importClientLibrary<typeof Comunica>('@comunica/query-sparql'));
    t = await startTestGuard();
  });
  after(async () => {
    await t?.close();
  });

  it('runs SELECT, ASK, CONSTRUCT and DESCRIBE with a key, seeing that key grant only, without a metadata warning', async () => {
    const messages: string[] = [];
    const context = contextFor(KEYS.beta, messages);
    const before = t.logs.length;

    const engine = new QueryEngine();
    const rows = await (
      await engine.queryBindings(
        'SELECT ?g (SUM(?v) AS ?sum) WHERE { GRAPH ?g { ?s <http://example.org/ns#value> ?v } } GROUP BY ?g ORDER BY ?g',
        context,
      )
    ).toArray();
    assert.deepEqual(
      rows.map((row) => [row.get('g')?.value, row.get('sum')?.value]),
      [
        ['http://example.org/graphs/a', '6'],
        ['http://example.org/graphs/b', '30'],
      ],
    );
    assert.equal(await engine.queryBoolean('ASK { GRAPH ?g { ?s ?p "beta one" } }', context), true);
    assert.equal(await engine.queryBoolean('ASK { GRAPH ?g { ?s ?p "CANARY-SECRET-1" } }', context), false);
    const constructed = await (await engine.queryQuads('CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }', context)).toArray();
    assert.equal(constructed.length, 17, 'the triples of graphs a (10) and b (7)');
    assert.ok(constructed.every((quad) => !quad.object.value.startsWith('CANARY')));
    const described = await (await engine.queryQuads('DESCRIBE <http://example.org/ns#shared>', context)).toArray();
    assert.ok(described.length > 0);
    assert.ok(described.every((quad) => !quad.object.value.startsWith('CANARY')));

    assert.deepEqual(messages, [], 'no warning or error from Comunica');
    const lines = t.logs.slice(before).filter((line) => line.path === '/sparql');
    assert.ok(lines.length >= 5, 'the description and four queries went through the guard');
    assert.ok(lines.every((line) => line.status === 200 && line.agent === 'http://example.org/agents/beta-user'));
  });

  it("sends the key as Basic with the context's httpAuth, in code and on the command line (5.4.1 has no --httpAuth flag)", async () => {
    const query = 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g';
    const engine = new QueryEngine();
    const rows = await (await engine.queryBindings(query, { sources: [t.endpoint], httpAuth: `user:${KEYS.beta}` })).toArray();
    assert.deepEqual(
      rows.map((row) => row.get('g')?.value),
      ['http://example.org/graphs/a', 'http://example.org/graphs/b'],
    );
    const before = t.logs.length;
    const { stdout } = await promisify(execFile)(
      'test/clients/node_modules/.bin/comunica-sparql',
      [t.endpoint, '-c', JSON.stringify({ httpAuth: `user:${KEYS.beta}` }), '-q', query, '-t', 'application/sparql-results+json'],
      { timeout: 120_000 },
    );
    const json = JSON.parse(stdout) as { results: { bindings: { g: { value: string } }[] } };
    assert.deepEqual(
      json.results.bindings.map((binding) => binding.g.value),
      ['http://example.org/graphs/a', 'http://example.org/graphs/b'],
    );
    const agents = new Set(
      t.logs
        .slice(before)
        .filter((line) => line.path === '/sparql')
        .map((line) => line.agent),
    );
    assert.deepEqual([...agents], ['http://example.org/agents/beta-user']);
  });

  it('a bad key is refused with a 401 that Comunica reports', async () => {
    const messages: string[] = [];
    const engine = new QueryEngine();
    await assert.rejects(
      async () => (await engine.queryBindings('SELECT * WHERE { ?s ?p ?o }', contextFor('not-a-key', messages))).toArray(),
      /401/,
    );
  });
});
