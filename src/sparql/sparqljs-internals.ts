// Everything that reaches past sparqljs's public API, in one place: written against sparqljs 3.7.4 exactly, which package.json pins.
//
// An upgrade starts here: re-read the generator's prototype methods, the parser's `_resetBlanks`,
// `skipValidation` (which must still cover only the projection check) and performAction, then run test/sparql and test/w3c.

import { createRequire } from 'node:module';
import sparqljs from 'sparqljs';

/** A GRAPH element of the tree, as the generator hands it to {@link GeneratorHooks.graph}. */
export interface GraphNode {
  readonly type: 'graph';
  readonly name: { readonly termType: string; readonly value: string };
  readonly patterns: unknown[];
}

/** The generator's stock writers, bound to the generator in use (nested elements go through the hooks again). */
export interface GeneratorWriters {
  /** `GRAPH <name> { … }` as sparqljs writes it. */
  graph(pattern: GraphNode): string;
  /** The braced group `{ … }` of a pattern's elements. */
  group(pattern: object): string;
  /** A basic graph pattern's triples. */
  bgp(pattern: object): string;
  /** A term or property path as sparqljs writes it, without the entity hook at the top. */
  plainEntity(value: unknown): string;
  /** A term or property path, through the entity hook. */
  entity(value: unknown): string;
}

/** Where the template step takes over the generator's output. */
export interface GeneratorHooks {
  /** Text in place of the FROM clauses (called once per query, for FROM and for FROM NAMED). */
  dataset(keyword: 'FROM ' | 'FROM NAMED '): string;
  /** Text for a GRAPH element. */
  graph(pattern: GraphNode, write: GeneratorWriters): string;
  /** Text for a basic graph pattern. */
  bgp(pattern: object, write: GeneratorWriters): string;
  /** Text for a term or property path anywhere in the query. */
  entity(value: unknown, write: GeneratorWriters): string;
}

/** A sparqljs Generator instance, with the prototype methods the hooks replace. */
interface GeneratorInstance {
  toQuery(query: unknown): string;
  toEntity(term: unknown): string;
  toExpression(expression: unknown): string;
  encodeIRI(iri: string): string;
  indent(text: string): string;
  graphs(keyword: string, graphs: unknown): string;
  graph(pattern: GraphNode): string;
  group(pattern: object, inline?: boolean): string;
  union(pattern: object): string;
  bgp(pattern: object): string;
}

/**
 * Writes `root` with the sparqljs Generator (two-space indent, `\n` newlines),
 * every IRI in full and `hooks` in place of the dataset clauses, GRAPH
 * elements, BGPs and entities. The prefix map of `root` is ignored.
 */
export function generateWithHooks(root: unknown, hooks: GeneratorHooks): string {
  const generator = new sparqljs.Generator({ indent: '  ', newline: '\n' }).createGenerator() as GeneratorInstance;
  const plain = Object.getPrototypeOf(generator) as GeneratorInstance;
  const write: GeneratorWriters = {
    graph: (pattern) => plain.graph.call(generator, pattern),
    group: (pattern) => generator.group(pattern),
    bgp: (pattern) => plain.bgp.call(generator, pattern),
    plainEntity: (value) => bracketedInverse(value, generator) ?? plain.toEntity.call(generator, value),
    entity: (value) => generator.toEntity(value),
  };
  // Full IRIs only: sparqljs builds its prefix regex from unescaped IRIs.
  generator.encodeIRI = (iri) => '<' + iri + '>';
  // sparqljs indents with /^/gm, which also matches after U+2028 / U+2029 inside literals.
  generator.indent = (block) => '  ' + block.replaceAll('\n', '\n  ');
  generator.graphs = (keyword) => hooks.dataset(keyword as 'FROM ' | 'FROM NAMED ');
  generator.graph = (pattern) => hooks.graph(pattern, write);
  generator.bgp = (pattern) => hooks.bgp(pattern, write);
  generator.toEntity = (value) => hooks.entity(value, write);
  // A UNION branch or EXISTS operand: sparqljs writes a group there in the braces of the position,
  // which it reads back as the group's one pattern when it has one (`{ { P } } UNION …` became
  // `{ P } UNION …`, another tree): such a group keeps braces of its own.
  const operand = (pattern: unknown): string => {
    const group = pattern as { type?: unknown; patterns?: readonly unknown[] };
    if (group.type !== 'group' || group.patterns?.length !== 1) return generator.group(pattern as object, true);
    const inner = generator.group(group);
    return inner.includes('\n') ? `{\n${generator.indent(inner)}\n}` : `{ ${inner} }`;
  };
  // sparqljs writes a GROUP BY condition that is an IRI or a literal bare, `GROUP BY 1`, which [20]
  // does not take (a variable, a call or a bracketed expression): such a term keeps its brackets.
  generator.toQuery = (query) => plain.toQuery.call(generator, bracketGroupTerms(query));
  generator.union = (union) => ((union as { patterns: unknown[] }).patterns ?? []).map(operand).join('\nUNION\n');
  generator.toExpression = (expression) => {
    const node = expression as { type?: unknown; operator?: unknown; distinct?: unknown; function?: unknown; args?: readonly unknown[] };
    if (node.type === 'operation' && (node.operator === 'exists' || node.operator === 'notexists')) {
      return `${node.operator === 'exists' ? 'EXISTS' : 'NOT EXISTS'} ${operand(node.args?.[0])}`;
    }
    if (node.type === BRACKETED_TERM) return generator.toEntity((expression as { term: unknown }).term);
    // sparqljs writes IN's left operand bare: `(?a && ?b) IN (1)` came out as `?a && ?b IN(1)`, which reads
    // as `?a && (?b IN (1))`, and `(?a = 1) IN (1)` as `?a = 1 IN(1)`, which [114] does not take.
    const [left, list] = node.args ?? [];
    if (node.type === 'operation' && (node.operator === 'in' || node.operator === 'notin') && Array.isArray(list) && !isTerm(left)) {
      const items = (list as readonly unknown[]).map((item) => generator.toExpression(item));
      return `(${generator.toExpression(left)}) ${node.operator === 'in' ? 'IN' : 'NOT IN'} (${items.join(', ')})`;
    }
    // sparqljs writes `<f>(DISTINCT ?x)`, a custom aggregate (§18.2.4.1), as `<f>(?x)`: another query.
    if (node.type !== 'functionCall' || node.distinct !== true) return plain.toExpression.call(generator, expression);
    const args = (node.args ?? []).map((arg) => generator.toExpression(arg));
    return `${generator.toEntity(node.function)}(DISTINCT ${args.join(', ')})`;
  };
  return generator.toQuery(root);
}

