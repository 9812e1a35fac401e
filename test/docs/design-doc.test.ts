// Keeps docs/design/ true to the code: every file and anchor the code cites exists, every section named in quotes is there, and every configuration key it names is declared.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CONFIG_KEYS, type ConfigKeys } from '../../src/config/read-config.js';

/** The design files by name (`sparql` for docs/design/sparql.md). */
const designs = new Map(
  readdirSync('docs/design')
    .filter((name) => name.endsWith('.md'))
    .map((name) => [name.slice(0, -3), readFileSync(join('docs/design', name), 'utf8')]),
);

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
  ...filesUnder('test', ['.ts']).filter((file) => !file.endsWith('design-doc.test.ts')),
  ...filesUnder('bench', ['.ts', '.md']),
  'README.md',
  ...filesUnder('docs', ['.md']),
];

test('there is one design file per source folder, and no docs/design.md', () => {
  const folders = readdirSync('src', { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  for (const folder of folders) assert.ok(designs.has(folder), `src/${folder}/ has no docs/design/${folder}.md`);
  assert.ok(!existsSync('docs/design.md'), 'docs/design.md is split into docs/design/<folder>.md');
  for (const file of citing)
    assert.doesNotMatch(readFileSync(file, 'utf8'), /docs\/design\.md/, `${file} cites docs/design.md: cite docs/design/<folder>.md`);
});

test('every design file and anchor that the code and the docs cite exists', () => {
  let cited = 0;
  for (const file of citing) {
    for (const [, name, anchor] of readFileSync(file, 'utf8').matchAll(/design\/([a-z-]+|README)\.md(?:#([a-z0-9-]+))?/g)) {
      const design = designs.get(name!);
      assert.ok(design !== undefined, `${file} cites docs/design/${name}.md, which does not exist`);
      if (anchor !== undefined) {
        const anchors = new Set([...design.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
        assert.ok(anchors.has(anchor), `${file} cites docs/design/${name}.md#${anchor}, which is no heading`);
      }
      cited++;
    }
  }
  assert.ok(cited > 20, `only ${cited} citations found: the pattern no longer matches the code`);
});

test('every section the code names in quotes after a design file is in it', () => {
  let named = 0;
  for (const file of citing) {
    for (const [, name, words] of readFileSync(file, 'utf8').matchAll(/design\/([a-z-]+)\.md(?:#[a-z0-9-]+)?[,:]? "([^"]+)"/g)) {
      // A name may run over lines of a comment: compared with white space (and a comment's `*` or `//`) as one space.
      const text = (designs.get(name!) ?? '').replace(/\s+/g, ' ').toLowerCase();
      const wanted = words!.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, ' ').toLowerCase();
      assert.ok(text.includes(wanted), `${file} names "${wanted}" in docs/design/${name}.md, which does not hold it`);
      named++;
    }
  }
  assert.ok(named > 5, `only ${named} quoted sections found: the pattern no longer matches the code`);
});

test('every configuration key the design files name is declared', () => {
  const declared = new Set(declaredPaths(CONFIG_KEYS));
  const topLevel = new Set(Object.keys(CONFIG_KEYS));
  let named = 0;
  for (const [name, design] of designs) {
    // A dotted path under a top-level key (`shutdown.graceMs`), or any word after "config" (config `baseIri`).
    for (const [, path] of design.matchAll(/`([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)+)`/g)) {
      if (!topLevel.has(path!.split('.')[0]!)) continue;
      assert.ok(declared.has(path!), `docs/design/${name}.md names ${path}, which is no configuration key`);
      named++;
    }
    for (const [, path] of design.matchAll(/config `([^`]+)`/g)) {
      assert.ok(declared.has(path!), `docs/design/${name}.md names config ${path}, which is no configuration key`);
      named++;
    }
  }
  assert.ok(named > 10, `only ${named} configuration keys found in docs/design/`);
});
