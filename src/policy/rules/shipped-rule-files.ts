// Locates the rule files that ship with sparql-guard, rules/*.n3 at the repository root (on any thread).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../package-root.js';

/** Absolute paths of `rules/*.n3` at the package root (not `rules/examples/`), sorted by name. */
export function shippedRuleFiles(): string[] {
  const folder = join(packageRoot(), 'rules');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.n3'))
    .sort()
    .map((name) => join(folder, name));
}