function isTerm(value: unknown): boolean {
  return typeof (value as { termType?: unknown } | null)?.termType === 'string';
}

/** The expression that stands for a GROUP BY term in brackets: not a term to the generator, so it writes `(` and `)`. */
const BRACKETED_TERM = 'guard:bracketedTerm';

/** A copy of `query` whose GROUP BY IRIs and literals are {@link BRACKETED_TERM}s; `query` itself when it has none. */
function bracketGroupTerms(query: unknown): unknown {
  const q = query as { group?: readonly { expression: { termType?: unknown } }[] };
  if (!q.group?.some((key) => typeof key.expression.termType === 'string' && key.expression.termType !== 'Variable')) return query;
  const group = q.group.map((key) =>
    typeof key.expression.termType === 'string' && key.expression.termType !== 'Variable'
      ? { ...key, expression: { type: BRACKETED_TERM, term: key.expression } }
      : key,
  );
  return { ...q, group };
}

/**
 * sparqljs writes `^` before its operand and a modifier after it without brackets, so `(^a)*` came
 * out as `^a*`, which reads as `^(a*)` (the same paths, another tree: the round-trip check refused
 * the query), and `^(^a)` as `^^a`, which does not parse. Such an operand is written in brackets;
 * undefined for every other term or path.
 */
function bracketedInverse(value: unknown, generator: GeneratorInstance): string | undefined {
  const path = value as { type?: unknown; pathType?: unknown; items?: readonly unknown[] } | null;
  if (path?.type !== 'path' || !['^', '*', '+', '?'].includes(path.pathType as string)) return undefined;
  const operand = path.items?.[0] as { type?: unknown; pathType?: unknown } | undefined;
  if (operand?.type !== 'path' || operand.pathType !== '^') return undefined;
  const bracketed = `(${generator.toEntity(operand)})`;
  return path.pathType === '^' ? `^${bracketed}` : `(${bracketed}${path.pathType as string})`;
}

/** The semantic action of sparqljs's generated parser: `this` is the value being reduced, `$$` the value stack. */
type JisonAction = (
  this: { $: unknown },
  yytext: unknown,
  yyleng: unknown,
  yylineno: unknown,
  yy: unknown,
  yystate: number,
  $$: unknown[],
  ...rest: unknown[]
) => unknown;

/** The prototype of sparqljs's generated parser, whose `performAction` the amendments below wrap in turn. */
const JISON = (createRequire(import.meta.url)('sparqljs/lib/SparqlParser.js') as { Parser: { prototype: { performAction: JisonAction } } })
  .Parser.prototype;

/** The generated action's source: each amendment applies only where it holds the code it was written against. */
const GENERATED_ACTIONS = JISON.performAction.toString();

