// One lexical pass over query text: the shape key (the text with its constants cut out) and each constant as the generator would write it; and the layout a lexed text leaves, through which a text of the same code with other constants is read without lexing its code.

import { randomInt } from 'node:crypto';
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

// SPARQL 1.1 §19.8 terminals, [163]-[173]. The regular expressions are the definition and read any non-ASCII
// text; ASCII text, nearly every query, is read by the scanners below with a character table.
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
/** ECHAR ([160]) and what each stands for. */
const ECHAR: Readonly<Record<string, string>> = { t: '\t', b: '\b', n: '\n', r: '\r', f: '\f', '"': '"', "'": "'", '\\': '\\' };
/** What the sparqljs generator escapes inside `"…"`, and how. */
const GENERATOR_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '"': '\\"',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\b': '\\b',
  '\f': '\\f',
};
const GENERATOR_ESCAPED = /["\\\t\n\r\b\f]/g;

// What each ASCII character may be, one bit per class (the ASCII part of the classes above).
/** PN_CHARS_BASE: A-Z a-z. */
const BASE = 1;
/** PN_CHARS_U and digits (a VARNAME character): A-Z a-z _ 0-9. */
const NAME = 2;
/** PN_CHARS: NAME and `-`. */
const PN = 4;
/** May stand inside an IRIREF ([139]). */
const IN_IRI = 8;
/** May follow the backslash of PN_LOCAL_ESC ([173]). */
const LOCAL_ESC = 16;
const HEX = 32;
/** A keyword character ([A-Za-z0-9_]; a keyword starts with a letter or `_`). */
const WORD = 64;
/** Ends a token no character after it continues (see separated). */
const HARD_END = 128;
/** Ends a token no character after it continues unless a backslash escapes it (PN_LOCAL_ESC). */
const ESCAPABLE_END = 256;
const ASCII = new Uint16Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  let bits = 0;
  if (/[A-Za-z]/.test(ch)) bits |= BASE;
  if (/[A-Za-z_0-9]/.test(ch)) bits |= NAME | PN | WORD;
  if (ch === '-') bits |= PN;
  if (c > 0x20 && !'<>"{}|^`\\'.includes(ch)) bits |= IN_IRI;
  if ("_~.-!$&'()*+,;=/?#@%".includes(ch)) bits |= LOCAL_ESC;
  if (/[0-9A-Fa-f]/.test(ch)) bits |= HEX;
  if (' \t\n\r{}[]^|>'.includes(ch)) bits |= HARD_END;
  if ('(),;=/!*&'.includes(ch)) bits |= ESCAPABLE_END;
  ASCII[c] = bits;
}
/** A scanner's answer when a non-ASCII character may belong to the token: the regular expression decides. */
const UNICODE = -2;

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
  const refs: number[] = [];
  /** Generated forms of IRIs kept in the key: a slot equal to one of them would compare differently as a sentinel. */
  let keyedIris: Set<string> | undefined;
  // Where each constant's marker starts in the key, and where each slot's token starts and ends in the text: the
  // pieces of text between constants (`code`) and the tokens (`raw`) are cut from them only on a cache miss.
  const markers: number[] = [];
  const tokens: number[] = [];
  /** Where every constant starts and ends, slots and references alike (for layoutOf). */
  const occurrences: number[] = [];
  /** A BASE or PREFIX declaration came after a constant: the layout would need the declarations in force per constant. */
  let lateDeclaration = false;
  const fill: string[] = [];
  let classes = '';
  const slots = startSlotTable();
  /** A lookup in the slot table took more than MAX_PROBES steps. */
  let crowded = false;
  let key = '';
  // The key is the text between constants with white space and comments as one space. Text runs where it is
  // already so are sliced whole: the key holds what is written, then the run from `run` to `written` (the end
  // of the last token).
  let run = 0;
  let written = 0;
  let base = baseIri;
  const prefixes: Prefixes = { names: [], opens: [], hashes: [] };
  /** What the last token was, when a keyword or `^^` decides about the next one (see AFTER_*). */
  let after = AFTER_OTHER;
  /** After PREFIX: the declared name; then the IRI it is bound to. */
  let declaring: 'prefix' | 'iri' | undefined;
  let declaredName = '';
  let baseFollows = false;
  const verbs: number[] = [];
  // Where a triples block stands (see step): SUBJECT, VERB, VERB_DONE (a path may go on), OBJECT, AFTER_OBJECT, ITEMS (a collection), NONE.
  let state = NONE;
  /** Open brackets, each `kind * 8 + state outside it + 1` (kinds: see OPEN_*), in a table kept between calls. */
  if (openBrackets.length > 4096) openBrackets = new Int32Array(64); // a deep one left by a deeply nested query is dropped
  let nesting = openBrackets;
  let depth = 0;
  const openBracket = (bracket: number): void => {
    if (depth === nesting.length) nesting = openBrackets = grownTable(nesting);
    nesting[depth++] = bracket;
  };
  let datatypeNext = false;
  /** Moves the triples-block reading on past a term. */
  const term = (): void => {
    if (datatypeNext) datatypeNext = false;
    else state = state === SUBJECT ? VERB : state === VERB ? VERB_DONE : state === VERB_DONE || state === OBJECT ? AFTER_OBJECT : state;
  };
  /** Moves the triples-block reading on by one keyword (`c` 0) or punctuation character `c` (`^^` as `c` 0x5e with `pair`). */
  const step = (c: number, pair: boolean): void => {
    if (pair) {
      if (c === 0x5e) datatypeNext = true;
      else state = NONE;
      return;
    }
    switch (c) {
      case 0x7b: // {
      case 0x7d: // }
      case 0x2e: // .
        state = SUBJECT;
        return;
      case 0x3b: // ;
        state = VERB;
        return;
      case 0x2c: // ,
        state = OBJECT;
        return;
      case 0x5b: // [
        openBracket(OPEN_BLANK * 8 + state + 1);
        state = VERB;
        return;
      case 0x28: // (
        if (state === VERB) openBracket(OPEN_PATH * 8 + state + 1);
        else if (state === SUBJECT || state === OBJECT || state === ITEMS) {
          openBracket(OPEN_LIST * 8 + state + 1);
          state = ITEMS;
        } else {
          openBracket(OPEN_EXPR * 8 + state + 1);
          state = NONE;
        }
        return;
      case 0x5d: // ]
      case 0x29: {
        // )
        if (depth === 0) {
          state = NONE;
          return;
        }
        const bracket = nesting[--depth]!;
        if (bracket >> 3 === OPEN_PATH) state = VERB_DONE;
        else if (bracket >> 3 === OPEN_EXPR)
          state = SUBJECT; // after FILTER (…) or BIND (…) a triple may start
        else {
          state = (bracket & 7) - 1;
          term();
        }
        return;
      }
      case 0x2f: // /
      case 0x7c: // |
      case 0x5e: // ^
        if (state === VERB_DONE || state === VERB) state = VERB;
        else state = NONE;
        return;
      case 0x21: // !
        if (state !== VERB) state = NONE;
        return;
      case 0x2a: // *
      case 0x2b: // +
      case 0x3f: // ?
        if (state !== VERB_DONE) state = NONE;
        return;
      default:
        state = NONE;
    }
  };
  const n = text.length;
  let i = 0;

  /** Takes the token from `from` to `to` into the key's text: after one space or none the run goes on, else it is cut. */
  const emit = (from: number, to: number): void => {
    if (from !== written && !(written > 0 && from === written + 1 && text.charCodeAt(written) === 0x20)) {
      if (written > 0) {
        key += text.slice(run, written);
        key += ' ';
      }
      run = from;
    }
    written = to;
  };
  /** The constant from `from` to `to`, generated as `filled` (`hash` its hash, see findSlot): a slot, or a reference to an equal one. */
  const constant = (cls: ConstantClass, from: number, to: number, filled: string, hash: number): void => {
    emit(from, from);
    key += text.slice(run, from);
    markers.push(key.length);
    occurrences.push(from, to);
    const code = cls.charCodeAt(0);
    const same = probeSlot(slots, hash, code, filled, fill);
    // Constants crafted to share hashes would make every lookup walk them all: such text takes the exact path.
    if (same === CROWDED) crowded = true;
    if (state === VERB && cls === 'I' && !datatypeNext) verbs.push(same >= 0 ? same : fill.length);
    if (same >= 0) {
      key += '\u0002' + same + ';';
      refs.push(same);
    } else {
      key += MARKER[cls];
      refs.push(fill.length);
      classes += cls;
      if (same === FREE) claimSlot(slots, fill.length, hash, code);
      tokens.push(from, to);
      fill.push(filled);
    }
    run = to;
    written = to;
  };
  /** An IRI outside PREFIX and BASE: a constant, or part of the key after FROM, NAMED, GRAPH, SERVICE or before `(`. */
  const iri = (from: number, to: number, filled: string, hash: number): void => {
    if (after === AFTER_KEYED || text.charCodeAt(skipSpace(text, to)) === 0x28) {
      (keyedIris ??= new Set()).add(filled);
      emit(from, to);
    } else constant('I', from, to, filled, hash);
    term();
    after = AFTER_OTHER;
  };

  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x23) {
      i = skipSpace(text, i);
      continue;
    }
    const start = i;
    // IRIREF, or the less-than operator when no IRIREF starts here.
    if (c === 0x3c) {
      const end = scanIriRef(text, i);
      if (end > 0) {
        i = end;
        const resolved = resolvedIriRef(text, start, end, base);
        if (resolved === undefined) return undefined;
        if (baseFollows || declaring === 'iri') {
          if (baseFollows) base = resolved;
          else {
            prefixes.names.push(declaredName);
            prefixes.opens.push('<' + resolved);
            prefixes.hashes.push(iriAbsolute ? iriRefOpenHash : hashOf(SEED_TERM, '<' + resolved, 0, resolved.length + 1));
          }
          if (occurrences.length > 0) lateDeclaration = true;
          baseFollows = false;
          declaring = undefined;
          emit(start, end);
          after = AFTER_OTHER;
        } else {
          iriRefConstant(text, start, end, resolved);
          iri(start, end, constantFill, constantHash);
        }
        continue;
      }
    }
    if (c === 0x22 || c === 0x27) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      i = end;
      const next = skipSpace(text, i);
      const typed = text.charCodeAt(next) === 0x5e && text.charCodeAt(next + 1) === 0x5e;
      if (typed && !slotsTypedLiteral(text, skipSpace(text, next + 2), base, prefixes)) {
        emit(start, end); // the datatype decides how it is written (xsd:integer bare, xsd:string plain): all of it is key
        term();
      } else {
        if (!stringConstant(text, start, end)) return undefined;
        constant('S', start, end, constantFill, constantHash);
        term();
        if (!typed && text.charCodeAt(next) === 0x40) {
          const tagEnd = scanLangTag(text, next);
          if (tagEnd < 0) return undefined;
          emit(next, tagEnd);
          i = tagEnd;
        }
      }
      after = AFTER_OTHER;
      continue;
    }
    if (isDigit(c) || (c === 0x2e && isDigit(text.charCodeAt(i + 1)))) {
      const end = scanNumber(text, i);
      i = end;
      if (after === AFTER_LIMIT) emit(start, end);
      else {
        numberConstant(text, start, end);
        constant(numberClass, start, end, constantFill, constantHash);
      }
      term();
      after = AFTER_OTHER;
      continue;
    }
    if (c === 0x3f || c === 0x24) {
      let end = scanName(text, i + 1, NAME);
      if (end === UNICODE) {
        VAR.lastIndex = i;
        const m = VAR.exec(text);
        end = m === null ? -1 : i + m[0].length;
      }
      if (end > 0) {
        emit(start, end);
        i = end;
        term();
        after = AFTER_OTHER;
        continue;
      }
      if (c === 0x24) return undefined;
    }
    if (c === 0x5f && text.charCodeAt(i + 1) === 0x3a) {
      let end = scanName(text, i + 2, PN);
      if (end === UNICODE) {
        BLANK_NODE_LABEL.lastIndex = i;
        const m = BLANK_NODE_LABEL.exec(text);
        end = m === null ? -1 : i + m[0].length;
      }
      if (end < 0) return undefined;
      emit(start, end);
      i = end;
      term();
      after = AFTER_OTHER;
      continue;
    }
    // A word (letters, digits, `_`) is read once: a keyword, unless what follows it may go on as a prefixed name.
    let wordEnd = -1;
    if (c < 0x80 && (ASCII[c]! & WORD) !== 0) {
      wordEnd = i + 1;
      while (wordEnd < n) {
        const d = text.charCodeAt(wordEnd);
        if (d >= 0x80 || (ASCII[d]! & WORD) === 0) break;
        wordEnd++;
      }
    }
    // Else a prefixed name starts only with `:` or a letter beyond ASCII (PN_CHARS_BASE): punctuation is not tried.
    const prefixedName = wordEnd > 0 ? mayGoOnAsPrefixedName(text.charCodeAt(wordEnd)) : c === 0x3a || c >= 0x80;
    if (prefixedName && readPrefixedName(text, i)) {
      const colon = pnameColon;
      i = pnameEnd;
      if (declaring === 'prefix') {
        if (i > colon + 1) return undefined;
        declaredName = text.slice(start, colon);
        declaring = 'iri';
        emit(start, i);
        after = AFTER_OTHER;
      } else {
        if (!prefixedNameConstant(text, start, prefixes)) return undefined;
        iri(start, i, constantFill, constantHash);
      }
      continue;
    }
    if (wordEnd > 0) {
      const end = wordEnd;
      i = end;
      emit(start, end);
      const word = end - start >= 4 && end - start <= 7 ? keywordAt(text, start, end) : KEYWORD_OTHER;
      after = word === KEYWORD_LIMIT ? AFTER_LIMIT : word === KEYWORD_KEYED ? AFTER_KEYED : AFTER_OTHER;
      if ((end - start === 1 && c === 0x61) || word === KEYWORD_BOOLEAN) term();
      else step(0, false);
      if (word === KEYWORD_BASE) baseFollows = true;
      else if (word === KEYWORD_PREFIX) declaring = 'prefix';
      continue;
    }
    const length = punctuationLength(text, i, c);
    if (length === 0) return undefined;
    emit(start, start + length);
    step(c, length === 2);
    i += length;
    after = length === 2 && c === 0x5e ? AFTER_KEYED : AFTER_OTHER;
  }
  if (declaring !== undefined || baseFollows || crowded) return undefined;
  if (keyedIris !== undefined && holdsAny(keyedIris, fill)) return undefined;
  key += text.slice(run, written);
  const reading: Reading = { text, markers, tokens, occurrences, base, prefixes, keyedIris, lateDeclaration };
  return new LexedShape(key, reading, { refs, verbs, classes, fill });
}

