// The query route's own helpers that need no server: the store's error text as its log line holds it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loggedStoreText } from '../../src/http/query-route.js';

/** Bytes the text takes in a JSON line. */
const written = (text: string) => Buffer.byteLength(JSON.stringify(text));

describe('loggedStoreText', () => {
  it('keeps a short text whole', () => {
    assert.equal(loggedStoreText('Virtuoso 42000 Error SR171: Transaction timed out'), 'Virtuoso 42000 Error SR171: Transaction timed out');
  });

  it('bounds the text by the bytes it takes as written, not by characters: CJK, control characters, quotes', () => {
    for (const unit of ['漢', '\u0001', '"', 'a', '😀']) {
      const text = unit.repeat(5_000);
      const kept = loggedStoreText(text);
      assert.ok(written(kept) <= 3_000, `${JSON.stringify(unit)}: ${written(kept)} bytes`);
      assert.ok(written(kept + unit) > 3_000 - 2, `${JSON.stringify(unit)}: as much as fits (${kept.length} characters)`);
      assert.ok(text.startsWith(kept));
    }
  });
});
