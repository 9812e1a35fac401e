// Fuzzing through a real guard: mutated W3C and attack queries and random bytes never get a 5xx of the guard's own, a crash or a leak; memory stays bounded.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertNoLeak, startSecurityGuard } from '../helpers/rig-stores.js';
import type { TestGuard } from '../helpers/start-test-guard.js';
import { W3C_SUITE, mulberry32, readW3cTests } from '../w3c/w3c-evaluation.js';

/** Wall-clock budget (FUZZ_SECONDS overrides; CI keeps the default). */
const BUDGET_MS = Number(process.env.FUZZ_SECONDS ?? 20) * 1000;
const SEED = Number(process.env.FUZZ_SEED ?? 7);

const ATTACK_SEEDS = [
  'PREFIX ex: <http://example.org/>\nSELECT DISTINCT ?b WHERE { GRAPH ?g { ex:fingerprint ex:graphBit ?b } }',
  'SELECT * FROM <http://example.org/g/secret> WHERE { ?s ?p ?o }',
  'SELECT * FROM NAMED <http://example.org/g/secret> WHERE { GRAPH <http://example.org/g/secret> { ?s ?p ?o } }',
  'DESCRIBE <http://example.org/res/item1>',
  'ASK { FILTER EXISTS { GRAPH <http://example.org/g/secret> { ?s ?p ?o } } }',
  'BASE <http://example.org/g/x/>\nSELECT * FROM <../secret> WHERE { ?s ?p ?o }',
  'SELECT * WHERE { VALUES ?g { <http://example.org/g/secret> } GRAPH ?g { ?s ?p ?o } }',
  'CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }',
];
/** Fragments spliced in by the mutator: the shapes attacks are made of. */
const TOKENS = [
  '{',
  '}',
  '(',
  ')',
  '<',
  '>',
  '"',
  "'",
  '"""',
  '#',
  '\n',
  ';',
  '.',
  ',',
  '?g',
  '*',
  '+',
  '/',
  '|',
  '^',
  '!',
  ' GRAPH ?g { ?s ?p ?o } ',
  ' GRAPH <http://example.org/g/secret> { ?s ?p ?o } ',
  ' FROM <http://example.org/g/secret> ',
  ' FROM NAMED <http://example.org/g/secret> ',
  ' SERVICE <http://127.0.0.1:7102/ds/query> { ?s ?p ?o } ',
  '\\u0073',
  '\\U0000007B',
  ' INSERT DATA { <a:b> <a:c> <a:d> } ',
  ' ; DROP ALL ',
  ' BASE <../../> ',
  ' PREFIX p: <http://example.org/g/> ',
  ' p:secret ',
  ' DEFINE input:default-graph-uri <http://example.org/g/secret> ',
  ' VALUES ?g { <http://example.org/g/secret> } ',
  ' OPTIONAL { ',
  ' MINUS { ',
  ' FILTER NOT EXISTS { ',
  ' SELECT * WHERE { ',
  ' UNION ',
  '\u0000',
  '\uD800',
  '\uFFFF',
  '\u2028',
  '%26',
  '&query=',
];

interface Tally {
  requests: number;
  byStatus: Record<string, number>;
}

describe('fuzzing through the guard (embedded store)', () => {
  let guard: TestGuard;
  const tally: Tally = { requests: 0, byStatus: {} };
  before(async () => {
    guard = await startSecurityGuard({ name: 'embedded', queryUrl: undefined });
  });
  after(async () => {
    await guard?.close();
    process.stdout.write(`# fuzz: ${tally.requests} requests in ${BUDGET_MS / 1000} s, statuses ${JSON.stringify(tally.byStatus)}\n`);
  });

  const corpus = (): string[] => {
    const tests = readW3cTests().filter((t) => t.query?.endsWith('.rq'));
    const files = [...new Set(tests.map((t) => t.query ?? ''))];
    return [...ATTACK_SEEDS, ...files.map((file) => readFileSync(join(W3C_SUITE ?? '', file), 'utf8'))];
  };

  it('mutated queries and random bytes: no guard 5xx, no leak, still up, memory bounded', { timeout: BUDGET_MS + 60_000 }, async () => {
    const random = mulberry32(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const seeds = corpus();
    const mutate = (text: string): string => {
      let out = text;
      for (let n = 1 + Math.floor(random() * 4); n > 0; n--) {
        const at = Math.floor(random() * (out.length + 1));
        const span = Math.floor(random() * 12);
        const choice = random();
        if (choice < 0.35) out = out.slice(0, at) + pick(TOKENS) + out.slice(at);
        else if (choice < 0.6) out = out.slice(0, at) + out.slice(at + span);
        else if (choice < 0.8) out = out.slice(0, at) + out.slice(at, at + span).repeat(2) + out.slice(at + span);
        else out = out.slice(0, at) + String.fromCharCode(Math.floor(random() * 0x3000)) + out.slice(at + 1);
      }
      return out;
    };
    const failures: string[] = [];
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const deadline = Date.now() + BUDGET_MS;
    while (Date.now() < deadline) {
      const kind = random();
      let init: RequestInit;
      if (kind < 0.8) {
        init = {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Bearer sec-test-key-reader-0123456789abcdef' },
          body: new URLSearchParams({ query: mutate(pick(seeds)) }),
        };
      } else {
        const bytes = Buffer.from(Array.from({ length: Math.floor(random() * 2048) }, () => Math.floor(random() * 256)));
        const type = pick(['application/x-www-form-urlencoded', 'application/sparql-query', 'application/sparql-update', 'text/plain', '']);
        init = { method: 'POST', headers: type ? { 'content-type': type } : {}, body: bytes };
      }
      const response = await fetch(guard.endpoint, init);
      const body = await response.text();
      tally.requests++;
      tally.byStatus[response.status] = (tally.byStatus[response.status] ?? 0) + 1;
      if (response.status === 500 && /^internal error/.test(body)) failures.push(`guard internal error on request ${tally.requests}`);
      try {
        assertNoLeak(body, 'reader', `fuzz request ${tally.requests}`);
      } catch (error) {
        failures.push((error as Error).message.slice(0, 200));
      }
    }
    global.gc?.();
    const growthMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
    assert.deepEqual(failures, []);
    assert.ok(tally.requests > 100, `${tally.requests} requests`);
    assert.ok(growthMb < 150, `heap grew by ${growthMb.toFixed(1)} MB`);
    const health = await fetch(`${guard.guard.url}/healthz`);
    assert.equal(health.status, 200);
  });
});
