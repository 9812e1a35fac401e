// One lexical pass over query text: the shape key (the text with its constants cut out) and each constant as the generator would write it.

import { hasScheme, iriReferenceProblem, NOT_IN_IRI } from '../iri.js';
import { resolveIri } from './resolve-iri.js';

/** A constant's class: `S` string (its language tag stays in the key), `I` IRI, unsigned `N` INTEGER, `D` DECIMAL, `E` DOUBLE. */
export type ConstantClass = 'S' | 'I' | 'N' | 'D' | 'E';

/** A query cut into the shape it shares with other queries and its own constants. */
export interface QueryShape {
  /** The text, white space and comments as one space, each slot's constant as `\u0001` and its class, others as written. */
  readonly key: string;
  /** The text between constants, one more piece than constants; `key` is them joined by the markers. */
  readonly code: readonly string[];
  /**
   * The slot of each constant in text order. Equal constants (class and generated form) share one:
   * the generator merges triples with one subject, so equality is part of the key (`\u0002`, slot, `;`).
   */
  readonly refs: readonly number[];
  /** Slots in a verb position of a triple pattern, read lexically: a guess (the planner confirms it) of the predicates. */
  readonly verbs: readonly number[];
  /** One class letter per slot. */
  readonly classes: string;
  /** Each slot's constant as first written. */
  readonly raw: readonly string[];
  /** Each slot's constant as the generator writes it: `<absolute IRI>`, a string's escaped content, a number as written. */
  readonly fill: readonly string[];
  /** Where each constant (slots and references alike, in text order) starts and ends in the text: two numbers each. */
  readonly spans: readonly number[];
}

/**
 * Cuts `text` into its shape and constants in one pass over the SPARQL 1.1 terminals (§19.8), or
 * undefined for text it cannot classify or with codepoint escapes (§19.2). Kept in the key as written:
 * BASE and PREFIX, IRIs after FROM, NAMED, GRAPH and SERVICE or before `(`, datatypes (and literals
 * typed xsd:string or xsd:integer), language tags, signs, booleans, LIMIT and OFFSET.
 */
export function lexQueryShape(text: string, baseIri: string): QueryShape | undefined {
  if (CODEPOINT_ESCAPE.test(text)) return undefined;
  return new ShapeLexer(text, baseIri).lex();
}

const CODEPOINT_ESCAPE = /\\[uU]/;

/** What the keyword or `^^` before a token decides about it (see ShapeLexer.after). */
type After = 'other' | 'limit' | 'keyed';

/** Where a triples block stands, for the verb guess (`verb-done`: after a verb, a path may go on; `items`: in a collection). */
type Place = 'subject' | 'verb' | 'verb-done' | 'object' | 'after-object' | 'items' | 'none';

/** A bracket opened inside a triples block: what it is and where the block stood outside it. */
interface OpenBracket {
  readonly kind: 'list' | 'blank' | 'path' | 'expression';
  readonly outside: Place;
}

/** Thrown by ShapeLexer.refuse, caught by ShapeLexer.lex: one object, no stack to capture. */
const UNCLASSIFIED = new Error('text the lexer does not classify');

const XSD = 'http://www.w3.org/2001/XMLSchema#';

/** Characters of the longest constant a slot takes (see ShapeLexer.constant). */
const LONGEST_CONSTANT = 65_536;

/** Fingerprint seeds: a string's content may be written as an IRI or a number is, so strings are fingerprinted apart. */
const STRING_SEED = 0x050c5d1f;
const TERM_SEED = 0x011c9dc5;

/** A PN_LOCAL of ASCII without escapes (the lexer checked each `%` has two hex digits): IRI characters in any path, query or fragment. */
const PLAIN_LOCAL = /^[A-Za-z0-9_.:%-]*$/;

