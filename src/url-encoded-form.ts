// The query sent upstream as application/x-www-form-urlencoded, written with the platform's encodeURIComponent; request forms are read with URLSearchParams.

const QUERY_FIELD = Buffer.from('query=', 'latin1');

/**
 * `text` as a form value, without `query=`: a piece of a form body encoded once, to be joined
 * by joinQueryForm. encodeURIComponent escapes every byte the form syntax gives a meaning to
 * (`&`, `=`, `+`, `%`), so the URL Standard's urlencoded parser (5.1) reads the text back; it
 * leaves `!'()*~` as they are and writes a space as `%20`, which the parser reads alike. A lone
 * surrogate becomes U+FFFD first, as URLSearchParams writes it (encodeURIComponent would throw).
 * Encoding works code point by code point, so the pieces of a text encoded one by one and joined
 * are the text encoded, as long as no piece ends inside a surrogate pair.
 */
export function encodeFormPiece(text: string): Buffer {
  return Buffer.from(encodeURIComponent(text.toWellFormed()), 'latin1');
}

/** `query=<text>` as application/x-www-form-urlencoded bytes, the body sent to the store. */
export function encodeQueryForm(text: string): Buffer {
  return Buffer.from(`query=${encodeURIComponent(text.toWellFormed())}`, 'latin1');
}

/**
 * `query=` and the pieces, as encodeQueryForm writes their text joined: a Buffer piece is
 * copied as it is (encodeFormPiece made it), a string is encoded here. `field` false leaves
 * out `query=` (a later part of a body sent in parts).
 */
export function joinQueryForm(pieces: readonly (string | Buffer)[], field = true): Buffer {
  const parts: Buffer[] = field ? [QUERY_FIELD] : [];
  for (const piece of pieces) parts.push(typeof piece === 'string' ? encodeFormPiece(piece) : piece);
  return Buffer.concat(parts);
}
