// Starts the real embedded Oxigraph store (worker thread) and talks SPARQL 1.1 Protocol to it over HTTP.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { demoDataFile, startEmbeddedStore, type EmbeddedStore } from '../../src/embedded/start-embedded-store.js';

const FIXTURES = resolve('test/fixtures/embedded');
const PREFIXES = 'PREFIX ex: <https://example.org/ns#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> ';
const PUBLIC = '<https://example.org/graphs/public>';

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

async function post(url: string, form: Record<string, string | string[]>, accept?: string): Promise<Answer> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const v of [value].flat()) body.append(name, v);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' };
  if (accept !== undefined) headers.accept = accept;
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

/** The single value of a one-row, one-variable JSON SELECT answer. */
function only(answer: Answer): string {
  assert.equal(answer.status, 200, answer.text);
  const json = JSON.parse(answer.text) as { results: { bindings: Array<Record<string, { value: string }>> } };
  const row = json.results.bindings[0];
  assert.ok(row);
  const cell = Object.values(row)[0];
  assert.ok(cell);
  return cell.value;
}

describe('startEmbeddedStore on the demo data', () => {
  let store: EmbeddedStore;
  let url: string;
  before(async () => {
    store = await startEmbeddedStore({ dataFiles: [demoDataFile()] });
    url = store.queryUrl;
  });
  after(() => store.stop());

  test('serves on an ephemeral loopback port at /query', () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/query$/);
    assert.notEqual(new URL(url).port, '0');
  });

  test('demo graphs hold the documented counts and sums', async () => {
    const q = (body: string): Promise<Answer> => post(url, { query: PREFIXES + body });
    assert.equal(only(await q(`SELECT (COUNT(?p) AS ?n) FROM ${PUBLIC} WHERE { ?p a ex:Product }`)), '10');
    assert.equal(Number(only(await q(`SELECT (SUM(?x) AS ?s) FROM ${PUBLIC} WHERE { ?p ex:price ?x }`))), 550);
    assert.equal(only(await q('SELECT (SUM(?x) AS ?s) FROM <https://example.org/graphs/people> WHERE { ?p ex:salary ?x }')), '450000');
    assert.equal(only(await q('SELECT (COUNT(?p) AS ?n) FROM <https://example.org/graphs/people> WHERE { ?p a ex:Person }')), '6');
    assert.equal(
      only(await q('SELECT (SUM(?r) AS ?s) FROM <https://example.org/graphs/hr> WHERE { ?who ex:review ?v . ?v ex:rating ?r }')),
      '20',
    );
    assert.equal(
      only(await q('SELECT (SUM(?b) AS ?s) FROM <https://example.org/graphs/research> WHERE { ?r a ex:Report ; ex:budget ?b }')),
      '600000',
    );
  });

  test('without a dataset the default graph is the store’s own, holding only the canaries', async () => {
    const answer = await post(url, { query: 'SELECT ?o WHERE { ?s ?p ?o }' });
    assert.equal((answer.text.match(/CANARY-DEFAULT-\d/g) ?? []).length, 3);
    assert.doesNotMatch(answer.text, /Kettle/);
  });

  test('FROM and FROM NAMED are honoured', async () => {
    const named = await post(url, { query: `SELECT DISTINCT ?g FROM NAMED ${PUBLIC} WHERE { GRAPH ?g { ?s ?p ?o } }` });
    assert.equal(only(named), 'https://example.org/graphs/public');
    const none = await post(url, { query: `SELECT ?g FROM ${PUBLIC} WHERE { GRAPH ?g { ?s ?p ?o } }` });
    assert.deepEqual(JSON.parse(none.text).results.bindings, []);
    const defaultOnly = await post(url, { query: `SELECT ?o FROM ${PUBLIC} WHERE { ?s ?p ?o }` });
    assert.doesNotMatch(defaultOnly.text, /CANARY/);
  });

  test('an ASK over FROM <urn:x-sparql-guard:empty> is false', async () => {
    const answer = await post(url, {
      query:
        'ASK FROM <urn:x-sparql-guard:empty> FROM NAMED <urn:x-sparql-guard:empty> WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }',
    });
    assert.equal(answer.status, 200);
    assert.equal(JSON.parse(answer.text).boolean, false);
    const control = await post(url, { query: `ASK FROM ${PUBLIC} WHERE { ?s ?p ?o }` });
    assert.equal(JSON.parse(control.text).boolean, true);
  });

  test('default-graph-uri / named-graph-uri replace the query’s dataset (Protocol 2.1.4)', async () => {
    const replaced = await post(url, {
      query: `PREFIX ex: <https://example.org/ns#> SELECT (COUNT(*) AS ?n) FROM ${PUBLIC} WHERE { ?s ex:salary ?x }`,
      'default-graph-uri': 'https://example.org/graphs/people',
    });
    assert.equal(only(replaced), '6');
    // Only default-graph-uri given: the named graphs are empty, whatever the query says.
    const noNamed = await post(url, {
      query: `SELECT ?g FROM NAMED ${PUBLIC} WHERE { GRAPH ?g { ?s ?p ?o } }`,
      'default-graph-uri': 'https://example.org/graphs/people',
    });
    assert.deepEqual(JSON.parse(noNamed.text).results.bindings, []);
    const bad = await post(url, { query: 'ASK {}', 'default-graph-uri': '' });
    assert.equal(bad.status, 400);
  });

  test('SELECT answers in each results format', async () => {
    const query = `${PREFIXES} SELECT ?l FROM ${PUBLIC} WHERE { ?p rdfs:label ?l } ORDER BY ?l LIMIT 2`;
    const cases: Array<[string | undefined, string, RegExp]> = [
      [undefined, 'application/sparql-results+json', /"value":"Bed"/],
      ['*/*', 'application/sparql-results+json', /"bindings"/],
      ['application/sparql-results+json', 'application/sparql-results+json', /"head"/],
      ['application/sparql-results+xml', 'application/sparql-results+xml', /<sparql /],
      ['text/csv', 'text/csv', /^l\r\nBed\r\nChair\r\n$/],
      ['text/tab-separated-values', 'text/tab-separated-values', /^\?l\n"Bed"\n"Chair"\n?$/],
    ];
    for (const [accept, type, body] of cases) {
      const answer = await post(url, { query }, accept);
      assert.equal(answer.status, 200, `${accept}: ${answer.text}`);
      assert.equal(answer.contentType, type, String(accept));
      assert.match(answer.text, body, String(accept));
    }
  });

  test('ASK answers in JSON, XML and CSV', async () => {
    const query = `ASK FROM ${PUBLIC} WHERE { ?s ?p ?o }`;
    assert.equal(JSON.parse((await post(url, { query })).text).boolean, true);
    assert.match((await post(url, { query }, 'application/sparql-results+xml')).text, /<boolean>true<\/boolean>/);
    const csv = await post(url, { query }, 'text/csv');
    assert.equal(csv.contentType, 'text/csv');
    assert.match(csv.text, /true/);
  });

  test('CONSTRUCT and DESCRIBE answer Turtle by default, and each RDF format on request', async () => {
    const query = `${PREFIXES} CONSTRUCT { ?p rdfs:label ?l } FROM ${PUBLIC} WHERE { ?p rdfs:label ?l }`;
    const cases: Array<[string | undefined, string, RegExp]> = [
      [undefined, 'text/turtle', /"Kettle"/],
      ['*/*', 'text/turtle', /"Kettle"/],
      [
        'application/n-triples',
        'application/n-triples',
        /^<https:\/\/example\.org\/id\/product\d+> <http:\/\/www\.w3\.org\/2000\/01\/rdf-schema#label> "\w+" \.$/m,
      ],
      ['application/n-quads', 'application/n-quads', /"Kettle" \.$/m],
      ['application/rdf+xml', 'application/rdf+xml', /<rdf:RDF/],
    ];
    for (const [accept, type, body] of cases) {
      const answer = await post(url, { query }, accept);
      assert.equal(answer.status, 200, `${accept}: ${answer.text}`);
      assert.equal(answer.contentType, type, String(accept));
      assert.match(answer.text, body, String(accept));
      assert.equal((answer.text.match(/Kettle|Toaster|Lamp|Chair|Desk|Shelf|Rug|Mirror|Sofa|Bed/g) ?? []).length, 10);
    }
    const describe = await post(url, { query: `DESCRIBE <https://example.org/id/product1> FROM ${PUBLIC}` });
    assert.equal(describe.contentType, 'text/turtle');
    assert.match(describe.text, /Kettle/);
  });

  test('q-values decide, ties go to the first listed, q=0 refuses', async () => {
    const select = `SELECT * FROM ${PUBLIC} WHERE { ?s ?p ?o } LIMIT 1`;
    assert.equal(
      (await post(url, { query: select }, 'text/csv;q=0.5, application/sparql-results+xml')).contentType,
      'application/sparql-results+xml',
    );
    assert.equal((await post(url, { query: select }, 'text/csv;q=0.9, application/sparql-results+xml;q=0.2')).contentType, 'text/csv');
    assert.equal((await post(url, { query: select }, 'text/tab-separated-values, text/csv')).contentType, 'text/tab-separated-values');
    assert.equal((await post(url, { query: select }, 'text/csv;q=0')).status, 406);
    const construct = `CONSTRUCT WHERE { ?s ?p ?o }`;
    assert.equal(
      (await post(url, { query: construct }, 'application/rdf+xml;q=0.3, application/n-triples;q=0.8')).contentType,
      'application/n-triples',
    );
  });

  test('406 text/plain when nothing acceptable is offered', async () => {
    const select = await post(url, { query: 'SELECT * WHERE { ?s ?p ?o }' }, 'text/turtle');
    assert.equal(select.status, 406);
    assert.match(select.contentType ?? '', /^text\/plain/);
    const construct = await post(url, { query: 'CONSTRUCT WHERE { ?s ?p ?o }' }, 'application/sparql-results+json');
    assert.equal(construct.status, 406);
  });

  test('400 text/plain on a query error, with one line', async () => {
    const answer = await post(url, { query: 'SELECT * WHERE { ?s ?p }' });
    assert.equal(answer.status, 400);
    assert.match(answer.contentType ?? '', /^text\/plain/);
    assert.equal(answer.text.trim().split('\n').length, 1);
    assert.equal((await post(url, {})).status, 400);
    assert.equal((await post(url, { query: ['ASK {}', 'ASK {}'] })).status, 400);
  });

  test('GET ?query= and POST application/sparql-query are served too', async () => {
    const get = await fetch(`${url}?query=${encodeURIComponent(`ASK FROM ${PUBLIC} WHERE { ?s ?p ?o }`)}`);
    assert.equal(get.status, 200);
    assert.equal(((await get.json()) as { boolean: boolean }).boolean, true);
    const direct = await fetch(`${url}?default-graph-uri=${encodeURIComponent('https://example.org/graphs/research')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-query' },
      body: 'PREFIX ex: <https://example.org/ns#> SELECT (COUNT(*) AS ?n) WHERE { ?r a ex:Report }',
    });
    assert.equal(only({ status: direct.status, contentType: null, text: await direct.text() }), '3');
  });

  test('the store is read-only: updates are refused and change nothing', async () => {
    const insert = 'INSERT DATA { GRAPH <https://example.org/graphs/public> { <urn:x> <urn:y> "INSERTED" } }';
    assert.equal((await post(url, { query: insert })).status, 400);
    assert.equal((await post(url, { update: insert })).status, 400);
    const update = await fetch(url.replace(/\/query$/, '/update'), {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-update' },
      body: insert,
    });
    assert.equal(update.status, 404);
    assert.equal(
      (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-update' }, body: insert })).status,
      415,
    );
    assert.equal((await fetch(url, { method: 'PUT', body: 'x' })).status, 405);
    const check = await post(url, { query: 'ASK { GRAPH ?g { ?s ?p "INSERTED" } }' });
    assert.equal(JSON.parse(check.text).boolean, false);
  });

  test("a heavy query does not block the guard's event loop", async () => {
    const values = Array.from({ length: 150 }, (_, i) => i).join(' ');
    const heavy = `SELECT (COUNT(*) AS ?n) WHERE { VALUES ?a { ${values} } VALUES ?b { ${values} } VALUES ?c { ${values} } }`;
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    const started = Date.now();
    const answer = await post(url, { query: heavy });
    const tookMs = Date.now() - started;
    histogram.disable();
    assert.equal(only(answer), String(150 ** 3));
    const maxDelayMs = histogram.max / 1e6;
    // The query must be slow enough that running it on this thread would show.
    assert.ok(tookMs > 300, `query took only ${tookMs} ms; make it heavier`);
    // Run on this thread, the query would stall the loop for its whole duration; off it, the loop
    // keeps turning. Half the duration separates the two on any machine, however loaded.
    assert.ok(maxDelayMs < tookMs / 2, `event loop stalled ${maxDelayMs.toFixed(1)} ms during a ${tookMs} ms query`);
    console.log(`# heavy query ${tookMs} ms; main event loop max delay ${maxDelayMs.toFixed(1)} ms`);
  });
});

