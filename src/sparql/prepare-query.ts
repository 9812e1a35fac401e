// Turns query text and the protocol dataset into a cached PreparedQuery: checks, parse, normalisation, template.

import sparqljs from 'sparqljs';
import { GuardError } from '../guard-error.js';
import type { QueryRequest } from '../http/query-request.js';
import { checkNestingDepth } from './check-nesting-depth.js';
import { decodeCodepointEscapes } from './decode-codepoint-escapes.js';
import { parseQuery, type ParsedRequest } from './parse-query.js';
import type { QueryForm } from './plan.js';
import type { GraphSlot, PreparedQuery, TemplatePart } from './prepared-query.js';
import { readProtocolGraphs } from './read-protocol-dataset.js';
import { hasScheme, normaliseIri } from './resolve-iri.js';
import { resolveQueryIris } from './resolve-query-iris.js';
import { splitQueryText, type TextRegion } from './split-query-text.js';

/** The planner options prepare depends on (both are part of every plan's meaning). */
export interface PrepareSettings {
  readonly baseIri: string;
  readonly maxQueryDepth: number;
}

/** Reserved graph IRI standing for "no graph" in FROM / FROM NAMED (never granted). */
export const EMPTY_GRAPH = 'urn:x-sparql-guard:empty';

/** The first keyword after the prologue names an update operation (SPARQL 1.1 Update §3). */
const UPDATE_KEYWORD = /^(?:INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)$/i;

const FORMS: Readonly<Record<string, QueryForm>> = {
  SELECT: 'select', ASK: 'ask', CONSTRUCT: 'construct', DESCRIBE: 'describe',
};

/** Characters that may mark slots in generated text; the first one absent from the query is used. */
const MARKER_CANDIDATES = ['\u0000', '\uE000', '\uE001', '\uE002', '\uE003', '\uFDD0', '\uFDD1'];

const factory = (() => {
  // The parser's own term factory, so replaced terms look like parsed ones.
  const probe = new sparqljs.Parser().parse('ASK { <x:a> <x:b> "c" }') as unknown as {
    where: { triples: { subject: { constructor: new (value: string) => unknown } }[] }[];
  };
  const namedNode = probe.where[0]?.triples[0]?.subject.constructor;
  if (namedNode === undefined) throw new Error('sparqljs term factory not found');
  return { namedNode: (value: string) => new namedNode(value) };
})();

/**
 * Prepares one (query text, protocol dataset) for every caller, in the order
 * DESIGN section 5 fixes: protocol IRIs, nesting depth (before anything else
 * reads the text), codepoint escapes, IRI resolution, strict parse, refusals
 * (update 403, SERVICE 403, FROM in a sub-select 400), IRI normalisation, then
 * serialisation by the sparqljs Generator into text segments and slots. Both
 * extreme fillings of the template (every GRAPH kept, every GRAPH removed) are
 * parsed again before the plan is accepted, and the first must give back the
 * very tree that was serialised.
 * Throws GuardError (400 or 403); never returns text the guard did not generate.
 */
export function prepareQuery(request: QueryRequest, settings: PrepareSettings): PreparedQuery {
  const protocolDefault = readProtocolGraphs(request.defaultGraphs, 'default-graph-uri');
  const protocolNamed = readProtocolGraphs(request.namedGraphs, 'named-graph-uri');
  const raw = request.query;
  const rawRegions = splitQueryText(raw);
  checkNestingDepth(raw, rawRegions, settings.maxQueryDepth);
  if (rawRegions.every((r) => r.kind === 'comment' || (r.kind === 'code' && raw.slice(r.start, r.end).trim() === ''))) {
    throw new GuardError(400, 'query is not valid SPARQL 1.1: empty query');
  }
  try {
    const decoded = decodeCodepointEscapes(raw, rawRegions);
    const regions = decoded === raw ? rawRegions : splitQueryText(decoded);
    const text = resolveQueryIris(decoded, regions, settings.baseIri);
    const tree = parseChecked(text, regions, decoded);
    if (tree.type === 'update') throw updateRefusal();
    inspectTree(tree, true);

    const usesProtocol = protocolDefault.length > 0 || protocolNamed.length > 0;
    // SPARQL 1.1 Protocol 2.1.4: protocol graphs replace the query's whole dataset.
    const from = tree.from;
    const fromGiven = from !== undefined && (from.default.length > 0 || from.named.length > 0);
    const requestedDefault = usesProtocol ? protocolDefault : fromGiven ? unique(from.default.map((t) => t.value)) : null;
    const requestedNamed = usesProtocol ? protocolNamed : fromGiven ? unique(from.named.map((t) => t.value)) : null;

    const form = FORMS[tree.queryType];
    if (form === undefined) throw new GuardError(400, 'query is not valid SPARQL 1.1: unknown query form');
    const parts = buildTemplate(tree, text, requestedNamed);
    return {
      form,
      defaultAccept: form === 'select' || form === 'ask' ? 'application/sparql-results+json' : 'text/turtle',
      requestedDefault,
      requestedNamed,
      parts,
      sizeBytes: 256 + sizeOf(parts) + 2 * [...(requestedDefault ?? []), ...(requestedNamed ?? [])].join('').length,
    };
  } catch (error) {
    if (error instanceof RangeError) {
      // The recursive parser, walkers or generator ran out of stack: refuse, never crash.
      throw new GuardError(400, `query is nested deeper than the limit of ${settings.maxQueryDepth} levels`);
    }
    throw error;
  }
}

