// Fail closed: a store that ignores FROM / FROM NAMED (Oxigraph with union-default-graph) gets no query at all.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { GuardError } from '../../src/guard-error.js';
import { checkDatasetSupport, createDatasetGate } from '../../src/upstream/check-dataset-support.js';
import { UpstreamError, type Upstream } from '../../src/upstream/create-upstream.js';
import { absentRigStores, send, startSecurityGuard, storesUnderTest } from '../helpers/rig-stores.js';

/** A store that answers every ASK with true: what a store ignoring the dataset answers over the empty graph. */
function startUnionStub(): Promise<{ server: Server; url: string; queries: string[] }> {
  const queries: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      queries.push(new URLSearchParams(body).get('query') ?? '');
      response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
      response.end('{"head":{},"boolean":true}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/query`, queries }),
    ),
  );
}

describe('a store that ignores the dataset is refused at start', () => {
  let stub: Awaited<ReturnType<typeof startUnionStub>>;
  before(async () => {
    stub = await startUnionStub();
  });
  after(() => new Promise<void>((resolve) => stub.server.close(() => resolve())));

  it('startGuard rejects with one clear line, and the store saw only the two ASK probes', async () => {
    await assert.rejects(startSecurityGuard({ name: 'union-stub', queryUrl: stub.url }), (error: Error) => {
      assert.match(error.message, /ignores FROM \/ FROM NAMED/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
    assert.equal(stub.queries.length, 2);
    for (const query of stub.queries) assert.match(query, /^ASK\nFROM <urn:x-sparql-guard:empty>\nFROM NAMED <urn:x-sparql-guard:empty>\n/);
  });

  const unionUrl = process.env.RIG_OXIGRAPH_UNION_QUERY;
  it(
    'the rig Oxigraph with --union-default-graph is refused',
    { skip: unionUrl ? false : 'RIG_OXIGRAPH_UNION_QUERY is not set' },
    async () => {
      await assert.rejects(startSecurityGuard({ name: 'oxigraph-union', queryUrl: unionUrl }), /ignores FROM \/ FROM NAMED/);
    },
  );
});

describe('stores that honour the dataset pass the check', () => {
  for (const { name, skip } of absentRigStores()) it(`${name}: /readyz is 200 ok`, { skip }, () => {});
  for (const store of storesUnderTest(true)) {
    it(`${store.name}: /readyz is 200 ok`, async () => {
      const guard = await startSecurityGuard(store);
      try {
        const ready = await fetch(`${guard.guard.url}/readyz`);
        assert.equal(ready.status, 200);
        assert.equal(await ready.text(), 'ok');
      } finally {
        await guard.close();
      }
    });
  }
});

describe('an unreachable store', () => {
  it('starts the guard, alive (/healthz) but not ready (/readyz says why), and a query is a 502', async () => {
    const guard = await startSecurityGuard({ name: 'closed', queryUrl: 'http://127.0.0.1:1/query' });
    try {
      const health = await fetch(`${guard.guard.url}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(await health.text(), 'ok');
      const ready = await fetch(`${guard.guard.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(await ready.text(), /upstream not verified: upstream unreachable/);
      const answer = await send(guard.endpoint, 'ASK {}');
      assert.equal(answer.status, 502);
      assert.ok(guard.logs.some((line) => line.event === 'upstream-dataset-check' && line.verdict === 'unverified'));
    } finally {
      await guard.close();
    }
  });
});

describe('the gate follows the store', () => {
  /** Fakes only the transport, to force the store to change its behaviour between two checks. */
  function fakeUpstream(state: {
    ignoring: boolean;
    sent: string[];
    server?: string;
    down?: boolean;
    ignoringFilters?: boolean;
  }): Upstream {
    return {
      store: 'http://fake.example/sparql',
      async send({ query }) {
        state.sent.push(query);
        if (state.down === true) throw new UpstreamError('refused', 'upstream refused the connection');
        const empty = !/WHERE \{ \}$/.test(query);
        const filtered = /sameTerm/.test(query);
        const body = new PassThrough();
        body.end(JSON.stringify({ boolean: filtered ? state.ignoringFilters === true : empty ? state.ignoring : true }));
        return {
          status: 200,
          contentType: 'application/sparql-results+json',
          cacheControl: undefined,
          contentLength: undefined,
          server: state.server,
          body,
          timeoutMs: 60_000,
          takeWhole: () => undefined,
        };
      },
      close: async () => undefined,
    };
  }

  it('a store that starts ignoring FROM is caught by the next /readyz check, and queries stop', async () => {
    const state = { ignoring: false, sent: [] as string[] };
    const logs: Record<string, unknown>[] = [];
    const gate = createDatasetGate(fakeUpstream(state), { checkTimeoutMs: 1000, recheckMs: 0, log: (line) => logs.push({ ...line }) });
    assert.equal((await gate.start()).kind, 'honoured');
    await gate.admit(new AbortController().signal);
    state.ignoring = true;
    assert.match((await gate.problem()) ?? '', /ignores FROM/);
    await assert.rejects(
      gate.admit(new AbortController().signal)!,
      (error: GuardError) => error.status === 503 && /no query is forwarded/.test(error.message),
    );
    assert.ok(
      state.sent.every((query) => query.startsWith('ASK\nFROM <urn:x-sparql-guard:empty>')),
      'only probes were sent',
    );
    assert.ok(logs.some((line) => line.verdict === 'ignored'));
    state.ignoring = false;
    assert.equal(await gate.problem(), undefined, 'a store that is fixed is used again');
    await gate.admit(new AbortController().signal);
  });

  it("the store's own time-out during the check names the check, as the check's bound does (they race at equal times)", async () => {
    const timedOut: Upstream = {
      store: 'http://fake.example/sparql',
      send: () => Promise.reject(new UpstreamError('timeout', 'upstream did not answer within 500 ms', 'timeout')),
      close: async () => undefined,
    };
    const found = await checkDatasetSupport(timedOut, new AbortController().signal);
    assert.equal(found.kind, 'unverified');
    assert.equal(found.kind === 'unverified' ? found.error.message : '', 'upstream did not answer the dataset check within 500 ms');
  });

  it('a store unreachable after it passed keeps /readyz at 200 (only a definite verdict replaces a good one); queries get its failure', async () => {
    const state = { ignoring: false, sent: [] as string[], down: false };
    const gate = createDatasetGate(fakeUpstream(state), { checkTimeoutMs: 1000, recheckMs: 0, log: () => undefined });
    assert.equal((await gate.start()).kind, 'honoured');
    state.down = true;
    const probes = state.sent.length;
    assert.equal(await gate.problem(), undefined);
    assert.ok(state.sent.length > probes, 'the store was asked again');
    assert.equal(gate.verdict(), 'honoured');
    assert.equal(gate.admit(new AbortController().signal), undefined, 'queries go on to the store, whose failure they get');
    gate.close();
  });

  it('rowChecks "exists" in front of a store that says it is Virtuoso: refused at start, one line naming the fix; "join" is served', async () => {
    // The store's own words (Virtuoso 07.20.3229 sends this Server header); Oxigraph and Jena send none.
    const server = 'Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu  ';
    const log = () => undefined;
    const exists = createDatasetGate(fakeUpstream({ ignoring: false, sent: [], server }), {
      checkTimeoutMs: 1000,
      recheckMs: 0,
      log,
      rowChecks: 'exists',
    });
    const refused = await exists.start();
    assert.equal(refused.kind, 'ignored');
    assert.match(
      refused.kind === 'ignored' ? `${refused.reason}: ${refused.fix}` : '',
      /^the upstream store says it is Virtuoso \(Server: Virtuoso\/07\.20\.3229[^\n]*\), which drops FILTER\(EXISTS\) inside OPTIONAL, the form of rowChecks "exists": set rowChecks to "join"$/,
    );
    for (const rowChecks of ['join', undefined] as const) {
      const gate = createDatasetGate(fakeUpstream({ ignoring: false, sent: [], server }), {
        checkTimeoutMs: 1000,
        recheckMs: 0,
        log,
        ...(rowChecks && { rowChecks }),
      });
      assert.equal((await gate.start()).kind, 'honoured', String(rowChecks));
      gate.close();
    }
    const other = createDatasetGate(fakeUpstream({ ignoring: false, sent: [] }), {
      checkTimeoutMs: 1000,
      recheckMs: 0,
      log,
      rowChecks: 'exists',
    });
    assert.equal((await other.start()).kind, 'honoured', 'a store without a Server header');
    other.close();
  });

  it('datasetForm: "auto" sends graph filters to a store that says it is Virtuoso and holds a GRAPH to its filter, else the clauses; a fixed form fails closed', async () => {
    const virtuoso = 'Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu';
    const entries: Record<string, unknown>[] = [];
    const gateOf = (state: Parameters<typeof fakeUpstream>[0], datasetForm?: 'auto' | 'clauses' | 'graph-filters') =>
      createDatasetGate(fakeUpstream(state), {
        checkTimeoutMs: 1000,
        recheckMs: 0,
        log: (entry) => entries.push(entry),
        ...(datasetForm && { datasetForm }),
      });
    for (const [server, datasetForm, ignoringFilters, verdict, graphFilters, probes] of [
      [virtuoso, 'auto', false, 'honoured', true, 3],
      [' virtuoso/08.03', 'auto', false, 'honoured', true, 3],
      [virtuoso, 'auto', true, 'honoured', false, 3],
      [undefined, 'auto', false, 'honoured', false, 2],
      ['Jetty(10.0.15)', 'auto', false, 'honoured', false, 2],
      ['nginx (Virtuoso behind)', 'auto', false, 'honoured', false, 2],
      [virtuoso, 'clauses', true, 'honoured', false, 2],
      [virtuoso, undefined, true, 'honoured', false, 2],
      [undefined, 'graph-filters', false, 'honoured', true, 3],
      [undefined, 'graph-filters', true, 'ignored', false, 3],
    ] as const) {
      const state = { ignoring: false, sent: [] as string[], ignoringFilters, ...(server !== undefined && { server }) };
      const gate = gateOf(state, datasetForm);
      const found = await gate.start();
      const what = `${server} ${datasetForm} ${ignoringFilters}`;
      assert.equal(found.kind, verdict, what);
      assert.equal(gate.graphFilters(), graphFilters, what);
      assert.equal(state.sent.length, probes, what);
      if (found.kind === 'ignored') {
        assert.equal(
          `${found.reason}: ${found.fix}`,
          'the upstream store reads past a sameTerm filter on GRAPH ?g (an ASK held to the reserved empty graph found data), the form of datasetForm "graph-filters": set datasetForm to "clauses"',
        );
      } else {
        assert.deepEqual(
          entries.at(-1),
          { event: 'upstream-dataset-check', verdict: 'honoured', datasetForm: graphFilters ? 'graph-filters' : 'clauses' },
          what,
        );
      }
      gate.close();
    }
  });

  it('datasetForm "auto": a store that starts reading past the graph filter gets the clauses from the next check on, and the line says so', async () => {
    const entries: Record<string, unknown>[] = [];
    const state = { ignoring: false, sent: [] as string[], server: 'Virtuoso/07.20.3229', ignoringFilters: false };
    const gate = createDatasetGate(fakeUpstream(state), {
      checkTimeoutMs: 1000,
      recheckMs: 0,
      log: (entry) => entries.push(entry),
      datasetForm: 'auto',
    });
    await gate.start();
    assert.equal(gate.graphFilters(), true);
    state.ignoringFilters = true;
    assert.equal(await gate.problem(), undefined);
    assert.equal(gate.graphFilters(), false);
    assert.deepEqual(entries, [
      { event: 'upstream-dataset-check', verdict: 'honoured', datasetForm: 'graph-filters' },
      { event: 'upstream-dataset-check', verdict: 'honoured', datasetForm: 'clauses' },
    ]);
    gate.close();
  });

  it('one client leaving during the shared check does not fail the others waiting on it', async () => {
    // A store that takes 100 ms to answer and gives up when its request's signal aborts, as undici does.
    const slow: Upstream = {
      store: 'http://slow.example/sparql',
      send: ({ query }, { signal }) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => {
            const body = new PassThrough();
            body.end(JSON.stringify({ boolean: /WHERE \{ \}$/.test(query) }));
            resolve({
              status: 200,
              contentType: 'application/sparql-results+json',
              cacheControl: undefined,
              contentLength: undefined,
              server: undefined,
              body,
              timeoutMs: 60_000,
              takeWhole: () => undefined,
            });
          }, 100);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new GuardError(502, 'upstream_failed', 'upstream request aborted by the client'));
          });
        }),
      close: async () => undefined,
    };
    // Not started: the verdict is "unverified", so the first queries run the check themselves.
    const gate = createDatasetGate(slow, { checkTimeoutMs: 2000, recheckMs: 60_000, log: () => undefined });
    const leaving = new AbortController();
    const first = gate.admit(leaving.signal);
    const second = gate.admit(new AbortController().signal);
    leaving.abort();
    await assert.rejects(first!, (error: GuardError) => error.status === 502);
    await second; // admitted: the check finished for it although the first client left
    assert.equal(await gate.problem(), undefined);
  });
});
