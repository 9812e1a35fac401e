// application/x-www-form-urlencoded, both ways, on bytes as the URL Standard says (section 5): the parser of request bodies and the encoder of the query sent upstream.

import { isUtf8 } from 'node:buffer';

/** A parsed form: every value of each name, in order of appearance. */
export type FormParams = ReadonlyMap<string, readonly string[]>;

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PLUS = 0x2b;
const PERCENT = 0x25;
const SPACE = 0x20;

/**
 * Thrown by parseForm for a form whose bytes, or the bytes its percent-escapes decode to, are not
 * UTF-8: the reader refuses it, since the text read would be one the caller did not write.
 */
export class FormNotUtf8Error extends Error {
  constructor() {
    super('not valid UTF-8');
    this.name = 'FormNotUtf8Error';
  }
}

/**
 * The name-value pairs of `body`: split on `&`, each at its first `=`, `+` read as a space,
 * percent-escapes decoded to bytes, and the bytes read as UTF-8. A malformed sequence, raw or
 * escaped, is a FormNotUtf8Error, where the standard's "UTF-8 decode without BOM" would put
 * U+FFFD in its place (a query the caller never wrote would run). Empty sequences between `&`s
 * are skipped. Works on the bytes, not on a decoded string: 0.3 to 0.7 of URLSearchParams'
 * CPU time for a query form (node decodes each value with decodeURIComponent; bench/README.md,
 * (h)), and exact for escapes of multi-byte characters.
 */
export function parseForm(body: Buffer): FormParams {
  // Once for the raw bytes; decodeComponent checks only what escapes decode to.
  if (!isUtf8(body)) throw new FormNotUtf8Error();
  const params = new Map<string, string[]>();
  let start = 0;
  while (start <= body.length) {
    let end = body.indexOf(AMPERSAND, start);
    if (end < 0) end = body.length;
    if (end > start) {
      let eq = body.indexOf(EQUALS, start);
      if (eq < 0 || eq > end) eq = end;
      const name = decodeComponent(body, start, eq);
      const value = eq < end ? decodeComponent(body, eq + 1, end) : '';
      const values = params.get(name);
      if (values === undefined) params.set(name, [value]);
      else values.push(value);
    }
    start = end + 1;
  }
  return params;
}

/** Components up to this size are decoded in `scratch`; larger ones in a buffer of their own. */
const SCRATCH_BYTES = 64 * 1024;
const scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);

