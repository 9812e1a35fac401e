// Keeps every configuration message as it is: a corpus of bad values for every declared key, against a golden list.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { CONFIG_KEYS, ConfigError, parseConfig, type ConfigKeys } from '../../src/config/read-config.js';

const GOLDEN = 'test/fixtures/config/messages.txt';

/** A valid object for each object whose keys are not all optional. */
const VALID: Readonly<Record<string, Record<string, unknown>>> = {
  'auth.jwt': { issuer: 'https://idp.example.org', audience: 'sparql', jwksUri: 'https://idp.example.org/certs' },
  'auth.trustedHeaders': { agent: 'X-Remote-User' },
  'auth.apiKeys[0]': { agent: 'https://example.org/agents/a', sha256: 'a'.repeat(64) },
  metrics: { port: 9464 },
  audit: { file: '-' },
};

/** Values of every JSON type, and strings each some check exists for. */
const VALUES: readonly unknown[] = [
  'x',
  '',
  1.5,
  -1,
  0,
  1,
  65_536,
  1e12,
  null,
  true,
  [],
  [''],
  ['x'],
  ['x', 'x'],
  [1],
  {},
  { a: 1 },
  '${UNSET}',
  'https://example.org/#f',
  'http://user:secret@example.org/',
  'ftp://example.org/',
  'http://example.org/a b',
  '*',
  '/healthz',
  'Authorization',
  ['none'],
  ['HS256'],
  ['bif:contains'],
  [{ kty: 'oct' }],
  [{ kty: 'RSA', d: 'x' }],
];

/** Every object of the configuration with its key names, from the declarations (plus an API key entry). */
function objects(keys: ConfigKeys, path = ''): [string, string[]][] {
  const inner = Object.entries(keys).flatMap(([name, key]) =>
    key.keys === undefined ? [] : objects(key.keys, path === '' ? name : `${path}.${name}`),
  );
  return [[path, Object.keys(keys)], ...inner];
}

/** A configuration that is valid but for `value` at `path`.`name`. */
function withValue(path: string, name: string, value: unknown): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  let target = json;
  let prefix = '';
  for (const part of path === '' ? [] : path.split('.')) {
    prefix = prefix === '' ? part : `${prefix}.${part}`;
    const list = /^(.+)\[0\]$/.exec(part);
    const object = structuredClone(VALID[prefix] ?? {});
    if (list) target[list[1]!] = [object];
    else target[part] = object;
    target = object;
  }
  target[name] = value;
  return json;
}

function messageOf(json: unknown, env: NodeJS.ProcessEnv = {}): string | undefined {
  try {
    parseConfig(json, { configFile: '/etc/guard/config.json', env });
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
}

test('every message of the corpus is in the golden list, one line that names the key path and ends with the fix', () => {
  const messages = new Set<string>();
  const add = (message: string | undefined): void => {
    if (message !== undefined) messages.add(message);
  };
  const all = [...objects(CONFIG_KEYS), ['auth.apiKeys[0]', ['agent', 'groups', 'sha256']] as [string, string[]]];
  for (const [path, names] of all) {
    for (const name of names) {
      for (const value of VALUES) add(messageOf(withValue(path, name, value)));
      for (const typo of [name.slice(0, -1), name.toUpperCase(), `${name}x`, 'zzzzzzzzzz']) add(messageOf(withValue(path, typo, 1)));
    }
  }
  for (const name of ['GUARD_UPSTREAM', 'PORT', 'GUARD_WORKERS']) {
    for (const value of ['x', '', '-1', '70000', 'ftp://example.org/', 'http://h/q?query=1']) add(messageOf({}, { [name]: value }));
  }
  for (const root of [null, [], 'x', 1, { corsOrigins: [] }]) add(messageOf(root));

  for (const message of messages) {
    assert.match(message, /^(config( \S+)?|environment variable [A-Z_]+): [^\n]+ \(.+\)$/, message);
  }
  const found = [...messages].sort().join('\n') + '\n';
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(GOLDEN, found);
  assert.equal(
    found,
    readFileSync(GOLDEN, 'utf8'),
    `a message changed: review the difference, then rerun with UPDATE_GOLDEN=1 to accept it (${GOLDEN})`,
  );
});
