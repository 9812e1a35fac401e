// Reads a policy's columns and row rule (guard:readPath, guard:rowPattern, guard:rowClass, guard:rowData) and checks them at load.

import { Lexer, Parser, type Quad, type Term } from 'n3';
import { guard, isReservedIri, RDF_TYPE, XSD_STRING } from '../../vocabulary.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';
import { hasScheme, iriSpliceProblem } from '../../iri.js';
import type { RowRule, RuleTerm, RuleTriple, RuleValues } from '../policy-set.js';

/** A policy's columns and rows as the loader reads them; both absent when it states neither. */
export interface PolicyRestriction {
  /** `guard:readPath` values, sorted, each once. */
  readonly readPaths?: readonly string[];
  readonly rowRule?: RowRule;
}

/** SPARQL's VARNAME kept to what every store reads alike: letters, digits and `_`. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Strings (long ones first: `"""a"b = c"""` read as short ones would end at its inner quote),
 * IRIs: masked while VALUES blocks are found, so a keyword inside them is not one.
 */
const OPAQUE =
  /"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""|'''(?:[^'\\]|\\[\s\S]|'(?!''))*'''|"(?:[^"\\\n\r]|\\.)*"|'(?:[^'\\\n\r]|\\.)*'|<[^<>"{}|^`\\\s]*>/g;
/** The same, and comments: what reads as neither a keyword nor a block. */
const OPAQUE_OR_COMMENT = new RegExp(`${OPAQUE.source}|#[^\\n\\r]*`, 'g');
const VALUES_BLOCK = /\bVALUES\s*(\?[A-Za-z_]\w*|\(\s*(?:\?[A-Za-z_]\w*\s*)*\))\s*\{([^{}]*)\}/gi;
/**
 * What N3 reads beyond Turtle without a formula or blank node: `=` (owl:sameAs), `=>` and `<=`
 * (log:implies), `is … of` and `has`. Each would load as a triple the author did not write as one.
 * Outside strings and IRIs no `=` is SPARQL; the words count only as words (`ex:a.of`, `?is` and
 * a prefix `is:` are not them).
 */
