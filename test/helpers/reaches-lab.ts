// Which compiled test files reach the store lab, read from their text: run-tests keeps those one at a time.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';

/**
 * Whether the compiled file `file` of the folder `root` reaches the store lab: it, or a module of `root` it
 * imports (a helper, at any depth), names a RIG_ variable, which is how every test finds the lab
 * (test/helpers/rig-stores.ts, lab-update.ts). `known` carries the answers across calls.
 */
export function reachesLab(file: string, root: string, known = new Map<string, boolean>()): boolean {
  const seen = known.get(file);
  if (seen !== undefined) return seen;
  // In a cycle of imports the file under way adds nothing: the others' own texts decide.
  known.set(file, false);
  const text = readFileSync(file, 'utf8');
  const inside = root.endsWith(sep) ? root : `${root}${sep}`;
  const imported = [...text.matchAll(/(?:\bfrom|\bimport\s*\(?)\s*'(\.{1,2}\/[^']+)'/g)]
    .map(([, specifier]) => resolve(dirname(file), specifier ?? ''))
    .filter((path) => path.startsWith(inside) && existsSync(path));
  const reaches = /\bRIG_[A-Z]/.test(text) || imported.some((path) => reachesLab(path, root, known));
  known.set(file, reaches);
  return reaches;
}
