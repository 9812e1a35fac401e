// Parses checked query text with sparqljs, strictly as SPARQL 1.1, translating its errors into GuardErrors.

import type sparqljs from 'sparqljs';
import { GuardError } from '../guard-error.js';
import { SCOPE_RULES } from './check-variable-scope.js';
import { createStrictParser, REPEATED_VALUES_VARIABLE, UPPER_CASE_A } from './sparqljs-internals.js';

/** sparqljs messages that carry no query text, mapped to the reason the caller sees. */
const KNOWN_REASONS: readonly (readonly [RegExp, string])[] = [
  [/^Target id of 'AS'/, SCOPE_RULES.selectAs],
  [/^Two or more of the resulting columns have the same name/, 'two result columns have the same name'],
  [/^Inconsistent VALUES length/, 'inconsistent VALUES row length'],
  [new RegExp('^' + REPEATED_VALUES_VARIABLE), SCOPE_RULES.repeatedValuesVariable],
  [new RegExp('^' + UPPER_CASE_A), 'the keyword a (rdf:type) is lower case only (§19.8)'],
  [/^Variable used to bind is already bound/, SCOPE_RULES.bind],
  [/^Unknown prefix/, 'unknown prefix'],
  [/^Cannot resolve relative IRI/, 'relative IRI without a base'],
  [/^Invalid unicode codepoint/, 'invalid unicode codepoint in a string'],
  [/^Detected illegal (variable|blank node)/, 'variable or blank node where data is required'],
  [/^Detected reuse blank node/, 'blank node reused across INSERT DATA clauses'],
  [/SPARQL-star|Nested triples/, 'SPARQL-star is not SPARQL 1.1'],
];

/** What jison attaches to its parse and lexical errors. */
interface JisonErrorHash {
  readonly token?: string | null;
  readonly expected?: readonly string[];
  readonly line?: number;
  readonly loc?: { readonly first_line: number; readonly first_column: number };
}

/**
 * Parses `text` strictly (createStrictParser). Throws GuardError 400 with a reason that never quotes
 * the query; lets RangeError (stack overflow) through for the caller to translate.
 */
export function parseQuery(text: string): sparqljs.SparqlQuery {
  const parser = createStrictParser();
  // jison's error hash places the token it last shifted, not the unexpected one: that one's place is
  // the lexer's, and jison lexes each parse with a lexer made from the parser's (Object.create).
  const shared = (parser as unknown as { lexer: JisonLexer }).lexer;
  const lexers: JisonLexer[] = [];
  (parser as unknown as { lexer: JisonLexer }).lexer = Object.create(shared, {
    setInput: {
      value(this: JisonLexer, input: string, yy: unknown) {
        lexers.push(this);
        return shared.setInput.call(this, input, yy);
      },
    },
  }) as JisonLexer;
  try {
    return parser.parse(text);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    throw new GuardError(400, 'parse', `query is not valid SPARQL 1.1: ${reasonOf(error, lexers[0]?.yylloc)}`);
  }
}

/** What parseQuery uses of a jison lexer: where its last token (the parser's lookahead) starts. */
interface JisonLexer {
  readonly yylloc?: JisonErrorHash['loc'];
  setInput(input: string, yy: unknown): unknown;
}

function reasonOf(error: unknown, lookahead: JisonErrorHash['loc']): string {
  if (!(error instanceof Error)) return 'invalid query';
  const hash = (error as Error & { hash?: JisonErrorHash }).hash;
  // After SELECT *'s WHERE clause sparqljs's grammar expects the solution modifiers but GROUP BY (the one
  // state where HAVING may follow and GROUP may not): the rule, not the token, is what the caller needs.
  if (hash?.token === 'GROUP' && hash.expected?.includes("'HAVING'") === true) return SCOPE_RULES.star;
  if (hash?.loc !== undefined) {
    const token = typeof hash.token === 'string' && /^[A-Za-z_0-9]+$/.test(hash.token) ? hash.token : 'token';
    const at = lookahead?.first_line !== undefined ? lookahead : hash.loc;
    return `unexpected ${token === 'EOF' ? 'end of query' : token} at line ${at.first_line}, column ${at.first_column + 1}`;
  }
  if (hash?.line !== undefined) return `unrecognised text at line ${hash.line + 1}`;
  for (const [pattern, reason] of KNOWN_REASONS) if (pattern.test(error.message)) return reason;
  return 'invalid query';
}