const N3_ONLY = /(=>|<=|=)|(?:^|[\s;,])(is|has|of)(?=[\s;,.]|$)/;
const IRI_TOKEN = /<[^<>"{}|^`\\\s]*>/.source;
const PREFIXED_TOKEN = /[A-Za-z][\w-]*(?:\.[\w-]+)*:[\w-]*(?:\.[\w-]+)*|:[\w-]*/.source;
/** A string without an escape, in either quotes, plain, with a language tag or with a datatype. */
const STRING_TOKEN = new RegExp(
  /(?:"[^"\\\n\r]*"|'[^'\\\n\r]*')/.source + `(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\\^\\^(?:${IRI_TOKEN}|${PREFIXED_TOKEN}))?`,
);
/** SPARQL's numeric literals (§19.8 INTEGER, DECIMAL, DOUBLE, signed or not), each with its datatype. */
const NUMERIC: readonly (readonly [RegExp, string])[] = [
  [/^[+-]?(?:\d+\.\d*[eE][+-]?\d+|\.\d+[eE][+-]?\d+|\d+[eE][+-]?\d+)$/, `${XSD}double`],
  [/^[+-]?\d*\.\d+$/, `${XSD}decimal`],
  [/^[+-]?\d+$/, `${XSD}integer`],
];
const NUMBER_TOKEN = /[+-]?(?:\d+\.\d*[eE][+-]?\d+|\.\d+[eE][+-]?\d+|\d+[eE][+-]?\d+|\d*\.\d+|\d+)(?![\w.:-])/.source;
/**
 * The terms a VALUES block of a row rule may hold: IRIs, prefixed names, strings without an escape,
 * numbers, booleans, UNDEF and the brackets of a row (no blank node: it would match nothing).
 */
const VALUES_TOKEN = new RegExp(
  `\\s*(${IRI_TOKEN}|${STRING_TOKEN.source}|${NUMBER_TOKEN}|${PREFIXED_TOKEN}|(?:true|false|UNDEF)\\b|\\(|\\))`,
  'gy',
);

/**
 * The prefixes of a policy file, as a row pattern reads them: each declared once (or always to the
 * same IRI) in `iris`; a prefix declared again with another IRI is in `ambiguous` only, since the
 * pattern, a string, does not say which declaration was in force where it was written.
 */
export interface FilePrefixes {
  readonly iris: Readonly<Record<string, string>>;
  readonly ambiguous: ReadonlySet<string>;
}

export const NO_PREFIXES: FilePrefixes = { iris: {}, ambiguous: new Set() };

/**
 * The restriction one policy states, or throws through `fail` with one line naming what is wrong:
 * `prefixes` are its file's (a row pattern reads them as the policy does); a relative IRI in a
 * row pattern is refused (the file's @base where the pattern stands is not known).
 */
export function readRowRule(own: readonly Quad[], prefixes: FilePrefixes, fail: (reason: string) => never): PolicyRestriction {
  const values = (predicate: string) => own.filter((quad) => quad.predicate.value === predicate).map((quad) => quad.object);
  const iris = (predicate: string, name: string): string[] =>
    values(predicate).map((object) => {
      if (object.termType !== 'NamedNode')
        fail(`${name} must be an IRI, found ${object.termType === 'Literal' ? JSON.stringify(object.value) : 'a blank node'}`);
      if (isReservedIri(object.value)) fail(`${name} <${object.value}> is reserved by the rewriter (urn:x-sparql-guard:)`);
      const problem = iriSpliceProblem(object.value);
      if (problem !== undefined) fail(`${name} ${JSON.stringify(object.value)} ${problem}`);
      return object.value;
    });
  const readPaths = [...new Set(iris(guard.readPath, 'guard:readPath'))].sort();
  const data = [...new Set(iris(guard.rowData, 'guard:rowData'))].sort();
  const classes = iris(guard.rowClass, 'guard:rowClass');
  const patterns = values(guard.rowPattern);
  if (classes.length + patterns.length > 1) fail('gives more than one row rule (one guard:rowPattern or one guard:rowClass per policy)');
  if (data.length > 0 && classes.length + patterns.length === 0)
    fail('has guard:rowData without a row rule (guard:rowPattern or guard:rowClass)');
  let rowRule: RowRule | undefined;
  const [rowClass] = classes;
  const [pattern] = patterns;
  if (rowClass !== undefined) {
    rowRule = {
      triples: [
        {
          subject: { termType: 'Variable', value: 'this' },
          predicate: { termType: 'NamedNode', value: RDF_TYPE },
          object: { termType: 'NamedNode', value: rowClass },
        },
      ],
      values: [],
      data,
      source: `?this a <${rowClass}>`,
    };
  } else if (pattern !== undefined) {
    if (pattern.termType !== 'Literal' || pattern.datatype.value !== XSD_STRING || pattern.language !== '') {
      fail('guard:rowPattern must be a plain string literal holding triple patterns over ?this');
    }
    rowRule = { ...parseRowPattern(pattern.value, prefixes, fail), data, source: pattern.value.trim() };
  }
  return { ...(readPaths.length > 0 && { readPaths }), ...(rowRule !== undefined && { rowRule: Object.freeze(rowRule) }) };
}

/** Triple patterns and VALUES blocks over `?this`, as RuleTriples (n3 reads the triples, with the file's prefixes). */
function parseRowPattern(
  text: string,
  prefixes: FilePrefixes,
  fail: (reason: string) => never,
): { triples: RuleTriple[]; values: RuleValues[] } {
  const problem = (reason: string): never => fail(`guard:rowPattern ${reason}`);
  const masked = text.replace(OPAQUE_OR_COMMENT, (match) => ' '.repeat(match.length));
  const blocks: RuleValues[] = [];
  // The triples blocks between VALUES blocks, each without the '.' SPARQL allows around a VALUES block and at the end.
  const segments: string[] = [];
  let last = 0;
  for (const match of masked.matchAll(VALUES_BLOCK)) {
    segments.push(text.slice(last, match.index));
    last = match.index + match[0].length;
    const head = text.slice(match.index, match.index + match[0].length);
    const [, variablePart = '', body = ''] = /^VALUES\s*(\?\w+|\([^)]*\))\s*\{([\s\S]*)\}$/i.exec(head) ?? [];
    blocks.push(readValues(variablePart, body, prefixes, problem));
  }
  segments.push(text.slice(last));
  const rest = segments
    .map(withoutOuterDots)
    .filter((segment) => segment !== '')
    .join(' .\n');
  const bare = rest.replace(OPAQUE_OR_COMMENT, (match) => ' '.repeat(match.length));
  const n3Only = N3_ONLY.exec(bare);
  if (n3Only !== null) problem(`writes ${n3Only[1] ?? n3Only[2]}, which is N3, not a SPARQL triple pattern`);
  if (/\bVALUES\b/i.test(bare)) problem('has a VALUES block it cannot read (VALUES ?v { … } or VALUES (?a ?b) { (…) … })');
  if (blocks.some((block) => block.variables.includes('this'))) problem('binds ?this in VALUES (name the records with a triple pattern)');
  if (rest.trim() === '') problem('holds no triple pattern');
  if (hasLoneTerm(rest)) problem('has a term that is no part of a triple pattern (write subject, predicate and object)');
  const n3Token = n3OnlyToken(rest);
  if (n3Token !== undefined)
    problem(
      /^(?:@prefix|@base)$/i.test(n3Token) || n3Token === 'PREFIX' || n3Token === 'BASE'
        ? `declares ${n3Token} (the file's prefixes apply: write IRIs in full, or with a prefix the file declares)`
        : `writes ${n3Token}, which is N3, not a SPARQL triple pattern`,
    );
  const declarations = Object.entries(prefixes.iris)
    .map(([name, iri]) => `@prefix ${name}: <${iri}> .\n`)
    .join('');
  let quads: Quad[];
  try {
    // N3 reads `?name` as a variable; what it reads beyond Turtle (formulas, paths, rules) is refused below.
    // No base: a relative IRI stays relative and is refused below (and N3 binds no implicit `:` to it).
    quads = new Parser({ format: 'text/n3' }).parse(`${declarations}${rest}\n.`);
  } catch (error) {
    const message = (error as Error).message.replace(/\.$/, '').replace(/ on line \d+/, '');
    const undeclared = /^Undefined prefix "([^"]*):"/.exec(message)?.[1];
    if (undeclared !== undefined && prefixes.ambiguous.has(undeclared)) return problem(ambiguousPrefix(undeclared));
    return problem(`is not a basic graph pattern: ${message}`);
  }
  if (quads.length === 0) problem('holds no triple pattern');
  const term = (value: Term): RuleTerm => {
    switch (value.termType) {
      case 'NamedNode': {
        if (!hasScheme(value.value)) problem(`has the relative IRI <${value.value}> (write it in full, or with a prefix)`);
        if (isReservedIri(value.value)) problem(`names <${value.value}>, which is reserved by the rewriter (urn:x-sparql-guard:)`);
        const spliced = iriSpliceProblem(value.value);
        if (spliced !== undefined) problem(`names ${JSON.stringify(value.value)}, which ${spliced}`);
        return { termType: 'NamedNode', value: value.value };
      }
      case 'Variable':
        return variable(value.value, problem);
      case 'Literal':
        if (value.value.includes('\\')) problem('holds a literal with a backslash (write the character itself)');
        return { termType: 'Literal', value: value.value, language: value.language, datatype: value.datatype.value };
      default:
        return problem('holds a blank node, a list or a path (write a variable for each node, one triple pattern per step)');
    }
  };
  const triples = quads.map((quad): RuleTriple => {
    if (quad.graph.termType !== 'DefaultGraph') problem('holds a formula (only triple patterns and VALUES)');
    if ((quad.predicate as Term).termType === 'Literal') problem('has a literal as a predicate');
    return { subject: term(quad.subject), predicate: term(quad.predicate), object: term(quad.object) };
  });
  const mentioned = JSON.stringify(triples);
  if (!mentioned.includes('"termType":"Variable","value":"this"')) problem('does not mention ?this (the record whose rows it decides)');
  return { triples, values: blocks };
}