/** An IRI with an authority and nothing after it, where a local part would continue the host or port. */
const AUTHORITY_ONLY = /^[^:/?#]+:\/\/[^/?#]*$/;

/** A PREFIX declaration: its name, `<` and its namespace, and the fingerprint of that once a name uses it. */
interface Prefix {
  readonly name: string;
  readonly namespace: string;
  /** Whether every PLAIN_LOCAL after the namespace makes an RFC 3987 IRI: false when it would extend a host or port. */
  readonly plainLocalsFit: boolean;
  fingerprint?: number;
}

/** The keywords the lexer acts on (any case, §19.2): the token after LIMIT and OFFSET, and IRIs after the keyed ones, stay in the key. */
const KEYWORDS: readonly (readonly [string, 'limit' | 'keyed' | 'boolean' | 'base' | 'prefix'])[] = [
  ['LIMIT', 'limit'],
  ['OFFSET', 'limit'],
  ['FROM', 'keyed'],
  ['NAMED', 'keyed'],
  ['GRAPH', 'keyed'],
  ['SERVICE', 'keyed'],
  ['SILENT', 'keyed'],
  ['TRUE', 'boolean'],
  ['FALSE', 'boolean'],
  ['BASE', 'base'],
  ['PREFIX', 'prefix'],
];

/** The one-character punctuation of the grammar ([28]-[138]), by code; `^^ && || != <= >=` are read as pairs first. */
const PUNCTUATION = new Set([...'{}()[];,.+-*/|^!=<>?'].map((ch) => ch.charCodeAt(0)));

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
const GENERATOR_ESCAPED = /["\\\t\n\r\b\f]/;
const GENERATOR_ESCAPED_ALL = new RegExp(GENERATOR_ESCAPED, 'g');
/** The characters PN_LOCAL_ESC ([173]) may escape. */
const LOCAL_ESCAPED = "_~.-!$&'()*+,;=/?#@%";

/** The lexer of one text and the shape it builds: one instance per call, nothing shared between calls. */
class ShapeLexer {
  private pos = 0;
  /** The key built so far; the text from `run` to `written` (the end of the last token) is still to be added. */
  private key = '';
  private run = 0;
  private written = 0;
  /** PREFIX declarations read so far, the latest first (it replaces an earlier one). */
  private readonly prefixes: Prefix[] = [];
  /** After PREFIX: the declared name is next, then the IRI it is bound to. */
  private declaring: 'name' | 'iri' | undefined;
  private declaredName = '';
  private baseFollows = false;
  private after: After = 'other';
  /** The triples block, for the verb guess. */
  private place: Place = 'none';
  private readonly brackets: OpenBracket[] = [];
  /** The next term is a datatype (after `^^`). */
  private datatypeNext = false;

  /** The shape: slots by the fingerprint of their generated form, and what each constant refers to. */
  private readonly slots = new Map<number, number>();
  private readonly refs: number[] = [];
  private readonly verbs: number[] = [];
  private readonly fill: string[] = [];
  private classes = '';
  /** Where each constant's marker starts in the key. */
  private readonly markers: number[] = [];
  private readonly spans: number[] = [];
  /** Generated forms of the IRIs kept in the key: a slot equal to one would compare differently as a sentinel. */
  private keyedIris: Set<string> | undefined;

  constructor(
    private readonly text: string,
    private base: string,
  ) {}

  lex(): QueryShape | undefined {
    const text = this.text;
    try {
      for (this.pos = skipSpace(text, 0); this.pos < text.length; this.pos = skipSpace(text, this.pos)) this.token();
    } catch (error) {
      if (error === UNCLASSIFIED) return undefined;
      throw error;
    }
    if (this.declaring !== undefined || this.baseFollows) return undefined;
    if (this.keyedIris !== undefined && this.fill.some((value) => this.keyedIris!.has(value))) return undefined;
    const key = this.key + text.slice(this.run, this.written);
    const { refs, verbs, classes, fill, spans, markers } = this;
    return new LexedShape(text, key, refs, verbs, classes, fill, spans, markers);
  }

  /** Reads the token at `pos`, by its first character; a reader returns false when no token of its kind starts there. */
  private token(): boolean {
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x3c: // <
        return this.IRIREF() || this.punctuation();
      case 0x22: // "
      case 0x27: // '
        return this.RDFLiteral();
      case 0x3f: // ?
        return this.VAR() || this.punctuation();
      case 0x24: // $
        return this.VAR() || this.refuse();
      case 0x5f: // _
        return this.text.charCodeAt(this.pos + 1) === 0x3a ? this.BLANK_NODE_LABEL() : this.word();
      case 0x3a: // :
        return this.PNAME();
      case 0x2e: // .
        return isDigit(this.text.charCodeAt(this.pos + 1)) ? this.NumericLiteral() : this.punctuation();
      default:
        if (isDigit(c)) return this.NumericLiteral();
        if (isLetter(c)) return this.word();
        if (c >= 0x80) return this.PNAME() || this.refuse();
        return this.punctuation();
    }
  }

  /** [139] IRIREF: a BASE or PREFIX IRI, or an IRI term. False when no IRIREF starts here (then `<` is an operator). */
  private IRIREF(): boolean {
    const start = this.pos;
    const end = iriRefEnd(this.text, start);
    if (end < 0) return false;
    const reference = this.text.slice(start + 1, end - 1);
    const resolved = resolvedIri(reference, this.base);
    if (resolved === undefined) return this.refuse();
    this.pos = end;
    if (this.baseFollows || this.declaring === 'iri') {
      if (this.baseFollows) this.base = resolved;
      else this.prefixes.unshift({ name: this.declaredName, namespace: '<' + resolved, plainLocalsFit: !AUTHORITY_ONLY.test(resolved) });
      this.baseFollows = false;
      this.declaring = undefined;
      this.keep(start, end);
      this.after = 'other';
      return true;
    }
    // An absolute IRI is written by the generator as it stands.
    if (resolved === reference) this.iri(start, end, this.text.slice(start, end), fingerprint(TERM_SEED, this.text, start, end));
    else this.iri(start, end, '<' + resolved + '>');
    return true;
  }

  /** [140] PNAME_NS and [141] PNAME_LN: a PREFIX's name, or an IRI term. False when no prefixed name starts here. */
  private PNAME(): boolean {
    const start = this.pos;
    const colon = this.colonAfterPrefix(start);
    if (colon < 0) return false;
    const end = pnLocalEnd(this.text, colon + 1);
    this.pos = end;
    if (this.declaring === 'name') {
      if (end > colon + 1) return this.refuse();
      this.declaredName = this.text.slice(start, colon);
      this.declaring = 'iri';
      this.keep(start, end);
      this.after = 'other';
      return true;
    }
    const prefix = this.prefix(start, colon);
    if (prefix === undefined) return this.refuse();
    const local = this.text.slice(colon + 1, end);
    // The namespace was checked when declared. A local part of letters, digits and `_.:%-` after a
    // namespace that has a path (or no authority) makes an IRI (§19.5); other ones are checked whole.
    const unescaped = local.includes('\\') ? local.replace(/\\(.)/g, '$1') : local;
    if (!(prefix.plainLocalsFit && PLAIN_LOCAL.test(local))) {
      const iri = prefix.namespace.slice(1) + unescaped;
      if (NOT_IN_IRI.test(unescaped) || iriReferenceProblem(iri) !== undefined) return this.refuse();
    }
    if (local.includes('\\')) this.iri(start, end, prefix.namespace + unescaped + '>');
    else {
      prefix.fingerprint ??= fingerprint(TERM_SEED, prefix.namespace);
      this.iri(start, end, prefix.namespace + local + '>', fingerprint(fingerprint(prefix.fingerprint, local), '>'));
    }
    return true;
  }

  /** [140] PNAME_NS: the colon after an optional PN_PREFIX at `at`, or -1. */
  private colonAfterPrefix(at: number): number {
    const colon = this.text.charCodeAt(at) === 0x3a ? at : pnPrefixEnd(this.text, at);
    return colon >= 0 && this.text.charCodeAt(colon) === 0x3a ? colon : -1;
  }

  /** The declaration of the prefix name from `start` to `colon`. */
  private prefix(start: number, colon: number): Prefix | undefined {
    for (const prefix of this.prefixes) {
      if (prefix.name.length === colon - start && this.text.startsWith(prefix.name, start)) return prefix;
    }
    return undefined;
  }

  /** An IRI term: a constant, or part of the key after FROM, NAMED, GRAPH, SERVICE or `^^`, or before `(` (a function). */
  private iri(start: number, end: number, generated: string, hash?: number): void {
    if (this.after === 'keyed' || this.text.charCodeAt(skipSpace(this.text, end)) === 0x28) {
      (this.keyedIris ??= new Set()).add(generated);
      this.keep(start, end);
    } else this.constant('I', start, end, generated, hash);
    this.term();
    this.after = 'other';
  }

  /** [129] RDFLiteral: its content is a slot unless the datatype changes how the generator writes it. */
  private RDFLiteral(): boolean {
    const start = this.pos;
    const end = stringLiteralEnd(this.text, start);
    if (end < 0) return this.refuse();
    this.pos = end;
    const next = skipSpace(this.text, end);
    const typed = this.text.startsWith('^^', next);
    this.after = 'other';
    if (typed && !this.slotsDatatype(skipSpace(this.text, next + 2))) {
      this.keep(start, end);
      this.term();
      return true;
    }
    const quote = end - start >= 6 && this.text.startsWith(this.text[start]!.repeat(3), start) ? 3 : 1;
    const content = generatorContent(this.text.slice(start + quote, end - quote));
    if (content === undefined) return this.refuse();
    this.constant('S', start, end, content);
    this.term();
    if (!typed && this.text.charCodeAt(next) === 0x40) {
      const tagEnd = langTagEnd(this.text, next);
      if (tagEnd < 0) return this.refuse();
      this.keep(next, tagEnd);
      this.pos = tagEnd;
    }
    return true;
  }

  /** Whether the generator writes `"content"^^<datatype at at>` whatever the content: not xsd:string nor xsd:integer. */
  private slotsDatatype(at: number): boolean {
    let iri: string;
    const end = iriRefEnd(this.text, at);
    if (end > 0) iri = resolveIri(this.text.slice(at + 1, end - 1), this.base);
    else {
      const colon = this.colonAfterPrefix(at);
      if (colon < 0) return false;
      const namespace = this.prefix(at, colon)?.namespace;
      const local = this.text.slice(colon + 1, pnLocalEnd(this.text, colon + 1));
      if (namespace === undefined || local.includes('\\')) return false;
      iri = namespace.slice(1) + local;
    }
    return hasScheme(iri) && iri !== XSD + 'string' && iri !== XSD + 'integer';
  }

  /** [131] NumericLiteralUnsigned: INTEGER, DECIMAL or DOUBLE ([146]-[148]); kept in the key after LIMIT and OFFSET. */
  private NumericLiteral(): boolean {
    const start = this.pos;
    const end = numberEnd(this.text, start);
    this.pos = end;
    const token = this.text.slice(start, end);
    if (this.after === 'limit') this.keep(start, end);
    else if (/[eE]/.test(token)) this.constant('E', start, end, token);
    else this.constant(token.includes('.') ? 'D' : 'N', start, end, token);
    this.term();
    this.after = 'other';
    return true;
  }

  /** [143] VAR1 and [144] VAR2. False when `?` starts no variable (then it is a path modifier). */
  private VAR(): boolean {
    const start = this.pos;
    const end = varNameEnd(this.text, start + 1);
    return end >= 0 && this.keptTerm(start, end);
  }

  /** [142] BLANK_NODE_LABEL: kept in the key. */
  private BLANK_NODE_LABEL(): boolean {
    const start = this.pos;
    const end = blankNodeLabelEnd(this.text, start + 2);
    return end >= 0 ? this.keptTerm(start, end) : this.refuse();
  }

  /** A term from `start` to `end` kept in the key as written. */
  private keptTerm(start: number, end: number): true {
    this.pos = end;
    this.keep(start, end);
    this.term();
    this.after = 'other';
    return true;
  }

  /** A word (letters, digits, `_`): a prefixed name if one goes on from it, else a keyword (any case), kept in the key. */
  private word(): boolean {
    const start = this.pos;
    let end = start;
    while (isWordCharacter(this.text.charCodeAt(end))) end++;
    const d = this.text.charCodeAt(end);
    if ((d === 0x3a || d === 0x2d || d === 0x2e || d >= 0x80) && this.PNAME()) return true;
    this.pos = end;
    this.keep(start, end);
    const word = keywordAt(this.text, start, end);
    this.after = word === 'limit' || word === 'keyed' ? word : 'other';
    if (word === 'boolean' || (end - start === 1 && this.text.charCodeAt(start) === 0x61))
      this.term(); // `a` is a verb
    else this.place = 'none';
    if (word === 'base') this.baseFollows = true;
    else if (word === 'prefix') this.declaring = 'name';
    return true;
  }

  /** Punctuation, one character or a pair: kept in the key, and a step of the triples block. */
  private punctuation(): boolean {
    const start = this.pos;
    const c = this.text.charCodeAt(start);
    const pair = isPair(c, this.text.charCodeAt(start + 1));
    if (!pair && !PUNCTUATION.has(c)) return this.refuse();
    this.pos = start + (pair ? 2 : 1);
    this.keep(start, this.pos);
    if (pair) {
      if (c === 0x5e) this.datatypeNext = true;
      else this.place = 'none';
    } else this.step(c);
    this.after = pair && c === 0x5e ? 'keyed' : 'other';
    return true;
  }

  /** Stops at text the lexer does not classify: the planner prepares it as it is. */
  private refuse(): never {
    throw UNCLASSIFIED;
  }

  /** Adds the token from `from` to `to` to the key as written, after one space when white space or a comment came before it. */
  private keep(from: number, to: number): void {
    const spaced = from === this.written + 1 && this.text.charCodeAt(this.written) === 0x20;
    if (from !== this.written && !(this.written > 0 && spaced)) {
      // Not one space or nothing since the last token: the run ends, one space stands for what came between.
      if (this.written > 0) this.key += this.text.slice(this.run, this.written) + ' ';
      this.run = from;
    }
    this.written = to;
  }

  /** The constant from `from` to `to`, generated as `generated`: a new slot, or a reference to an equal one. */
  private constant(
    cls: ConstantClass,
    from: number,
    to: number,
    generated: string,
    hash = fingerprint(cls === 'S' ? STRING_SEED : TERM_SEED, generated),
  ): void {
    // The parser refuses some tokens of a few hundred thousand characters: planned as written, so is this text.
    if (to - from > LONGEST_CONSTANT) this.refuse();
    this.keep(from, from);
    this.key += this.text.slice(this.run, from);
    this.markers.push(this.key.length);
    this.spans.push(from, to);
    const same = this.slots.get(hash & 0x3fffffff);
    // Two different constants with one fingerprint: rare, and the text is then planned as it is.
    if (same !== undefined && (this.fill[same] !== generated || (this.classes[same] === 'S') !== (cls === 'S'))) this.refuse();
    const slot = same ?? this.fill.length;
    if (this.place === 'verb' && cls === 'I' && !this.datatypeNext) this.verbs.push(slot);
    this.refs.push(slot);
    if (same !== undefined) this.key += '\u0002' + same + ';';
    else {
      this.key += '\u0001' + cls;
      this.slots.set(hash & 0x3fffffff, slot);
      this.classes += cls;
      this.fill.push(generated);
    }
    this.run = to;
    this.written = to;
  }

  /** Moves the triples block on past a term: subject, verb, object. */
  private term(): void {
    if (this.datatypeNext) {
      this.datatypeNext = false;
      return;
    }
    switch (this.place) {
      case 'subject':
        this.place = 'verb';
        return;
      case 'verb':
        this.place = 'verb-done';
        return;
      case 'verb-done':
      case 'object':
        this.place = 'after-object';
    }
  }

  /** Moves the triples block on by one punctuation character `c`. */
  private step(c: number): void {
    const place = this.place;
    switch (c) {
      case 0x7b: // {
      case 0x7d: // }
      case 0x2e: // .
        this.place = 'subject';
        return;
      case 0x3b: // ;
        this.place = 'verb';
        return;
      case 0x2c: // ,
        this.place = 'object';
        return;
      case 0x5b: // [
        this.brackets.push({ kind: 'blank', outside: place });
        this.place = 'verb';
        return;
      case 0x28: // (
        if (place === 'verb') this.brackets.push({ kind: 'path', outside: place });
        else if (place === 'subject' || place === 'object' || place === 'items') {
          this.brackets.push({ kind: 'list', outside: place });
          this.place = 'items';
        } else {
          this.brackets.push({ kind: 'expression', outside: place });
          this.place = 'none';
        }
        return;
      case 0x5d: // ]
      case 0x29: // )
        this.close();
        return;
      case 0x2f: // /
      case 0x7c: // |
      case 0x5e: // ^
        this.place = place === 'verb-done' || place === 'verb' ? 'verb' : 'none';
        return;
      case 0x21: // !
        if (place !== 'verb') this.place = 'none';
        return;
      case 0x2a: // *
      case 0x2b: // +
      case 0x3f: // ?
        if (place !== 'verb-done') this.place = 'none';
        return;
      default:
        this.place = 'none';
    }
  }

  /** A closing bracket: after a path group a path may go on, after FILTER (…) or BIND (…) a triple may start, else a term ended. */
  private close(): void {
    const bracket = this.brackets.pop();
    if (bracket === undefined) this.place = 'none';
    else if (bracket.kind === 'path') this.place = 'verb-done';
    else if (bracket.kind === 'expression') this.place = 'subject';
    else {
      this.place = bracket.outside;
      this.term();
    }
  }
}

/** A QueryShape whose `code` and `raw` are cut when first read: a cache hit reads only the key, the fills and a few raws. */
class LexedShape implements QueryShape {
  #code: readonly string[] | undefined;
  #raw: readonly string[] | undefined;

  constructor(
    private readonly text: string,
    readonly key: string,
    readonly refs: readonly number[],
    readonly verbs: readonly number[],
    readonly classes: string,
    readonly fill: readonly string[],
    readonly spans: readonly number[],
    private readonly markers: readonly number[],
  ) {}

  get code(): readonly string[] {
    return (this.#code ??= codeOf(this.key, this.markers));
  }

  get raw(): readonly string[] {
    return (this.#raw ??= rawOf(this.text, this.refs, this.spans));
  }
}

/** The text between constants: the key cut at each marker (a new slot's is two characters, a reference `\u0002`, its number and `;`). */
function codeOf(key: string, markers: readonly number[]): string[] {
  const code: string[] = [];
  let from = 0;
  for (const at of markers) {
    code.push(key.slice(from, at));
    from = key.charCodeAt(at) === 0x01 ? at + 2 : key.indexOf(';', at) + 1;
  }
  code.push(key.slice(from));
  return code;
}

/** Each slot's constant as first written: the spans of the constants that open a slot. */
function rawOf(text: string, refs: readonly number[], spans: readonly number[]): string[] {
  const raw: string[] = [];
  for (let o = 0; o < refs.length; o++) if (refs[o] === raw.length) raw.push(text.slice(spans[2 * o], spans[2 * o + 1]));
  return raw;
}

// The terminals' ends: each returns where the terminal that starts at its position ends, or -1 when none starts there.

/** [139] IRIREF: `<`, no character it excludes, `>`. */
function iriRefEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== 0x3c) return -1;
  for (let j = at + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x3e) return j + 1;
    if (!isIriCharacter(c)) return -1;
  }
  return -1;
}

