// Every refusal carries a code from the one list, with that code's status.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { GUARD_CODES, GuardError, type GuardCode } from '../src/guard-error.js';
import { createConcurrencyLimiter } from '../src/server/create-concurrency-limiter.js';

/** Every .ts file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

test('every GuardError written in src/ with a code gives that code its listed status', () => {
  let checked = 0;
  for (const file of sourceFiles('src')) {
    const text = readFileSync(file, 'utf8');
    for (const [, status, code] of text.matchAll(/new GuardError\(\s*(\d{3}),\s*'([a-z_]+)'/g)) {
      assert.ok(code! in GUARD_CODES, `${file}: ${code} is not in GUARD_CODES`);
      assert.equal(Number(status), GUARD_CODES[code as GuardCode], `${file}: ${code}`);
      checked += 1;
    }
  }
  assert.ok(checked > 50, `found ${checked} coded GuardErrors: the pattern no longer matches the code`);
});

test('every GuardError written in src/ names its code', () => {
  for (const file of sourceFiles('src')) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/new GuardError\(/g)) {
      const rest = text.slice((match.index ?? 0) + match[0].length, (match.index ?? 0) + 200);
      assert.match(rest, /^\s*\d{3},\s*(?:'[a-z_]+'|error\.code),/, `${file}: a GuardError without its code`);
    }
  }
  const error = new GuardError(401, 'unauthenticated', 'no', { 'WWW-Authenticate': 'Bearer' });
  assert.equal(error.code, 'unauthenticated');
  assert.deepEqual(error.headers, { 'WWW-Authenticate': 'Bearer' });
  assert.deepEqual(new GuardError(403, 'forbidden', 'no').headers, {});
});

test('a caller past its guard:maxConcurrent is refused with too_many_requests', () => {
  const limiter = createConcurrencyLimiter();
  const leave = limiter.enter('https://example.org/agents/alice', 1);
  assert.throws(
    () => limiter.enter('https://example.org/agents/alice', 1),
    (error: unknown) => error instanceof GuardError && error.code === 'too_many_requests' && error.status === 429,
  );
  leave();
});
