// Builds (npm run build) only when a source is newer than the built bin, so `npm start` on an up-to-date dist/ starts at once.
// With --check it builds nothing and exits 1 when a build is due, 0 when dist/ is up to date.

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

/** What the bin is built from: the sources and the files that change how they compile. */
const INPUTS = ['src', 'tsconfig.json', 'package.json', 'package-lock.json'];
const BUILT = join('dist', 'src', 'cli.js');

function newestMs(path) {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return 0;
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMs(join(path, name))));
}

const built = statSync(BUILT, { throwIfNoEntry: false })?.mtimeMs ?? -1;
const stale = built < Math.max(...INPUTS.map(newestMs));
if (process.argv.includes('--check')) process.exit(stale ? 1 : 0);
if (stale) {
  process.stderr.write(built < 0 ? 'no build yet: npm run build\n' : 'sources changed since the last build: npm run build\n');
  const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
  process.exit(build.status ?? 1);
}
