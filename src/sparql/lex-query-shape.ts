// One lexical pass over query text: the shape key (the text with its constants cut out) and each constant as the generator would write it.

import { hasScheme, NOT_IN_IRI } from '../iri.js';
import { resolveIri } from './resolve-iri.js';

/**
 * The class of a constant slot: `S` a string literal without datatype (its
 * language tag stays in the key), `I` an IRI (IRIREF or prefixed name), and
 * the unsigned numeric literals `N` (INTEGER), `D` (DECIMAL) and `E` (DOUBLE)
 * (a sign stays in the key).
 */
export type ConstantClass = 'S' | 'I' | 'N' | 'D' | 'E';

/** A query cut into the shape it shares with other queries and its own constants. */
export interface QueryShape {
  /**
   * The query text with white space and comments normalised to one space and
   * every constant replaced by `\u0001` and its class. Keyword case, variable
   * names and every constant kept in the key (see lexQueryShape) stay as written.
   */
  readonly key: string;
  /** The text between constants, one more piece than constants; `key` is them joined by the markers. */
  readonly code: readonly string[];
  /**
   * The slot of each constant in text order. Equal constants (same class, same
   * generated form) share the first one's slot: the generator compares terms
   * (consecutive triples with one subject are merged), so equality is part of
   * the shape, written into the key as `\u0002` and the slot number.
   */
  readonly refs: readonly number[];
  /**
   * Slots that stand in a verb position of a triple pattern at least once,
   * by a lexical reading of triples blocks: a guess (the planner confirms it)
   * of the constants whose values the planner checks as predicates.
   */
  readonly verbs: readonly number[];
  /** One class letter per slot. */
  readonly classes: string;
  /** Each slot's constant as first written. */
  readonly raw: readonly string[];
  /**
   * Each constant as the planner's generator writes it: an IRI as `<absolute>`
   * (resolved against BASE, prefixed names expanded, PN_LOCAL_ESC backslashes
   * dropped), a string's content with the generator's escapes, a DOUBLE in
   * lower case, any other number as written.
   */
  readonly fill: readonly string[];
}

// SPARQL 1.1 §19.8 terminals, [163]-[173].
const PN_CHARS_BASE =
  'A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