describe('startEmbeddedStore on fixture files', () => {
  test('loads .nq, .ttl and .nt; triples of .ttl and .nt go to the default graph', async () => {
    const store = await startEmbeddedStore({
      dataFiles: [`${FIXTURES}/small.nq`, `${FIXTURES}/small.ttl`, `${FIXTURES}/small.nt`],
    });
    try {
      const sum = (from: string): Promise<Answer> =>
        post(store.queryUrl, { query: `SELECT (SUM(?v) AS ?s) ${from} WHERE { ?x <https://example.org/ns#value> ?v }` });
      assert.equal(only(await sum('')), '103');
      assert.equal(only(await sum('FROM <https://example.org/graphs/fixture>')), '30');
    } finally {
      await store.stop();
    }
  });

  test('a file that does not parse stops the start with one line naming the file', async () => {
    const file = `${FIXTURES}/broken.trig`;
    await assert.rejects(startEmbeddedStore({ dataFiles: [demoDataFile(), file] }), (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.ok(e.message.startsWith(`cannot load ${file}: `), e.message);
      assert.doesNotMatch(e.message, /\n/);
      return true;
    });
  });

  test('a missing file and an unknown extension are refused by name', async () => {
    await assert.rejects(startEmbeddedStore({ dataFiles: [`${FIXTURES}/absent.trig`] }), {
      message: `cannot load ${FIXTURES}/absent.trig: no such file`,
    });
    await assert.rejects(startEmbeddedStore({ dataFiles: [`${FIXTURES}/data.csv`] }), /cannot load .*data\.csv: unknown extension/);
  });
});

