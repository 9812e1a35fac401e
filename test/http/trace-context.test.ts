// W3C Trace Context through the guard: the caller's traceparent continued (or a new trace) to the store with the guard's own span as parent, its trace id in the log line; X-Request-Id.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readTraceContext } from '../../src/http/read-trace-context.js';
import { startStoreLink, type StoreLink } from '../helpers/start-store-link.js';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${PARENT}-01`;

describe('readTraceContext (Trace Context Level 1, section 3.2)', () => {
  it('continues a valid traceparent: same trace, a new span of the guard as the parent sent on', () => {
    const trace = readTraceContext(VALID);
    assert.equal(trace.traceId, TRACE);
    assert.equal(trace.parentId, PARENT);
    assert.match(trace.spanId, /^[0-9a-f]{16}$/);
    assert.notEqual(trace.spanId, PARENT);
    assert.equal(trace.headers.traceparent, `00-${TRACE}-${trace.spanId}-01`);
    assert.equal(readTraceContext(`00-${TRACE}-${PARENT}-00`).headers.traceparent.slice(-3), '-00', 'not sampled stays not sampled');
  });

  it('sends on only the sampled flag (the others are set to zero)', () => {
    assert.equal(readTraceContext(`00-${TRACE}-${PARENT}-ff`).flags, '01');
    assert.equal(readTraceContext(`00-${TRACE}-${PARENT}-fe`).flags, '00');
  });

  it('parses a later version by the fields it knows, and sends it on as version 00', () => {
    const trace = readTraceContext(`cc-${TRACE}-${PARENT}-01-what-the-future-holds`);
    assert.equal(trace.traceId, TRACE);
    assert.match(trace.headers.traceparent, new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
  });

  const invalid: Record<string, string> = {
    'all-zero trace id': `00-${'0'.repeat(32)}-${PARENT}-01`,
    'all-zero parent id': `00-${TRACE}-${'0'.repeat(16)}-01`,
    'version ff': `ff-${TRACE}-${PARENT}-01`,
    'upper-case hex': `00-${TRACE.toUpperCase()}-${PARENT}-01`,
    'version 00 with a fifth field': `${VALID}-00`,
    'a short trace id': `00-${TRACE.slice(1)}-${PARENT}-01`,
    'a short parent id': `00-${TRACE}-${PARENT.slice(1)}-01`,
    'a one-digit version': `0-${TRACE}-${PARENT}-01`,
    'two values joined by a repeated header': `${VALID}, ${VALID}`,
    'not hex': `00-${TRACE.slice(0, 31)}g-${PARENT}-01`,
    empty: '',
  };
  for (const [name, header] of Object.entries(invalid)) {
    it(`starts a new sampled trace for ${name}`, () => {
      const trace = readTraceContext(header);
      assert.notEqual(trace.traceId, TRACE);
      assert.match(trace.traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(trace.traceId, '0'.repeat(32));
      assert.equal(trace.parentId, undefined);
      assert.equal(trace.headers.traceparent, `00-${trace.traceId}-${trace.spanId}-01`);
    });
  }

  it('passes tracestate on with a continued trace only, and drops one over 512 characters', () => {
    assert.equal(readTraceContext(VALID, 'congo=t61rcWkgMzE').headers.tracestate, 'congo=t61rcWkgMzE');
    assert.equal(readTraceContext(undefined, 'congo=t61rcWkgMzE').headers.tracestate, undefined);
    assert.equal(readTraceContext(VALID, `a=${'x'.repeat(511)}`).headers.tracestate, undefined);
  });

  it('gives every request its own trace and span', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const trace = readTraceContext(undefined);
      ids.add(trace.traceId);
      ids.add(trace.spanId);
    }
    assert.equal(ids.size, 2000);
  });
});

describe('trace context and request id through the guard to a real store', () => {
  let store: TestGuard;
  let link: StoreLink;
  let t: TestGuard;
  before(async () => {
    // The integration data in the embedded Oxigraph; the link in front of it records what reached it.
    store = await startTestGuard();
    link = await startStoreLink(store.guard.upstreamUrl);
    t = await startTestGuard({ upstream: link.url });
  });
  after(async () => {
    await t?.close();
    await link?.close();
    await store?.close();
  });

  const ask = async (headers: Record<string, string>) => {
    const response = await fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT * WHERE { ?s ?p ?o } LIMIT 1')}`, {
      headers: { 'x-api-key': KEYS.beta, ...headers },
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    const received = link.received.at(-1)!;
    // The request's line is written when its response closes: wait for it.
    const requestId = response.headers.get('x-request-id')!;
    for (let i = 0; i < 100 && !t.logs.some((line) => line.requestId === requestId); i++) await new Promise((r) => setTimeout(r, 10));
    const line = t.logs.find((each) => each.requestId === requestId);
    return { received, requestId, line };
  };

  it("carries the caller's trace to the store with the guard's span as parent, and logs its trace id", async () => {
    const { received, line, requestId } = await ask({ traceparent: VALID, tracestate: 'congo=t61rcWkgMzE' });
    const sent = String(received.traceparent);
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent);
    assert.ok(match, sent);
    assert.equal(match[1], TRACE);
    assert.notEqual(match[2], PARENT, "the store's parent is the guard's span, not the caller's");
    assert.equal(received.tracestate, 'congo=t61rcWkgMzE');
    assert.equal(line?.traceId, TRACE);
    // The request id is the guard's span id: the store's parent span.
    assert.equal(requestId, match[2]);
  });

  it('starts a trace for a caller without one, or with an invalid one, and sends it to the store', async () => {
    for (const headers of [{}, { traceparent: `00-${'0'.repeat(32)}-${PARENT}-01` }] as Record<string, string>[]) {
      const { received, line } = await ask(headers);
      const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(received.traceparent));
      assert.ok(match);
      assert.notEqual(match[1], '0'.repeat(32));
      assert.equal(line?.traceId, match[1]);
      assert.equal(received.tracestate, undefined);
    }
  });

  it("sends X-Request-Id back on every answer, its own unless trustRequestId, and ignores the client's", async () => {
    const { requestId } = await ask({ 'x-request-id': 'from-the-client' });
    assert.match(requestId, /^[0-9a-f]{16}$/);
    const refused = await fetch(`${t.endpoint}?query=ASK%20%7B%7D`, { headers: { 'x-api-key': 'wrong' } });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('x-request-id') ?? '', /^[0-9a-f]{16}$/);
    await refused.arrayBuffer();
    const trusting = await startTestGuard({ trustRequestId: true });
    try {
      const kept = await fetch(`${trusting.endpoint}?query=${encodeURIComponent('ASK {}')}`, { headers: { 'x-request-id': 'lb-7f3a:1' } });
      assert.equal(kept.headers.get('x-request-id'), 'lb-7f3a:1');
      await kept.arrayBuffer();
      const odd = await fetch(`${trusting.endpoint}?query=${encodeURIComponent('ASK {}')}`, { headers: { 'x-request-id': 'has space' } });
      assert.match(odd.headers.get('x-request-id') ?? '', /^[0-9a-f]{16}$/, 'an id with characters outside the set is replaced');
      await odd.arrayBuffer();
    } finally {
      await trusting.close();
    }
  });
});