function updateRefusal(): GuardError {
  return new GuardError(403, 'update operations are not allowed');
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
 * Walks every node of the tree, whatever its kind, so no position is missed:
 * SERVICE anywhere is a 403, a dataset clause in a sub-query is a 400 (not
 * SPARQL 1.1; Virtuoso would apply it, rig a14), and every IRI gets its dot
 * segments removed (prefixed names can spell `\.\.\/`) and must be absolute.
 */
function inspectTree(node: unknown, isRoot: boolean): void {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const replaced = normaliseTerm(node[i]);
      if (replaced !== undefined) node[i] = replaced;
      else inspectTree(node[i], false);
    }
    return;
  }
  const record = node as Record<string, unknown>;
  if (typeof record['termType'] === 'string') return;
  if (record['type'] === 'service') throw new GuardError(403, 'SERVICE is not allowed');
  if (record['type'] === 'query' && !isRoot && record['from'] !== undefined) {
    throw new GuardError(400, 'query is not valid SPARQL 1.1: dataset clause inside a sub-query');
  }
  for (const key of Object.keys(record)) {
    const value = record[key];
    const replaced = normaliseTerm(value);
    if (replaced !== undefined) record[key] = replaced;
    else inspectTree(value, false);
  }
}

/** A replacement for an IRI term (or a literal's datatype) whose text changes, else undefined. */
function normaliseTerm(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const term = value as { termType?: unknown; value?: unknown; datatype?: { value: string } };
  if (term.termType === 'NamedNode' && typeof term.value === 'string') {
    if (!hasScheme(term.value)) throw new GuardError(400, 'query is not valid SPARQL 1.1: relative IRI');
    // sparqljs keeps PN_LOCAL_ESC backslashes (`:c\?` gives `...c\?`); §4.1.1.1 drops them. No
    // other backslash can reach an IRI: IRIREF forbids it and codepoint escapes are decoded.
    const iri = normaliseIri(term.value.includes('\\') ? term.value.replace(/\\(.)/g, '$1') : term.value);
    return iri === term.value ? undefined : factory.namedNode(iri);
  }
  if (term.termType === 'Literal' && term.datatype !== undefined) {
    const iri = normaliseIri(term.datatype.value);
    if (iri !== term.datatype.value) throw new GuardError(400, 'query is not valid SPARQL 1.1: datatype IRI with dot segments');
  }
  if (term.termType === 'Quad') throw new GuardError(400, 'query is not valid SPARQL 1.1: SPARQL-star is not SPARQL 1.1');
  return undefined;
}

function unique(values: readonly string[]): string[] {
  return values.filter((value, index) => values.indexOf(value) === index);
}

/** A sparqljs Generator instance, with the methods this file overrides. */
interface GeneratorInstance {
  toQuery(query: unknown): string;
  toEntity(term: unknown): string;
  encodeIRI(iri: string): string;
  indent(text: string): string;
  graphs(keyword: string, graphs: unknown): string;
  graph(pattern: GraphNode): string;
}

/** The root query object, with the fields the template step rewrites. */
interface LooseQuery {
  base?: string;
  prefixes: Record<string, string>;
  from?: { default: unknown[]; named: unknown[] };
  template?: unknown[];
}

interface GraphNode {
  readonly type: 'graph';
  readonly name: { readonly termType: string; readonly value: string };
  readonly patterns: unknown[];
}

