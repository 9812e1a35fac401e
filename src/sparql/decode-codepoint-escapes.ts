// Decodes SPARQL codepoint escapes (\uXXXX, \UXXXXXXXX) before parsing, refusing any that would change the tokens.

import { GuardError } from '../guard-error.js';
import { NOT_IN_IRI } from '../iri.js';
import type { TextRegion } from './split-query-text.js';

/** Outside IRIs, strings and comments a decoded escape may only continue a name. */
const NAME_CHAR = /^[A-Za-z0-9_]$/;

/**
 * SPARQL 1.1 §19.2: codepoint escapes "are processed before parsing" (`<g/\u0073ecret>` names
 * `<g/secret>`). Decoded only where it cannot change the tokens (allowedIn): an escape never turns
 * into punctuation, white space, a delimiter or a line break. Throws GuardError 400 otherwise.
 */
export function decodeCodepointEscapes(text: string, regions: readonly TextRegion[]): string {
  if (!/\\[uU]/.test(text)) return text;
  return regions.map((region) => decodeRegion(text, region)).join('');
}

function decodeRegion(text: string, region: TextRegion): string {
  const allowed = allowedIn(region);
  let out = '';
  let copied = region.start;
  let i = region.start;
  while (i < region.end) {
    if (text[i] !== '\\') {
      i++;
      continue;
    }
    const kind = text[i + 1];
    if (kind !== 'u' && kind !== 'U') {
      i += 2; // ECHAR or PN_LOCAL_ESC: the parser reads it
      continue;
    }
    const width = kind === 'U' ? 8 : 4;
    const digits = text.slice(i + 2, i + 2 + width);
    if (digits.length !== width || !/^[0-9A-Fa-f]+$/.test(digits)) {
      throw refusal(text, i, 'malformed codepoint escape');
    }
    const codepoint = Number.parseInt(digits, 16);
    if (codepoint > 0x10ffff || (codepoint >= 0xd800 && codepoint <= 0xdfff)) {
      throw refusal(text, i, 'codepoint escape names no character');
    }
    const char = String.fromCodePoint(codepoint);
    if (!allowed(char)) throw refusal(text, i, 'codepoint escape would change the query structure');
    out += text.slice(copied, i) + char;
    i += 2 + width;
    copied = i;
  }
  return out + text.slice(copied, region.end);
}

function allowedIn(region: TextRegion): (char: string) => boolean {
  switch (region.kind) {
    case 'iri':
      return (char) => !NOT_IN_IRI.test(char);
    case 'comment':
      return (char) => char !== '\n' && char !== '\r';
    case 'string': {
      const quote = region.quote?.[0];
      const short = region.quote?.length === 1;
      return (char) => char !== quote && char !== '\\' && !(short && (char === '\n' || char === '\r'));
    }
    case 'code':
      return (char) => NAME_CHAR.test(char) || char.codePointAt(0)! >= 0x80;
  }
}

function refusal(text: string, at: number, reason: string): GuardError {
  const before = text.slice(0, at);
  const lines = before.split(/\r\n|\r|\n/);
  const line = lines.length;
  const column = (lines[lines.length - 1] ?? '').length + 1;
  return new GuardError(400, 'parse', `query is not valid SPARQL 1.1: ${reason} at line ${line}, column ${column}`);
}