/** The IRI an IRIREF's reference stands for, resolved against `base`; undefined for one the guard refuses (NOT_IN_IRI). */
function resolvedIri(reference: string, base: string): string | undefined {
  if (iriReferenceProblem(reference) !== undefined) return undefined;
  if (hasScheme(reference)) return NOT_IN_IRI.test(reference) ? undefined : reference;
  const resolved = resolveIri(reference, base);
  return hasScheme(resolved) && !NOT_IN_IRI.test(resolved) ? resolved : undefined;
}

/** [167] PN_PREFIX: a PN_CHARS_BASE, then PN_CHARS and dots, not ending in a dot. */
function pnPrefixEnd(text: string, at: number): number {
  const first = text.codePointAt(at) ?? -1;
  if (!isPnCharsBase(first)) return -1;
  return pnCharsAndDotsEnd(text, at + width(first));
}

/** The tail [167] and [142] share, from `at`: PN_CHARS and dots, not ending in a dot. */
function pnCharsAndDotsEnd(text: string, at: number): number {
  let end = at;
  for (let j = at; j < text.length;) {
    const c = text.codePointAt(j)!;
    if (c !== 0x2e && !isPnChars(c)) break;
    j += width(c);
    if (c !== 0x2e) end = j;
  }
  return end;
}

