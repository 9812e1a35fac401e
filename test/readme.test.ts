// Keeps the README's configuration and error tables true to the code.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CONFIG_KEYS, parseConfig, readConfig, type ConfigKey, type ConfigKeys } from '../src/config/read-config.js';
import { ERROR_CODE_HEADER, GUARD_CODES, type GuardCode } from '../src/guard-error.js';
import { loadPolicySet } from '../src/policy/load/load-policy-set.js';
import { shippedRuleFiles } from '../src/policy/rules/shipped-rule-files.js';
import { startGuard } from '../src/server/start-guard.js';
import { startTestGuard, type TestGuard } from './helpers/start-test-guard.js';
import { VOCABULARY_TERMS } from '../src/vocabulary.js';

const readme = readFileSync('README.md', 'utf8');

/** The first-column cells of the table that follows `## heading`. */
function firstColumn(heading: string): string[] {
  const section = readme.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.split('|')[1]!.trim().replace(/`/g, ''));
}

/** The cells of each row of the table that follows `## heading`, header row left out. */
function rows(heading: string): string[][] {
  const section = readme.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '').trim()));
}

/** Every key of the table with its path, objects before their keys. */
function declaredKeys(keys: ConfigKeys, prefix = ''): [string, ConfigKey<unknown>][] {
  return Object.entries(keys).flatMap(([name, key]): [string, ConfigKey<unknown>][] => {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    return [[path, key], ...(key.keys === undefined ? [] : declaredKeys(key.keys, path))];
  });
}

/** What an absent key stands for, as the operator would write it; an object's from its keys'. */
function defaultOf(key: ConfigKey<unknown>): unknown {
  if (key.keys === undefined || key.default === undefined) return key.default;
  return Object.fromEntries(
    Object.entries(key.keys)
      .map(([name, inner]) => [name, defaultOf(inner)])
      .filter(([, value]) => value !== undefined),
  );
}

/**
 * A default cell that is one code span (`8080`, `{ "maxEntries": 1000 }`) must be the table's
 * default; words ("none", "the demo data") describe a behaviour and are not compared.
 */