/** What lexQueryShape read beside the shape: for the fields cut on demand, and for layoutOf. */
interface Reading {
  readonly text: string;
  /** Where each constant's marker starts in the key. */
  readonly markers: readonly number[];
  /** Where each slot's first token starts and ends in the text. */
  readonly tokens: readonly number[];
  /** Where every constant starts and ends, slots and references alike. */
  readonly occurrences: readonly number[];
  /** The base and the PREFIX declarations at the end of the text. */
  readonly base: string;
  readonly prefixes: Prefixes;
  /** Generated forms of the IRIs kept in the key (see lexQueryShape). */
  readonly keyedIris: ReadonlySet<string> | undefined;
  /** A declaration came after a constant. */
  readonly lateDeclaration: boolean;
}

/**
 * A QueryShape that cuts its `code` and `raw` strings from the key and the
 * text when first read: a cache hit reads only the key and the fills.
 */
class LexedShape implements QueryShape {
  readonly key: string;
  readonly refs: readonly number[];
  readonly verbs: readonly number[];
  readonly classes: string;
  readonly fill: readonly string[];
  readonly reading: Reading;
  #code: string[] | undefined;
  #raw: readonly string[] | undefined;

  constructor(key: string, reading: Reading, read: Pick<QueryShape, 'refs' | 'verbs' | 'classes' | 'fill'>) {
    this.key = key;
    this.refs = read.refs;
    this.verbs = read.verbs;
    this.classes = read.classes;
    this.fill = read.fill;
    this.reading = reading;
  }