/**
 * [169] PN_LOCAL from `at` (after the colon; it may be empty): a PN_CHARS_U,
 * colon, digit or PLX, then PN_CHARS, colons, PLX and dots, not ending in a dot.
 */
function pnLocalEnd(text: string, at: number): number {
  let end = at;
  for (let j = at; j < text.length;) {
    const c = text.codePointAt(j)!;
    let unit = 0;
    if (isPnCharsU(c) || isDigit(c) || c === 0x3a || (j > at && isPnChars(c))) unit = width(c);
    else if (c === 0x25)
      unit = isHex(text.charCodeAt(j + 1)) && isHex(text.charCodeAt(j + 2)) ? 3 : 0; // [171] PERCENT
    else if (c === 0x5c)
      unit = LOCAL_ESCAPED.includes(text[j + 1] ?? ' ') ? 2 : 0; // [173] PN_LOCAL_ESC
    else if (c === 0x2e && j > at) {
      j++;
      continue;
    }
    if (unit === 0) break;
    j += unit;
    end = j;
  }
  return end;
}

/** [166] VARNAME from `at` (after `?` or `$`). */
function varNameEnd(text: string, at: number): number {
  const first = text.codePointAt(at) ?? -1;
  if (!isPnCharsU(first) && !isDigit(first)) return -1;
  let j = at + width(first);
  while (j < text.length) {
    const c = text.codePointAt(j)!;
    if (!isPnCharsU(c) && !isDigit(c) && !isNameMark(c)) break;
    j += width(c);
  }
  return j;
}

