// The form body sent upstream, read back by the URL Standard's urlencoded parser (URLSearchParams): every text, whole or in pieces.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFormPiece, encodeQueryForm, joinQueryForm } from '../src/url-encoded-form.js';

/** Every value of each name, as a store's form parser reads the body. */
const parse = (body: Buffer): Record<string, string[]> => {
  const params: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(body.toString('latin1'))) (params[name] ??= []).push(value);
  return params;
};

/** Every code point class a query can hold: ASCII (controls too), Latin-1, BMP, astral, and the form's own delimiters. */
const SAMPLES: readonly string[] = [
  '',
  Array.from({ length: 0x80 }, (_, code) => String.fromCharCode(code)).join(''),
  'PREFIX ex: <https://ex.org/a?b=c&d#e>\nSELECT * WHERE { ?s ?p "ü & = + % é€😀" . FILTER(?x != 1) }\t~!*()\'',
  '+%2B%%41&=&&==',
  '\u0085\u00a0\u00ff\u0100\u07ff\u0800\uffff\u{10000}\u{10ffff}',
];

describe('encodeQueryForm', () => {
  it('writes only the ASCII bytes a form body may hold, nothing the form syntax reads as a delimiter', () => {
    for (const text of SAMPLES)
      assert.match(encodeQueryForm(text).toString('latin1'), /^query=[A-Za-z0-9%!'()*._~-]*$/, JSON.stringify(text));
  });

  it('writes a lone surrogate as U+FFFD, as URLSearchParams does, rather than failing', () => {
    for (const text of ['\ud800', 'a\udfffb', '\udc00\ud800']) {
      assert.deepEqual(parse(encodeQueryForm(text)), { query: [new URLSearchParams([['q', text]]).get('q')!] }, JSON.stringify(text));
    }
  });

  it('reads back as the text, for the samples and for random text', () => {
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
      assert.deepEqual(parse(joinQueryForm(pieces)), { query: [text.toWellFormed()] }, JSON.stringify(text));
    }
    for (const text of SAMPLES) assert.deepEqual(joinQueryForm([text]), encodeQueryForm(text), JSON.stringify(text));
  });
});