/** Bytes `from` to `to` of `body` as form text: `+` and `%XX` decoded, then UTF-8 (a FormNotUtf8Error when they are not). */
function decodeComponent(body: Buffer, from: number, to: number): string {
  let plain = true;
  for (let i = from; i < to; i += 1) {
    const byte = body[i];
    if (byte === PLUS || byte === PERCENT) {
      plain = false;
      break;
    }
  }
  if (plain) return body.toString('utf8', from, to);
  // The decoded bytes only live until they are read as text below: one scratch buffer serves
  // every call of usual size (a query form is a few KB).
  const bytes = to - from <= SCRATCH_BYTES ? scratch : Buffer.allocUnsafe(to - from);
  let length = 0;
  for (let i = from; i < to; i += 1) {
    const byte = body[i]!;
    if (byte === PLUS) {
      bytes[length++] = SPACE;
      continue;
    }
    if (byte === PERCENT && i + 2 < to) {
      const high = hexValue(body[i + 1]!);
      const low = hexValue(body[i + 2]!);
      // A `%` not followed by two hex digits stays as it is (URL Standard, percent-decode).
      if (high >= 0 && low >= 0) {
        bytes[length++] = (high << 4) | low;
        i += 2;
        continue;
      }
    }
    bytes[length++] = byte;
  }
  if (!isUtf8(bytes.subarray(0, length))) throw new FormNotUtf8Error();
  return bytes.toString('utf8', 0, length);
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Per byte of UTF-8: 0 copied as it is, 1 written as `+` (the space), 2 percent-encoded. */
const FORM_BYTE_KIND = new Uint8Array(256).fill(2);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._') FORM_BYTE_KIND[c.charCodeAt(0)] = 0;
FORM_BYTE_KIND[0x20] = 1;
const HEX_DIGITS = Buffer.from('0123456789ABCDEF', 'latin1');
const QUERY_FIELD = Buffer.from('query=', 'latin1');

/**
 * `query=<text>` as application/x-www-form-urlencoded bytes, exactly as URLSearchParams
 * serialises it (URL Standard 5.2: the urlencoded byte serializer), written straight into
 * the Buffer undici sends: a third of the time of URLSearchParams (bench/README.md, (h)), and
 * no intermediate string.
 */
export function encodeQueryForm(text: string): Buffer {
  const utf8 = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(QUERY_FIELD.length + utf8.length * 3);
  let n = QUERY_FIELD.copy(out, 0);
  for (let i = 0; i < utf8.length; i += 1) {
    const byte = utf8[i]!;
    const kind = FORM_BYTE_KIND[byte];
    if (kind === 0) {
      out[n++] = byte;
    } else if (kind === 1) {
      out[n++] = 0x2b;
    } else {
      out[n] = 0x25;
      out[n + 1] = HEX_DIGITS[byte >> 4]!;
      out[n + 2] = HEX_DIGITS[byte & 15]!;
      n += 3;
    }
  }
  return out.subarray(0, n);
}

/**
 * `text` as the form serializer writes it, without `query=`: a piece of a form body encoded
 * once, to be joined by joinQueryForm. The serializer works code point by code point, so
 * the encodings of pieces joined are the encoding of the pieces joined, as long as no piece
 * ends inside a surrogate pair.
 */
export function encodeFormPiece(text: string): Buffer {
  return Buffer.from(encodeQueryForm(text).subarray(QUERY_FIELD.length));
}

/**
 * `query=` and the pieces, as encodeQueryForm writes their text joined: a Buffer piece is
 * copied as it is (encodeFormPiece made it), a string is encoded here. `field` false leaves
 * out `query=` (a later part of a body sent in parts).
 */
export function joinQueryForm(pieces: readonly (string | Buffer)[], field = true): Buffer {
  // Sized to the bound, at most 3 bytes per UTF-8 byte: small enough for node's buffer pool.
  let bound = field ? QUERY_FIELD.length : 0;
  for (const piece of pieces) bound += typeof piece === 'string' ? 3 * Buffer.byteLength(piece, 'utf8') : piece.length;
  const out = Buffer.allocUnsafe(bound);
  let n = field ? QUERY_FIELD.copy(out, 0) : 0;
  for (const piece of pieces) {
    if (typeof piece !== 'string') {
      n += piece.copy(out, n);
      continue;
    }
    for (let i = 0; i < piece.length; i += 1) {
      const code = piece.charCodeAt(i);
      if (code >= 0x80) {
        // A run of non-ASCII code units, whole (a surrogate pair is never split), through UTF-8.
        const run = i;
        while (i + 1 < piece.length && piece.charCodeAt(i + 1) >= 0x80) i += 1;
        n = writeEscaped(Buffer.from(piece.slice(run, i + 1), 'utf8'), out, n);
        continue;
      }
      const kind = FORM_BYTE_KIND[code];
      if (kind === 0) out[n++] = code;
      else if (kind === 1) out[n++] = 0x2b;
      else {
        out[n] = 0x25;
        out[n + 1] = HEX_DIGITS[code >> 4]!;
        out[n + 2] = HEX_DIGITS[code & 15]!;
        n += 3;
      }
    }
  }
  return out.subarray(0, n);
}

/** Writes every byte of `bytes` as %XX into `out` at `n`; returns the new end. */
function writeEscaped(bytes: Buffer, out: Buffer, n: number): number {
  for (let b = 0; b < bytes.length; b += 1) {
    const byte = bytes[b]!;
    out[n] = 0x25;
    out[n + 1] = HEX_DIGITS[byte >> 4]!;
    out[n + 2] = HEX_DIGITS[byte & 15]!;
    n += 3;
  }
  return n;
}
