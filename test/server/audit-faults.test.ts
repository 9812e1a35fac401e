// Audit records of requests that end in faults: one record per request, with the decision, status and outcome that happened.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startStoreLink, type StoreLink } from '../helpers/start-store-link.js';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

type AuditRecord = Record<string, unknown> & { durationMs: { total: number; store: number | null } };

function readRecords(file: string): AuditRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditRecord);
}

describe('audit records of a query whose client left before it was sent', () => {
  let folder: string;
  let store: TestGuard;
  let link: StoreLink;
  let t: TestGuard;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-faults-'));
    store = await startTestGuard();
    link = await startStoreLink(store.guard.upstreamUrl);
    // Slower than timeoutMs: the dataset check at start is left unverified, so each query waits for a check first.
    link.delayMs = 1500;
    t = await startTestGuard({ upstream: link.url, timeoutMs: 1000, audit: { file: join(folder, 'audit.jsonl') } });
  });
  after(async () => {
    await t?.close();
    await link?.close();
    await store?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('is not recorded as allowed: the store never ran it, so no graph was read', async () => {
    const traceId = 'c0ffee00c0ffee00c0ffee00c0ffee01';
    const leaving = new AbortController();
    const asked = fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT ?s WHERE { ?s ?p ?o }')}`, {
      headers: { 'x-api-key': KEYS.beta, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      signal: leaving.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    leaving.abort();
    await assert.rejects(asked);
    await new Promise((resolve) => setTimeout(resolve, 1800));
    assert.equal(
      link.received.filter((headers) => String(headers['traceparent'] ?? '').includes(traceId)).length,
      0,
      'the query never reached the store',
    );
    const found = readRecords(join(folder, 'audit.jsonl')).filter((record) => record.traceId === traceId);
    assert.equal(found.length, 1, 'one record');
    const record = found[0]!;
    assert.deepEqual([record.status, record.outcome, record.durationMs.store], [499, 'client-closed', null]);
    // "Who read graph G" selects decision allowed: this record named graphs a, b as read.
    assert.notEqual(record.decision, 'allowed');
  });
});

describe('audit records of a query the store was asked and never answered', () => {
  let folder: string;
  let store: TestGuard;
  let link: StoreLink;
  let t: TestGuard;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-faults-'));
    store = await startTestGuard();
    link = await startStoreLink(store.guard.upstreamUrl);
    t = await startTestGuard({ upstream: link.url, timeoutMs: 1000, audit: { file: join(folder, 'audit.jsonl') } });
  });
  after(async () => {
    await t?.close();
    await link?.close();
    await store?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const recordOf = async (traceId: string): Promise<AuditRecord> => {
    await new Promise((resolve) => setTimeout(resolve, 80));
    const found = readRecords(join(folder, 'audit.jsonl')).filter((record) => record.traceId === traceId);
    assert.equal(found.length, 1, 'one record');
    assert.equal(
      link.received.filter((headers) => String(headers['traceparent'] ?? '').includes(traceId)).length,
      1,
      'the store was asked',
    );
    return found[0]!;
  };

  it('says the store was asked (durationMs.store is not null) when it timed out', async () => {
    const traceId = 'c0ffee00c0ffee00c0ffee00c0ffee02';
    link.delayMs = 1600;
    try {
      const response = await fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT ?s WHERE { ?s ?p ?o }')}`, {
        headers: { 'x-api-key': KEYS.beta, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      });
      await response.arrayBuffer();
      assert.equal(response.status, 502);
    } finally {
      link.delayMs = 0;
    }
    const record = await recordOf(traceId);
    assert.deepEqual([record.decision, record.code], ['failed', 'upstream_failed']);
    // null reads "nothing was sent" (docs/audit.md): the store had the query for the whole time-out.
    assert.notEqual(record.durationMs.store, null);
  });

  it('says the store was asked when the client left while it worked', async () => {
    const traceId = 'c0ffee00c0ffee00c0ffee00c0ffee03';
    link.delayMs = 600;
    try {
      const leaving = new AbortController();
      const asked = fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT ?s WHERE { ?s ?p ?o }')}`, {
        headers: { 'x-api-key': KEYS.beta, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        signal: leaving.signal,
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      leaving.abort();
      await assert.rejects(asked);
      await new Promise((resolve) => setTimeout(resolve, 700));
    } finally {
      link.delayMs = 0;
    }
    const record = await recordOf(traceId);
    assert.deepEqual([record.decision, record.status, record.outcome], ['allowed', 499, 'client-closed']);
    assert.notEqual(record.durationMs.store, null);
  });
});
