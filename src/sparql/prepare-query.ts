// Turns query text and the protocol dataset into a cached PreparedQuery: checks, parse, normalisation, template.

import type sparqljs from 'sparqljs';
import { GuardError } from '../guard-error.js';
import type { QueryRequest } from './query-request.js';
import { buildTemplate, type LooseQuery } from './build-template.js';
import { checkAlgebraDepth } from './check-algebra-depth.js';
import { checkBlankNodeScope } from './check-blank-node-scope.js';
import { checkFunctionCalls, type FunctionAllowList } from './check-function-calls.js';
import { checkNestingDepth } from './check-nesting-depth.js';
import { checkVariableScope } from './check-variable-scope.js';
import { decodeCodepointEscapes } from './decode-codepoint-escapes.js';
import { dropRepeatedTriples } from './drop-repeated-triples.js';
import { nameExistsBlankNodes } from './name-exists-blank-nodes.js';
import { parseQuery } from './parse-query.js';
import type { QueryForm } from './plan.js';
import type { PreparedQuery, TemplatePart } from './prepared-query.js';
import { findDatasetReach } from './find-dataset-reach.js';
import { readProtocolGraphs } from './read-protocol-dataset.js';
import { hasScheme, iriReferenceProblem, NOT_IN_IRI } from '../iri.js';
import { normaliseIri } from './resolve-iri.js';
import { notAnIri, resolveQueryIris } from './resolve-query-iris.js';
import { expandFixedPaths } from './expand-fixed-paths.js';
import { IN_WHOLE_DATASET, markHiddenPaths } from './mark-hidden-paths.js';
import { rewriteDescribe } from './rewrite-describe.js';
import { splitQueryText, type TextRegion } from './split-query-text.js';
import { namedNode } from './sparqljs-internals.js';
import type { Term } from './tree-shapes.js';
import { walkQuery } from './walk-query.js';

/** The planner options prepare depends on (all are part of every plan's meaning, fixed per planner). */
export interface PrepareSettings {
  readonly baseIri: string;
  readonly maxQueryDepth: number;
  /** The extension functions a query may call, compiled from config allowedFunctions. */
  readonly allowedFunctions: FunctionAllowList;
}

/** The first keyword after the prologue names an update operation (SPARQL 1.1 Update §3). */
const UPDATE_KEYWORD = /^(?:INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)$/i;

const FORMS: readonly string[] = ['select', 'ask', 'construct', 'describe'] satisfies QueryForm[];

/**
 * Prepares one (query text, protocol dataset) for every caller, in the order docs/design/sparql.md#rewriting
 * fixes: text checks, parse, tree checks, rewrites, then the template (buildTemplate, which re-parses
 * every filling). Throws GuardError (400 or 403); never returns text the guard did not generate.
 */
