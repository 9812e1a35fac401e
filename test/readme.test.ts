// Keeps the README (the front page) true to the code: its configuration, errors and vocabulary tables, and its commands.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readConfig } from '../src/config/read-config.js';
import { ERROR_CODE_HEADER, GUARD_CODES, STORE_ERROR_CODES, type GuardCode } from '../src/guard-error.js';
import { startGuard } from '../src/server/start-guard.js';
import { VOCABULARY_TERMS } from '../src/vocabulary.js';
import { checkCoversDeclaredKeys, checkDefaults, checkEnvOverrides, declaredKeys } from './helpers/config-table.js';
import { codeBlockAfter, plain, readDoc, sectionOf, tableOf } from './helpers/markdown-table.js';
import { startTestGuard, type TestGuard } from './helpers/start-test-guard.js';

const readme = readDoc('README.md');

describe('README configuration table (key, default, what, more)', () => {
  const table = tableOf(sectionOf(readme, '## Configuration'));

  it('covers every declared key, itself or in the row of an object above it, and only declared keys', () => {
    checkCoversDeclaredKeys(table);
  });

  it('states the declared defaults', () => {
    const declared = new Map(declaredKeys());
    checkDefaults(table, (path) => declared.get(path));
  });

  it('names each environment variable that overrides a key, and no other', () => {
    checkEnvOverrides(table, 'what');
  });

  it('links each key to the page that tells it', () => {
    for (const row of table) assert.match(row.more ?? '', /^\[[^\]]+\]\((docs\/[a-z-]+\.md|#[a-z-]+)(#[a-z0-9-]+)?\)$/, `${row.key}`);
  });
});

describe('README errors table', () => {
  let t: TestGuard;
  let unreachable: TestGuard;
  before(async () => {
    t = await startTestGuard();
    unreachable = await startTestGuard({ upstream: 'http://127.0.0.1:1/sparql' });
  });
  after(async () => {
    await Promise.all([t.close(), unreachable.close()]);
  });

  const table = tableOf(sectionOf(readme, '## Errors'));

  it("lists every code of GUARD_CODES once, in its order, with its status, then each code of a store error with the store's status", () => {
    assert.deepEqual(
      table.map((row) => [plain(row.code), /^\d+$/.test(row.status ?? '') ? Number(row.status) : row.status]),
      [...Object.entries(GUARD_CODES), ...STORE_ERROR_CODES.map((code) => [code, "the store's"])],
    );
  });

  it('says what to do for every code', () => {
    for (const row of table) assert.ok((row['what to do'] ?? '').length > 5, `what to do for ${row.code}`);
  });

  it('each code of the query path is reachable, in the response header and the request log', async () => {
    const q = encodeURIComponent('SELECT * WHERE { ?s ?p ?o }');
    const observed = new Map<GuardCode, Response>([
      ['bad_request', await fetch(t.endpoint)],
      ['parse', await fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT * WHERE {')}`)],
      ['unauthenticated', await fetch(`${t.endpoint}?query=${q}`, { headers: { 'x-api-key': 'unknown' } })],
      ['update', await fetch(`${t.endpoint}?update=${q}`)],
      [
        'service',
        await fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT * WHERE { SERVICE <http://example.org/s> { ?s ?p ?o } }')}`),
      ],
      ['not_found', await fetch(`${t.guard.url}/elsewhere`)],
      ['method_not_allowed', await fetch(t.endpoint, { method: 'PUT' })],
      [
        'too_large',
        await fetch(t.endpoint, { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: 'x'.repeat(2 ** 20 + 1) }),
      ],
      ['unsupported_media_type', await fetch(t.endpoint, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })],
      ['header_too_large', await fetch(t.endpoint, { headers: { 'x-padding': 'x'.repeat(20_000) } })],
      ['uri_too_long', await fetch(`${t.endpoint}?query=${'x'.repeat(20_000)}`)],
      ['upstream_failed', await fetch(`${unreachable.endpoint}?query=${q}`)],
    ]);
    for (const [code, response] of observed) {
      assert.equal(response.status, GUARD_CODES[code], code);
      assert.equal(response.headers.get(ERROR_CODE_HEADER), code);
      assert.match(await response.text(), /^[^\n]+\n$/);
    }
    const logged = [...t.logs, ...unreachable.logs].filter((line) => line.code !== undefined).map((line) => line.code);
    for (const code of observed.keys()) assert.ok(logged.includes(code), `${code} is in the request log`);
    // 503 (before the first policy set is loaded) is proven in test/server/policy-holder.test.ts;
    // 408 (a client too slow to send its request) in test/reliability/slow-clients.test.ts;
    // 429 (past guard:maxConcurrent, with a store slow enough to overlap) in test/integration/limits-per-caller.test.ts.
  });
});

describe('README table of policy terms and the vocabulary (VOCABULARY_TERMS)', () => {
  const table = tableOf(sectionOf(readme, '## Policies'));
  const termsOf = (text: string) => [...text.matchAll(/`guard:([A-Za-z]+)`/g)].map((match) => match[1]!);

  it('documents exactly the terms a policy or rule may use, one row each', () => {
    const documented = table.flatMap((row) => termsOf(row.term ?? ''));
    const inputTerms = Object.entries(VOCABULARY_TERMS).filter(([, kind]) => kind !== 'description');
    assert.deepEqual([...documented].sort(), inputTerms.map(([name]) => name).sort());
  });

  it('uses no guard: IRI that is not a term, in the README or docs/policies.md, but in a quoted error line', () => {
    for (const text of [readme, readDoc('docs/policies.md')]) {
      for (const [, name] of text.replace(/`[^`\n]*did you mean[^`\n]*`/g, '').matchAll(/\bguard:([A-Za-z]+)/g))
        assert.ok(Object.hasOwn(VOCABULARY_TERMS, name!), `guard:${name}`);
    }
  });
});

describe('README commands, run as written', () => {
  it('the two set-up commands are the package scripts', () => {
    const setup = codeBlockAfter(readme, '\n## Quick start\n', 'sh');
    assert.match(setup, /^npm ci && npm start\s/m);
    assert.match(setup, /^npm test\s/m);
    const scripts = (JSON.parse(readDoc('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.ok(scripts.start !== undefined && scripts.test !== undefined);
  });

  it('the quick start curl commands answer each caller, against the demo with only the URL changed', async () => {
    const guard = await startGuard(readConfig({ GUARD_CONFIG: resolve('policies/demo.json'), PORT: '0' }), () => undefined);
    try {
      const script = codeBlockAfter(readme, 'Two callers, one query, two answers', 'sh')
        .replaceAll('http://127.0.0.1:8080', guard.url)
        // Fail on a 4xx (a placeholder the guard cannot read answers 400) and end each answer with a mark.
        .replaceAll('curl -s ', `curl -sS --fail-with-body -w '\\n<end>\\n' `);
      const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
        // Not spawnSync: the guard answering curl runs in this process.
        const child = spawn('bash', ['-euo', 'pipefail', '-c', script]);
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
        child.on('close', (status) => done({ status, stdout, stderr }));
      });
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const answers = run.stdout.split('\n<end>\n').slice(0, -1);
      assert.equal(answers.length, 3, run.stdout);
      const graphsOf = (answer: string) =>
        (JSON.parse(answer) as { results: { bindings: { g: { value: string } }[] } }).results.bindings.map((b) => b.g.value).sort();
      assert.deepEqual(graphsOf(answers[0]!), ['https://example.org/graphs/public']);
      assert.ok(graphsOf(answers[1]!).length > 1, 'alice sees more than the public graph');
      assert.match(answers[2]!, /"query":/);
    } finally {
      await guard.close();
    }
  });
});
