// The version of the running sparql-guard, read once from its package.json.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root.js';

/** The package version (`0.0.0` when no package.json of sparql-guard is found above this file). */
export const OWN_VERSION = findOwnVersion();

function findOwnVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
