// The text of the files the guard reads: UTF-8 or a refusal naming the line, never U+FFFD in place of a byte.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeUtf8Text, NotUtf8Error } from '../src/decode-utf8-text.js';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

/** The line a NotUtf8Error names for `input`. */
function badLine(input: Buffer): number {
  try {
    decodeUtf8Text(input);
  } catch (error) {
    assert.ok(error instanceof NotUtf8Error);
    assert.match(error.message, new RegExp(`^not valid UTF-8 \\(line ${error.line}; save it as UTF-8`));
    assert.doesNotMatch(error.message, /\n/);
    return error.line;
  }
  return assert.fail('decoded');
}

test('reads UTF-8 as it is, over CRLF lines and astral characters; a leading byte order mark goes', () => {
  assert.equal(decodeUtf8Text(bytes('ex:café a "😀" .\r\nex:b ex:c "d" .\n')), 'ex:café a "😀" .\r\nex:b ex:c "d" .\n');
  assert.equal(decodeUtf8Text(bytes([0xef, 0xbb, 0xbf], '{"port": 1}')), '{"port": 1}');
  assert.equal(decodeUtf8Text(bytes('')), '');
  assert.equal(decodeUtf8Text(bytes('a', [0xef, 0xbb, 0xbf])), 'a\uFEFF', 'only a leading mark is dropped');
});

test('refuses a byte that is not UTF-8, naming the first line that holds one', () => {
  assert.equal(badLine(bytes('# caf', [0xe9], '\n')), 1, 'Latin-1 é');
  assert.equal(badLine(bytes('a\nb\r\nex:caf', [0xe9], ' .\nd', [0xff])), 3, 'the first of two');
  assert.equal(badLine(bytes('a\nb\nlast ', [0xc3])), 3, 'a last line without a line feed');
  assert.equal(badLine(bytes('a ', [0xc3], '\nb')), 1, 'a sequence cut by the line feed');
  assert.equal(badLine(bytes([0xed, 0xa0, 0x80])), 1, 'an encoded surrogate');
  assert.equal(badLine(bytes([0xc0, 0xaf])), 1, 'an overlong form');
  assert.equal(badLine(bytes('\n\n', [0xf4, 0x90, 0x80, 0x80])), 3, 'past U+10FFFF');
});
