// The version of the running sparql-guard, read once from its package.json.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package version (`0.0.0` when no package.json of sparql-guard is found above this file). */
export const OWN_VERSION = findOwnVersion();

/** Walks up from this file (src/ or dist/src/) to the package.json of sparql-guard. */
function findOwnVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'sparql-guard' && typeof pkg.version === 'string') return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}