/**
 * True when a statement of `text` is one term and its '.': N3 reads `<x> .` as no triple at all, so
 * a stray term would load unread. Text N3 cannot lex is left to the parser's own message.
 */
function hasLoneTerm(text: string): boolean {
  let tokens: { type: string }[];
  try {
    tokens = new Lexer({ n3: true }).tokenize(`${text}\n.`);
  } catch {
    return false;
  }
  let terms = 0;
  let others = 0;
  for (const { type } of tokens) {
    if (type === '.' || type === 'eof') {
      if (terms === 1 && others === 0) return true;
      terms = others = 0;
    } else if (['IRI', 'prefixed', 'var', 'literal', 'blank', 'abbreviation'].includes(type)) terms++;
    else if (!['type', 'typeIRI', 'langcode'].includes(type)) others++;
  }
  return false;
}

/**
 * The first token of `text` that N3 reads and a SPARQL basic graph pattern has not, as written: `<-` (N3's inverse,
 * which loaded `?this <- ex:p ?o` as `?o ex:p ?this`), a prefix or base declaration (it changed what the pattern's
 * names meant against its file's), `@forAll` or `@forSome`. Text N3 cannot lex is left to the parser's own message.
 */
function n3OnlyToken(text: string): string | undefined {
  let tokens: { type: string; value?: string }[];
  try {
    tokens = new Lexer({ n3: true }).tokenize(`${text}\n.`);
  } catch {
    return undefined;
  }
  for (const token of tokens) {
    if (token.type === 'inversePredicate') return '<-';
    // The lexer's types of N3's keywords start with `@` (`@prefix`, `@base`, `@forAll`, `@forSome`); SPARQL's declarations are PREFIX, BASE.
    if (token.type.startsWith('@') || token.type === 'PREFIX' || token.type === 'BASE') return token.type;
  }
  return undefined;
}