  get code(): readonly string[] {
    if (this.#code === undefined) {
      const key = this.key;
      const code: string[] = [];
      let from = 0;
      for (const at of this.reading.markers) {
        code.push(key.slice(from, at));
        // A new slot's marker is two characters, a reference to an earlier one `\u0002`, its number and `;`.
        from = key.charCodeAt(at) === 0x01 ? at + 2 : key.indexOf(';', at) + 1;
      }
      code.push(key.slice(from));
      this.#code = code;
    }
    return this.#code;
  }

  get raw(): readonly string[] {
    return (this.#raw ??= tokensOf(this.reading.text, this.reading.tokens));
  }
}

/** The strings from tokens[t] to tokens[t + 1] in `text`, for every even t. */
function tokensOf(text: string, tokens: readonly number[]): string[] {
  const raw: string[] = [];
  for (let t = 0; t < tokens.length; t += 2) raw.push(text.slice(tokens[t], tokens[t + 1]));
  return raw;
}

/**
 * How a lexed text is laid out: the text between its constants as written
 * (white space and comments too) and what the lexer read of it. A text of the
 * same layout with other constants is read by matchLayout without lexing its
 * code again (docs/design.md#plan-cache).
 */
export interface ShapeLayout {
  /** The text before the first constant. */
  readonly head: string;
  /** The text after each constant, up to the next constant or the end. */
  readonly pieces: readonly string[];
  /** The key of the shape of every text of this layout. */
  readonly key: string;
  /** Characters held: the text read and its key. */
  readonly chars: number;
}

class Layout implements ShapeLayout {
  readonly head: string;
  readonly key: string;
  readonly chars: number;
  /** The text after each constant, up to the next constant or the end. */
  readonly pieces: readonly string[];
  /** The shape the layout was read from: its key, references, verbs, classes and code serve every match. */
  readonly shape: LexedShape;
  /** The generated forms of the IRIs its key holds: a few compared one by one, many as a set. */
  readonly keyed: ReadonlySet<string> | readonly string[] | undefined;

  constructor(shape: LexedShape, head: string, pieces: readonly string[]) {
    this.shape = shape;
    const keyed = shape.reading.keyedIris;
    this.keyed = keyed === undefined || keyed.size > 8 ? keyed : [...keyed];
    this.head = head;
    this.pieces = pieces;
    this.key = shape.key;
    this.chars = shape.reading.text.length + shape.key.length;
  }
}

/** Whether two layouts are one: the same code as written between constants of the same classes. */
export function sameLayout(a: ShapeLayout, b: ShapeLayout): boolean {
  if (!(a instanceof Layout) || !(b instanceof Layout)) return a === b;
  return a.head === b.head && a.key === b.key && a.pieces.length === b.pieces.length && a.pieces.every((piece, j) => piece === b.pieces[j]);
}

/** A shape read through a layout: the layout's shape with this text's constants. */
class MatchedShape implements QueryShape {
  readonly key: string;
  readonly code: readonly string[];
  readonly refs: readonly number[];
  readonly verbs: readonly number[];
  readonly classes: string;
  readonly fill: readonly string[];
  readonly #text: string;
  readonly #tokens: readonly number[];
  #raw: readonly string[] | undefined;

  constructor(shape: LexedShape, text: string, tokens: readonly number[], fill: readonly string[]) {
    this.key = shape.key;
    this.code = shape.code;
    this.refs = shape.refs;
    this.verbs = shape.verbs;
    this.classes = shape.classes;
    this.fill = fill;
    this.#text = text;
    this.#tokens = tokens;
  }

