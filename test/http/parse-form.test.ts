// parseForm against the URL Standard's urlencoded parser (node's URLSearchParams where both agree) and its byte-level cases.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseForm } from '../../src/http/parse-form.js';

const parse = (text: string | Buffer) => Object.fromEntries(parseForm(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8')));

describe('parseForm', () => {
  it('reads what URLSearchParams writes, for every kind of character a query holds', () => {
    const query = 'PREFIX ex: <https://ex.org/a?b=c&d#e>\nSELECT * WHERE { ?s ?p "ü & = + % é€😀" . FILTER(?x != 1) }\t~!*()\'';
    const body = new URLSearchParams([
      ['query', query],
      ['default-graph-uri', 'http://ex.org/g?x=1&y=2'],
      ['default-graph-uri', 'urn:b'],
    ]).toString();
    assert.deepEqual(parse(body), { query: [query], 'default-graph-uri': ['http://ex.org/g?x=1&y=2', 'urn:b'] });
    // encodeURIComponent's form (what the guard sends upstream) reads the same.
    assert.deepEqual(parse(`query=${encodeURIComponent(query)}`), { query: [query] });
  });

  it('agrees with URLSearchParams on edge cases of the syntax', () => {
    for (const text of ['', '&&', 'a', 'a=', '=b', 'a=b=c', 'a=1&a=2&b', '%41%4a%4A', '%', '%4', '%zz', '%%41', 'a+b=c+d', '%2B=%26', 'x=%C3%A9']) {
      const expected: Record<string, string[]> = {};
      for (const [name, value] of new URLSearchParams(text)) (expected[name] ??= []).push(value);
      assert.deepEqual(parse(text), expected, text);
    }
  });

  it('decodes escaped bytes as UTF-8, malformed sequences as U+FFFD', () => {
    assert.deepEqual(parse('q=%E2%82%AC'), { q: ['€'] });
    assert.deepEqual(parse('q=%FF'), { q: ['\uFFFD'] });
    assert.deepEqual(parse('q=%E2%82'), { q: ['\uFFFD'] });
    // An escaped lead byte completed by a literal byte is one character: the bytes are decoded together.
    assert.deepEqual(parse(Buffer.concat([Buffer.from('q=%C3'), Buffer.from([0xa9])])), { q: ['é'] });
  });
});