const PN_CHARS_U = PN_CHARS_BASE + '_';
const PN_CHARS = PN_CHARS_U + '\\-0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040';
const PLX = "%[0-9A-Fa-f]{2}|\\\\[_~.\\-!$&'()*+,;=/?#@%]";
const PN_PREFIX = `[${PN_CHARS_BASE}](?:[${PN_CHARS}.]*[${PN_CHARS}])?`;
const PN_LOCAL = `(?:[${PN_CHARS_U}:0-9]|${PLX})(?:(?:[${PN_CHARS}.:]|${PLX})*(?:[${PN_CHARS}:]|${PLX}))?`;
/* eslint-disable no-misleading-character-class -- the ranges hold the combining marks U+0300-U+036F that [166] PN_CHARS lists, on purpose */
/** PNAME_NS or PNAME_LN ([140], [141]): group 1 the prefix, group 2 the local part. */
const PNAME = new RegExp(`(${PN_PREFIX})?:(${PN_LOCAL})?`, 'uy');
/** VAR1 / VAR2 ([143], [144]). */
const VAR = new RegExp(`[?$][${PN_CHARS_U}0-9][${PN_CHARS_U}0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]*`, 'uy');
/** BLANK_NODE_LABEL ([142]). */
const BLANK_NODE_LABEL = new RegExp(`_:[${PN_CHARS_U}0-9](?:[${PN_CHARS}.]*[${PN_CHARS}])?`, 'uy');
/* eslint-enable no-misleading-character-class */
/** IRIREF ([139]); the text holds no codepoint escapes. */
const IRIREF = /<([^<>"{}|^`\\\u0000-\u0020]*)>/y;
/** DOUBLE, DECIMAL, INTEGER ([146]-[148]), longest first. */
const NUMBER = /(\d+\.\d*[eE][+-]?\d+|\.\d+[eE][+-]?\d+|\d+[eE][+-]?\d+)|(\d*\.\d+)|(\d+)/y;
/** LANGTAG ([145]). */
const LANGTAG = /@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*/y;
/** Keywords (and `a`, `true`, `false`): ASCII letters and `_`; a name followed by `:` is a prefix instead. */
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
/** Punctuation of the grammar, two-character operators first. */
const PUNCT = /\^\^|&&|\|\||!=|<=|>=|[{}()[\];,.+\-*/|^!=<>?]/y;
/** ECHAR ([160]) and what each stands for. */
const ECHAR: Readonly<Record<string, string>> = { t: '\t', b: '\b', n: '\n', r: '\r', f: '\f', '"': '"', "'": "'", '\\': '\\' };
/** What the sparqljs generator escapes inside `"…"`, and how. */
const GENERATOR_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\', '"': '\\"', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f',
};
const GENERATOR_ESCAPED = /["\\\t\n\r\b\f]/g;
/** Keywords (and `^^`) after which an IRI is part of the key: dataset, graph and service names, datatypes. */
const KEYED_AFTER = new Set(['FROM', 'NAMED', 'GRAPH', 'SERVICE', 'SILENT', '^^']);

/**
 * Cuts `text` into its shape and constants in one pass implementing the
 * SPARQL 1.1 grammar's terminals (§19.8), or returns undefined for anything
 * it cannot classify (the planner then prepares the text as it is). Never
 * parses. Constants that are never slots (they stay in the key as written):
 * BASE and PREFIX declarations, IRIs after FROM, NAMED, GRAPH and SERVICE,
 * IRIs followed by `(` (function calls and aggregates), datatypes (and the
 * whole literal for xsd:string and xsd:integer, which the generator writes
 * differently), language tags, signs, booleans, and the integers of LIMIT and
 * OFFSET. Text with codepoint escapes is not cut (§19.2 decodes them before
 * any token exists). `baseIri` is the planner's base, for relative IRIs.
 */
export function lexQueryShape(text: string, baseIri: string): QueryShape | undefined {
  if (text.includes('\\u') || text.includes('\\U')) return undefined;
  const code: string[] = [];
  const refs: number[] = [];
  const slotOf = new Map<string, number>();
  /** Generated forms of IRIs kept in the key: a slot equal to one of them would compare differently as a sentinel. */
  const keyedIris = new Set<string>();
  const raw: string[] = [];
  const fill: string[] = [];
  let classes = '';
  let key = '';
  let piece = '';
  let space = false;
  let base = baseIri;
  const prefixes = new Map<string, string>();
  /** The last keyword emitted, upper case, or '' when another token followed it. */
  let lastWord = '';
  /** After PREFIX: the declared name; then the IRI it is bound to. */
  let declaring: 'prefix' | 'iri' | undefined;
  let declaredName = '';
  let baseFollows = false;
  const verbs: number[] = [];
  // Where a triples block stands (see step): SUBJECT, VERB, VERB_DONE (a path may go on), OBJECT, AFTER_OBJECT, ITEMS (a collection), NONE.
  let state = NONE;
  const nesting: { readonly kind: '(' | '[' | 'path' | 'expr'; readonly outer: number }[] = [];
  let datatypeNext = false;
  /** Moves the triples-block reading on by one token: a term, a keyword or punctuation. */
  const step = (token: string): void => {
    if (token === 'term') {
      if (datatypeNext) datatypeNext = false;
      else state = state === SUBJECT ? VERB : state === VERB ? VERB_DONE : state === VERB_DONE || state === OBJECT ? AFTER_OBJECT : state;
      return;
    }
    switch (token) {
      case '{':
      case '}':
      case '.':
        state = SUBJECT;
        return;
      case ';':
        state = VERB;
        return;
      case ',':
        state = OBJECT;
        return;
      case '^^':
        datatypeNext = true;
        return;
      case '[':
        nesting.push({ kind: '[', outer: state });
        state = VERB;
        return;
      case '(':
        if (state === VERB) nesting.push({ kind: 'path', outer: state });
        else if (state === SUBJECT || state === OBJECT || state === ITEMS) {
          nesting.push({ kind: '(', outer: state });
          state = ITEMS;
        } else {
          nesting.push({ kind: 'expr', outer: state });
          state = NONE;
        }
        return;
      case ']':
      case ')': {
        const open = nesting.pop();
        if (open === undefined) state = NONE;
        else if (open.kind === 'path') state = VERB_DONE;
        else if (open.kind === 'expr') state = SUBJECT; // after FILTER (…) or BIND (…) a triple may start
        else {
          state = open.outer;
          step('term');
        }
        return;
      }
      case '/':
      case '|':
      case '^':
        if (state === VERB_DONE || state === VERB) state = VERB;
        else state = NONE;
        return;
      case '!':
        if (state !== VERB) state = NONE;
        return;
      case '*':
      case '+':
      case '?':
        if (state !== VERB_DONE) state = NONE;
        return;
      default:
        state = NONE;
    }
  };
  const n = text.length;
  let i = 0;

  /** True once a token was written: leading white space is dropped. */
  let started = false;
  const emit = (token: string): void => {
    if (space && started) piece += ' ';
    space = false;
    started = true;
    piece += token;
  };
  const constant = (cls: ConstantClass, token: string, filled: string): void => {
    if (space && started) piece += ' ';
    space = false;
    started = true;
    code.push(piece);
    const same = slotOf.get(cls + filled);
    if (state === VERB && cls === 'I' && !datatypeNext) verbs.push(same ?? raw.length);
    if (same !== undefined) {
      key += piece + '\u0002' + same + ';';
      refs.push(same);
    } else {
      key += piece + '\u0001' + cls;
      slotOf.set(cls + filled, raw.length);
      refs.push(raw.length);
      classes += cls;
      raw.push(token);
      fill.push(filled);
    }
    piece = '';
  };
  /** Index of the next significant character after white space and comments. */
  const skip = (from: number): number => {
    let j = from;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) j++;
      else if (c === 0x23) {
        while (j < n && text.charCodeAt(j) !== 0x0a && text.charCodeAt(j) !== 0x0d) j++;
      } else break;
    }
    return j;
  };

  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x23) {
      i = skip(i);
      space = true;
      continue;
    }
    // IRIREF, or the less-than operator when no IRIREF starts here.
    if (c === 0x3c) {
      IRIREF.lastIndex = i;
      const m = IRIREF.exec(text);
      if (m !== null) {
        const token = m[0];
        const reference = m[1] ?? '';
        i += token.length;
        if (baseFollows || declaring === 'iri') {
          const iri = resolveIri(reference, base);
          if (!hasScheme(iri) || NOT_IN_IRI.test(iri)) return undefined;
          if (baseFollows) base = iri;
          else prefixes.set(declaredName, iri);
          baseFollows = false;
          declaring = undefined;
          emit(token);
        } else {
          const iri = resolveIri(reference, base);
          if (!hasScheme(iri) || NOT_IN_IRI.test(iri)) return undefined;
          if (KEYED_AFTER.has(lastWord) || text.charCodeAt(skip(i)) === 0x28) {
            keyedIris.add('<' + iri + '>');
            emit(token);
          } else constant('I', token, '<' + iri + '>');
          step('term');
        }
        lastWord = '';
        continue;
      }
    }
    if (c === 0x22 || c === 0x27) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      const token = text.slice(i, end);
      i = end;
      const after = skip(i);
      const typed = text.startsWith('^^', after);
      if (typed && !slotsTypedLiteral(text, skip(after + 2), base, prefixes)) {
        emit(token); // the datatype decides how it is written (xsd:integer bare, xsd:string plain): all of it is key
        step('term');
      } else {
        const quote = token.length >= 6 && token[1] === token[0] && token[2] === token[0] ? 3 : 1;
        const content = unescape(token.slice(quote, token.length - quote));
        if (content === undefined) return undefined;
        constant('S', token, content.replace(GENERATOR_ESCAPED, (e) => GENERATOR_ESCAPES[e] ?? e));
        step('term');
        if (!typed && text.charCodeAt(after) === 0x40) {
          LANGTAG.lastIndex = after;
          const m = LANGTAG.exec(text);
          if (m === null) return undefined;
          space = after > i;
          emit(m[0]);
          i = after + m[0].length;
        }
      }
      lastWord = '';
      continue;
    }
    if ((c >= 0x30 && c <= 0x39) || (c === 0x2e && isDigit(text.charCodeAt(i + 1)))) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (m === null) return undefined;
      const token = m[0];
      i += token.length;
      if (lastWord === 'LIMIT' || lastWord === 'OFFSET') emit(token);
      else if (m[1] !== undefined) constant('E', token, token.toLowerCase());
      else constant(m[2] !== undefined ? 'D' : 'N', token, token);
      step('term');
      lastWord = '';
      continue;
    }
    if (c === 0x3f || c === 0x24) {
      VAR.lastIndex = i;
      const m = VAR.exec(text);
      if (m !== null) {
        emit(m[0]);
        i += m[0].length;
        step('term');
        lastWord = '';
        continue;
      }
      if (c === 0x24) return undefined;
    }
    if (c === 0x5f && text.charCodeAt(i + 1) === 0x3a) {
      BLANK_NODE_LABEL.lastIndex = i;
      const m = BLANK_NODE_LABEL.exec(text);
      if (m === null) return undefined;
      emit(m[0]);
      i += m[0].length;
      step('term');
      lastWord = '';
      continue;
    }
    PNAME.lastIndex = i;
    const pname = PNAME.exec(text);
    if (pname !== null) {
      const token = pname[0];
      i += token.length;
      if (declaring === 'prefix') {
        if (pname[2] !== undefined) return undefined;
        declaredName = pname[1] ?? '';
        declaring = 'iri';
        emit(token);
      } else {
        const namespace = prefixes.get(pname[1] ?? '');
        if (namespace === undefined) return undefined;
        const local = pname[2] ?? '';
        const iri = namespace + (local.includes('\\') ? local.replace(/\\(.)/g, '$1') : local);
        if (NOT_IN_IRI.test(iri)) return undefined;
        if (KEYED_AFTER.has(lastWord) || text.charCodeAt(skip(i)) === 0x28) {
          keyedIris.add('<' + iri + '>');
          emit(token);
        } else constant('I', token, '<' + iri + '>');
        step('term');
      }
      lastWord = '';
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(text);
    if (word !== null) {
      const token = word[0];
      i += token.length;
      emit(token);
      lastWord = token.toUpperCase();
      if (token === 'a' || lastWord === 'TRUE' || lastWord === 'FALSE') step('term');
      else step('keyword');
      if (lastWord === 'BASE') baseFollows = true;
      else if (lastWord === 'PREFIX') declaring = 'prefix';
      continue;
    }
    PUNCT.lastIndex = i;
    const punct = PUNCT.exec(text);
    if (punct === null) return undefined;
    emit(punct[0]);
    step(punct[0]);
    i += punct[0].length;
    lastWord = punct[0] === '^^' ? '^^' : '';
  }
  if (declaring !== undefined || baseFollows) return undefined;
  if (keyedIris.size > 0) for (let k = 0; k < raw.length; k++) if (keyedIris.has(fill[k] ?? '')) return undefined;
  code.push(piece);
  key += piece;
  return { key, code, refs, verbs, classes, raw, fill };
}

