// Audit records of queries the store fails, cuts or drips, and of clients that leave mid-answer: one record per request,
// its status, outcome, code and trace the ones of the request log line, and the metrics moved once under the same code.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startFaultyStore, type FaultyStore, type StoreMode } from './start-faulty-store.js';

interface AuditRecord {
  requestId: string;
  traceId: string;
  decision: string;
  status: number;
  outcome: string;
  code: string | null;
  bytes: number;
  dataset: unknown;
  durationMs: { total: number; store: number | null };
}

/** sparql_guard_upstream_retries_total over both reasons, in a scrape. */
function retriesIn(text: string): number {
  return ['closed', 'reset']
    .map((reason) => text.split('\n').find((line) => line.startsWith(`sparql_guard_upstream_retries_total{reason="${reason}"} `)))
    .reduce((sum, line) => sum + (line === undefined ? 0 : Number(line.split(' ')[1])), 0);
}

/** Sends one query; `leaveAfterMs` closes the connection that long after the answer's headers came. */
function ask(guard: TestGuard, traceId: string, leaveAfterMs?: number): Promise<number> {
  return new Promise((resolve) => {
    const url = `${guard.endpoint}?query=${encodeURIComponent('SELECT ?s WHERE { ?s ?p ?o }')}`;
    const sending = httpRequest(
      url,
      { headers: { 'x-api-key': KEYS.beta, traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
      (response) => {
        response.resume();
        if (leaveAfterMs !== undefined) setTimeout(() => response.destroy(), leaveAfterMs);
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('close', () => resolve(response.statusCode ?? 0));
        response.on('error', () => resolve(response.statusCode ?? 0));
      },
    );
    sending.on('error', () => resolve(0));
    sending.end();
  });
}

describe('audit records beside the log and the metrics when the store fails', () => {
  let folder: string;
  let auditFile: string;
  let store: FaultyStore;
  let t: TestGuard;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-audit-faults-'));
    auditFile = join(folder, 'audit.jsonl');
    store = await startFaultyStore();
    t = await startTestGuard({ upstream: store.url, timeoutMs: 1000, audit: { file: auditFile }, metrics: { port: 0, host: '127.0.0.1' } });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const cases: {
    mode: StoreMode;
    leaveAfterMs?: number;
    status: number;
    outcome: string;
    decision: string;
    code: string | null;
    query: string;
  }[] = [
    { mode: 'answer', status: 200, outcome: 'completed', decision: 'allowed', code: null, query: 'answered' },
    { mode: 'cut', status: 200, outcome: 'upstream-cut', decision: 'allowed', code: null, query: 'answered' },
    { mode: 'reset', status: 502, outcome: 'completed', decision: 'failed', code: 'upstream_failed', query: 'upstream_failed' },
    { mode: 'silent', status: 502, outcome: 'completed', decision: 'failed', code: 'upstream_failed', query: 'upstream_failed' },
    { mode: 'drip', leaveAfterMs: 250, status: 200, outcome: 'client-closed', decision: 'allowed', code: null, query: 'answered' },
    { mode: 'drip-error', status: 500, outcome: 'completed', decision: 'failed', code: 'store_error', query: 'store_error' },
  ];
  for (const [at, each] of cases.entries()) {
    it(`${each.mode}${each.leaveAfterMs === undefined ? '' : ', the client leaving mid-answer'}: one record, as the log line says`, async () => {
      const scrape = async (): Promise<string> => (await fetch(`${t.guard.metricsUrl!}/metrics`)).text();
      const count = (text: string): number => {
        const line = text.split('\n').find((each2) => each2.startsWith(`sparql_guard_queries_total{outcome="${each.query}"} `));
        return line === undefined ? 0 : Number(line.split(' ')[1]);
      };
      const first = await scrape();
      const before = count(first);
      const retriesBefore = retriesIn(first);
      const receivedBefore = store.received;
      store.mode = each.mode;
      const traceId = `${'d'.repeat(30)}${String(at).padStart(2, '0')}`;
      const status = await ask(t, traceId, each.leaveAfterMs);
      store.mode = 'answer';
      await new Promise((resolve) => setTimeout(resolve, 1300));
      if (each.leaveAfterMs === undefined) assert.equal(status, each.status);
      const records = (existsSync(auditFile) ? readFileSync(auditFile, 'utf8').split('\n') : [])
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as AuditRecord)
        .filter((record) => record.traceId === traceId);
      assert.equal(records.length, 1, 'one record');
      const record = records[0]!;
      assert.deepEqual(
        [record.status, record.outcome, record.decision, record.code],
        [each.status, each.outcome, each.decision, each.code],
        JSON.stringify(record),
      );
      assert.notEqual(record.dataset, null);
      assert.notEqual(record.durationMs.store, null, 'the store was asked');
      const lines = t.logs.filter((line) => line.traceId === traceId && line.method !== undefined);
      assert.equal(lines.length, 1, 'one log line');
      assert.deepEqual(
        [lines[0]!.requestId, lines[0]!.status, lines[0]!.outcome, lines[0]!.code ?? null, lines[0]!.bytes],
        [record.requestId, record.status, record.outcome, record.code, record.bytes],
      );
      const after = await scrape();
      assert.equal(count(after) - before, 1, `one query counted ${each.query}`);
      // A reset before any byte is retried once on a fresh connection: still one request, one record, one count.
      assert.equal(retriesIn(after) - retriesBefore, each.mode === 'reset' ? 1 : 0, 'retries');
      assert.equal(store.received - receivedBefore, each.mode === 'reset' ? 2 : 1, 'queries the store received');
    });
  }
});
