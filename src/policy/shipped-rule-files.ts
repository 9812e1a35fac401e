// Locates the rule files that ship with sparql-guard (rules/*.n3 at the repository root).

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Absolute paths of `rules/*.n3` (not `rules/examples/`), sorted by name. The
 * root is found by walking up from this module to the package.json named
 * sparql-guard, so it works from src/ and from any build output folder.
 */
export function shippedRuleFiles(): string[] {
  const root = packageRoot(dirname(fileURLToPath(import.meta.url)));
  const folder = join(root, 'rules');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.n3'))
    .sort()
    .map((name) => join(folder, name));
}

function packageRoot(start: string): string {
  for (let folder = start; ; folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'sparql-guard') {
      return folder;
    }
    if (dirname(folder) === folder) throw new Error('cannot find the sparql-guard package root above the policy module');
  }
}