  get raw(): readonly string[] {
    return (this.#raw ??= tokensOf(this.#text, this.#tokens));
  }
}

/**
 * The layout of a text lexQueryShape read into `shape`, or undefined when
 * another text of its layout could be lexed otherwise than by reading the
 * constants alone: no constants, a declaration after one, or a constant that
 * the code before it does not set apart (see separated).
 */
export function layoutOf(shape: QueryShape): ShapeLayout | undefined {
  if (!(shape instanceof LexedShape)) return undefined;
  const { text, occurrences, lateDeclaration } = shape.reading;
  if (occurrences.length === 0 || lateDeclaration) return undefined;
  const pieces: string[] = [];
  for (let j = 0; j < occurrences.length; j += 2) {
    if (!separated(text, occurrences[j]!, j === 0 ? 0 : occurrences[j - 1]!)) return undefined;
    pieces.push(text.slice(occurrences[j + 1], occurrences[j + 2] ?? text.length));
  }
  void shape.code; // cut once here, shared by every match
  if (shape.reading.prefixes.index === undefined) indexPrefixes(shape.reading.prefixes);
  return new Layout(shape, text.slice(0, occurrences[0]), pieces);
}

/**
 * The shape of `text` read through `layout`, exactly as lexQueryShape would
 * read it, or undefined when `text` is not of that layout (then lex it). The
 * code between constants must be the layout's as written; each constant is
 * read by the lexer's own scanner for its class and must end where the
 * layout's next piece of code starts; equal constants must be where the
 * layout has them. The code is compared, never lexed: only the constants are.
 */
export function matchLayout(text: string, layout: ShapeLayout, headMatched = false): QueryShape | undefined {
  if (!(layout instanceof Layout) || (!headMatched && !holdsAt(text, layout.head, 0))) return undefined;
  const { shape, pieces } = layout;
  const { refs, classes } = shape;
  const { base, prefixes } = shape.reading;
  const slots = startSlotTable();
  const fill: string[] = [];
  const tokens: number[] = [];
  let at = layout.head.length;
  for (let j = 0; j < refs.length; j++) {
    const k = refs[j]!;
    const cls = classes.charCodeAt(k);
    const c = text.charCodeAt(at);
    let end: number;
    // The lexer's choice by the first character, for the constant classes only: anything else is not of this layout.
    if (cls === CLASS_I) {
      if (c === 0x3c) {
        end = scanIriRef(text, at, false);
        if (end < 0) return undefined;
        const resolved = resolvedIriRef(text, at, end, base);
        if (resolved === undefined) return undefined;
        iriRefConstant(text, at, end, resolved, true);
      } else {
        // A letter, `:` or a character beyond ASCII (the other first characters fail here) starts a prefixed name.
        if (!readPrefixedName(text, at)) return undefined;
        end = pnameEnd;
        if (!prefixedNameConstant(text, at, prefixes, true)) return undefined;
      }
    } else if (cls === CLASS_S) {
      if (c !== 0x22 && c !== 0x27) return undefined;
      end = stringEnd(text, at);
      if (end < 0 || !stringConstant(text, at, end, true)) return undefined;
    } else {
      if (!isDigit(c) && !(c === 0x2e && isDigit(text.charCodeAt(at + 1)))) return undefined;
      end = scanNumber(text, at);
      if (numberClass.charCodeAt(0) !== cls) return undefined;
      numberConstant(text, at, end, true);
    }
    if (k === fill.length) {
      // A new slot: equal to an earlier constant, the lexer would have made it a reference to it.
      if (probeSlot(slots, constantHash, cls, constantFill, fill) !== FREE) return undefined;
      claimSlot(slots, k, constantHash, cls);
      fill.push(constantFill);
      tokens.push(at, end);
    } else if (fill[k] !== constantFill) return undefined;
    const piece = pieces[j]!;
    if (!holdsAt(text, piece, end)) return undefined;
    at = end + piece.length;
  }
  if (at !== text.length) return undefined;
  if (layout.keyed !== undefined && holdsAny(layout.keyed, fill)) return undefined;
  return new MatchedShape(shape, text, tokens, fill);
}

/**
 * Whether `text` holds `piece` at `at`, compared by V8's native code: a
 * substring (a copy up to 12 characters, a slice beyond) costs about the same
 * at any length, indexOf sets up a search whose cost grows with the piece and
 * is cheaper for middling ones, and startsWith with a position walks the piece
 * one character at a time in JavaScript-visible steps, which is the slowest.
 */
export function holdsAt(text: string, piece: string, at: number): boolean {
  const n = piece.length;
  return n <= 12 || n > 48 ? text.substring(at, at + n) === piece : text.indexOf(piece, at) === at;
}

/** Whether `set` holds any of `values` (a few IRIs are compared one by one: no string of `values` is hashed). */
function holdsAny(set: ReadonlySet<string> | readonly string[], values: readonly string[]): boolean {
  if (!Array.isArray(set)) {
    for (const value of values) if ((set as ReadonlySet<string>).has(value)) return true;
    return false;
  }
  for (const keyed of set as readonly string[]) for (const value of values) if (value === keyed) return true;
  return false;
}

const CLASS_S = 0x53;
const CLASS_I = 0x49;

/**
 * Whether the code before the constant at `s` (the code starts at
 * `codeStart`) ends its last token whatever constant follows, so that the
 * lexer reads that code alike before any constant of the class: it ends in
 * white space or in punctuation no token goes on from (`{ } [ ] ^ | >`, or
 * `( ) , ; = / ! * &` not escaped as PN_LOCAL_ESC), possibly followed by a
 * sign; and no `<` in it could start an IRIREF that runs on into the constant.
 */
function separated(text: string, s: number, codeStart: number): boolean {
  const p = s - 1;
  if (p < codeStart) return false;
  for (let q = p; q >= codeStart; q--) {
    const c = text.charCodeAt(q);
    if (c === 0x3c) return false;
    if (c < 0x7f && (ASCII[c]! & IN_IRI) === 0) break;
  }
  const c = text.charCodeAt(p);
  if (c === 0x2b || c === 0x2d) return p === codeStart || endsToken(text, p - 1);
  return endsToken(text, p);
}

/** Whether the character at `p` ends a token that no character after it continues (see separated). */
function endsToken(text: string, p: number): boolean {
  const c = text.charCodeAt(p);
  if (c >= 0x80) return false;
  if ((ASCII[c]! & HARD_END) !== 0) return true;
  return (ASCII[c]! & ESCAPABLE_END) !== 0 && text.charCodeAt(p - 1) !== 0x5c;
}

/** What a keyword or `^^` decides about the token after it: the integer of LIMIT or OFFSET stays in the key, and so does an IRI after FROM, NAMED, GRAPH, SERVICE, SILENT or `^^`. */
const AFTER_OTHER = 0;
const AFTER_LIMIT = 1;
const AFTER_KEYED = 2;
/** The keywords the lexer acts on, by what they mean to it (any case, §19.2). */
const KEYWORD_OTHER = 0;
const KEYWORD_LIMIT = 1;
/** An IRI after it is part of the key: dataset, graph and service names. */
const KEYWORD_KEYED = 2;
const KEYWORD_BOOLEAN = 3;
const KEYWORD_BASE = 4;
const KEYWORD_PREFIX = 5;
/** The keywords the lexer acts on, by length and first letter (no two share both). */
const KEYWORDS: readonly (readonly [string, number] | undefined)[] = (() => {
  const table: (readonly [string, number] | undefined)[] = [];
  for (const [word, meaning] of [
    ['LIMIT', KEYWORD_LIMIT],
    ['OFFSET', KEYWORD_LIMIT],
    ['FROM', KEYWORD_KEYED],
    ['NAMED', KEYWORD_KEYED],
    ['GRAPH', KEYWORD_KEYED],
    ['SERVICE', KEYWORD_KEYED],
    ['SILENT', KEYWORD_KEYED],
    ['TRUE', KEYWORD_BOOLEAN],
    ['FALSE', KEYWORD_BOOLEAN],
    ['BASE', KEYWORD_BASE],
    ['PREFIX', KEYWORD_PREFIX],
  ] as const) {
    table[word.length * 32 + (word.charCodeAt(0) & 31)] = [word, meaning];
  }
  return table;
})();

/** What the keyword from `from` to `to` (ASCII letters, digits, `_`) means to the lexer, compared without case and without a copy. */
function keywordAt(text: string, from: number, to: number): number {
  const entry = KEYWORDS[(to - from) * 32 + (text.charCodeAt(from) & 31)];
  if (entry === undefined) return KEYWORD_OTHER;
  const word = entry[0];
  // Upper-casing a letter clears bit 0x20; the word holds letters only, so a digit or `_` never matches.
  for (let j = 0; j < word.length; j++) if ((text.charCodeAt(from + j) & ~0x20) !== word.charCodeAt(j)) return KEYWORD_OTHER;
  return entry[1];
}

/** A new slot's marker in the key, by class. */
const MARKER: Readonly<Record<ConstantClass, string>> = { S: '\u0001S', I: '\u0001I', N: '\u0001N', D: '\u0001D', E: '\u0001E' };

/**
 * The PREFIX declarations read so far, latest last: each name, `<` and its
 * namespace, and the hash of that; once final (a layout's), an index of the
 * declarations by the length and first character of their names, latest first.
 */
interface Prefixes {
  readonly names: string[];
  readonly opens: string[];
  readonly hashes: number[];
  index?: Map<number, number[]>;
}

/** The index key of a prefix name from `from` to `to` in `text`. */
function prefixKey(text: string, from: number, to: number): number {
  return (to - from) * 0x10000 + (to > from ? text.charCodeAt(from) : 0);
}

/** Indexes final prefixes (a layout's): a match looks up each prefixed name's declaration among those of its length and first character. */
function indexPrefixes(prefixes: Prefixes): void {
  const index = new Map<number, number[]>();
  for (let p = prefixes.names.length - 1; p >= 0; p--) {
    const name = prefixes.names[p]!;
    const key = prefixKey(name, 0, name.length);
    const list = index.get(key);
    if (list === undefined) index.set(key, [p]);
    else list.push(p);
  }
  prefixes.index = index;
}

function indexedPrefix(index: Map<number, number[]>, prefixes: Prefixes, text: string, from: number, to: number): number {
  const candidates = index.get(prefixKey(text, from, to));
  if (candidates === undefined) return -1;
  for (const p of candidates) if (writtenAt(text, from, prefixes.names[p]!)) return p;
  return -1;
}

/** The latest declaration of the prefix written from `from` to `to`, or -1 (through its index once the prefixes are final, see indexedPrefix). */
function findPrefix(prefixes: Prefixes, text: string, from: number, to: number): number {
  if (prefixes.index !== undefined) return indexedPrefix(prefixes.index, prefixes, text, from, to);
  for (let p = prefixes.names.length - 1; p >= 0; p--) {
    const name = prefixes.names[p]!;
    if (name.length === to - from && writtenAt(text, from, name)) return p;
  }
  return -1;
}

/** Whether `text` holds `word` at `at` (a short word: compared by code units, which is quicker than startsWith with a position). */
function writtenAt(text: string, at: number, word: string): boolean {
  for (let j = 0; j < word.length; j++) if (text.charCodeAt(at + j) !== word.charCodeAt(j)) return false;
  return true;
}

// Equal constants are found by a hash of their class family and generated form (FNV-1a over UTF-16 code units,
// which can be carried on across pieces of one string) in an open-addressing table kept between calls: a Map
// would hash and flatten every constant's string.
const FNV_PRIME = 0x01000193;
/** Seeds drawn per process, so hash values cannot be known in advance (a crafted query meets MAX_PROBES instead). */
const SEED_STRING = randomInt(2 ** 31);
const SEED_TERM = randomInt(2 ** 31) ^ 0x811c9dc5;
/** The longest walk through the slot table; at load factor 1/2 an honest query never comes near it. */
const MAX_PROBES = 64;

/** `hash` carried on over the code units of `text` from `from` to `to`. */
function hashOf(hash: number, text: string, from: number, to: number): number {
  let h = hash;
  for (let j = from; j < to; j++) h = Math.imul(h ^ text.charCodeAt(j), FNV_PRIME);
  return h;
}

/** Buckets holding slot + 1, valid where their stamp is this call's generation; and each slot's hash and class, by slot. */
interface SlotTable {
  table: Int32Array;
  stamps: Int32Array;
  generation: number;
  /** As long as the table: it holds at most half as many slots. */
  hashes: Int32Array;
  codes: Int32Array;
}

const SMALL_TABLE = 256;
const slotTable: SlotTable = {
  table: new Int32Array(SMALL_TABLE),
  stamps: new Int32Array(SMALL_TABLE),
  generation: 0,
  hashes: new Int32Array(SMALL_TABLE),
  codes: new Int32Array(SMALL_TABLE),
};

/** The slot table, emptied for a new call (a large one left by a large query is dropped). */
function startSlotTable(): SlotTable {
  if (slotTable.table.length > 16 * SMALL_TABLE) {
    slotTable.table = new Int32Array(SMALL_TABLE);
    slotTable.stamps = new Int32Array(SMALL_TABLE);
    slotTable.hashes = new Int32Array(SMALL_TABLE);
    slotTable.codes = new Int32Array(SMALL_TABLE);
    slotTable.generation = 0;
  }
  slotTable.generation++;
  if (slotTable.generation === 0x3fffffff) {
    slotTable.stamps.fill(0);
    slotTable.generation = 1;
  }
  return slotTable;
}

/** The open brackets of a call (see lexQueryShape); grown as deep as a query nests. */
let openBrackets: Int32Array = new Int32Array(64);

/** `table` copied into one twice as long. */
function grownTable(table: Int32Array): Int32Array {
  const larger = new Int32Array(table.length * 2);
  larger.set(table);
  return larger;
}

/** probeSlot's answers when no slot holds the constant: a free bucket was found (freeBucket), or the walk was too long. */
const FREE = -1;
const CROWDED = -2;
let freeBucket = 0;

/**
 * The slot of this call holding the constant of class `code` generated as
 * `filled` (`fullHash` its hash; `fill` the slots' constants), FREE, or
 * CROWDED after MAX_PROBES steps.
 */
function probeSlot(slots: SlotTable, fullHash: number, code: number, filled: string, fill: readonly string[]): number {
  const hash = fullHash & 0x3fffffff; // a small integer
  const mask = slots.table.length - 1;
  let bucket = hash & mask;
  for (let probes = 0; slots.stamps[bucket] === slots.generation; probes++) {
    const k = slots.table[bucket]! - 1;
    if (slots.hashes[k] === hash && slots.codes[k] === code && fill[k] === filled) return k;
    if (probes === MAX_PROBES) return CROWDED;
    bucket = (bucket + 1) & mask;
  }
  freeBucket = bucket;
  return FREE;
}

/** Puts slot `k` in the bucket probeSlot just found free. */
function claimSlot(slots: SlotTable, k: number, fullHash: number, code: number): void {
  slots.stamps[freeBucket] = slots.generation;
  slots.table[freeBucket] = k + 1;
  slots.hashes[k] = fullHash & 0x3fffffff;
  slots.codes[k] = code;
  if ((k + 1) * 2 > slots.table.length) growSlotTable(slots, k + 1);
}

/** Doubles the table and puts each of the `count` slots back by its hash. */
function growSlotTable(slots: SlotTable, count: number): void {
  const size = slots.table.length * 2;
  slots.table = new Int32Array(size);
  slots.stamps = new Int32Array(size);
  const hashes = new Int32Array(size);
  hashes.set(slots.hashes);
  slots.hashes = hashes;
  const codes = new Int32Array(size);
  codes.set(slots.codes);
  slots.codes = codes;
  const mask = size - 1;
  for (let k = 0; k < count; k++) {
    let bucket = hashes[k]! & mask;
    while (slots.stamps[bucket] === slots.generation) bucket = (bucket + 1) & mask;
    slots.stamps[bucket] = slots.generation;
    slots.table[bucket] = k + 1;
  }
}

const NONE = -1;
const SUBJECT = 0;
const VERB = 1;
const VERB_DONE = 2;
const OBJECT = 3;
const AFTER_OBJECT = 4;
const ITEMS = 5;
/** Kinds of open bracket: a collection `(`, a blank node `[`, a grouped path `(`, an expression `(`. */
const OPEN_LIST = 0;
const OPEN_BLANK = 1;
const OPEN_PATH = 2;
const OPEN_EXPR = 3;

const XSD = 'http://www.w3.org/2001/XMLSchema#';

/** Each one-character punctuation token by its code (the grammar's punctuation, [28]-[138]). */
const PUNCTUATION: readonly (string | undefined)[] = (() => {
  const table: (string | undefined)[] = [];
  for (const ch of '{}()[];,.+-*/|^!=<>?') table[ch.charCodeAt(0)] = ch;
  return table;
})();

/** Length of the punctuation token at `i` (`^^ && || != <= >=` first), 0 when none starts there. */
function punctuationLength(text: string, i: number, c: number): number {
  const d = text.charCodeAt(i + 1);
  if ((c === 0x5e && d === 0x5e) || (c === 0x26 && d === 0x26) || (c === 0x7c && d === 0x7c)) return 2;
  if (d === 0x3d && (c === 0x21 || c === 0x3c || c === 0x3e)) return 2;
  return PUNCTUATION[c] === undefined ? 0 : 1;
}

/** Index of the next significant character at or after `from`, past white space and comments. */
function skipSpace(text: string, from: number): number {
  const n = text.length;
  let j = from;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) j++;
    else if (c === 0x23) {
      while (j < n && text.charCodeAt(j) !== 0x0a && text.charCodeAt(j) !== 0x0d) j++;
    } else break;
  }
  return j;
}