const NONE = -1;
const SUBJECT = 0;
const VERB = 1;
const VERB_DONE = 2;
const OBJECT = 3;
const AFTER_OBJECT = 4;
const ITEMS = 5;

const XSD = 'http://www.w3.org/2001/XMLSchema#';

/**
 * True when the datatype IRI at `at` is one the generator writes as
 * `"content"^^<datatype>` whatever the content: any but xsd:string (written
 * as a plain literal) and xsd:integer (written bare when the content is
 * digits). Then the content is a slot and the datatype stays in the key.
 */
function slotsTypedLiteral(text: string, at: number, base: string, prefixes: ReadonlyMap<string, string>): boolean {
  let iri: string | undefined;
  IRIREF.lastIndex = at;
  const ref = IRIREF.exec(text);
  if (ref !== null) iri = resolveIri(ref[1] ?? '', base);
  else {
    PNAME.lastIndex = at;
    const pname = PNAME.exec(text);
    const namespace = pname === null ? undefined : prefixes.get(pname[1] ?? '');
    if (pname === null || namespace === undefined || (pname[2] ?? '').includes('\\')) return false;
    iri = namespace + (pname[2] ?? '');
  }
  return hasScheme(iri) && iri !== XSD + 'string' && iri !== XSD + 'integer';
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * The end of the string literal starting at `start` (STRING_LITERAL1/2 and
 * the LONG forms, [156]-[159]), or -1 when it does not end or holds a
 * character the short forms forbid.
 */
function stringEnd(text: string, start: number): number {
  const q = text[start] as string;
  const long = text[start + 1] === q && text[start + 2] === q;
  const n = text.length;
  if (long) {
    const delimiter = q + q + q;
    let j = start + 3;
    while (j < n) {
      const d = text[j];
      if (d === '\\') j += 2;
      // Content never ends in a quote ([158]: quotes are followed by another character), so the first three close it.
      else if (d === q && text.startsWith(delimiter, j)) return j + 3;
      else j++;
    }
    return -1;
  }
  if (text[start + 1] === q) return start + 2; // the empty short string
  let j = start + 1;
  while (j < n) {
    const d = text[j];
    if (d === '\\') j += 2;
    else if (d === q) return j + 1;
    else if (d === '\n' || d === '\r') return -1;
    else j++;
  }
  return -1;
}

/** A string's content with ECHARs decoded, or undefined for any other backslash or a lone surrogate (sparqljs refuses those). */
function unescape(content: string): string | undefined {
  let out = content;
  if (content.includes('\\')) {
    out = '';
    for (let j = 0; j < content.length; j++) {
      const d = content[j] as string;
      if (d !== '\\') {
        out += d;
        continue;
      }
      const decoded = ECHAR[content[j + 1] ?? ''];
      if (decoded === undefined) return undefined;
      out += decoded;
      j++;
    }
  }
  return (out as string & { isWellFormed(): boolean }).isWellFormed() ? out : undefined;
}
