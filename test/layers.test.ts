// The house's layers, read from the imports of src/: no arrow back up, no circle, each library through its one folder.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve('src');

/** Every TypeScript file under src/, relative to it. */
function sourceFiles(folder = SRC): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/** What `file` imports (static, dynamic and `export ... from`): files of src/ relative to it, and package names. */
function importsOf(file: string): { files: string[]; packages: string[] } {
  const text = readFileSync(join(SRC, file), 'utf8');
  const files: string[] = [];
  const packages: string[] = [];
  for (const [, specifier] of text.matchAll(/(?:\bfrom|\bimport\s*\(?)\s*'([^']+)'/g)) {
    if (specifier === undefined) continue;
    if (specifier.startsWith('.')) files.push(relative(SRC, resolve(SRC, dirname(file), specifier.replace(/\.js$/, '.ts'))));
    else if (!specifier.startsWith('node:'))
      packages.push(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
  }
  return { files, packages };
}

const FILES = sourceFiles();
const IMPORTS = new Map(FILES.map((file) => [file, importsOf(file)]));

/** The folder a file of src/ lives in ('' for a file at the top). */
const folderOf = (file: string) => dirname(file).replace(/^\.$/, '');

test('the imports are read: every file of src/ that another imports exists', () => {
  assert.ok(FILES.length > 100, `${FILES.length} files`);
  for (const [file, { files }] of IMPORTS)
    for (const target of files) assert.ok(IMPORTS.has(target), `${file} imports ${target}, not found`);
});

test('lower layers never import higher ones', () => {
  // A folder, and the folders it must never import.
  const never: Record<string, readonly string[]> = {
    auth: ['config', 'http', 'server', 'cli', 'policy', 'sparql'],
    policy: ['config', 'http', 'server', 'cli', 'sparql'],
    sparql: ['config', 'http', 'server', 'cli'],
    upstream: ['config', 'http', 'server', 'cli', 'policy', 'sparql'],
    config: ['sparql', 'policy', 'http', 'server', 'cli', 'upstream'],
    http: ['server', 'cli'],
    server: ['cli'],
  };
  const problems: string[] = [];
  for (const [file, { files }] of IMPORTS) {
    const top = file.split('/')[0]!;
    for (const target of files) if (never[top]?.includes(target.split('/')[0]!)) problems.push(`${file} imports ${target}`);
  }
  assert.deepEqual(problems, []);
});

test('the rooms of policy/ import only the rooms below them', () => {
  // From the bottom up: the table, what a load asks the store, the rules engine, the load, check --why.
  const floors = ['policy', 'policy/store-reads', 'policy/rules', 'policy/load', 'policy/trace'];
  const problems: string[] = [];
  for (const [file, { files }] of IMPORTS) {
    const from = floors.indexOf(folderOf(file));
    if (from < 0) continue;
    for (const target of files) {
      const to = floors.indexOf(folderOf(target));
      if (to > from) problems.push(`${file} imports ${target}`);
    }
  }
  assert.deepEqual(problems, []);
  for (const folder of floors)
    assert.ok(
      FILES.some((file) => folderOf(file) === folder),
      `${folder}/ holds no file`,
    );
});

test('no two files of src/ import each other, directly or around a circle', () => {
  const state = new Map<string, 'open' | 'done'>();
  const circles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const target of IMPORTS.get(file)?.files ?? []) visit(target, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of FILES) visit(file, []);
  assert.deepEqual(circles, []);
});

test('each library enters through one folder', () => {
  const homes: Record<string, readonly string[]> = {
    sparqljs: ['sparql'],
    undici: ['upstream'],
    n3: ['policy'],
    eyereasoner: ['policy'],
    fastify: ['http', 'server'],
  };
  const problems: string[] = [];
  for (const [file, { packages }] of IMPORTS) {
    for (const name of packages) {
      const allowed = homes[name];
      if (allowed !== undefined && !allowed.includes(file.split('/')[0]!)) problems.push(`${file} imports ${name}`);
    }
  }
  assert.deepEqual(problems, []);
});