/** Whether the IRIREF scanIriRef found holds only printable ASCII (below DEL). */
let iriRefAscii = true;
/** The hash (see findSlot) of `<` and the reference of the IRIREF scanIriRef found: a namespace's, or with `>` the whole token's. */
let iriRefOpenHash = 0;

/** The end of the IRIREF ([139]) starting with the `<` at `i`, or -1 when none does; `hashed` false skips iriRefOpenHash. */
function scanIriRef(text: string, i: number, hashed = true): number {
  const n = text.length;
  let ascii = true;
  let hash = Math.imul(SEED_TERM ^ 0x3c, FNV_PRIME);
  for (let j = i + 1; j < n; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x3e) {
      iriRefAscii = ascii;
      iriRefOpenHash = hash;
      return j + 1;
    }
    if (c >= 0x7f) ascii = false;
    else if ((ASCII[c]! & IN_IRI) === 0) return -1;
    if (hashed) hash = Math.imul(hash ^ c, FNV_PRIME);
  }
  return -1;
}

/** Length of the scheme and colon that `iri` starts with (RFC 3986 3.1), 0 when it starts with none. */
function schemeLength(iri: string): number {
  const first = iri.charCodeAt(0);
  if (!(first < 0x80 && (ASCII[first]! & BASE) !== 0)) return 0;
  for (let j = 1; j < iri.length; j++) {
    const c = iri.charCodeAt(j);
    if (c === 0x3a) return j + 1;
    if (!(c < 0x80 && ((ASCII[c]! & BASE) !== 0 || isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e))) return 0;
  }
  return 0;
}

