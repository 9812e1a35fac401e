// The folder sparql-guard is installed in, where its package.json, rules/, policies/ and ui/ live.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: string | undefined;

/**
 * The package root: the nearest folder above this module (src/ or dist/src/) whose
 * package.json is named sparql-guard, found once. Throws Error when there is none.
 */
export function packageRoot(): string {
  found ??= walkUp(dirname(fileURLToPath(import.meta.url)));
  return found;
}

function walkUp(start: string): string {
  for (let folder = start; ; folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'sparql-guard') {
      return folder;
    }
    if (dirname(folder) === folder)
      throw new Error('cannot find the sparql-guard package root (a package.json named sparql-guard) above its modules');
  }
}
