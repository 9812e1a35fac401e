// The metrics held to the audit records of the same requests: every request on the query path that has a record moves
// http_requests_total once under its status, and every query once in sparql_guard_queries_total under its code.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startStoreLink, type StoreLink } from '../helpers/start-store-link.js';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

interface AuditRecord {
  operation: string;
  status: number;
  code: string | null;
  outcome: string;
}

/** Every sample of a family: its labels as written, and its value. */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('} ');
    found.set(line.slice(name.length + 1, close), Number(line.slice(close + 2)));
  }
  return found;
}

function difference(after: Map<string, number>, before: Map<string, number>): Record<string, number> {
  const moved: Record<string, number> = {};
  for (const [labels, value] of after) if (value !== (before.get(labels) ?? 0)) moved[labels] = value - (before.get(labels) ?? 0);
  return moved;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('metrics beside the audit records of the same requests', () => {
  let folder: string;
  let auditFile: string;
  let store: TestGuard;
  let link: StoreLink;
  let t: TestGuard;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-metrics-audit-'));
    auditFile = join(folder, 'audit.jsonl');
    store = await startTestGuard();
    link = await startStoreLink(store.guard.upstreamUrl);
    t = await startTestGuard({
      upstream: link.url,
      timeoutMs: 1500,
      explain: true,
      metrics: { port: 0, host: '127.0.0.1' },
      audit: { file: auditFile },
      http: { headersTimeoutMs: 10000, requestTimeoutMs: 30000, idleTimeoutMs: 400, maxConnections: 3 },
    });
  });
  after(async () => {
    await t?.close();
    await link?.close();
    await store?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const scrape = async (): Promise<string> => {
    const response = await fetch(`${t.guard.metricsUrl!}/metrics`);
    return response.text();
  };
  const get = async (query: string, headers: Record<string, string> = { 'x-api-key': KEYS.beta }, path = ''): Promise<number> => {
    const response = await fetch(`${t.endpoint}${path}?query=${encodeURIComponent(query)}`, { headers });
    await response.arrayBuffer();
    return response.status;
  };
  const post = async (body: string, type: string): Promise<number> => {
    const response = await fetch(t.endpoint, { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEYS.beta }, body });
    await response.arrayBuffer();
    return response.status;
  };

  it('counts each recorded request once, under the status and the code its record names', async () => {
    const before = await scrape();
    const seen: number[] = [];
    seen.push(await get('SELECT * WHERE { ?s ?p ?o } LIMIT 2'));
    seen.push(await get('SELECT * WHERE {'));
    seen.push(await get('ASK {}', { 'x-api-key': 'wrong-key-0123456789abcdef' }));
    seen.push(await get('INSERT DATA { <a:b> <a:c> <a:d> }'));
    seen.push(await get('SELECT * WHERE { SERVICE <http://example.org/s> { ?s ?p ?o } }'));
    seen.push(await get('SELECT * WHERE { ?s ?p ?o }', { 'x-api-key': KEYS.keeper }, '/explain'));
    seen.push(await post(`ASK {} # ${'x'.repeat(1024 * 1024)}`, 'application/sparql-query'));
    seen.push(await post('ASK {}', 'text/plain'));
    // The service description: a record of its own operation, no query.
    const description = await fetch(t.endpoint, { headers: { accept: 'text/turtle', 'x-api-key': KEYS.beta } });
    await description.arrayBuffer();
    seen.push(description.status);
    // A body that stops arriving: 408.
    seen.push(
      await new Promise<number>((resolve, reject) => {
        const sending = httpRequest(
          t.endpoint,
          { method: 'POST', headers: { 'content-type': 'application/sparql-query', 'content-length': 100, 'x-api-key': KEYS.beta } },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        sending.on('error', reject);
        sending.write('ASK');
      }),
    );
    // The store takes longer than timeoutMs: 502 (cause timeout).
    link.delayMs = 2000;
    seen.push(await get('SELECT * WHERE { ?s ?p ?o } LIMIT 3'));
    // A client that leaves while the store works: 499.
    const leaving = new AbortController();
    const asked = fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT * WHERE { ?s ?p ?o } LIMIT 4')}`, {
      headers: { 'x-api-key': KEYS.beta },
      signal: leaving.signal,
    });
    await pause(300);
    leaving.abort();
    await assert.rejects(asked);
    link.delayMs = 0;
    await pause(2000);
    // The store resets the connection: 502.
    link.reset = true;
    seen.push(await get('SELECT * WHERE { ?s ?p ?o } LIMIT 5'));
    link.reset = false;
    // Past maxConnections: 503 too_many_connections.
    const held: Socket[] = [];
    for (let i = 0; i < 3; i += 1) {
      const socket = connect(Number(new URL(t.endpoint).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      held.push(socket);
    }
    try {
      seen.push(await get('ASK {}'));
    } finally {
      for (const socket of held) socket.destroy();
    }
    await pause(300);
    const after = await scrape();
    assert.deepEqual(seen, [200, 400, 401, 403, 403, 200, 413, 415, 200, 408, 502, 502, 503]);

    const records = existsSync(auditFile)
      ? readFileSync(auditFile, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as AuditRecord)
      : [];
    assert.equal(records.length, seen.length + 1, 'a record per request on the query and explain paths, the 499 included');
    const expectedRequests: Record<string, number> = {};
    const expectedQueries: Record<string, number> = {};
    for (const record of records) {
      // Only the query path's requests: explain has its own route label.
      if (record.operation === 'explain') continue;
      const method =
        record.code === 'too_large' || record.code === 'unsupported_media_type' || record.code === 'request_timeout' ? 'POST' : 'GET';
      const labels = `method="${method}",route="/sparql",status_code="${record.status}"`;
      expectedRequests[labels] = (expectedRequests[labels] ?? 0) + 1;
      if (record.operation !== 'query') continue;
      const outcome = record.code ?? (record.status === 499 ? 'client_closed' : 'answered');
      expectedQueries[`outcome="${outcome}"`] = (expectedQueries[`outcome="${outcome}"`] ?? 0) + 1;
    }
    const requests = difference(samples(after, 'http_requests_total'), samples(before, 'http_requests_total'));
    for (const labels of Object.keys(requests)) if (!labels.includes('route="/sparql"')) delete requests[labels];
    assert.deepEqual(requests, expectedRequests, 'http_requests_total of /sparql, beside the records');
    const queries = difference(samples(after, 'sparql_guard_queries_total'), samples(before, 'sparql_guard_queries_total'));
    assert.deepEqual(queries, expectedQueries, 'sparql_guard_queries_total, beside the records');
  });
});