/**
 * The end of a name whose first character is at `from`: a VARNAME ([166]
 * with `NAME`: PN_CHARS_U or a digit, then those) or a blank node label
 * after `_:` ([142] with `PN`: those, then PN_CHARS or dots, not ending in a
 * dot); -1 when none starts there, UNICODE at any non-ASCII character.
 */
function scanName(text: string, from: number, more: number): number {
  const n = text.length;
  if (from >= n) return -1;
  const first = text.charCodeAt(from);
  if (first >= 0x80) return UNICODE;
  if ((ASCII[first]! & NAME) === 0) return -1;
  let end = from + 1;
  for (let j = from + 1; j < n; j++) {
    const c = text.charCodeAt(j);
    if (c >= 0x80) return UNICODE;
    if ((ASCII[c]! & more) !== 0) end = j + 1;
    else if (c !== 0x2e || more === NAME) break;
  }
  return end;
}

// The prefixed name readPrefixedName found: its colon (the prefix before it, the local part after it) and end,
// whether the local part holds PN_LOCAL_ESC, whether the regular expression read it. Module state: the lexer is
// synchronous.
let pnameColon = 0;
let pnameEnd = 0;
let pnameEscaped = false;
let pnameUnicode = false;

/** True when a PNAME_NS or PNAME_LN ([140], [141]) starts at `i` (its parts in the pname* variables). */
function readPrefixedName(text: string, i: number): boolean {
  const end = scanPrefixedName(text, i);
  if (end !== UNICODE) return end > 0;
  PNAME.lastIndex = i;
  const m = PNAME.exec(text);
  if (m === null) return false;
  pnameColon = i + (m[1]?.length ?? 0);
  pnameEnd = i + m[0].length;
  pnameEscaped = (m[2] ?? '').includes('\\');
  pnameUnicode = true;
  return true;
}

/**
 * The end of the prefixed name at `i` read by the character table (setting
 * the pname* variables), -1 when none starts there, UNICODE when a non-ASCII
 * character may belong to it.
 */