/**
 * sparqljs 3.7.4 crashes on a CONSTRUCT template triple that is a blank-node property list alone,
 * `[ p o ] .` ([75], W3C construct-3): its template action gets the WHERE action's reading of the
 * empty list, only when the action is the one this was written against (else a 400 as before).
 */
function completeTemplateTriples(): void {
  const original = JISON.performAction;
  const TEMPLATE_TRIPLES_NODE = 103;
  const expected =
    'case 103:\nthis.$ = applyAnnotations(appendAllTo($$[$0].map(t => extend(triple($$[$0-1].entity), t)), $$[$0-1].triples))';
  if (!GENERATED_ACTIONS.includes(expected)) return;
  JISON.performAction = function (this: { $: unknown }, ...args) {
    const [, , , , yystate, stack] = args;
    if (yystate === TEMPLATE_TRIPLES_NODE && stack[stack.length - 1] === undefined) {
      this.$ = (stack[stack.length - 2] as { triples: unknown[] }).triples;
      return undefined;
    }
    return original.apply(this, args);
  };
}
completeTemplateTriples();

/** The message of the refusal below, which parseQuery maps to its one line. */
export const REPEATED_VALUES_VARIABLE = 'Repeated variable in VALUES';

/**
 * sparqljs 3.7.4 reads `VALUES (?a ?a) { (1 2) }` as `VALUES ?a { 2 }`: each row is an object keyed by
 * variable, so the later value silently wins and the text the guard writes is not the caller's query.
 * A variable named twice in one VALUES list (`?a` and `$a` are one variable) is refused before the
 * rows are built (SPARQL 1.2 forbids it, and Jena and Oxigraph refuse it), for the two actions of the
 * full data block (the pattern's and the trailing clause's); a later sparqljs whose actions differ
 * leaves this off, and test/sparql/check-variable-scope.test.ts fails.
 */
function refuseRepeatedValuesVariables(): void {
  const original = JISON.performAction;
  const INLINE_DATA_FULL = [42, 86];
  const expected = 'case 42: case 86:\n\n      var length = $$[$0-4].length;\n      $$[$0-4] = $$[$0-4].map(toVar);';
  if (!GENERATED_ACTIONS.includes(expected)) return;
  JISON.performAction = function (this: { $: unknown }, ...args) {
    const [, , , , yystate, stack] = args;
    if (INLINE_DATA_FULL.includes(yystate)) {
      const variables = stack[stack.length - 5] as readonly string[];
      const names = variables.map((variable) => variable.slice(1));
      if (new Set(names).size !== names.length) throw new Error(REPEATED_VALUES_VARIABLE);
    }
    return original.apply(this, args);
  };
}
refuseRepeatedValuesVariables();

/**
 * sparqljs 3.7.4 refuses a BIND whose variable an earlier group of the same group pattern names
 * anywhere, inside MINUS too, where it is not in scope (§18.2.1): `{ { MINUS { ?s ?p ?o } } BIND(1
 * AS ?o) }` is SPARQL 1.1, which Jena and Oxigraph answer. The group action is taken without that
 * check: checkVariableScope checks the rule, at every query level, with every element that puts a
 * variable in scope (sparqljs's misses VALUES, sub-selects and GRAPH's variable). A later sparqljs
 * whose action differs keeps its own check, and test/sparql/check-variable-scope.test.ts fails.
 */
function leaveBindScopeToTheCheck(): void {
  const original = JISON.performAction;
  const GROUP_GRAPH_PATTERN = 70;
  const action = GENERATED_ACTIONS.slice(GENERATED_ACTIONS.indexOf('case 70:'), GENERATED_ACTIONS.indexOf('case 71:'));
  const expected = ['Variable used to bind is already bound', "this.$ = { type: 'group', patterns: $$[$0-1] }"];
  if (!action.startsWith('case 70:') || !expected.every((text) => action.includes(text))) return;
  JISON.performAction = function (this: { $: unknown }, ...args) {
    const [, , , , yystate, stack] = args;
    if (yystate !== GROUP_GRAPH_PATTERN) return original.apply(this, args);
    this.$ = { type: 'group', patterns: stack[stack.length - 2] };
    return undefined;
  };
}
leaveBindScopeToTheCheck();

/** sparqljs's generated parser, whose `factory` is the term factory of the parse under way. */
const JISON_PARSER = createRequire(import.meta.url)('sparqljs/lib/SparqlParser.js') as {
  Parser: { factory?: { literal(value: string, datatype: unknown): unknown; namedNode(value: string): unknown } };
};

/**
 * sparqljs 3.7.4 changes numeric literals' lexical forms: `1.2E3` became "1.2e3"^^xsd:double and `+1`
 * became "1"^^xsd:integer, other RDF terms than the query's (SPARQL 1.1 §4.1.2: `1.0e6` is
 * "1.0e6"^^xsd:double, the token as written), which `sameTerm`, `STR` and a projected constant tell
 * apart. The literal keeps its token; after `+` in an additive expression (`?a +1`, [116]) the sign is
 * the operator, and the literal drops it as before. A later sparqljs whose actions differ keeps its own.
 */
