// Fails when a file tracked by git is over 1 MB and is not declared test data in test/fixtures/large-files.txt.
// Run by `npm run lint`: profiles, heap snapshots and dumps never enter git; test data is the only large file kept.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

/** The bound, in bytes (1 MB, decimal: a file of 1,000,001 bytes is over it). */
const MAX_BYTES = 1_000_000;
/** The one list of declared large test data: a path from the repository root per line, `#` starts a comment. */
const DECLARED = 'test/fixtures/large-files.txt';

function git(args, input) {
  return execFileSync('git', args, { encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
}

let root;
try {
  root = git(['rev-parse', '--show-toplevel']).trim();
} catch {
  process.stderr.write('check-file-sizes: not inside a git work tree, so no file is tracked: nothing to check\n');
  process.exit(0);
}

// The sizes of the blobs in the index (what a commit holds), not of the working files.
const entries = git(['-C', root, 'ls-files', '--stage', '-z'])
  .split('\0')
  .filter((line) => line !== '')
  .map((line) => {
    const [meta, path] = line.split('\t');
    const [mode, blob] = meta.split(' ');
    return { mode, blob, path };
  })
  // A submodule's entry names a commit of another repository, not a file of this one.
  .filter((entry) => entry.mode !== '160000');
const sizes = git(['-C', root, 'cat-file', '--batch-check=%(objectsize)'], entries.map((entry) => entry.blob).join('\n') + '\n')
  .trim()
  .split('\n')
  .map(Number);
const tracked = new Set(entries.map((entry) => entry.path));

let declaredText = '';
try {
  declaredText = readFileSync(join(root, DECLARED), 'utf8');
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
const declared = new Set(
  declaredText
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== ''),
);

const problems = [];
entries.forEach((entry, i) => {
  const bytes = sizes[i];
  if (bytes > MAX_BYTES && !(declared.has(entry.path) && entry.path.startsWith('test/'))) {
    problems.push(
      `${entry.path} is ${(bytes / 1e6).toFixed(1)} MB (over 1 MB): remove it from git, or, if it is test data, add its path to ${DECLARED}`,
    );
  }
});
for (const path of declared) {
  if (!path.startsWith('test/')) problems.push(`${DECLARED} declares ${path}: only test data (a path under test/) may be declared`);
  else if (!tracked.has(path)) problems.push(`${DECLARED} declares ${path}, which git does not track: remove the line`);
}
if (problems.length > 0) {
  process.stderr.write(problems.map((problem) => `check-file-sizes: ${problem}\n`).join(''));
  process.exit(1);
}
