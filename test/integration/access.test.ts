// Integration: the guard in front of the real embedded Oxigraph store, over HTTP, with real policies.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEYS, select, useTestGuard } from '../helpers/start-test-guard.js';

const EX = 'http://example.org/ns#';
const G = 'http://example.org/graphs/';
const PREFIX = `PREFIX ex: <${EX}>\n`;

const guard = useTestGuard();

const values = (rows: Record<string, string>[], name: string) => rows.map((row) => row[name]).sort();

describe('two callers, one query', () => {
  it('answers each caller with the graphs of its own policies', async () => {
    const query = `${PREFIX}SELECT ?label WHERE { ?s ex:label ?label }`;
    const anonymous = await select(guard().endpoint, query);
    const beta = await select(guard().endpoint, query, { key: KEYS.beta });
    const keeper = await select(guard().endpoint, query, { key: KEYS.keeper });
    assert.deepEqual(values(anonymous.rows, 'label'), ['alpha one', 'alpha three', 'alpha two']);
    assert.deepEqual(values(beta.rows, 'label'), ['alpha one', 'alpha three', 'alpha two', 'beta one', 'beta two']);
    assert.equal(keeper.rows.length, 6);
    assert.ok(keeper.body.includes('CANARY-SECRET-1'), 'the keeper is granted the secret graph');
    for (const answer of [anonymous, beta]) assert.doesNotMatch(answer.body, /CANARY/);
  });
});

describe('aggregates count only what the caller may see', () => {
  const sum = `${PREFIX}SELECT (SUM(?v) AS ?total) (COUNT(?v) AS ?n) WHERE { ?s ex:value ?v }`;

  it('sums over the granted graphs only, never the store default graph', async () => {
    assert.deepEqual((await select(guard().endpoint, sum)).rows, [{ total: '6', n: '3' }]);
    assert.deepEqual((await select(guard().endpoint, sum, { key: KEYS.beta })).rows, [{ total: '36', n: '5' }]);
    assert.deepEqual((await select(guard().endpoint, sum, { key: KEYS.keeper })).rows, [{ total: '1036', n: '6' }]);
  });

  it('counts over GRAPH ?g only the granted named graphs', async () => {
    const perGraph = `${PREFIX}SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ex:value ?v } } GROUP BY ?g`;
    const answer = await select(guard().endpoint, perGraph, { key: KEYS.beta });
    assert.deepEqual(
      answer.rows.sort((x, y) => String(x.g).localeCompare(String(y.g))),
      [
        { g: `${G}a`, n: '3' },
        { g: `${G}b`, n: '2' },
      ],
    );
  });
});

describe('requests that intersect the grant to nothing see nothing', () => {
  it('FROM of an ungranted graph: empty, although the store default graph holds data', async () => {
    const query = `${PREFIX}SELECT * FROM <${G}secret> WHERE { ?s ?p ?o }`;
    const answer = await select(guard().endpoint, query, { key: KEYS.beta });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.rows, []);
  });

  it('default-graph-uri of an ungranted graph: empty', async () => {
    const answer = await select(guard().endpoint, 'SELECT * WHERE { ?s ?p ?o }', {
      params: { 'default-graph-uri': [`${G}secret`] },
    });
    assert.deepEqual(answer.rows, []);
  });

  it('FROM NAMED only: the default graph is empty, not the store default graph', async () => {
    const answer = await select(guard().endpoint, `SELECT * FROM NAMED <${G}a> WHERE { ?s ?p ?o }`);
    assert.deepEqual(answer.rows, []);
  });
});

