// Splits query text into code, IRI, string and comment regions: the lexical context the pre-parse passes need.

/** Where a run of characters stands, lexically (SPARQL 1.1 §19.8 terminals). */
export type RegionKind = 'code' | 'iri' | 'string' | 'comment';

/** A run `text.slice(start, end)`; for strings `quote` is the delimiter (`'`, `"`, `'''` or `"""`). */
export interface TextRegion {
  readonly kind: RegionKind;
  readonly start: number;
  readonly end: number;
  readonly quote?: string;
}

/** An IRIREF ([139]), codepoint escapes included; a `<` that starts none is the less-than operator. */
const IRIREF = /<(?:[^<>"{}|^`\\\u0000-\u0020]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>/y;

/**
 * Splits `text` into consecutive regions covering it. A backslash pair in code stays whole (a `#`
 * after it starts no comment); an unterminated string runs to its line's end or the text's.
 */
export function splitQueryText(text: string): TextRegion[] {
  const regions: TextRegion[] = [];
  const n = text.length;
  let codeStart = 0;
  let i = 0;
  const push = (kind: RegionKind, start: number, end: number, quote?: string): void => {
    if (codeStart < start) regions.push({ kind: 'code', start: codeStart, end: start });
    regions.push(quote === undefined ? { kind, start, end } : { kind, start, end, quote });
    codeStart = end;
  };
  while (i < n) {
    const c = text[i];
    if (c === '\\') {
      i += 2;
    } else if (c === '#') {
      let end = i;
      while (end < n && text[end] !== '\n' && text[end] !== '\r') end++;
      push('comment', i, end);
      i = end;
    } else if (c === '"' || c === "'") {
      const quote = text.startsWith(c + c + c, i) ? c + c + c : c;
      let end = i + quote.length;
      while (end < n) {
        const d = text[end];
        if (d === '\\') end += 2;
        else if (text.startsWith(quote, end)) {
          end += quote.length;
          break;
        } else if (quote.length === 1 && (d === '\n' || d === '\r')) break;
        else end++;
      }
      end = Math.min(end, n);
      push('string', i, end, quote);
      i = end;
    } else if (c === '<') {
      IRIREF.lastIndex = i;
      const match = IRIREF.exec(text);
      if (match === null) i++;
      else {
        push('iri', i, i + match[0].length);
        i += match[0].length;
      }
    } else i++;
  }
  if (codeStart < n) regions.push({ kind: 'code', start: codeStart, end: n });
  return regions;
}
