// A policy or rule file read only once nobody is writing it: a file saved in place (truncated,
// then written) could otherwise be read half-written, and a half that still parses may grant a
// graph without the hidden paths or row rule that the rest of the file states (docs/design/server.md).

import { readFile, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/** A file modified less than this long ago may still be being written: the load waits until it is this old. */
export const SETTLE_MS = 200;
/** Reads tried before a file that keeps changing fails the load (the set in force stays). */
const ATTEMPTS = 10;

/** Thrown when every attempt found the file changing. */
export class FileUnsettledError extends Error {
  constructor() {
    super(`kept changing while it was read (${ATTEMPTS} tries); save it by writing a new file and renaming it over the old one`);
    this.name = 'FileUnsettledError';
  }
}

/**
 * The bytes of `file`, read when its modification time is at least SETTLE_MS old and unchanged
 * by the read (same size, modification and change times before and after). A time in the future
 * (a clock skew, a file unpacked with its maker's times) is not waited for; the read must still
 * be stable. Errors of stat and readFile pass through as thrown.
 */
export async function readSettledFile(file: string, now: () => number = Date.now): Promise<Buffer> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const before = await stat(file);
    const age = now() - before.mtimeMs;
    if (age >= 0 && age < SETTLE_MS) {
      await sleep(SETTLE_MS - age);
      continue;
    }
    const bytes = await readFile(file);
    const after = await stat(file);
    if (sameVersion(before, after) && bytes.length === after.size) return bytes;
  }
  throw new FileUnsettledError();
}

function sameVersion(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.ceil(ms)));
}