/** [142] BLANK_NODE_LABEL from `at` (after `_:`): a PN_CHARS_U or digit, then PN_CHARS and dots, not ending in a dot. */
function blankNodeLabelEnd(text: string, at: number): number {
  const first = text.codePointAt(at) ?? -1;
  if (!isPnCharsU(first) && !isDigit(first)) return -1;
  return pnCharsAndDotsEnd(text, at + width(first));
}

/** [156]-[159] the string literals; -1 when one does not end. Any backslash pair passes here; generatorContent checks it. */
function stringLiteralEnd(text: string, at: number): number {
  const q = text[at]!;
  const long = text.startsWith(q + q + q, at);
  for (let j = at + (long ? 3 : 1); j < text.length; j++) {
    const c = text[j];
    if (c === '\\') j++;
    // Content never ends in a quote ([158]: quotes are followed by another character), so the first three close it.
    else if (long ? text.startsWith(q + q + q, j) : c === q) return j + (long ? 3 : 1);
    else if (!long && (c === '\n' || c === '\r')) return -1;
  }
  return -1;
}

/** [145] LANGTAG at the `@` at `at`: `@[a-zA-Z]+(-[a-zA-Z0-9]+)*`. */
function langTagEnd(text: string, at: number): number {
  let j = at + 1;
  while (isLetter(text.charCodeAt(j))) j++;
  if (j === at + 1) return -1;
  while (text.charCodeAt(j) === 0x2d) {
    let k = j + 1;
    while (isLetter(text.charCodeAt(k)) || isDigit(text.charCodeAt(k))) k++;
    if (k === j + 1) break;
    j = k;
  }
  return j;
}