function checkDefaults(table: string[][], keyOf: (row: string) => ConfigKey<unknown> | undefined): void {
  for (const [name, , cell] of table) {
    const key = keyOf(name!.replace(/`/g, ''));
    assert.ok(key !== undefined, `${name} is no configuration key`);
    const code = /^`([^`]*)`$/.exec(cell ?? '')?.[1];
    if (code === undefined) continue;
    let documented: unknown;
    try {
      documented = JSON.parse(code);
    } catch {
      documented = code;
    }
    assert.deepEqual(documented, defaultOf(key), `default of ${name}`);
  }
}

/** Every key path of a JSON object, descending into objects but not into arrays. */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const nested = keyPaths(child, path);
    // Objects whose keys are names chosen by the operator (upstreamHeaders) are leaves.
    return nested.length === 0 || path === 'upstreamHeaders' ? [path] : nested;
  });
}

describe('README configuration table', () => {
  const documented = firstColumn('Configuration');
  const full = JSON.parse(readFileSync('test/fixtures/config/full.json', 'utf8')) as Record<string, unknown>;

  it('documents exactly the keys of the fixture that sets every key', () => {
    // A row may document a whole object (planCache, auth.trustedHeaders): its sub-keys fold into it.
    const rowOf = (path: string) => documented.find((row) => path === row || path.startsWith(`${row}.`)) ?? path;
    const fixtureKeys = new Set(keyPaths(full).map(rowOf));
    assert.deepEqual([...fixtureKeys].sort(), [...documented].sort());
  });

  it('lists keys the parser accepts, and the parser refuses any other', () => {
    const env = { STORE_HOST: 'h', STORE_CREDENTIAL: 'c', POLICY_DIR: 'p', BOB_AGENT: 'https://e.org/bob', BOB_KEY_SHA256: 'a'.repeat(64) };
    assert.doesNotThrow(() => parseConfig(full, { configFile: undefined, env }));
    assert.throws(() => parseConfig({ ...full, undocumented: true }, { configFile: undefined, env }), /undocumented/);
  });
});

describe('README configuration table and the declared keys (CONFIG_KEYS)', () => {
  const table = rows('Configuration');
  const declared = new Map(declaredKeys(CONFIG_KEYS));

  it('documents every declared key, itself or in the row of an object above it, and only declared keys', () => {
    const documented = table.map(([name]) => name!.replace(/`/g, ''));
    for (const path of documented) assert.ok(declared.has(path), `${path} is documented but not declared`);
    for (const path of declared.keys()) {
      const covered = documented.some((row) => path === row || path.startsWith(`${row}.`) || row.startsWith(`${path}.`));
      assert.ok(covered, `${path} is declared but not documented`);
    }
  });

  it('states the declared defaults', () => {
    checkDefaults(table, (path) => declared.get(path));
    // The JWT keys have their own table.
    const jwt = declared.get('auth.jwt')?.keys;
    assert.ok(jwt !== undefined);
    const jwtTable = rows('JWT bearer tokens');
    assert.deepEqual(
      jwtTable.map(([name]) => name!.replace(/`/g, '')),
      Object.keys(jwt),
    );
    checkDefaults(jwtTable, (name) => jwt[name]);
    for (const [name, , cell] of jwtTable)
      assert.equal(cell === 'required', jwt[name!.replace(/`/g, '')]?.required !== undefined, `${name} required`);
  });

  it('names each environment variable that overrides a key, and no other', () => {
    for (const [name, , , meaning] of table) {
      const documented = /env `([A-Z_]+)` overrides/.exec(meaning ?? '')?.[1];
      assert.equal(documented, declared.get(name!.replace(/`/g, ''))?.env?.name, `environment override of ${name}`);
    }
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

  it('lists every code of GUARD_CODES once, in its order, with its status', () => {
    const table = rows('Errors').map(([code, status]) => [code!.replace(/`/g, ''), Number(status)]);
    assert.deepEqual(table, Object.entries(GUARD_CODES));
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
    // 429 (past guard:maxConcurrent, with a store slow enough to overlap) in test/server/limits-per-caller.test.ts.
  });
});

describe('README table of policy terms and the vocabulary (VOCABULARY_TERMS)', () => {
  const section = readme.split('\n## Policies\n')[1]?.split('\n```')[0] ?? '';
  const table = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1);
  const termsOf = (text: string) => [...text.matchAll(/`guard:([A-Za-z]+)`/g)].map((match) => match[1]!);

  it('documents exactly the terms a policy or rule may use, one row each', () => {
    const documented = table.flatMap((line) => termsOf(line.split('|')[1] ?? ''));
    const inputTerms = Object.entries(VOCABULARY_TERMS).filter(([, kind]) => kind !== 'description');
    assert.deepEqual([...documented].sort(), inputTerms.map(([name]) => name).sort());
  });

  it('uses no guard: IRI that is not a term anywhere in the README, but in a quoted error line', () => {
    const text = readme.replace(/`[^`\n]*did you mean[^`\n]*`/g, '');
    for (const [, name] of text.matchAll(/\bguard:([A-Za-z]+)/g)) assert.ok(Object.hasOwn(VOCABULARY_TERMS, name!), `guard:${name}`);
  });
});

/** The text of the first ```lang block after `marker` in the README. */
function codeBlockAfter(marker: string, lang: string): string {
  const rest = readme.split(marker)[1] ?? '';
  const block = rest.split('```' + lang + '\n')[1]?.split('\n```')[0];
  assert.ok(block !== undefined, `no ${lang} block after ${marker}`);
  return block;
}

describe('README commands, run as written', () => {
  it('the Command line examples run with npx on the own-store template', () => {
    const script = codeBlockAfter('\n## Command line\n', 'sh');
    assert.match(script, /^npx sparql-guard check /m, 'commands are written with npx: the bin is not on the PATH in a clone');
    const { GUARD_CONFIG: _config, STORE_URL: _store, ...env } = process.env;
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { encoding: 'utf8', env, timeout: 120_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^key: |^config entry: \{"agent":"https:\/\/example\.org\/agents\/ann","groups":\["hr"\],"sha256":"[0-9a-f]{64}"\}$/m,
    );
    assert.match(run.stdout, /^ok: 3 policies from 1 policy file\(s\)/m);
    assert.match(run.stdout, /"query": "BASE <http:\/\/localhost\/>\\nSELECT \* FROM <https:\/\/example\.org\/graphs\/people>/);
  });

  it('the own-store template loads: every key valid, its policies and the shipped rules', async () => {
    const config = readConfig({
      GUARD_CONFIG: resolve('deploy/own-store/guard.json'),
      STORE_URL: 'https://store.example.org/sparql',
      ALICE_KEY_SHA256: 'a'.repeat(64),
    });
    assert.equal(config.upstream, 'https://store.example.org/sparql');
    const set = await loadPolicySet({ policyFiles: config.policies, ruleFiles: [...shippedRuleFiles(), ...config.rules] });
    assert.equal(set.policies.length, 3);
  });

  it('the Comunica snippet runs as written (its import included) against the demo, with only the URL changed', async () => {
    const guard = await startGuard(readConfig({ GUARD_CONFIG: resolve('policies/demo.json'), PORT: '0' }), () => undefined);
    mkdirSync(resolve('.tmp'), { recursive: true });
    const folder = mkdtempSync(join(resolve('.tmp'), 'readme-comunica-'));
    try {
      const snippet = codeBlockAfter('**Comunica.**', 'js').replaceAll('http://127.0.0.1:8080/sparql', `${guard.url}/sparql`);
      const file = join(folder, 'snippet.mjs');
      writeFileSync(file, `${snippet}\nconsole.log(JSON.stringify((await bindings.toArray()).length));\n`);
      // Not spawnSync: the guard answering the snippet runs in this process.
      const { stdout } = await promisify(execFile)(process.execPath, [file], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(stdout.trim(), '10');
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await guard.close();
    }
  });
});