/**
 * Serialises with the sparqljs Generator, wrapping the dataset position and
 * every `GRAPH <iri>` element in markers, then cuts the text at the markers.
 * Prefixes and BASE are dropped so every IRI leaves written out in full.
 */
function buildTemplate(tree: sparqljs.Query, text: string, requestedNamed: readonly string[] | null): TemplatePart[] {
  const marker = MARKER_CANDIDATES.find((candidate) => !text.includes(candidate));
  if (marker === undefined) throw new GuardError(400, 'query cannot be rewritten safely');
  const slots: { iri: string; removed: string }[] = [];
  const generator = new sparqljs.Generator({ indent: '  ', newline: '\n' }).createGenerator() as GeneratorInstance;
  const plainGraph = Object.getPrototypeOf(generator).graph as GeneratorInstance['graph'];
  // Full IRIs only: sparqljs builds its prefix regex from unescaped IRIs.
  generator.encodeIRI = (iri) => '<' + iri + '>';
  // sparqljs indents with /^/gm, which also matches after U+2028 / U+2029 inside literals.
  generator.indent = (block) => '  ' + block.replaceAll('\n', '\n  ');
  generator.graphs = (keyword) => (keyword === 'FROM ' ? `${marker}D${marker}` : '');
  generator.graph = function (this: GeneratorInstance, pattern: GraphNode): string {
    if (pattern.name.termType !== 'NamedNode') return plainGraph.call(this, pattern);
    const index = slots.length;
    const variables = inScopeVariables(pattern.patterns);
    slots.push({
      iri: pattern.name.value,
      removed: variables.length === 1 ? `VALUES ${variables[0]} {}` : `VALUES (${variables.join(' ')}) {}`,
    });
    return `${marker}O${index}${marker}` + plainGraph.call(this, pattern) + `${marker}C${index}${marker}`;
  };

  const root = tree as unknown as LooseQuery;
  delete root.base;
  root.prefixes = {};
  root.from = { default: [], named: [] };
  // sparqljs parses `CONSTRUCT {} WHERE {}` without a template and would write it as CONSTRUCT WHERE.
  if (tree.queryType === 'CONSTRUCT' && root.template === undefined) root.template = [];
  const generated = generator.toQuery(root);
  const parts = cutAtMarkers(generated, marker, slots, requestedNamed);
  verifyTemplate(parts, root);
  return parts;
}

/** Rebuilds the slot tree from the marked text; any unexpected marker layout is a refusal. */
function cutAtMarkers(
  generated: string,
  marker: string,
  slots: readonly { iri: string; removed: string }[],
  requestedNamed: readonly string[] | null,
): TemplatePart[] {
  const unsafe = (): GuardError => new GuardError(400, 'query cannot be rewritten safely');
  const pieces = generated.split(marker);
  // pieces alternate text, marker body, text, marker body, ...
  const stack: { parts: TemplatePart[]; index: number }[] = [{ parts: [], index: -1 }];
  let datasetSeen = false;
  let closed = 0;
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] ?? '';
    const top = stack[stack.length - 1];
    if (top === undefined) throw unsafe();
    if (i % 2 === 0) {
      if (piece !== '') top.parts.push(piece);
      continue;
    }
    const kind = piece[0];
    const index = Number(piece.slice(1));
    if (kind === 'D' && piece === 'D' && stack.length === 1 && !datasetSeen) {
      datasetSeen = true;
      top.parts.push({ kind: 'dataset' });
    } else if (kind === 'O' && slots[index] !== undefined) {
      stack.push({ parts: [], index });
    } else if (kind === 'C' && top.index === index && stack.length > 1) {
      stack.pop();
      const slot = slots[index];
      const parent = stack[stack.length - 1];
      if (slot === undefined || parent === undefined) throw unsafe();
      const graphSlot: GraphSlot = {
        kind: 'graph',
        iri: slot.iri,
        requested: requestedNamed === null || requestedNamed.includes(slot.iri),
        kept: top.parts,
        removed: slot.removed,
      };
      parent.parts.push(graphSlot);
      closed++;
    } else throw unsafe();
  }
  const root = stack[0];
  if (stack.length !== 1 || root === undefined || !datasetSeen || closed !== slots.length) throw unsafe();
  return root.parts;
}

/**
 * Rule 1 of the planner: every generated query re-parses. The all-kept filling
 * must also parse back to the tree that was serialised (catching generator
 * bugs that would change meaning); the all-removed filling must parse.
 */
