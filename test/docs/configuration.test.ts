// Keeps docs/configuration.md (every key) and the JWT table of docs/authentication.md true to the config reader.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig, readConfig } from '../../src/config/read-config.js';
import { checkCoversDeclaredKeys, checkDefaults, checkEnvOverrides, declaredKeys } from '../helpers/config-table.js';
import { plain, readDoc, sectionOf, tableOf } from '../helpers/markdown-table.js';

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

describe('docs/configuration.md: the table of every key', () => {
  const table = tableOf(sectionOf(readDoc('docs/configuration.md'), '## Keys'));
  const documented = table.map((row) => plain(row.key));
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

  it('documents every declared key, itself or in the row of an object above it, and only declared keys', () => {
    checkCoversDeclaredKeys(table);
  });

  it('states the declared defaults', () => {
    const declared = new Map(declaredKeys());
    checkDefaults(table, (path) => declared.get(path));
  });

  it('names each environment variable that overrides a key, and no other', () => {
    checkEnvOverrides(table, 'meaning');
  });
});

describe('docs/authentication.md: the JWT keys', () => {
  const jwt = new Map(declaredKeys()).get('auth.jwt')?.keys;
  const table = tableOf(sectionOf(readDoc('docs/authentication.md'), '## JWT bearer tokens'));

  it('lists the keys of auth.jwt, in order, with their defaults and which are required', () => {
    assert.ok(jwt !== undefined);
    assert.deepEqual(
      table.map((row) => plain(row.key)),
      Object.keys(jwt),
    );
    checkDefaults(table, (name) => jwt[name]);
    for (const row of table) assert.equal(row.default === 'required', jwt[plain(row.key)]?.required !== undefined, `${row.key} required`);
  });
});

describe('docs/configuration.md: the file', () => {
  it("reads each relative path it names from the configuration file's folder, not the working folder", () => {
    const page = sectionOf(readDoc('docs/configuration.md'), '## The file');
    const sentence = /A relative path\s+\(([^)]*)\) is read from the configuration file's folder,\s+not the working folder\./.exec(page);
    assert.ok(sentence, 'the sentence on relative paths');
    const keys = [...sentence[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    assert.deepEqual(keys, ['policies', 'rules', 'embedded.data', 'audit.file']);
    const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-config-paths-'));
    try {
      const file = join(folder, 'guard.json');
      writeFileSync(
        file,
        JSON.stringify({ policies: ['p/a.ttl'], rules: ['r.n3'], embedded: { data: ['d.trig'] }, audit: { file: 'logs/audit.jsonl' } }),
      );
      const config = readConfig({ GUARD_CONFIG: file });
      assert.deepEqual(
        [config.policies[0], config.rules[0], config.embedded.data[0], config.audit?.file],
        [join(folder, 'p/a.ttl'), join(folder, 'r.n3'), join(folder, 'd.trig'), join(folder, 'logs/audit.jsonl')],
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