describe('startEmbeddedStore lifecycle', () => {
  test('stop() frees the port', async () => {
    const store = await startEmbeddedStore({ dataFiles: [`${FIXTURES}/small.ttl`] });
    const port = Number(new URL(store.queryUrl).port);
    assert.equal((await post(store.queryUrl, { query: 'ASK {}' })).status, 200);
    await store.stop();
    await store.stop(); // twice is fine
    await assert.rejects(fetch(store.queryUrl, { method: 'POST' }));
    const probe = createServer();
    probe.listen(port, '127.0.0.1');
    await once(probe, 'listening');
    probe.close();
  });

  test('a worker killed by a WASM trap is replaced on the same URL and the failure is logged', async () => {
    const lines: string[] = [];
    const store = await startEmbeddedStore({
      dataFiles: [`${FIXTURES}/small.ttl`],
      log: (level, message) => lines.push(`${level}: ${message}`),
      onFatal: (error) => lines.push(`fatal: ${error.message}`),
    });
    try {
      // Oxigraph 0.5.11 overflows its WASM stack on a few thousand nested groups; the instance is
      // unusable afterwards (every later call fails), which is why the worker must be replaced.
      const deep = `SELECT * WHERE ${'{'.repeat(3000)} ?s ?p ?o ${'}'.repeat(3000)}`;
      const crashed = await post(store.queryUrl, { query: deep });
      assert.equal(crashed.status, 500);
      let answer: Answer | undefined;
      for (let attempt = 0; attempt < 50 && answer?.status !== 200; attempt++) {
        await new Promise((r) => setTimeout(r, 100));
        answer = await post(store.queryUrl, { query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }' }).catch(() => undefined);
      }
      assert.ok(answer);
      assert.equal(only(answer), '2');
      assert.ok(
        lines.some((l) => l.startsWith('error: embedded store worker exited')),
        lines.join('\n'),
      );
      assert.ok(
        lines.some((l) => l.startsWith('info: embedded store restarted')),
        lines.join('\n'),
      );
      assert.ok(!lines.some((l) => l.startsWith('fatal')), lines.join('\n'));
    } finally {
      await store.stop();
    }
  });
});

describe('startEmbeddedStore robustness', () => {
  test('a client that goes away mid-body does not take the worker down', async () => {
    const lines: string[] = [];
    const store = await startEmbeddedStore({
      dataFiles: [`${FIXTURES}/small.ttl`],
      log: (level, message) => lines.push(`${level}: ${message}`),
    });
    try {
      const { port } = new URL(store.queryUrl);
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(
        'POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nquery=ASK',
      );
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(JSON.parse((await post(store.queryUrl, { query: 'ASK { ?s ?p ?o }' })).text).boolean, true);
      assert.deepEqual(lines, []);
    } finally {
      await store.stop();
    }
  });
});

describe('the query time limit', () => {
  // Found by the rows oracle: a five-way cross product ran on after the guard had answered 502, and
  // every later query waited behind it in the worker until each timed out too.
  test('a query past it is stopped by replacing the worker; the next query is answered', { timeout: 30_000 }, async () => {
    const lines: string[] = [];
    const store = await startEmbeddedStore({
      dataFiles: [demoDataFile()],
      queryTimeoutMs: 300,
      log: (level, message) => lines.push(`${level}: ${message}`),
    });
    try {
      const endless =
        'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g1 { ?a ?b ?c } GRAPH ?g2 { ?d ?e ?f } GRAPH ?g3 { ?g ?h ?i } GRAPH ?g4 { ?j ?k ?l } GRAPH ?g5 { ?m ?x ?o } }';
      const started = Date.now();
      // The connection is cut when the worker goes: the fetch fails rather than answer.
      await assert.rejects(post(store.queryUrl, { query: endless }));
      const cutAfter = Date.now() - started;
      assert.ok(cutAfter >= 300 && cutAfter < 10_000, `cut after ${cutAfter} ms`);
      let answer: Answer | undefined;
      for (let attempt = 0; answer === undefined && attempt < 100; attempt++) {
        answer = await post(store.queryUrl, { query: 'ASK { GRAPH ?g { ?s ?p ?o } }' }).catch(async () => {
          await new Promise((r) => setTimeout(r, 100));
          return undefined;
        });
      }
      assert.equal(JSON.parse(answer?.text ?? '{}').boolean, true);
      assert.ok(
        lines.some((line) => /^error: embedded store worker spent over 300 ms on one query; replacing it$/.test(line)),
        lines.join('\n'),
      );
      assert.ok(
        lines.some((line) => /^info: embedded store restarted on 127\.0\.0\.1:/.test(line)),
        lines.join('\n'),
      );
      // A query within the limit runs to its end on the new worker.
      assert.equal(only(await post(store.queryUrl, { query: 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }' })) !== '0', true);
    } finally {
      await store.stop();
    }
  });
});

describe('demoDataFile', () => {
  test('is the absolute path of policies/demo.trig', () => {
    const file = demoDataFile();
    assert.ok(isAbsolute(file));
    assert.equal(file, resolve('policies/demo.trig'));
    assert.ok(existsSync(file));
  });
});
