// Keeps docs/design.md true to the code: every anchor the code cites exists, and every configuration key it names is declared.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CONFIG_KEYS, type ConfigKeys } from '../../src/config/read-config.js';

const design = readFileSync('docs/design.md', 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation but `-` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every file under `dir` whose name ends in one of `endings`. */
function filesUnder(dir: string, endings: readonly string[]): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : filesUnder(path, endings);
    return endings.some((ending) => entry.name.endsWith(ending)) ? [path] : [];
  });
}

/** Every declared key path, objects and their keys. */
function declaredPaths(keys: ConfigKeys, prefix = ''): string[] {
  return Object.entries(keys).flatMap(([name, key]) => {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    return [path, ...(key.keys === undefined ? [] : declaredPaths(key.keys, path))];
  });
}

const citing = [
  ...filesUnder('src', ['.ts']),
  ...filesUnder('test', ['.ts']),
  ...filesUnder('bench', ['.ts', '.md']),
  'README.md',
  ...filesUnder('docs', ['.md']),
];

test('every anchor of docs/design.md that the code and the docs cite is a heading of it', () => {
  const anchors = new Set([...design.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
  let cited = 0;
  for (const file of citing) {
    for (const [, anchor] of readFileSync(file, 'utf8').matchAll(/design\.md#([a-z0-9-]+)/g)) {
      assert.ok(anchors.has(anchor!), `${file} cites docs/design.md#${anchor}, which is no heading`);
      cited++;
    }
  }
  assert.ok(cited > 20, `only ${cited} citations found: the pattern no longer matches the code`);
});

test('every section the code names in quotes after docs/design.md is in it', () => {
  // A name may run over lines of a comment: compared with white space (and a comment's `*` or `//`) as one space.
  const text = design.replace(/\s+/g, ' ').toLowerCase();
  for (const file of citing) {
    for (const [, name] of readFileSync(file, 'utf8').matchAll(/design\.md(?:#[a-z0-9-]+)?[,:]? "([^"]+)"/g)) {
      const words = name!.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, ' ').toLowerCase();
      assert.ok(text.includes(words), `${file} names "${words}" in docs/design.md, which does not hold it`);
    }
  }
});

test('every configuration key docs/design.md names is declared', () => {
  const declared = new Set(declaredPaths(CONFIG_KEYS));
  const topLevel = new Set(Object.keys(CONFIG_KEYS));
  let named = 0;
  // A dotted path under a top-level key (`shutdown.graceMs`), or any word after "config" (config `baseIri`).
  for (const [, path] of design.matchAll(/`([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)+)`/g)) {
    if (!topLevel.has(path!.split('.')[0]!)) continue;
    assert.ok(declared.has(path!), `docs/design.md names ${path}, which is no configuration key`);
    named++;
  }
  for (const [, path] of design.matchAll(/config `([^`]+)`/g)) {
    assert.ok(declared.has(path!), `docs/design.md names config ${path}, which is no configuration key`);
    named++;
  }
  assert.ok(named > 10, `only ${named} configuration keys found in docs/design.md`);
});
