// Compares a documented table of configuration keys with the keys the config reader declares.

import assert from 'node:assert/strict';
import { CONFIG_KEYS, type ConfigKey, type ConfigKeys } from '../../src/config/read-config.js';
import { plain } from './markdown-table.js';

/** Every key of the table with its path, objects before their keys. */
export function declaredKeys(keys: ConfigKeys = CONFIG_KEYS, prefix = ''): [string, ConfigKey<unknown>][] {
  return Object.entries(keys).flatMap(([name, key]): [string, ConfigKey<unknown>][] => {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    return [[path, key], ...(key.keys === undefined ? [] : declaredKeys(key.keys, path))];
  });
}

/** What an absent key stands for, as the operator would write it; an object's from its keys'. */
export function defaultOf(key: ConfigKey<unknown>): unknown {
  if (key.keys === undefined || key.default === undefined) return key.default;
  return Object.fromEntries(
    Object.entries(key.keys)
      .map(([name, inner]) => [name, defaultOf(inner)])
      .filter(([, value]) => value !== undefined),
  );
}

/**
 * A default cell that is one code span (`8080`, `{ "maxEntries": 1000 }`) must be the declared
 * default; words ("none", "the demo data") describe a behaviour and are not compared.
 */
export function checkDefaults(table: Record<string, string>[], keyOf: (name: string) => ConfigKey<unknown> | undefined): void {
  let compared = 0;
  for (const row of table) {
    const key = keyOf(plain(row.key));
    assert.ok(key !== undefined, `${row.key} is no configuration key`);
    const code = /^`([^`]*)`$/.exec(row.default ?? '')?.[1];
    if (code === undefined) continue;
    let documented: unknown;
    try {
      documented = JSON.parse(code);
    } catch {
      documented = code;
    }
    assert.deepEqual(documented, defaultOf(key), `default of ${row.key}`);
    compared++;
  }
  assert.ok(compared > 0, 'no default compared: the table has no default column');
}

/** Every declared key is documented, itself or in the row of an object above or below it; every row is a declared key. */
export function checkCoversDeclaredKeys(table: Record<string, string>[]): void {
  const declared = new Map(declaredKeys());
  const documented = table.map((row) => plain(row.key));
  for (const path of documented) assert.ok(declared.has(path), `${path} is documented but not declared`);
  for (const path of declared.keys()) {
    const covered = documented.some((row) => path === row || path.startsWith(`${row}.`) || row.startsWith(`${path}.`));
    assert.ok(covered, `${path} is declared but not documented`);
  }
}

/** Each row names in `column` the environment variable that overrides its key (`env \`PORT\` overrides`), and no other. */
export function checkEnvOverrides(table: Record<string, string>[], column: string): void {
  const declared = new Map(declaredKeys());
  for (const row of table) {
    const documented = /env `([A-Z_]+)` overrides/.exec(row[column] ?? '')?.[1];
    assert.equal(documented, declared.get(plain(row.key))?.env?.name, `environment override of ${row.key}`);
  }
}
