// Runs every compiled test file with node's test runner and its spec reporter (same on Node 20, 22, 24).

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const testRoot = fileURLToPath(new URL('.', import.meta.url));
/** Folders run by their own scripts (`npm run test:stores`, `npm run test:scale-out`), not by `npm test`. */
const excluded = new Set(process.argv.slice(2).includes('--stores') ? [] : ['stores', 'scale-out']);
const only = process.argv.slice(2).includes('--stores') ? 'stores' : undefined;

function testFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) return excluded.has(entry.name) ? [] : testFiles(path);
      return entry.name.endsWith('.test.js') ? [path] : [];
    })
    .sort();
}

const files = testFiles(only ? join(testRoot, only) : testRoot).map((file) => relative(process.cwd(), file));
const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
