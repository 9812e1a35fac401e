// W3C Trace Context through the guard: the caller's traceparent continued (or a new trace) to the store with the guard's own span as parent, its trace id in the log line; X-Request-Id.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request as httpRequest } from 'node:http';
import { readTraceContext, readTraceState } from '../../src/http/read-trace-context.js';
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

  it('gives every request its own trace and span', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const trace = readTraceContext(undefined);
      ids.add(trace.traceId);
      ids.add(trace.spanId);
    }
    assert.equal(ids.size, 2000);
  });

  it('passes tracestate on with a continued trace only', () => {
    assert.equal(readTraceContext(VALID, 'congo=t61rcWkgMzE').headers.tracestate, 'congo=t61rcWkgMzE');
    assert.equal(readTraceContext(undefined, 'congo=t61rcWkgMzE').headers.tracestate, undefined);
    assert.equal(readTraceContext(`00-${'0'.repeat(32)}-${PARENT}-01`, 'congo=t61rcWkgMzE').headers.tracestate, undefined);
  });
});

describe('readTraceState (Trace Context, section 3.3)', () => {
  it('keeps valid members in order, without empty members or the spaces and tabs around members', () => {
    assert.equal(readTraceState('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.equal(readTraceState(' \tfoo=1 \t, ,\t bar=2 ,'), 'foo=1,bar=2');
    assert.equal(readTraceState('foo= leading'), 'foo= leading', 'leading spaces are part of a value');
    assert.equal(readTraceState('foo=1,foo=2'), 'foo=1,foo=2', "duplicates are the sender's to drop");
    assert.equal(readTraceState('t@v=1,foo@=2,a@@b=3,0x=4'), 't@v=1,foo@=2,a@@b=3,0x=4');
    assert.equal(readTraceState(''), undefined);
    assert.equal(readTraceState(' , '), undefined);
  });

  it('discards the whole header when a member breaks the grammar or there are more than 32', () => {
    for (const value of [
      'foo =1',
      'FOO=1',
      'foo.bar=1',
      '@foo=1',
      `${'z'.repeat(257)}=1`,
      'foo=bar=baz',
      'foo=',
      'foo',
      'foo=a\tb',
      'foo=é',
    ]) {
      assert.equal(readTraceState(`ok=1,${value}`), undefined, value);
    }
    const members = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=${i}`).join(',');
    assert.equal(readTraceState(members(32)), members(32));
    assert.equal(readTraceState(members(33)), undefined);
  });

  it('over 512 characters, drops whole members: those over 128 characters first, then from the end', () => {
    const long = `long=${'x'.repeat(200)}`;
    const short = Array.from({ length: 20 }, (_, i) => `k${String(i).padStart(2, '0')}=${'v'.repeat(20)}`);
    const kept = readTraceState([long, ...short].join(',')) ?? '';
    assert.equal(kept, short.slice(0, 20).join(','), 'the long member goes first (20 short ones fit)');
    const many = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}=${'v'.repeat(20)}`);
    const cut = readTraceState(many.join(',')) ?? '';
    assert.ok(cut.length <= 512 && cut.length > 480, String(cut.length));
    assert.ok(many.join(',').startsWith(cut), 'members go from the end');
    assert.equal(readTraceState(`a=${'x'.repeat(255)},b=${'y'.repeat(255)},c=1`), `a=${'x'.repeat(255)},c=1`, 'only as many go as must');
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

/**
 * The cases of the W3C Trace Context test suite (w3c/trace-context, test/test.py, strict level 2),
 * sent to the guard with each header as written (repeated headers as separate lines), and judged
 * where the harness judges a service: on the request it makes next, here the one the store gets.
 */
describe('the W3C Trace Context test suite, through the guard to a real store', () => {
  let store: TestGuard;
  let link: StoreLink;
  let t: TestGuard;
  before(async () => {
    store = await startTestGuard();
    link = await startStoreLink(store.guard.upstreamUrl);
    t = await startTestGuard({ upstream: link.url });
  });
  after(async () => {
    await t?.close();
    await link?.close();
    await store?.close();
  });

  const T = '12345678901234567890123456789012';
  const P = '1234567890123456';
  const SAMPLE = `00-${T}-${P}-00`;

  /** Sends `headers` (name, value pairs, in order, repeats kept) and returns the store's traceparent and tracestate. */
  const send = (
    headers: readonly (readonly [string, string])[],
  ): Promise<{ traceId: string; parentId: string; state: Map<string, string> | undefined }> =>
    new Promise((resolve, reject) => {
      const before = link.received.length;
      const url = new URL(`${t.endpoint}?query=${encodeURIComponent('ASK {}')}`);
      // Raw headers: node adds no Host of its own to them.
      const raw = [['host', url.host] as const, ['x-api-key', KEYS.beta] as const, ...headers].flat();
      const req = httpRequest(url, { method: 'GET', headers: raw }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode !== 200 || link.received.length !== before + 1) return reject(new Error(`status ${response.statusCode}`));
          const received = link.received.at(-1)!;
          const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(received.traceparent));
          if (match === null) return reject(new Error(`traceparent ${String(received.traceparent)}`));
          const value = received.tracestate;
          const state =
            value === undefined
              ? undefined
              : new Map(
                  String(value)
                    .split(',')
                    .map((member) => member.trim().split('=') as [string, string]),
                );
          resolve({ traceId: match[1]!, parentId: match[2]!, state });
        });
      });
      req.on('error', reject);
      req.end();
    });

  it('continues a valid traceparent with a new parent id, in any casing of the name, with spaces and tabs around it', async () => {
    for (const name of ['traceparent', 'TraceParent', 'TRACEPARENT']) {
      const sent = await send([[name, `00-${T}-${P}-01`]]);
      assert.equal(sent.traceId, T);
      assert.notEqual(sent.parentId, P);
    }
    for (const value of [` 00-${T}-${P}-01`, `\t00-${T}-${P}-01`, `00-${T}-${P}-01 `, `00-${T}-${P}-01\t`, `\t 00-${T}-${P}-01 \t`]) {
      assert.equal((await send([['traceparent', value]])).traceId, T, JSON.stringify(value));
    }
    for (const value of [`cc-${T}-${P}-01`, `cc-${T}-${P}-01-what-the-future-will-be-like`]) {
      assert.equal((await send([['traceparent', value]])).traceId, T, value);
    }
  });

  it('starts a new trace for a traceparent it cannot read, or one sent twice, or under another name', async () => {
    const invalid = [
      `00-${T}-${P}-01.`,
      `00-${T}-${P}-01-what-the-future-will-be-like`,
      `cc-${T}-${P}-01.what-the-future-will-be-like`,
      `ff-${T}-${P}-01`,
      `.0-${T}-${P}-01`,
      `0.-${T}-${P}-01`,
      `000-${T}-${P}-01`,
      `0-${T}-${P}-01`,
      `00-${'0'.repeat(32)}-${P}-01`,
      `00-.${T.slice(1)}-${P}-01`,
      `00-${T}3-${P}-01`,
      `00-${T.slice(1)}-${P}-01`,
      `00-${T}-${'0'.repeat(16)}-01`,
      `00-${T}-.${P.slice(1)}-01`,
      `00-${T}-${P}7-01`,
      `00-${T}-${P.slice(1)}-01`,
      `00-${T}-${P}-.0`,
      `00-${T}-${P}-001`,
      `00-${T}-${P}-1`,
    ];
    for (const value of invalid) assert.notEqual((await send([['traceparent', value]])).traceId, T, value);
    const twice = await send([
      ['traceparent', `00-${T.slice(0, 31)}1-${P}-01`],
      ['traceparent', `00-${T}-${P}-01`],
    ]);
    assert.ok(![T, `${T.slice(0, 31)}1`].includes(twice.traceId));
    // node joins the two lines with ", ": a later version's extra fields swallowed the second one.
    const twiceLater = await send([
      ['traceparent', `cc-${T}-${P}-01-what-the-future-will-be-like`],
      ['traceparent', `cc-${T.slice(0, 31)}1-${P}-01`],
    ]);
    assert.ok(![T, `${T.slice(0, 31)}1`].includes(twiceLater.traceId), 'two traceparent headers of a later version');
    for (const name of ['trace-parent', 'trace.parent']) assert.notEqual((await send([[name, `00-${T}-${P}-01`]])).traceId, T, name);
  });

  it('passes tracestate on with its trace: repeated headers combined in order, empty ones and spaces dropped, duplicates kept', async () => {
    assert.equal((await send([['tracestate', 'foo=1']])).state, undefined, 'no traceparent: no tracestate');
    assert.equal(
      (
        await send([
          ['traceparent', SAMPLE],
          ['trace-state', 'foo=1'],
        ])
      ).state,
      undefined,
    );
    assert.deepEqual(
      [
        ...((
          await send([
            ['traceparent', SAMPLE],
            ['TraceState', 'foo=1,bar=2'],
          ])
        ).state ?? []),
      ],
      [
        ['foo', '1'],
        ['bar', '2'],
      ],
    );
    assert.equal(
      (
        await send([
          ['traceparent', SAMPLE],
          ['tracestate', ''],
        ])
      ).state,
      undefined,
    );
    for (const headers of [
      [
        ['tracestate', 'foo=1'],
        ['tracestate', ''],
      ],
      [
        ['tracestate', ''],
        ['tracestate', 'foo=1'],
      ],
    ] as const) {
      assert.equal((await send([['traceparent', SAMPLE], ...headers])).state?.get('foo'), '1');
    }
    const combined = await send([
      ['traceparent', SAMPLE],
      ['tracestate', 'foo=1,bar=2'],
      ['tracestate', 'rojo=1,congo=2'],
      ['tracestate', 'baz=3'],
    ]);
    assert.deepEqual([...(combined.state?.keys() ?? [])], ['foo', 'bar', 'rojo', 'congo', 'baz']);
    for (const value of ['foo=1 \t , \t bar=2, \t baz=3', 'foo=1\t \t,\t \tbar=2,\t \tbaz=3']) {
      assert.deepEqual(
        [
          ...((
            await send([
              ['traceparent', SAMPLE],
              ['tracestate', value],
            ])
          ).state ?? []),
        ],
        [
          ['foo', '1'],
          ['bar', '2'],
          ['baz', '3'],
        ],
      );
    }
    for (const value of [' foo=1', '\tfoo=1', 'foo=1 ', 'foo=1\t', '\t foo=1 \t']) {
      assert.equal(
        (
          await send([
            ['traceparent', SAMPLE],
            ['tracestate', value],
          ])
        ).state?.get('foo'),
        '1',
        JSON.stringify(value),
      );
    }
    assert.equal(
      (
        await send([
          ['traceparent', SAMPLE],
          ['tracestate', 'foo=1,foo=1'],
        ])
      ).state?.get('foo'),
      '1',
    );
    assert.ok(
      ['1', '2'].includes(
        (
          await send([
            ['traceparent', SAMPLE],
            ['tracestate', 'foo=1'],
            ['tracestate', 'foo=2'],
          ])
        ).state?.get('foo') ?? '',
      ),
    );
  });

  it('keeps every character the grammar allows, every key form, 32 members and keys of 256 characters', async () => {
    const key = `${'abcdefghijklmnopqrstuvwxyz'}0123456789_-*/`;
    const value = [
      [0x20, 0x2b],
      [0x2d, 0x3c],
      [0x3e, 0x7e],
    ]
      .map(([from, to]) => String.fromCharCode(...Array.from({ length: to! - from! + 1 }, (_, i) => from! + i)))
      .join('');
    for (const k of [key, `${key}@a-z0-9_-*/`]) {
      const state = await send([
        ['traceparent', SAMPLE],
        ['tracestate', `${k}=${value}`],
      ]);
      assert.equal(state.state?.get(k), value);
    }
    for (const k of ['foo@', 'foo@@bar', 'foo@bar@baz']) {
      const state = (
        await send([
          ['traceparent', SAMPLE],
          ['tracestate', `${k}=1,bar=2`],
        ])
      ).state;
      assert.equal(state?.get(k), '1', k);
      assert.equal(state?.get('bar'), '2', k);
    }
    const members = Array.from({ length: 32 }, (_, i) => `bar${String(i + 1).padStart(2, '0')}=${String(i + 1).padStart(2, '0')}`);
    const headers = [0, 10, 20, 30].map((from) => ['tracestate', members.slice(from, from + 10).join(',')] as const);
    assert.equal((await send([['traceparent', SAMPLE], ...headers])).state?.size, 32);
    const long = await send([
      ['traceparent', SAMPLE],
      ['tracestate', 'foo=1'],
      ['tracestate', `${'z'.repeat(256)}=1`],
    ]);
    assert.equal(long.state?.get('foo'), '1');
  });

  it('discards a tracestate that breaks the grammar: key characters, an @ first, 33 members, a key of 257, a value with = or none', async () => {
    const broken: (readonly [string, string])[][] = [
      [['tracestate', 'foo =1']],
      [['tracestate', 'FOO=1']],
      [['tracestate', 'foo.bar=1']],
      [['tracestate', '@foo=1,bar=2']],
      [
        ['tracestate', 'foo=1'],
        ['tracestate', `${'z'.repeat(257)}=1`],
      ],
      [['tracestate', 'foo=bar=baz']],
      [['tracestate', 'foo=,bar=3']],
      [['tracestate', Array.from({ length: 33 }, (_, i) => `bar${i + 1}=${i + 1}`).join(',')]],
    ];
    for (const headers of broken) {
      const sent = await send([['traceparent', SAMPLE], ...headers]);
      assert.equal(sent.traceId, T);
      assert.equal(sent.state, undefined, JSON.stringify(headers));
    }
  });
});