export function prepareQuery(request: QueryRequest, settings: PrepareSettings): PreparedQuery {
  const protocolDefault = readProtocolGraphs(request.defaultGraphs, 'default-graph-uri');
  const protocolNamed = readProtocolGraphs(request.namedGraphs, 'named-graph-uri');
  const raw = request.query;
  const rawRegions = splitQueryText(raw);
  checkNestingDepth(raw, rawRegions, settings.maxQueryDepth);
  if (rawRegions.every((r) => r.kind === 'comment' || (r.kind === 'code' && raw.slice(r.start, r.end).trim() === ''))) {
    throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: empty query');
  }
  checkWhiteSpace(raw, rawRegions);
  try {
    const decoded = decodeCodepointEscapes(raw, rawRegions);
    const regions = decoded === raw ? rawRegions : splitQueryText(decoded);
    const { text, base } = resolveQueryIris(decoded, regions, settings.baseIri);
    const tree = parseChecked(text, regions, decoded);
    if (tree.type === 'update') throw updateRefusal();
    // Before any other walker: wide but flat queries nest deep in the stores' algebra.
    checkAlgebraDepth(tree, settings.maxQueryDepth);
    inspectTree(tree);
    checkBlankNodeScope(tree);
    checkVariableScope(tree);
    checkFunctionCalls(tree, settings.allowedFunctions);
    nameExistsBlankNodes(tree);
    dropRepeatedTriples(tree);

    const usesProtocol = protocolDefault.length > 0 || protocolNamed.length > 0;
    // SPARQL 1.1 Protocol 2.1.4: protocol graphs replace the query's whole dataset.
    const from = tree.from;
    const fromGiven = from !== undefined && (from.default.length > 0 || from.named.length > 0);
    const requestedDefault = usesProtocol ? protocolDefault : fromGiven ? [...new Set(from.default.map((t) => t.value))] : null;
    const requestedNamed = usesProtocol ? protocolNamed : fromGiven ? [...new Set(from.named.map((t) => t.value))] : null;

    const form = String(tree.queryType).toLowerCase() as QueryForm;
    if (!FORMS.includes(form)) throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: unknown query form');
    // DESCRIBE leaves as the CONSTRUCT of rewriteDescribe; what its WHERE names still counts.
    const describeNames = form === 'describe' ? markHiddenPaths(tree as unknown as Record<string, unknown>).named : undefined;
    const root = (form === 'describe' ? rewriteDescribe(tree as sparqljs.DescribeQuery) : tree) as unknown as LooseQuery;
    const limit = takeOuterLimit(root, form);
    const reach = findDatasetReach(root);
    // Before buildTemplate, which changes the tree it writes: the copy for callers under rows or columns.
    const expandedRoot = expandFixedPaths(root as unknown as Record<string, unknown>);
    const { parts, marks, hasHiddenSlots, hasRowSlots } = buildTemplate(root, text, requestedNamed);
    const named = withNormalisedForms([...marks.named, ...(describeNames ?? [])]);
    const places = new Map<string, readonly string[]>([...marks.namedIn].map(([where, iris]) => [where, [...iris]]));
    // What a DESCRIBE's WHERE names is checked against the whole dataset, as CONSTRUCT templates are.
    if (describeNames !== undefined) places.set(IN_WHOLE_DATASET, [...(places.get(IN_WHOLE_DATASET) ?? []), ...describeNames]);
    const namedInPlaces = [...places]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([where, iris]) => [where, withNormalisedForms(iris)] as const);
    // IRI() and URI() resolve against the query's base (§17.4.2.8); every other IRI is absolute already.
    const withBase = (written: TemplatePart[]): TemplatePart[] => {
      if (typeof written[0] === 'string') written[0] = `BASE <${base}>\n` + written[0];
      else written.unshift(`BASE <${base}>\n`);
      return written;
    };
    withBase(parts);
    const prepared: PreparedQuery = {
      form,
      defaultAccept: form === 'select' || form === 'ask' ? 'application/sparql-results+json' : 'text/turtle',
      requestedDefault,
      requestedNamed,
      parts,
      reach,
      namedPredicates: named,
      namedIn: namedInPlaces,
      hasHiddenSlots,
      hasRowSlots,
      negates: holdsExistsOrMinus(tree),
      existsInProjection: projectsExists(tree),
      blankZeroLength: marks.zeroLengthBlank,
      limit,
      // Two bytes a character of everything it holds, written as JSON, and some for the objects.
      sizeBytes: 256 + 2 * JSON.stringify([parts, requestedDefault, requestedNamed, named, namedInPlaces]).length,
    };
    if (expandedRoot === undefined) return prepared;
    if (expandedRoot instanceof GuardError) return { ...prepared, expanded: expandedRoot, sizeBytes: prepared.sizeBytes + 256 };
    // The same query with its fixed-length paths written as triple patterns (expandFixedPaths); what it names is the query's.
    const more = buildTemplate(expandedRoot as unknown as LooseQuery, text, requestedNamed);
    const expandedParts = withBase(more.parts);
    const expanded: PreparedQuery = {
      ...prepared,
      parts: expandedParts,
      hasHiddenSlots: more.hasHiddenSlots,
      hasRowSlots: more.hasRowSlots,
      blankZeroLength: more.marks.zeroLengthBlank,
      sizeBytes: 256 + 2 * JSON.stringify(expandedParts).length,
    };
    return { ...prepared, expanded, sizeBytes: prepared.sizeBytes + expanded.sizeBytes };
  } catch (error) {
    if (error instanceof RangeError) {
      // The recursive parser, walkers or generator ran out of stack: refuse, never crash.
      throw new GuardError(400, 'too_complex', `query is nested deeper than the limit of ${settings.maxQueryDepth} levels`);
    }
    throw error;
  }
}

export function updateRefusal(): GuardError {
  return new GuardError(403, 'update', 'update operations are not allowed');
}