function verifyTemplate(parts: readonly TemplatePart[], root: LooseQuery): void {
  const dataset = `FROM <${EMPTY_GRAPH}>\nFROM NAMED <${EMPTY_GRAPH}>\n`;
  const unsafe = (): GuardError => new GuardError(400, 'query cannot be rewritten safely');
  let kept: sparqljs.SparqlQuery;
  try {
    kept = parseQuery(fillAll(parts, dataset, true));
    parseQuery(fillAll(parts, dataset, false));
  } catch (error) {
    if (error instanceof RangeError) throw error;
    throw unsafe();
  }
  const empty = factory.namedNode(EMPTY_GRAPH);
  root.from = { default: [empty], named: [empty] };
  const same = canonical(kept) === canonical(root);
  root.from = { default: [], named: [] };
  if (!same) throw unsafe();
}

function fillAll(parts: readonly TemplatePart[], dataset: string, keep: boolean): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (part.kind === 'dataset') out += dataset;
    else out += keep ? fillAll(part.kept, dataset, keep) : part.removed;
  }
  return out;
}

/** JSON of a tree with sorted keys and blank-node labels made comparable across a generate/parse round trip. */
function canonical(tree: unknown): string {
  return JSON.stringify(tree, (key, value: unknown) => {
    if (key === 'base') return undefined;
    if (key === 'template' && Array.isArray(value) && value.length === 0) return undefined; // {} and none mean the same
    const term = value as { termType?: unknown; value?: unknown } | null;
    if (term !== null && typeof term === 'object' && term.termType === 'BlankNode' && typeof term.value === 'string') {
      // sparqljs labels `_:x` as e_x and `[]` as g_n; re-parsing `_:g_0` gives e_g_0.
      return { termType: 'BlankNode', value: term.value.replace(/^e_/, '') };
    }
    if (term === null || typeof term !== 'object' || Array.isArray(term)) return value;
    // Key order differs between a parsed tree and one the template step edited.
    const sorted: Record<string, unknown> = {};
    for (const name of Object.keys(term).sort()) sorted[name] = (term as Record<string, unknown>)[name];
    return sorted;
  });
}

/**
 * The in-scope variables of a group's patterns (SPARQL 1.1 §18.2.1), in order
 * of first appearance: what the empty VALUES block replacing `GRAPH <iri> {P}`
 * must keep in scope. FILTER, MINUS and EXISTS bind nothing; a sub-select
 * binds what it projects.
 */
export function inScopeVariables(patterns: readonly unknown[]): string[] {
  const found: string[] = [];
  const add = (term: unknown): void => {
    const t = term as { termType?: unknown; value?: unknown } | undefined;
    if (t?.termType === 'Variable' && typeof t.value === 'string' && !found.includes('?' + t.value)) found.push('?' + t.value);
  };
  const visit = (pattern: unknown): void => {
    const p = pattern as Record<string, unknown>;
    switch (p['type']) {
      case 'bgp':
        for (const triple of p['triples'] as { subject: unknown; predicate: unknown; object: unknown }[]) {
          add(triple.subject);
          add(triple.predicate); // a path is no Variable and adds nothing
          add(triple.object);
        }
        break;
      case 'graph':
        add(p['name']);
        (p['patterns'] as unknown[]).forEach(visit);
        break;
      case 'group':
      case 'optional':
      case 'union':
        (p['patterns'] as unknown[]).forEach(visit);
        break;
      case 'bind':
        add(p['variable']);
        break;
      case 'values':
        for (const row of p['values'] as Record<string, unknown>[]) {
          for (const key of Object.keys(row)) add({ termType: 'Variable', value: key.replace(/^[?$]/, '') });
        }
        break;
      case 'query': {
        const variables = p['variables'] as { termType?: string; variable?: unknown }[];
        for (const v of variables) {
          if (v.termType === 'Wildcard') (p['where'] as unknown[] | undefined)?.forEach(visit);
          else add(v.termType === 'Variable' ? v : v.variable);
        }
        break;
      }
      default:
        break; // filter, minus, service (refused earlier): nothing enters scope
    }
  };
  patterns.forEach(visit);
  return found;
}

function sizeOf(parts: readonly TemplatePart[]): number {
  let bytes = 0;
  for (const part of parts) {
    if (typeof part === 'string') bytes += 2 * part.length + 16;
    else if (part.kind === 'dataset') bytes += 16;
    else bytes += 64 + 2 * (part.iri.length + part.removed.length) + sizeOf(part.kept);
  }
  return bytes;
}