/** [146]-[148] INTEGER, DECIMAL, DOUBLE, the longest that matches at a digit or a dot before one (`5.` is 5 and a dot). */
function numberEnd(text: string, at: number): number {
  let j = at;
  while (isDigit(text.charCodeAt(j))) j++;
  if (text.charCodeAt(j) !== 0x2e) return Math.max(j, exponentEnd(text, j));
  let k = j + 1;
  while (isDigit(text.charCodeAt(k))) k++;
  const exponent = exponentEnd(text, k);
  if (exponent > 0 && k - at > 1) return exponent;
  return k > j + 1 ? k : j;
}

/** [155] EXPONENT at `at`: `[eE][+-]?[0-9]+`, or -1. */
function exponentEnd(text: string, at: number): number {
  const e = text.charCodeAt(at);
  if (e !== 0x65 && e !== 0x45) return -1;
  let k = at + 1;
  if (text.charCodeAt(k) === 0x2b || text.charCodeAt(k) === 0x2d) k++;
  const digits = k;
  while (isDigit(text.charCodeAt(k))) k++;
  return k > digits ? k : -1;
}

/** Index of the next significant character at or after `from`, past white space and comments ([162] WS, `#` to the line end). */
function skipSpace(text: string, from: number): number {
  let j = from;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) j++;
    else if (c === 0x23) {
      while (j < text.length && text.charCodeAt(j) !== 0x0a && text.charCodeAt(j) !== 0x0d) j++;
    } else break;
  }
  return j;
}