function scanPrefixedName(text: string, i: number): number {
  const n = text.length;
  let colon = i;
  const first = text.charCodeAt(i);
  if (first >= 0x80) return UNICODE;
  if ((ASCII[first]! & BASE) !== 0) {
    // PN_PREFIX: PN_CHARS and dots, not ending in a dot, then the colon.
    let j = i + 1;
    colon = i + 1;
    for (; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c >= 0x80) return UNICODE;
      if ((ASCII[c]! & PN) !== 0) colon = j + 1;
      else if (c !== 0x2e) break;
    }
  }
  if (text.charCodeAt(colon) !== 0x3a) return -1;
  // PN_LOCAL: its first character a PN_CHARS_U, colon, digit or PLX, then those, `-` or dots, not ending in a dot.
  let end = colon + 1;
  let escaped = false;
  for (let j = colon + 1; j < n;) {
    const c = text.charCodeAt(j);
    if (c >= 0x80) return UNICODE;
    let unit = 0;
    if ((ASCII[c]! & NAME) !== 0 || c === 0x3a || (c === 0x2d && j > colon + 1)) unit = 1;
    else if (c === 0x25) unit = isHex(text.charCodeAt(j + 1)) && isHex(text.charCodeAt(j + 2)) ? 3 : 0;
    else if (c === 0x5c) {
      const d = text.charCodeAt(j + 1);
      unit = d < 0x80 && (ASCII[d]! & LOCAL_ESC) !== 0 ? 2 : 0;
      if (unit === 2) escaped = true;
    } else if (c === 0x2e && j > colon + 1) {
      j++;
      continue;
    }
    if (unit === 0) break;
    j += unit;
    end = j;
  }
  pnameColon = colon;
  pnameEnd = end;
  pnameEscaped = escaped;
  pnameUnicode = false;
  return end;
}

/** Whether a prefixed name may go on at `d` after a word: a colon, or PN_CHARS beyond a word's (`-`, `.` and non-ASCII). */
function mayGoOnAsPrefixedName(d: number): boolean {
  return d === 0x3a || d === 0x2d || d === 0x2e || d >= 0x80;
}

function isHex(c: number): boolean {
  return c < 0x80 && (ASCII[c]! & HEX) !== 0;
}

/** The class of the last number scanNumber read. */
let numberClass: 'N' | 'D' | 'E' = 'N';

/**
 * The end of the number at `i` ([146]-[148] unsigned: the first alternative
 * of DOUBLE, DECIMAL, INTEGER that matches, as the grammar's longest match),
 * its class in numberClass. `i` holds a digit, or a dot before a digit.
 */
function scanNumber(text: string, i: number): number {
  let j = i;
  while (isDigit(text.charCodeAt(j))) j++;
  const whole = j - i;
  if (text.charCodeAt(j) === 0x2e) {
    let k = j + 1;
    while (isDigit(text.charCodeAt(k))) k++;
    const fraction = k - j - 1;
    const exponent = exponentEnd(text, k);
    if (exponent > 0 && whole + fraction > 0) {
      numberClass = 'E';
      return exponent;
    }
    if (fraction > 0) {
      numberClass = 'D';
      return k;
    }
    numberClass = 'N';
    return j;
  }
  const exponent = exponentEnd(text, j);
  numberClass = exponent > 0 ? 'E' : 'N';
  return exponent > 0 ? exponent : j;
}

/** The end of the exponent (`[eE][+-]?[0-9]+`) at `j`, or -1 when none is there. */
function exponentEnd(text: string, j: number): number {
  const e = text.charCodeAt(j);
  if (e !== 0x65 && e !== 0x45) return -1;
  let k = j + 1;
  const sign = text.charCodeAt(k);
  if (sign === 0x2b || sign === 0x2d) k++;
  const digits = k;
  while (isDigit(text.charCodeAt(k))) k++;
  return k > digits ? k : -1;
}

/** The end of the LANGTAG ([145], `@[a-zA-Z]+(-[a-zA-Z0-9]+)*`) at the `@` at `i`, or -1. */
function scanLangTag(text: string, i: number): number {
  let j = i + 1;
  while (isLetter(text.charCodeAt(j))) j++;
  if (j === i + 1) return -1;
  while (text.charCodeAt(j) === 0x2d) {
    let k = j + 1;
    while (isLetter(text.charCodeAt(k)) || isDigit(text.charCodeAt(k))) k++;
    if (k === j + 1) break;
    j = k;
  }
  return j;
}

function isLetter(c: number): boolean {
  return c < 0x80 && (ASCII[c]! & BASE) !== 0;
}

/**
 * True when the datatype IRI at `at` is one the generator writes as
 * `"content"^^<datatype>` whatever the content: any but xsd:string (written
 * as a plain literal) and xsd:integer (written bare when the content is
 * digits). Then the content is a slot and the datatype stays in the key.
 */