function keepNumericLexicalForms(): void {
  const original = JISON.performAction;
  const XSD = 'http://www.w3.org/2001/XMLSchema#';
  const AS_WRITTEN: Readonly<Record<number, string>> = { 197: 'double', 206: 'double', 201: 'integer', 202: 'decimal', 203: 'double' };
  const ADDITIVE_POSITIVE = 160;
  const expected = [
    'case 197: case 206:\nthis.$ = createTypedLiteral(lowercase($$[$0]), XSD_DOUBLE);',
    'case 201:\nthis.$ = createTypedLiteral($$[$0].substr(1), XSD_INTEGER);',
    'case 202:\nthis.$ = createTypedLiteral($$[$0].substr(1), XSD_DECIMAL);',
    'case 203:\nthis.$ = createTypedLiteral($$[$0].substr(1).toLowerCase(), XSD_DOUBLE);',
    "case 160:\nthis.$ = ['+', createOperationTree($$[$0-1], $$[$0])];",
  ];
  if (!expected.every((text) => GENERATED_ACTIONS.includes(text))) return;
  JISON.performAction = function (this: { $: unknown }, ...args) {
    const [, , , , yystate, stack] = args;
    const factory = JISON_PARSER.Parser.factory;
    const datatype = AS_WRITTEN[yystate];
    if (datatype !== undefined && factory !== undefined) {
      this.$ = factory.literal(String(stack[stack.length - 1]), factory.namedNode(XSD + datatype));
      return undefined;
    }
    if (yystate === ADDITIVE_POSITIVE && factory !== undefined) {
      const literal = stack[stack.length - 2] as { value: string; datatype: unknown };
      if (literal.value.startsWith('+')) stack[stack.length - 2] = factory.literal(literal.value.slice(1), literal.datatype);
    }
    return original.apply(this, args);
  };
}
keepNumericLexicalForms();

/** The message of the refusal below, which parseQuery maps to its one line. */
export const UPPER_CASE_A = 'Keyword a in upper case';

/**
 * sparqljs 3.7.4 lexes every keyword case-insensitively, `a` too, so `?s A ?o` became `?s rdf:type ?o`;
 * SPARQL 1.1 matches keywords case-insensitively "with the exception of the keyword 'a'" (§19.8), and
 * Jena and Oxigraph refuse `A`. Refused in the two actions that turn the token into rdf:type, where
 * its text is still on the stack; a later sparqljs whose actions differ leaves this off, and
 * test/sparql/create-planner.test.ts fails.
 */
function refuseUpperCaseA(): void {
  const original = JISON.performAction;
  const VERB_A = [109, 237];
  const expected = 'case 109: case 237:\nthis.$ = Parser.factory.namedNode(RDF_TYPE);';
  if (!GENERATED_ACTIONS.includes(expected)) return;
  JISON.performAction = function (this: { $: unknown }, ...args) {
    const [, , , , yystate, stack] = args;
    if (VERB_A.includes(yystate) && stack[stack.length - 1] !== 'a') throw new Error(UPPER_CASE_A);
    return original.apply(this, args);
  };
}
refuseUpperCaseA();

/**
 * A strict SPARQL 1.1 parser (SPARQL-star off, no base IRI), its blank-node counter reset. sparqljs's
 * one validation, of the top level's projection against its grouping, is off: checkVariableScope
 * checks that rule at every query level, and sparqljs's refuses a variable an earlier SELECT
 * expression assigned, `(COUNT(?v) AS ?n) (?n + 1 AS ?m)`, which §11.4 allows (docs/design/sparql.md).
 */
export function createStrictParser(): sparqljs.SparqlParser {
  // skipValidation is a sparqljs option that @types/sparqljs does not list.
  const options = { sparqlStar: false, skipValidation: true } as sparqljs.ParserOptions;
  const parser = new sparqljs.Parser(options);
  (parser as unknown as { _resetBlanks(): void })._resetBlanks();
  return parser;
}

/** The NamedNode class of the parser's own term factory, so replaced terms look like parsed ones. */
const NamedNode = (() => {
  const probe = new sparqljs.Parser().parse('ASK { <x:a> <x:b> "c" }') as unknown as {
    where: { triples: { subject: { constructor: new (value: string) => unknown } }[] }[];
  };
  const found = probe.where[0]?.triples[0]?.subject.constructor;
  if (found === undefined) throw new Error('sparqljs term factory not found');
  return found;
})();

/** A NamedNode term of the class sparqljs's parser builds. */
export function namedNode(value: string): unknown {
  return new NamedNode(value);
}