/** A string's content as the generator writes it: ECHARs decoded, its escapes applied; undefined where sparqljs refuses. */
function generatorContent(content: string): string | undefined {
  let out = content;
  if (content.includes('\\')) {
    out = '';
    for (let j = 0; j < content.length; j++) {
      if (content[j] !== '\\') out += content[j];
      else {
        const decoded = ECHAR[content[++j] ?? ''];
        if (decoded === undefined) return undefined;
        out += decoded;
      }
    }
  }
  if (!(out as string & { isWellFormed(): boolean }).isWellFormed()) return undefined;
  return GENERATOR_ESCAPED.test(out) ? out.replace(GENERATOR_ESCAPED_ALL, (e) => GENERATOR_ESCAPES[e] ?? e) : out;
}

// Character classes of §19.8, by code point.

/** [164] PN_CHARS_BASE. */
function isPnCharsBase(c: number): boolean {
  if (c < 0x80) return isLetter(c);
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    (c >= 0x200c && c <= 0x200d) ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd) ||
    (c >= 0x10000 && c <= 0xeffff)
  );
}

/** [165] PN_CHARS_U: PN_CHARS_BASE or `_`. */
function isPnCharsU(c: number): boolean {
  return c === 0x5f || isPnCharsBase(c);
}

/** [168] PN_CHARS: PN_CHARS_U, `-`, a digit, `·`, a combining mark or a tie. */
function isPnChars(c: number): boolean {
  return isPnCharsU(c) || c === 0x2d || isDigit(c) || isNameMark(c);
}