function slotsTypedLiteral(text: string, at: number, base: string, prefixes: Prefixes): boolean {
  let iri: string | undefined;
  const end = text.charCodeAt(at) === 0x3c ? scanIriRef(text, at) : -1;
  if (end > 0) iri = resolveIri(text.slice(at + 1, end - 1), base);
  else {
    const p = readPrefixedName(text, at) ? findPrefix(prefixes, text, at, pnameColon) : -1;
    if (p < 0 || pnameEscaped) return false;
    iri = prefixes.opens[p]!.slice(1) + text.slice(pnameColon + 1, pnameEnd);
  }
  return hasScheme(iri) && iri !== XSD + 'string' && iri !== XSD + 'integer';
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

// What stringEnd saw of the content: whether the generator writes it as it stands (no backslash, `"`, control
// it escapes, or surrogate), and then its hash (see findSlot).
let stringPlain = true;
let stringHash = 0;

/** Whether the content character `d` is written by the generator as it stands inside `"…"`. */
function plainInString(d: number): boolean {
  return d !== 0x5c && d !== 0x22 && d >= 0x0e && (d < 0xd800 || d > 0xdfff);
}

/**
 * The end of the string literal starting at `start` (STRING_LITERAL1/2 and
 * the LONG forms, [156]-[159]), or -1 when it does not end or holds a
 * character the short forms forbid; stringPlain and stringHash say what it holds.
 */
function stringEnd(text: string, start: number): number {
  const q = text.charCodeAt(start);
  const n = text.length;
  let plain = true;
  let hash = SEED_STRING;
  if (text.charCodeAt(start + 1) === q && text.charCodeAt(start + 2) === q) {
    let j = start + 3;
    while (j < n) {
      const d = text.charCodeAt(j);
      if (d === 0x5c) {
        plain = false;
        j += 2;
      }
      // Content never ends in a quote ([158]: quotes are followed by another character), so the first three close it.
      else if (d === q && text.charCodeAt(j + 1) === q && text.charCodeAt(j + 2) === q) {
        stringPlain = plain;
        stringHash = hash;
        return j + 3;
      } else {
        if (!plainInString(d)) plain = false;
        hash = Math.imul(hash ^ d, FNV_PRIME);
        j++;
      }
    }
    return -1;
  }
  let j = start + 1;
  while (j < n) {
    const d = text.charCodeAt(j);
    if (d === 0x5c) {
      plain = false;
      j += 2;
    } else if (d === q) {
      stringPlain = plain;
      stringHash = hash;
      return j + 1;
    } else if (d === 0x0a || d === 0x0d) return -1;
    else {
      if (!plainInString(d)) plain = false;
      hash = Math.imul(hash ^ d, FNV_PRIME);
      j++;
    }
  }
  return -1;
}

/**
 * The content of `token` between `from` and `to` as the generator writes it
 * inside `"…"`: ECHARs decoded, then the generator's escapes; undefined for
 * any other backslash or a lone surrogate (sparqljs refuses those).
 */
function generatorContent(text: string, from: number, to: number): string | undefined {
  const content = unescape(text.slice(from, to));
  return content === undefined ? undefined : content.replace(GENERATOR_ESCAPED, (e) => GENERATOR_ESCAPES[e] ?? e);
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

// What the constant readers below read last: the constant as the generator writes it, and its hash (see probeSlot).
let constantFill = '';
let constantHash = 0;
/** Whether the IRIREF resolvedIriRef read last was absolute. */
let iriAbsolute = false;

/**
 * The IRI of the IRIREF scanIriRef just found from `start` to `end`,
 * resolved against `base` (iriAbsolute says whether it was absolute), or
 * undefined for one sparqljs refuses.
 */
function resolvedIriRef(text: string, start: number, end: number, base: string): string | undefined {
  const reference = text.slice(start + 1, end - 1);
  // An absolute reference is the IRI itself; [139] excludes the ASCII characters NOT_IN_IRI lists, but not DEL,
  // the C1 controls or Unicode spaces.
  iriAbsolute = schemeLength(reference) > 0;
  const resolved = iriAbsolute ? reference : resolveIri(reference, base);
  if (iriAbsolute ? !iriRefAscii && NOT_IN_IRI.test(resolved) : !hasScheme(resolved) || NOT_IN_IRI.test(resolved)) return undefined;
  return resolved;
}

/**
 * Reads the constant of the IRIREF from `start` to `end` that resolvedIriRef
 * just resolved to `resolved`. Its hash: the lexer's (see probeSlot), or with
 * `tail` the tail hash (see tailHash), as for every reader below.
 */
function iriRefConstant(text: string, start: number, end: number, resolved: string, tail = false): void {
  if (iriAbsolute) {
    constantFill = text.slice(start, end);
    constantHash = tail ? tailHash('', text, start, end, '') : Math.imul(iriRefOpenHash ^ 0x3e, FNV_PRIME);
  } else {
    constantFill = '<' + resolved + '>';
    constantHash = tail ? tailHash('<', resolved, 0, resolved.length, '>') : hashOf(SEED_TERM, constantFill, 0, constantFill.length);
  }
}

/** Reads the constant of the prefixed name readPrefixedName just found at `start`; false when its prefix is not declared or sparqljs refuses it. */
function prefixedNameConstant(text: string, start: number, prefixes: Prefixes, tail = false): boolean {
  const colon = pnameColon;
  const end = pnameEnd;
  const p = findPrefix(prefixes, text, start, colon);
  if (p < 0) return false;
  const open = prefixes.opens[p]!;
  if (pnameEscaped || pnameUnicode) {
    const local = pnameEscaped ? text.slice(colon + 1, end).replace(/\\(.)/g, '$1') : text.slice(colon + 1, end);
    // The namespace was checked when declared; an ASCII local part holds nothing NOT_IN_IRI lists.
    if (pnameUnicode && NOT_IN_IRI.test(local)) return false;
    constantFill = open + local + '>';
    constantHash = tail ? tailHash(open, local, 0, local.length, '>') : hashOf(SEED_TERM, constantFill, 0, constantFill.length);
  } else {
    constantFill = open + text.slice(colon + 1, end) + '>';
    constantHash = tail
      ? tailHash(open, text, colon + 1, end, '>')
      : Math.imul(hashOf(prefixes.hashes[p]!, text, colon + 1, end) ^ 0x3e, FNV_PRIME);
  }
  return true;
}

/** Reads the constant of the string literal stringEnd just found from `start` to `end`; false when sparqljs refuses its content. */
function stringConstant(text: string, start: number, end: number, tail = false): boolean {
  const q = text.charCodeAt(start);
  const quote = end - start >= 6 && text.charCodeAt(start + 1) === q && text.charCodeAt(start + 2) === q ? 3 : 1;
  if (stringPlain) {
    constantFill = text.slice(start + quote, end - quote);
    constantHash = tail ? tailHash('', text, start + quote, end - quote, '') : stringHash;
    return true;
  }
  const content = generatorContent(text, start + quote, end - quote);
  if (content === undefined) return false;
  constantFill = content;
  constantHash = tail ? tailHash('', content, 0, content.length, '') : hashOf(SEED_STRING, content, 0, content.length);
  return true;
}

/** Reads the constant of the number scanNumber just found from `start` to `end` (a DOUBLE in lower case). */
function numberConstant(text: string, start: number, end: number, tail = false): void {
  if (numberClass === 'E') {
    constantFill = text.slice(start, end).toLowerCase();
    constantHash = tail ? tailHash('', constantFill, 0, constantFill.length, '') : hashOf(SEED_TERM, constantFill, 0, constantFill.length);
  } else {
    constantFill = text.slice(start, end);
    constantHash = tail ? tailHash('', text, start, end, '') : hashOf(SEED_TERM, text, start, end);
  }
}

/** Code units at the end of a constant's generated form that its tail hash reads. */
const TAIL = 8;

/**
 * The tail hash of the string `before + middle.slice(from, to) + after`,
 * read from its parts without building it: its length and its last TAIL
 * code units. The generated forms of an application's constants differ
 * there; matchLayout's table is its own per call, so equal forms are all it
 * needs to hash alike, and a text crafted to crowd the table is lexed instead.
 */
function tailHash(before: string, middle: string, from: number, to: number, after: string): number {
  const length = before.length + (to - from) + after.length;
  let h = Math.imul(length ^ SEED_TERM, FNV_PRIME);
  const first = length - Math.min(length, TAIL);
  for (let j = first; j < before.length; j++) h = Math.imul(h ^ before.charCodeAt(j), FNV_PRIME);
  for (let j = from + Math.max(0, first - before.length); j < to; j++) h = Math.imul(h ^ middle.charCodeAt(j), FNV_PRIME);
  for (let j = Math.max(0, first - before.length - (to - from)); j < after.length; j++) h = Math.imul(h ^ after.charCodeAt(j), FNV_PRIME);
  return h;
}
