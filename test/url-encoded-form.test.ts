// The form codec against the URL Standard's urlencoded parser and serializer (node's URLSearchParams where both agree), its byte-level cases, and the round trip.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFormPiece, encodeQueryForm, FormNotUtf8Error, joinQueryForm, parseForm } from '../src/url-encoded-form.js';

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
    for (const text of [
      '',
      '&&',
      'a',
      'a=',
      '=b',
      'a=b=c',
      'a=1&a=2&b',
      '%41%4a%4A',
      '%',
      '%4',
      '%zz',
      '%%41',
      'a+b=c+d',
      '%2B=%26',
      'x=%C3%A9',
    ]) {
      const expected: Record<string, string[]> = {};
      for (const [name, value] of new URLSearchParams(text)) (expected[name] ??= []).push(value);
      assert.deepEqual(parse(text), expected, text);
    }
  });

  it('decodes escaped bytes as UTF-8, and refuses bytes that are not UTF-8 rather than read U+FFFD', () => {
    assert.deepEqual(parse('q=%E2%82%AC'), { q: ['€'] });
    // The standard's decoder would put U+FFFD in their place: a text the caller did not write.
    for (const text of ['q=%FF', 'q=%E2%82', 'q=ASK%7B%3Fs%20%3Fp%20%22%C3%22%7D', '%C3=x', 'q=%ED%A0%80', 'q=%C0%AF']) {
      assert.throws(() => parse(text), FormNotUtf8Error, text);
    }
    // Raw bytes too, and an escaped lead byte completed by a raw byte (which alone is no UTF-8).
    assert.throws(() => parse(Buffer.from([0x71, 0x3d, 0xff])), FormNotUtf8Error);
    assert.throws(() => parse(Buffer.concat([Buffer.from('q=%C3'), Buffer.from([0xa9])])), FormNotUtf8Error);
  });
});

/** Every code point class a query can hold: ASCII (controls too), Latin-1, BMP, astral, and the form's own delimiters. */
const SAMPLES: readonly string[] = [
  '',
  Array.from({ length: 0x80 }, (_, code) => String.fromCharCode(code)).join(''),
  'PREFIX ex: <https://ex.org/a?b=c&d#e>\nSELECT * WHERE { ?s ?p "ü & = + % é€😀" . FILTER(?x != 1) }\t~!*()\'',
  '+%2B%%41&=&&==',
  '\u0085\u00a0\u00ff\u0100\u07ff\u0800\uffff\u{10000}\u{10ffff}',
];

describe('encodeQueryForm', () => {
  it('writes exactly what URLSearchParams writes', () => {
    for (const text of SAMPLES) {
      assert.equal(encodeQueryForm(text).toString('latin1'), new URLSearchParams([['query', text]]).toString(), JSON.stringify(text));
    }
  });

  it('round-trips through parseForm, for the samples and for random text', () => {
    let seed = 7;
    const random = (below: number): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % below;
    const texts = [...SAMPLES];
    for (let n = 0; n < 200; n += 1) {
      let text = '';
      for (let i = random(40); i > 0; i -= 1) {
        const plane = random(4);
        const code =
          plane === 0
            ? random(0x80)
            : plane === 1
              ? 0x80 + random(0x780)
              : plane === 2
                ? 0xe000 + random(0x2000)
                : 0x10000 + random(0x100000);
        text += String.fromCodePoint(code);
      }
      texts.push(text);
    }
    for (const text of texts) assert.deepEqual(parse(encodeQueryForm(text)), { query: [text] }, JSON.stringify(text));
  });
});

describe('joinQueryForm', () => {
  it('writes for pieces, some encoded once by encodeFormPiece, exactly what encodeQueryForm writes for their text joined', () => {
    let seed = 11;
    const random = (below: number): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % below;
    // Whole code points, lone surrogates included (both sides write U+FFFD); no piece ends in a
    // high surrogate, as no template piece or constant does (they end at token boundaries).
    const alphabet = [
      'a',
      'Z',
      '0',
      '*',
      '-',
      '.',
      '_',
      '~',
      '!',
      "'",
      '(',
      ')',
      ' ',
      '\n',
      '\t',
      '%',
      '+',
      '&',
      '=',
      '<',
      '>',
      '"',
      'é',
      '€',
      '😀',
      '\u{10ffff}',
      '\ud800x',
      '\udfff',
      '\u00a0',
      '\u007f',
      '\u0000',
      '\u0080',
      '\u00ff',
      '\u0100',
    ];
    for (let n = 0; n < 2_000; n += 1) {
      const pieces: (string | Buffer)[] = [];
      let text = '';
      for (let p = random(6); p > 0; p -= 1) {
        let piece = '';
        for (let i = random(12); i > 0; i -= 1) piece += alphabet[random(alphabet.length)];
        text += piece;
        if (random(2) === 0) {
          pieces.push(encodeFormPiece(piece));
        } else {
          pieces.push(piece);
        }
      }
      assert.deepEqual(joinQueryForm(pieces), encodeQueryForm(text), JSON.stringify(text));
    }
    for (const text of SAMPLES) assert.deepEqual(joinQueryForm([text]), encodeQueryForm(text), JSON.stringify(text));
  });
});