/**
 * True when the query text is an update operation by its first keyword (escapes decoded), as the
 * planner tells it: for refusing it as an update before the caller is identified (docs/design/http.md).
 */
export function namesUpdate(query: string): boolean {
  try {
    const rawRegions = splitQueryText(query);
    const decoded = decodeCodepointEscapes(query, rawRegions);
    return firstKeywordIsUpdate(decoded, decoded === query ? rawRegions : splitQueryText(decoded));
  } catch {
    return false; // an escape that does not decode: the planner's 400 stands
  }
}

/** Parses, and on failure tells an update (403) from any other invalid text (400). */
function parseChecked(text: string, regions: readonly TextRegion[], decoded: string): sparqljs.Query | sparqljs.Update {
  try {
    return parseQuery(text);
  } catch (error) {
    if (error instanceof GuardError && firstKeywordIsUpdate(decoded, regions)) throw updateRefusal();
    throw error;
  }
}

/** Reads past the prologue (BASE / PREFIX declarations) to the first keyword. */
function firstKeywordIsUpdate(text: string, regions: readonly TextRegion[]): boolean {
  let skeleton = '';
  for (const region of regions) {
    if (region.kind === 'code') skeleton += text.slice(region.start, region.end);
    else if (region.kind === 'iri') skeleton += ' <> ';
    else skeleton += region.kind === 'string' ? ' "" ' : ' ';
  }
  const keyword = /^\s*(?:(?:BASE\s*<>|PREFIX\s*[^\s<]*\s*<>)\s*)*([A-Za-z]+)/i.exec(skeleton)?.[1];
  return keyword !== undefined && UPDATE_KEYWORD.test(keyword);
}

/**
 * Every node, whatever its kind: SERVICE is a 403, a dataset clause in a sub-query a 400, every IRI
 * absolute. Two HAVING constraints become one conjunction: sparqljs writes `HAVING (C1) (C2)` as
 * `HAVING (C1 C2)`, which does not parse; `HAVING ((C1) && (C2))` filters the same (§18.2.4.1, §17.4.1).
 */
function inspectTree(tree: object): void {
  walkQuery(tree, {
    enter(node, root) {
      if (node['type'] === 'service') throw new GuardError(403, 'service', 'SERVICE is not allowed');
      if (node['type'] === 'path' && node['pathType'] === '!' && !isNegatedSet(node['items'])) {
        // sparqljs reads `!()` as a set of no IRIs; SPARQL 1.1 lexes `()` as NIL, which [95] does not take.
        throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: an empty negated property set !() (§19.8: () is NIL)');
      }
      if (node['type'] !== 'query') return;
      if (node !== root && node['from'] !== undefined) {
        throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: dataset clause inside a sub-query');
      }
      checkLimitOffset(node);
      const having = node['having'];
      if (Array.isArray(having) && having.length > 1) {
        node['having'] = [having.reduce((left: unknown, right: unknown) => ({ type: 'operation', operator: '&&', args: [left, right] }))];
      }
    },
    term: normaliseTerm,
  });
}

/** The one member of a `!` path: an IRI, `^` of one, or `|` of such ([95] PathNegatedPropertySet); sparqljs puts [] for NIL. */
function isNegatedSet(items: unknown): boolean {
  return Array.isArray(items) && items.length === 1 && !Array.isArray(items[0]);
}

/** A character JavaScript's `\s` (and so sparqljs's lexer) takes for white space that [173] WS does not. */
const NOT_WHITE_SPACE = /(?![ \t\n\r])[\s\u0085]/u;

/**
 * SPARQL 1.1 §19.8 [173]: white space is space, tab, line feed and carriage return, nothing else. sparqljs
 * skips whatever JavaScript calls white space (the no-break space, the line separator, U+3000), which
 * Jena and Oxigraph refuse; outside strings, IRIs and comments such a character is a 400. A byte order
 * mark before the text is no part of it (both stores take it). A codepoint escape never decodes to one
 * there (decodeCodepointEscapes).
 */
function checkWhiteSpace(text: string, regions: readonly TextRegion[]): void {
  for (const region of regions) {
    if (region.kind !== 'code') continue;
    const start = region.start === 0 && text.startsWith('\uFEFF') ? 1 : region.start;
    const found = NOT_WHITE_SPACE.exec(text.slice(start, region.end));
    if (found === null) continue;
    const lines = text.slice(0, start + found.index).split(/\r\n|\r|\n/);
    throw new GuardError(
      400,
      'parse',
      `query is not valid SPARQL 1.1: white space other than space, tab, line feed or carriage return (§19.8 [173] WS) at line ${lines.length}, column ${(lines[lines.length - 1] ?? '').length + 1}`,
    );
  }
}