/** A triples block without one leading and one trailing '.' (outside strings, IRIs and comments); '' when it holds only comments. */
function withoutOuterDots(segment: string): string {
  const masked = segment.replace(OPAQUE_OR_COMMENT, (match) => (match.startsWith('#') ? ' ' : 'x').repeat(match.length));
  const first = masked.search(/\S/);
  if (first === -1) return '';
  let start = first;
  let end = masked.trimEnd().length;
  if (masked[start] === '.') start++;
  if (end - 1 >= start && masked[end - 1] === '.') end--;
  return segment.slice(start, end);
}

function variable(name: string, problem: (reason: string) => never): RuleTerm {
  if (!VARIABLE_NAME.test(name)) problem(`has the variable ?${name}: write variable names from letters, digits and _`);
  if (name.startsWith('claim_') && name.length === 'claim_'.length) problem('has ?claim_ without a claim name (?claim_NAME)');
  return { termType: 'Variable', value: name };
}

/** One VALUES block: its variables, and its rows of IRIs, prefixed names, literals or UNDEF. */
function readValues(variablePart: string, body: string, prefixes: FilePrefixes, problem: (reason: string) => never): RuleValues {
  const variables = [...variablePart.matchAll(/\?(\w+)/g)].map((match) => (variable(match[1] ?? '', problem) as { value: string }).value);
  const single = !variablePart.trim().startsWith('(');
  const tokens: string[] = [];
  VALUES_TOKEN.lastIndex = 0;
  let at = 0;
  while (at < body.length && body.slice(at).trim() !== '') {
    VALUES_TOKEN.lastIndex = at;
    const match = VALUES_TOKEN.exec(body);
    if (match === null)
      problem('has a VALUES block holding something other than IRIs, prefixed names, literals without an escape and UNDEF');
    tokens.push(match?.[1] ?? '');
    at = VALUES_TOKEN.lastIndex;
  }
  const iriOf = (token: string): string => {
    let iri: string;
    if (token.startsWith('<')) {
      iri = token.slice(1, -1);
      if (!hasScheme(iri)) problem(`has the relative IRI <${iri}> in VALUES (write it in full)`);
    } else {
      const colon = token.indexOf(':');
      const name = token.slice(0, colon);
      const namespace = prefixes.iris[name];
      if (namespace === undefined) {
        return problem(prefixes.ambiguous.has(name) ? ambiguousPrefix(name) : `uses the undeclared prefix ${name}: in VALUES`);
      }
      iri = namespace + token.slice(colon + 1);
    }
    if (isReservedIri(iri)) problem(`names <${iri}> in VALUES, which is reserved by the rewriter (urn:x-sparql-guard:)`);
    const spliced = iriSpliceProblem(iri);
    if (spliced !== undefined) problem(`names ${JSON.stringify(iri)}, which ${spliced}`);
    return iri;
  };
  const term = (token: string): RuleTerm | undefined => {
    if (token === 'UNDEF') return undefined;
    if (token === 'true' || token === 'false') return { termType: 'Literal', value: token, language: '', datatype: `${XSD}boolean` };
    const numeric = NUMERIC.find(([form]) => form.test(token));
    if (numeric !== undefined) return { termType: 'Literal', value: token, language: '', datatype: numeric[1] };
    if (token.startsWith('"') || token.startsWith("'")) {
      const end = token.indexOf(token.charAt(0), 1);
      const suffix = token.slice(end + 1);
      const language = suffix.startsWith('@') ? suffix.slice(1).toLowerCase() : '';
      const datatype = suffix.startsWith('^^') ? iriOf(suffix.slice(2)) : language === '' ? XSD_STRING : RDF_LANG_STRING;
      return { termType: 'Literal', value: token.slice(1, end), language, datatype };
    }
    return { termType: 'NamedNode', value: iriOf(token) };
  };
  const rows: (RuleTerm | undefined)[][] = [];
  if (single) {
    if (variables.length !== 1) problem('has a VALUES block without a variable');
    for (const token of tokens) {
      if (token === '(' || token === ')') problem('has parentheses in a VALUES block of one variable');
      rows.push([term(token)]);
    }
  } else {
    let row: (RuleTerm | undefined)[] | undefined;
    for (const token of tokens) {
      if (token === '(') {
        if (row !== undefined) problem('has a VALUES row inside another');
        row = [];
      } else if (token === ')') {
        if (row === undefined || row.length !== variables.length) problem(`has a VALUES row without ${variables.length} values`);
        rows.push(row ?? []);
        row = undefined;
      } else if (row === undefined) problem('has a VALUES value outside parentheses');
      else row.push(term(token));
    }
    if (row !== undefined) problem('has a VALUES row that is not closed');
  }
  return { variables, rows };
}

function ambiguousPrefix(name: string): string {
  return `uses ${name}:, which its file declares more than once with different IRIs (declare each prefix once, or write the IRI in full)`;
}