describe('GRAPH ?g ranges over granted graphs only', () => {
  it('lists the granted named graphs and nothing else', async () => {
    const query = 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }';
    assert.deepEqual(values((await select(guard().endpoint, query)).rows, 'g'), [`${G}a`]);
    assert.deepEqual(values((await select(guard().endpoint, query, { key: KEYS.beta })).rows, 'g'), [`${G}a`, `${G}b`]);
  });

  it('GRAPH <ungranted> matches nothing, also inside OPTIONAL, EXISTS and MINUS', async () => {
    const queries = [
      `SELECT * WHERE { GRAPH <${G}secret> { ?s ?p ?o } }`,
      `${PREFIX}SELECT ?x ?o WHERE { ?x ex:value 1 OPTIONAL { GRAPH <${G}secret> { ?s ?p ?o } } }`,
      `${PREFIX}ASK { ?x ex:value 1 FILTER EXISTS { GRAPH <${G}secret> { ?s ?p ?o } } }`,
    ];
    assert.deepEqual((await select(guard().endpoint, queries[0]!, { key: KEYS.beta })).rows, []);
    const optional = await select(guard().endpoint, queries[1]!, { key: KEYS.beta });
    assert.deepEqual(optional.rows, [{ x: `${EX}a1` }]);
    const ask = await select(guard().endpoint, queries[2]!, { key: KEYS.beta });
    assert.equal(JSON.parse(ask.body).boolean, false);
    const minus = await select(guard().endpoint, `${PREFIX}SELECT ?s WHERE { ?s ex:value ?v MINUS { GRAPH <${G}secret> { ?s ?p ?o } } }`, {
      key: KEYS.beta,
    });
    assert.equal(minus.rows.length, 5);
  });
});

describe('protocol parameters and FROM clauses cannot widen access', () => {
  const everything = 'SELECT ?o WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }';

  it('protocol dataset naming every graph yields only the granted ones', async () => {
    const answer = await select(guard().endpoint, everything, {
      key: KEYS.beta,
      params: {
        'default-graph-uri': [`${G}a`, `${G}secret`],
        'named-graph-uri': [`${G}b`, `${G}secret`, 'urn:x-arq:UnionGraph'],
      },
    });
    assert.equal(answer.status, 200);
    assert.ok(answer.rows.length > 0, 'the granted graphs still answer');
    assert.doesNotMatch(answer.body, /CANARY/);
  });

  it('FROM and FROM NAMED of every graph yield only the granted ones', async () => {
    const query = `SELECT ?o FROM <${G}a> FROM <${G}secret> FROM NAMED <${G}secret> FROM NAMED <${G}b>
      WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }`;
    const answer = await select(guard().endpoint, query);
    assert.ok(answer.rows.length > 0);
    assert.doesNotMatch(answer.body, /CANARY|beta/);
  });

  it('protocol parameters replace the query dataset rather than adding to it', async () => {
    const query = `SELECT ?o FROM <${G}b> WHERE { ?s ?p ?o }`;
    const answer = await select(guard().endpoint, query, { key: KEYS.beta, params: { 'default-graph-uri': [`${G}a`] } });
    assert.ok(answer.rows.length > 0);
    assert.doesNotMatch(answer.body, /beta/);
  });
});

describe('updates never reach the store', () => {
  it('refuses every update form with 403 and the store is unchanged', async () => {
    const count = `SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }`;
    const before = (await select(guard().endpoint, count, { key: KEYS.keeper })).rows;
    const insert = `INSERT DATA { GRAPH <${G}a> { <http://x/s> <http://x/p> "CANARY-WRITE" } }`;
    const attempts = [
      fetch(`${guard().endpoint}?query=${encodeURIComponent(insert)}`, { headers: { authorization: `Bearer ${KEYS.keeper}` } }),
      fetch(guard().endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${KEYS.keeper}` },
        body: new URLSearchParams({ update: insert }),
      }),
      fetch(guard().endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/sparql-update', authorization: `Bearer ${KEYS.keeper}` },
        body: insert,
      }),
      fetch(guard().endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/sparql-query', authorization: `Bearer ${KEYS.keeper}` },
        body: `${insert} ; DROP ALL`,
      }),
    ];
    for (const response of await Promise.all(attempts)) {
      assert.equal(response.status, 403);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    }
    assert.deepEqual((await select(guard().endpoint, count, { key: KEYS.keeper })).rows, before);
    const written = await select(guard().endpoint, 'ASK { ?s ?p "CANARY-WRITE" }', { key: KEYS.keeper });
    assert.equal(JSON.parse(written.body).boolean, false);
  });
});