/** sparqljs reads LIMIT and OFFSET into JavaScript numbers: above 2^53 - 1 they would be written back rounded. */
function checkLimitOffset(query: Record<string, unknown>): void {
  for (const clause of ['limit', 'offset'] as const) {
    const value = query[clause];
    if (value !== undefined && !Number.isSafeInteger(value)) {
      throw new GuardError(400, 'limit_out_of_range', `${clause.toUpperCase()} above ${Number.MAX_SAFE_INTEGER} is not supported`);
    }
  }
}

/** A replacement for an IRI term whose text changes, else undefined. */
function normaliseTerm(term: Term): unknown {
  if (term.termType === 'NamedNode' && typeof term.value === 'string') {
    if (!hasScheme(term.value)) throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: relative IRI');
    // sparqljs keeps PN_LOCAL_ESC backslashes (`:c\?` gives `...c\?`); §4.1.1.1 drops them. No
    // other backslash can reach an IRI: IRIREF forbids it and codepoint escapes are decoded.
    const value = term.value.includes('\\') ? term.value.replace(/\\(.)/g, '$1') : term.value;
    // A prefixed name's local part may hold a character PN_CHARS allows and RFC 3987 does not (U+061C).
    if (NOT_IN_IRI.test(value)) throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: an IRI does not resolve to a valid IRI');
    const problem = iriReferenceProblem(value);
    if (problem !== undefined) throw notAnIri(problem);
    return value === term.value ? undefined : namedNode(value);
  }
  const datatype = (term as { datatype?: Term }).datatype;
  if (term.termType === 'Literal' && datatype !== undefined) {
    const problem = iriReferenceProblem(datatype.value);
    if (problem !== undefined) throw notAnIri(problem);
  }
  if (term.termType === 'Quad') throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: SPARQL-star is not SPARQL 1.1');
  return undefined;
}

/** The named predicates, sorted, with each one's dot-segment-free form, as a store that normalises IRIs (Jena) reads it. */
function withNormalisedForms(iris: readonly string[]): string[] {
  const all = new Set(iris);
  for (const iri of iris) all.add(normaliseIri(iri));
  return [...all].sort();
}

/**
 * The outer LIMIT, taken out of the tree for applyGrant to write per request (it may follow OFFSET,
 * [70]). ASK keeps its tree, and so does a query with a trailing VALUES clause, which must stay last ([7]).
 */
function takeOuterLimit(root: LooseQuery, form: string): PreparedQuery['limit'] {
  if (form === 'ask') return { kind: 'none' };
  const query = root as unknown as { limit?: number; values?: unknown };
  if (query.values !== undefined) return { kind: 'fixed' };
  const limit = query.limit;
  delete query.limit;
  return { kind: 'outer', limit };
}

/** Whether a SELECT clause, at any depth, holds an expression with an EXISTS or a NOT EXISTS in it (Plan.existsInProjection). */
function projectsExists(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some(projectsExists);
  const record = node as Record<string, unknown>;
  const variables = record['type'] === 'query' ? record['variables'] : undefined;
  if (
    Array.isArray(variables) &&
    variables.some((item) => typeof item === 'object' && item !== null && 'expression' in item && holdsExists(item.expression))
  )
    return true;
  return Object.values(record).some(projectsExists);
}

/** Whether an expression holds an EXISTS or a NOT EXISTS. */
function holdsExists(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some(holdsExists);
  const record = node as Record<string, unknown>;
  if (record['type'] === 'operation' && (record['operator'] === 'exists' || record['operator'] === 'notexists')) return true;
  return Object.values(record).some(holdsExists);
}

/** Whether a parsed query holds an EXISTS, NOT EXISTS or MINUS anywhere, sub-selects included. */
function holdsExistsOrMinus(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some(holdsExistsOrMinus);
  const record = node as Record<string, unknown>;
  if (record['type'] === 'minus') return true;
  if (record['type'] === 'operation' && (record['operator'] === 'exists' || record['operator'] === 'notexists')) return true;
  return Object.values(record).some(holdsExistsOrMinus);
}