/** `·`, U+0300-U+036F and U+203F-U+2040: allowed inside names, never first ([166], [168]). */
function isNameMark(c: number): boolean {
  return c === 0xb7 || (c >= 0x300 && c <= 0x36f) || (c >= 0x203f && c <= 0x2040);
}

/** A character [139] IRIREF allows between its brackets: none of `<>"{}|^`\`, no space or control below it. */
function isIriCharacter(c: number): boolean {
  return (
    c > 0x20 && c !== 0x3c && c !== 0x3e && c !== 0x22 && c !== 0x7b && c !== 0x7d && c !== 0x7c && c !== 0x5e && c !== 0x60 && c !== 0x5c
  );
}

function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** A keyword's character: a letter, a digit or `_`. */
function isWordCharacter(c: number): boolean {
  return isLetter(c) || isDigit(c) || c === 0x5f;
}

/** What the word from `from` to `to` (letters, digits, `_`) means to the lexer (KEYWORDS), compared without case and without a copy. */
function keywordAt(text: string, from: number, to: number): (typeof KEYWORDS)[number][1] | undefined {
  for (let k = 0; k < KEYWORDS.length; k++) {
    const [word, meaning] = KEYWORDS[k]!;
    if (word.length !== to - from) continue;
    let j = 0;
    // Upper-casing an ASCII letter clears bit 0x20; a digit or `_` never meets a keyword's letter so.
    while (j < word.length && (text.charCodeAt(from + j) & ~0x20) === word.charCodeAt(j)) j++;
    if (j === word.length) return meaning;
  }
  return undefined;
}

/** Whether `c` and `d` are one of the pairs `^^ && || != <= >=`. */
function isPair(c: number, d: number): boolean {
  if (d === 0x3d) return c === 0x21 || c === 0x3c || c === 0x3e;
  return c === d && (c === 0x5e || c === 0x26 || c === 0x7c);
}

/** FNV-1a over `text` from `from` to `to`, continuing `hash`: read from the query text where it can, no string is built. */
function fingerprint(hash: number, text: string, from = 0, to = text.length): number {
  for (let j = from; j < to; j++) hash = Math.imul(hash ^ text.charCodeAt(j), 0x01000193);
  return hash;
}

/** Code units of the code point `c`. */
function width(c: number): number {
  return c > 0xffff ? 2 : 1;
}
