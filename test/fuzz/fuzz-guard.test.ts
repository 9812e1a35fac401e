// Fuzzing through a real guard: mutated W3C and attack queries and random bytes never get a 5xx of the guard's own, a crash or a leak;
// the guard's memory (heap and buffers), measured after a collection in a process of its own, stays within what its caches may hold.

import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { assertNoLeak } from '../helpers/rig-stores.js';
import { W3C_SUITE, mulberry32, readW3cTests } from '../w3c/w3c-evaluation.js';
import type { GuardProcessCommand, GuardProcessReport } from './guard-process.js';

/** Requests sent (FUZZ_REQUESTS overrides; CI keeps the default): a count, not a time, so every run sends the same ones. */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 1000);
const SEED = Number(process.env.FUZZ_SEED ?? 7);

/** The fuzzed guard's plan cache, small enough that its bound is a small part of the memory bound below. */
const PLAN_CACHE = { maxEntries: 200, maxBytes: 1024 * 1024 };
/** The planner's ring of the last texts' lexes: 32 texts of up to 16,384 UTF-16 characters (src/sparql/create-planner.ts). */
const RECENT_TEXTS_BYTES = 32 * 16_384 * 2;
/**
 * How much the guard's memory (V8 heap and the Buffers outside it), after a collection, may grow
 * over the run: its bounded caches at twice their estimated size (the plan cache's estimate
 * counts texts and trees, not the objects around them), the ring of recent texts, and 6 MB for
 * what V8 keeps once code has run (compiled code, inline caches, compiled regular expressions;
 * the whole growth measured 2.7 MB on Node 20). Anything the guard kept per request past about
 * 6 KB (an answer, a request body, a socket's buffers) goes over it within the run. Read without
 * a collection, the heap holds garbage (169 MB was seen).
 */
const MEMORY_GROWTH_BOUND_BYTES = 2 * PLAN_CACHE.maxBytes + RECENT_TEXTS_BYTES + 6 * 1024 * 1024;

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

/** A guard over the security policies and the embedded store in a child process under --expose-gc. */
interface GuardProcess {
  readonly endpoint: string;
  readonly url: string;
  ask<K extends Exclude<GuardProcessCommand, 'close'>>(command: K): Promise<Extract<GuardProcessReport, { kind: K }>>;
  close(): Promise<void>;
}

async function startGuardProcess(config: Record<string, unknown>): Promise<GuardProcess> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./guard-process.js', import.meta.url)), [JSON.stringify(config)], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [started] = (await once(child, 'message')) as [GuardProcessReport];
  assert.equal(started.kind, 'started');
  return {
    endpoint: started.endpoint,
    url: started.url,
    async ask(command) {
      const answer = once(child, 'message');
      child.send(command);
      const [report] = (await answer) as [GuardProcessReport];
      assert.equal(report.kind, command);
      return report as never;
    },
    async close() {
      if (child.exitCode !== null || !child.connected) return;
      const exited = once(child, 'exit');
      child.send('close' satisfies GuardProcessCommand);
      await exited;
    },
  };
}

describe('fuzzing through the guard (embedded store)', () => {
  let guard: GuardProcess;
  const tally: Tally = { requests: 0, byStatus: {} };
  let heapGrowthBytes: number | undefined;
  let bufferGrowthBytes: number | undefined;
  before(async () => {
    guard = await startGuardProcess({ planCache: PLAN_CACHE });
  });
  after(async () => {
    await guard?.close();
    const heap =
      heapGrowthBytes === undefined
        ? ''
        : `, heap after a collection grew by ${(heapGrowthBytes / 1024 / 1024).toFixed(1)} MB, buffers by ${((bufferGrowthBytes ?? 0) / 1024 / 1024).toFixed(1)} MB`;
    process.stdout.write(`# fuzz: ${tally.requests} requests (seed ${SEED}), statuses ${JSON.stringify(tally.byStatus)}${heap}\n`);
  });

  const corpus = (): string[] => {
    const tests = readW3cTests().filter((t) => t.query?.endsWith('.rq'));
    const files = [...new Set(tests.map((t) => t.query ?? ''))];
    return [...ATTACK_SEEDS, ...files.map((file) => readFileSync(join(W3C_SUITE ?? '', file), 'utf8'))];
  };

  it(
    `${REQUESTS} mutated queries and random bytes: no guard 5xx, no leak, still up, memory within its caches' bound`,
    { timeout: 600_000 },
    async () => {
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
      // The baseline after the guard has answered once (its first request compiles the request path).
      await (
        await fetch(guard.endpoint, {
          method: 'POST',
          body: 'query=ASK%7B%7D',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).text();
      const memoryBefore = await guard.ask('memory');
      for (let request = 1; request <= REQUESTS; request++) {
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
          const type = pick([
            'application/x-www-form-urlencoded',
            'application/sparql-query',
            'application/sparql-update',
            'text/plain',
            '',
          ]);
          init = { method: 'POST', headers: type ? { 'content-type': type } : {}, body: bytes };
        }
        const response = await fetch(guard.endpoint, init);
        const body = await response.text();
        tally.requests++;
        tally.byStatus[response.status] = (tally.byStatus[response.status] ?? 0) + 1;
        if (response.status === 500 && /^internal error/.test(body)) failures.push(`guard internal error on request ${request}`);
        try {
          assertNoLeak(body, 'reader', `fuzz request ${request}`);
        } catch (error) {
          failures.push((error as Error).message.slice(0, 200));
        }
      }
      const memoryAfter = await guard.ask('memory');
      heapGrowthBytes = memoryAfter.heapUsedBytes - memoryBefore.heapUsedBytes;
      bufferGrowthBytes = memoryAfter.arrayBuffersBytes - memoryBefore.arrayBuffersBytes;
      assert.deepEqual(failures, []);
      assert.equal(tally.requests, REQUESTS);
      assert.ok(
        heapGrowthBytes + bufferGrowthBytes < MEMORY_GROWTH_BOUND_BYTES,
        `after a collection the heap grew by ${(heapGrowthBytes / 1024 / 1024).toFixed(1)} MB and buffers by ${(bufferGrowthBytes / 1024 / 1024).toFixed(1)} MB, over the bound of ${(MEMORY_GROWTH_BOUND_BYTES / 1024 / 1024).toFixed(1)} MB`,
      );
      const health = await fetch(`${guard.url}/healthz`);
      assert.equal(health.status, 200);
    },
  );
});
