// Fills a prepared query's slots for one caller: set operations on graph and predicate IRIs and string joins, nothing else.

import { GuardError } from '../guard-error.js';
import { NOT_IN_IRI } from '../iri.js';
import { sortedGraphs, type Grant } from '../policy/grant.js';
import { EMPTY_GRAPH } from '../vocabulary.js';
import { encodeFormPiece, joinQueryForm } from '../url-encoded-form.js';
import type { Plan } from './plan.js';
import { IN_ANY_NAMED_GRAPH, IN_DEFAULT_GRAPH, IN_WHOLE_DATASET } from './mark-hidden-paths.js';
import type { GraphVariableSlot, HiddenFilterSlot, PreparedQuery, TemplatePart, ZeroLengthSlot } from './prepared-query.js';

/** The caller's hidden predicates, written the three ways the slots need them. */
export interface HiddenText {
  /** For `NOT IN (…)`: `<h1>, <h2>`. */
  readonly list: string;
  /** Forward members to append to a negated set: `|<h1>|<h2>`. */
  readonly forward: string;
  /** Inverse members to append to a negated set: `|^<h1>|^<h2>`. */
  readonly inverse: string;
  /**
   * Only for a default graph that merges graphs hiding different sets (the
   * lists above are then their union): the default graphs that hide less than
   * the union, each with its own `NOT IN` list ('' when it hides nothing). A
   * hidden triple of one graph may be a visible triple of another, so the
   * slots check those graphs one by one (docs/design.md, "The default graph
   * is redacted per graph").
   */
  readonly graphs?: readonly HiddenInGraph[];
  /** With `graphs`: the default graphs that hide something, each with its own list. */
  readonly hiding?: readonly HiddenInGraph[];
}

/** A default graph that hides less than the union of the default graphs, and its own hidden list. */
export interface HiddenInGraph {
  readonly iri: string;
  readonly list: string;
}

const NO_CONSTANTS: readonly string[] = [];

/** The refusal of a negated property set read in a default graph whose graphs hide different sets. */
export const MIXED_NEGATED_SET =
  'a negated property set cannot be checked for hidden paths where the default graph merges graphs that hide different predicates (read one of them: FROM <g> or GRAPH <g>)';

/** The refusal of a blank node beside a variable predicate read in a default graph whose graphs hide different sets. */
export const MIXED_BLANK_NODE =
  'a blank node beside a variable predicate cannot be checked for hidden paths where the default graph merges graphs that hide different predicates (write a variable)';

export const BLANK_ZERO_LENGTH = 'a zero-length path between blank nodes cannot be checked for hidden paths (name a variable at one end)';

/**
 * The LIMIT that ends the query: the smaller of the query's own and the caller's result cap
 * (docs/design.md, "Limits per caller"); nothing when neither is set.
 */
function limitClause(limit: PreparedQuery['limit'], cap: number | undefined): string {
  if (limit.kind !== 'outer') {
    if (limit.kind === 'none' || cap === undefined) return '';
    throw new GuardError(
      403,
      'forbidden',
      `a query ending in a VALUES clause cannot be held to this caller's result limit of ${cap}; move the VALUES block into WHERE`,
    );
  }
  const effective = limit.limit === undefined ? cap : cap === undefined ? limit.limit : Math.min(limit.limit, cap);
  return effective === undefined ? '' : `\nLIMIT ${effective}`;
}

/**
 * docs/design.md#rewriting: effective default = requested default (or all granted)
 * ∩ granted, the same for named; both FROM and FROM NAMED always present, an
 * empty set written as the reserved EMPTY_GRAPH, and so is a part of the dataset
 * the query cannot read (PreparedQuery.reach); `GRAPH <iri>` outside the
 * effective named graphs becomes its group with no solution, and `GRAPH ?var`
 * around a `*` / `+` path one branch per effective named graph (UNION).
 * Requested graphs keep request order, "all granted" is sorted, so output is
 * deterministic.
 *
 * Hidden predicates are per graph (docs/design.md, "Hidden sets are per
 * graph"): a slot inside `GRAPH <iri>` gets that graph's hidden set, one
 * inside `GRAPH ?var` the set of each named graph it ranges over (a branch per
 * graph when the sets differ), one outside any GRAPH the set of the effective
 * default graphs when they all hide the same one, else each default graph's
 * own, asked with GRAPH in EXISTS (HiddenText.graphs: those graphs go into FROM
 * NAMED too, kept out of the query's own GRAPH elements). A query naming a
 * predicate hidden where it is read is refused (403, without saying which);
 * otherwise the hidden IRIs fill the filter and negated-set slots, and the
 * zero-length slots keep paths of length zero on nodes of visible triples; a
 * zero-length path between two blank nodes is refused (403) while anything
 * is hidden in the dataset. With nothing hidden those slots write nothing.
 */
export function applyGrant(prepared: PreparedQuery, grant: Grant, constants: readonly string[] = NO_CONSTANTS): Plan {
  const granted = grant.graphs;
  const all = prepared.requestedDefault === null || prepared.requestedNamed === null ? sortedGraphs(grant) : undefined;
  const defaults = prepared.requestedDefault ?? all ?? [];
  const named = prepared.requestedNamed ?? all ?? [];
  let hidden: HiddenText | undefined;
  let hiddenIn: Filling['hiddenIn'] = NOTHING_HIDDEN;
  /** Default graphs the per-graph checks read with GRAPH that are no effective named graph. */
  let added: readonly string[] = [];
  if (grant.hiddenByGraph.size > 0) {
    const sets = hiddenSets(prepared, grant, defaults, named);
    if (sets !== undefined) {
      refuseNamedHidden(prepared, grant, sets);
      if (prepared.blankZeroLength) throw new GuardError(403, 'forbidden', BLANK_ZERO_LENGTH);
      if (prepared.hasHiddenSlots) {
        // A query that reads no default graph has no slot outside GRAPH to fill for it.
        if (sets.inDefault.size > 0 && prepared.reach.readsDefault) {
          hidden = hiddenTextOf(sets.inDefault);
          const graphs = hidingLess(grant, defaults, sets.inDefault);
          if (graphs.length > 0) {
            const hiding = hidingSome(grant, defaults);
            hidden = { ...hidden, graphs, hiding };
            // FROM NAMED lists the effective named graphs only for a query that reads them.
            const listed = prepared.reach.readsNamed ? named : [];
            added = [...new Set([...graphs, ...hiding].map(({ iri }) => iri))].filter((iri) => !listed.includes(iri));
          }
        }
        hiddenIn = hiddenInOf(grant);
      }
    }
  }
  const dataset = datasetOf(grant, prepared, defaults, named, added);
  const filling: Filling = {
    dataset: dataset.text,
    keep: granted,
    named,
    // All granted graphs are granted: a grant of thousands is not filtered again per GRAPH ?var.
    ...(prepared.requestedNamed === null && { namedAllKept: true }),
    hiddenIn,
    constants,
    added: added.length > 0,
  };
  // The text and, beside it, the form body: the template's strings were encoded once
  // (encodedTemplateOf), so only what this request fills in is encoded now.
  const { parts } = prepared;
  const template = encodedTemplateOf(parts);
  const pieces: (string | Buffer)[] = [];
  let query = '';
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i]!;
    if (typeof part === 'string') {
      query += part;
      pieces.push(template.pieces[i]!);
    } else if (part.kind === 'dataset') {
      query += dataset.text;
      pieces.push(dataset.encoded);
    } else {
      const text = fillPart(part, filling, hidden);
      query += text;
      pieces.push(text);
    }
  }
  const limit = limitClause(prepared.limit, grant.limits?.resultLimit);
  if (limit !== '') {
    query += limit;
    pieces.push(limit);
  }
  const formParts = joinFormParts(pieces);
  let formBody: Buffer | undefined = formParts.length === 1 ? formParts[0] : undefined;
  return {
    query,
    get formBody() {
      return (formBody ??= Buffer.concat(formParts));
    },
    formParts,
    formBytes: formParts.reduce((bytes, part) => bytes + part.length, 0),
    form: prepared.form,
    datasetGraphs: dataset.graphs,
    defaultAccept: prepared.defaultAccept,
  };
}

/** From this size an encoded piece (a grant's dataset) is sent as its own part rather than copied into the body. */
const OWN_PART_BYTES = 16 * 1024;

/**
 * The form body in parts: the small pieces joined (the first part with `query=`), each large
 * Buffer piece as it is. Copying a grant of 5,000 graphs (300 KB) into a fresh Buffer per
 * request costs more than the rest of the plan; the store gets the same bytes either way.
 */
function joinFormParts(pieces: readonly (string | Buffer)[]): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = 0; at < pieces.length; at += 1) {
    const piece = pieces[at]!;
    if (typeof piece === 'string' || piece.length < OWN_PART_BYTES) continue;
    parts.push(joinQueryForm(pieces.slice(from, at), parts.length === 0), piece);
    from = at + 1;
  }
  if (parts.length === 0) return [joinQueryForm(pieces)];
  if (from < pieces.length) parts.push(joinQueryForm(pieces.slice(from), false));
  return parts;
}

/** A template's strings encoded for the form body, beside the template (undefined for its slots). */
interface EncodedTemplate {
  readonly pieces: readonly (Buffer | undefined)[];
}

/**
 * The encoded strings of a template, made on its first plan and kept as long as the template
 * (the plan cache's byte bound counts two bytes per character of its text, where an ASCII
 * string and its encoding take about one each).
 */
const encodedTemplates = new WeakMap<readonly TemplatePart[], EncodedTemplate>();

function encodedTemplateOf(parts: readonly TemplatePart[]): EncodedTemplate {
  let template = encodedTemplates.get(parts);
  if (template === undefined) {
    template = { pieces: parts.map((part) => (typeof part === 'string' ? encodeFormPiece(part) : undefined)) };
    encodedTemplates.set(parts, template);
  }
  return template;
}

/** A request's FROM / FROM NAMED clauses, and their form encoding. */
interface Dataset {
  readonly text: string;
  readonly encoded: Buffer;
  /** Clauses naming a granted graph (Plan.datasetGraphs). */
  readonly graphs: number;
}

/**
 * The datasets of queries that request none (all granted graphs), per grant (as sortedGraphs
 * in policy/grant.ts) and per reach (index readsDefault + 2 x readsNamed): the text of a grant
 * of thousands of graphs, and its form encoding, are written once, not per request.
 */
const allGrantedDatasets = new WeakMap<Grant, (Dataset | undefined)[]>();

const NO_GRAPHS: readonly string[] = [];

/**
 * FROM lists the effective default graphs only when the query reads the default graph, FROM
 * NAMED the effective named graphs only when it reads named graphs (PreparedQuery.reach);
 * each part left out holds the reserved empty graph, so the store's own default or named
 * graphs never stand in. `added` (the per-graph checks' graphs) goes into FROM NAMED either way.
 */
function datasetOf(
  grant: Grant,
  prepared: PreparedQuery,
  defaults: readonly string[],
  named: readonly string[],
  added: readonly string[],
): Dataset {
  const { readsDefault, readsNamed } = prepared.reach;
  // With all granted graphs named nothing is added; without FROM NAMED, what is added varies per query.
  const allGranted = prepared.requestedDefault === null && prepared.requestedNamed === null && added.length === 0;
  const index = (readsDefault ? 1 : 0) + (readsNamed ? 2 : 0);
  let byReach = allGranted ? allGrantedDatasets.get(grant) : undefined;
  let dataset = byReach?.[index];
  if (dataset === undefined) {
    const text =
      clauses('FROM <', readsDefault ? defaults : NO_GRAPHS, grant.graphs) +
      namedClauses(readsNamed ? named : NO_GRAPHS, added, grant.graphs);
    dataset = { text, encoded: encodeFormPiece(text), graphs: countClauses(text) };
    if (allGranted) {
      if (byReach === undefined) allGrantedDatasets.set(grant, (byReach = []));
      byReach[index] = dataset;
    }
  }
  return dataset;
}

/** How a template is filled: for one request, or for one of the planner's checks. */
export interface Filling {
  readonly dataset: string;
  /**
   * Decides GRAPH slots: the granted set (kept when requested and granted),
   * or true / false (all kept or all removed, for checks).
   */
  readonly keep: ReadonlySet<string> | boolean;
  /** The candidate named graphs a `GRAPH ?var` slot ranges over (the requested ones, or all granted; those `keep` keeps). */
  readonly named: readonly string[];
  /** True when `keep` keeps every graph of `named` (all granted ones, unrequested). */
  readonly namedAllKept?: boolean;
  /** The hidden predicates of a named graph as the active graph, written; undefined: nothing hidden there. */
  readonly hiddenIn: (graph: string) => HiddenText | undefined;
  /** The constant slots' values (the request's constants as generated). */
  readonly constants: readonly string[];
  /**
   * True when FROM NAMED also lists default graphs for the per-graph checks
   * (HiddenText.graphs): then `GRAPH ?var` is always written per effective
   * named graph, so it never ranges over those.
   */
  readonly added?: boolean;
}

const NOTHING_HIDDEN = (): undefined => undefined;

/**
 * Writes the template. `hidden` fills the hidden-path slots of the active
 * graph the parts are read in (undefined: nothing hidden there); inside
 * `GRAPH <iri>` that graph's own set takes over, inside `GRAPH ?var` each
 * named graph's.
 */
export function fillTemplate(parts: readonly TemplatePart[], filling: Filling, hidden: HiddenText | undefined): string {
  let out = '';
  for (const part of parts) out += typeof part === 'string' ? part : fillPart(part, filling, hidden);
  return out;
}

/** Writes one slot of a template (see fillTemplate). */
function fillPart(part: Exclude<TemplatePart, string>, filling: Filling, hidden: HiddenText | undefined): string {
  const { keep, hiddenIn } = filling;
  if (part.kind === 'constant') {
    const constant = filling.constants[part.index];
    if (constant === undefined) throw new GuardError(500, 'internal_error', 'a constant slot has no value');
    return constant;
  }
  if (part.kind === 'dataset') return filling.dataset;
  if (part.kind === 'graph') {
    // An effective named graph is requested (or all are) and granted; inside, it is the active graph (§18.6).
    const kept = typeof keep === 'boolean' ? keep : part.requested && keep.has(part.iri);
    return kept ? fillTemplate(part.kept, filling, hiddenIn(part.iri)) : part.removed;
  }
  if (part.kind === 'graph-variable') return fillGraphVariable(part, filling, hidden);
  if (hidden === undefined) return part.kind === 'negated-set' ? part.plain : '';
  if (part.kind === 'hidden-filter') {
    if (hidden.graphs !== undefined) return perGraphFilters(part, hidden, hidden.graphs, filling);
    let out = '';
    for (const variable of part.variables) out += ` FILTER(${variable} NOT IN (${hidden.list}))`;
    return out;
  }
  if (part.kind === 'zero-length') {
    let out = '';
    for (const end of part.ends) {
      out +=
        hidden.graphs === undefined ? zeroLengthFilter(part, end, hidden.list) : zeroLengthPerGraph(part, end, hidden.list, hidden.graphs);
    }
    return out;
  }
  // A negated set steps over triples of the merge; which graph a step came from cannot be asked inside a path.
  if (hidden.graphs !== undefined) throw new GuardError(403, 'forbidden', MIXED_NEGATED_SET);
  return '!(' + part.members + (part.forward ? hidden.forward : '') + (part.inverse ? hidden.inverse : '') + ')';
}

/**
 * Writes a `GRAPH ?var` slot (GraphVariableSlot) over the effective named
 * graphs: one `GRAPH <g>` branch per graph when the slot asks for it (a `*` or
 * `+` path) or when the graphs hide different sets and the body has slots of
 * its own to fill; else the element as written, filled for the set every graph
 * shares. `hidden` (the enclosing active graph's) fills it only when no named
 * graph is effective, where it matches nothing anyway.
 */
function fillGraphVariable(part: GraphVariableSlot, filling: Filling, hidden: HiddenText | undefined): string {
  const { keep, named, hiddenIn, added = false } = filling;
  const graphs =
    filling.namedAllKept === true || keep === true ? named : named.filter((graph) => (typeof keep === 'boolean' ? keep : keep.has(graph)));
  const first = graphs[0];
  if (first === undefined) {
    return part.perGraph || added ? part.removed : 'GRAPH ' + part.variable + ' ' + fillTemplate(part.body, filling, hidden);
  }
  const shared = hiddenIn(first);
  const mixed = part.hiddenSlots && graphs.some((graph) => hiddenIn(graph)?.list !== shared?.list);
  if (!part.perGraph && !mixed && !added) return 'GRAPH ' + part.variable + ' ' + fillTemplate(part.body, filling, shared);
  // The body depends on the graph only through its hidden set: written once per set.
  const bodies = new Map<string, string>();
  let branches = '';
  for (const graph of graphs) {
    const text = hiddenIn(graph);
    const key = text?.list ?? '';
    let body = bodies.get(key);
    if (body === undefined) bodies.set(key, (body = fillTemplate(part.body, filling, text)));
    branches +=
      (branches === '' ? '{ GRAPH <' : '\nUNION\n{ GRAPH <') + graph + '> ' + body + ' VALUES ' + part.variable + ' { <' + graph + '> } }';
  }
  return branches;
}

/** The filter a ZeroLengthSlot writes for one end: it must be a node of a visible triple of the active graph. */
export function zeroLengthFilter(
  slot: { readonly subject: string; readonly predicate: string; readonly object: string },
  end: string,
  list: string,
): string {
  const { subject, predicate, object } = slot;
  return ` FILTER EXISTS { { ${end} ${predicate} ${object} } UNION { ${subject} ${predicate} ${end} } FILTER(${predicate} NOT IN (${list})) }`;
}

/**
 * The filters of a HiddenFilterSlot in a default graph whose graphs hide
 * different sets: per triple pattern `s ?p o` of the group, a solution is kept
 * when ?p is hidden in no default graph, or when a default graph that does
 * not hide ?p holds the triple and no default graph that hides ?p holds it.
 * The redacted merge holds the triple in both cases; a triple held by a graph
 * that hides it and by one that does not is withheld, because stores count
 * such a triple of the merge differently (Oxigraph and Virtuoso once per
 * graph, Jena once) and no filter can keep one copy of two identical
 * solutions (docs/design.md, "The default graph is redacted per graph").
 */
function perGraphFilters(part: HiddenFilterSlot, hidden: HiddenText, graphs: readonly HiddenInGraph[], filling: Filling): string {
  if (part.triples === null) throw new GuardError(403, 'forbidden', MIXED_BLANK_NODE);
  const { list, hiding = [] } = hidden;
  let out = '';
  const written = new Set<string>();
  for (const triple of part.triples) {
    const { predicate } = triple;
    const pattern = fillTemplate(triple.pattern, filling, undefined);
    if (written.has(pattern)) continue;
    written.add(pattern);
    const visible = graphs.map(({ iri, list: own }) => {
      const filter = own === '' ? '' : ` FILTER(${predicate} NOT IN (${own}))`;
      return `{ GRAPH <${iri}> { ${pattern} }${filter} }`;
    });
    const withheld = hiding.map(({ iri, list: own }) => `{ GRAPH <${iri}> { ${pattern} } FILTER(${predicate} IN (${own})) }`);
    out += ` FILTER(${predicate} NOT IN (${list}) || (EXISTS { ${visible.join(' UNION ')} } && NOT EXISTS { ${withheld.join(' UNION ')} }))`;
  }
  return out;
}

/**
 * The filter of a ZeroLengthSlot end in a default graph whose graphs hide
 * different sets: the end must be a node of a triple of the merge whose
 * predicate no default graph hides, or of a triple of a default graph that
 * does not hide its predicate.
 */
function zeroLengthPerGraph(slot: ZeroLengthSlot, end: string, list: string, graphs: readonly HiddenInGraph[]): string {
  const { subject, predicate, object } = slot;
  const node = `{ ${end} ${predicate} ${object} } UNION { ${subject} ${predicate} ${end} }`;
  let branches = `{ ${node} FILTER(${predicate} NOT IN (${list})) }`;
  for (const { iri, list: own } of graphs) {
    branches += ` UNION { GRAPH <${iri}> { ${node} }${own === '' ? '' : ` FILTER(${predicate} NOT IN (${own}))`} }`;
  }
  return ` FILTER EXISTS { ${branches} }`;
}

/**
 * The effective default graphs that hide less than `union`, the union of
 * their hidden sets, in dataset order: none when every default graph hides
 * the same set.
 */
function hidingLess(grant: Grant, defaults: readonly string[], union: ReadonlySet<string>): HiddenInGraph[] {
  const out: HiddenInGraph[] = [];
  for (const graph of new Set(defaults)) {
    if (!grant.graphs.has(graph)) continue;
    const paths = grant.hiddenByGraph.get(graph);
    if (paths !== undefined && paths.size === union.size) continue;
    out.push({ iri: graph, list: paths === undefined || paths.size === 0 ? '' : hiddenTextOf(paths).list });
  }
  return out;
}

/** The effective default graphs that hide something, in dataset order. */
function hidingSome(grant: Grant, defaults: readonly string[]): HiddenInGraph[] {
  const out: HiddenInGraph[] = [];
  for (const graph of new Set(defaults)) {
    const paths = grant.graphs.has(graph) ? grant.hiddenByGraph.get(graph) : undefined;
    if (paths !== undefined && paths.size > 0) out.push({ iri: graph, list: hiddenTextOf(paths).list });
  }
  return out;
}

/** Writes sorted hidden IRIs the three ways; refuses one that cannot be written as an IRIREF. */
export function hiddenText(sorted: readonly string[]): HiddenText {
  let list = '';
  let forward = '';
  let inverse = '';
  for (const iri of sorted) {
    // Policies are trusted, but a query must never carry text the guard cannot vouch for.
    if (NOT_IN_IRI.test(iri)) throw new GuardError(500, 'internal_error', 'a hidden path of the policies is not a valid IRI');
    list += (list === '' ? '<' : ', <') + iri + '>';
    forward += '|<' + iri + '>';
    inverse += '|^<' + iri + '>';
  }
  return { list, forward, inverse };
}

/** The hidden sets a request needs: per place a named predicate can be read (see namedIn). */
interface HiddenSets {
  /** The union over the effective default graphs: the default graph is their merge. */
  readonly inDefault: ReadonlySet<string>;
  /** The union over the effective named graphs: what `GRAPH ?var` may reach. */
  readonly inNamed: ReadonlySet<string>;
  /** The union of both. */
  readonly whole: ReadonlySet<string>;
}

/**
 * The hidden sets of the effective graphs, or undefined when nothing is
 * hidden in any of them. Without a requested dataset the effective graphs are
 * all granted ones: then every union is that of every hidden set of the
 * grant, remembered per grant (the policy set hands out the same grant object
 * again).
 */
function hiddenSets(prepared: PreparedQuery, grant: Grant, defaults: readonly string[], named: readonly string[]): HiddenSets | undefined {
  const byGraph = grant.hiddenByGraph;
  const allGranted = prepared.requestedDefault === null && prepared.requestedNamed === null;
  let sets = allGranted ? setsByGrant.get(byGraph) : undefined;
  if (sets === undefined) {
    const union = (graphs: Iterable<string>): Set<string> => {
      const found = new Set<string>();
      for (const graph of graphs) {
        const paths = grant.graphs.has(graph) ? byGraph.get(graph) : undefined;
        if (paths !== undefined) for (const path of paths) found.add(path);
      }
      return found;
    };
    if (allGranted) {
      const whole = union(byGraph.keys());
      sets = { inDefault: whole, inNamed: whole, whole };
      setsByGrant.set(byGraph, sets);
    } else {
      const inDefault = union(defaults);
      const inNamed = union(named);
      sets = { inDefault, inNamed, whole: new Set([...inDefault, ...inNamed]) };
    }
  }
  return sets.whole.size === 0 ? undefined : sets;
}

/** The hidden sets of a grant when nothing is requested, remembered per grant (as sortedGraphs in policy/grant.ts). */
const setsByGrant = new WeakMap<ReadonlyMap<string, ReadonlySet<string>>, HiddenSets>();

/**
 * Refuses (403) a query naming a predicate hidden where it is read: in the
 * default graph, in any effective named graph for `GRAPH ?var`, in the graph
 * itself for `GRAPH <iri>` when that graph is effective, anywhere in the
 * dataset for CONSTRUCT templates, DESCRIBE and a `GRAPH <iri>` outside the
 * dataset (removed, it reads nothing: kept as the stricter rule).
 */
function refuseNamedHidden(prepared: PreparedQuery, grant: Grant, sets: HiddenSets): void {
  for (const [where, iris] of prepared.namedIn) {
    let paths: ReadonlySet<string> | undefined;
    if (where === IN_DEFAULT_GRAPH) paths = sets.inDefault;
    else if (where === IN_ANY_NAMED_GRAPH) paths = sets.inNamed;
    else if (where === IN_WHOLE_DATASET) paths = sets.whole;
    else if ((prepared.requestedNamed === null || prepared.requestedNamed.includes(where)) && grant.graphs.has(where)) {
      paths = grant.hiddenByGraph.get(where);
    } else paths = sets.whole; // the element is removed and reads nothing; named all the same, it counts as named anywhere

    if (paths === undefined || paths.size === 0) continue;
    for (const iri of iris) if (paths.has(iri)) throw new GuardError(403, 'hidden_path', 'the query uses a hidden path');
  }
}

/** A named graph's hidden text as the active graph, per grant. */
function hiddenInOf(grant: Grant): (graph: string) => HiddenText | undefined {
  return (graph) => {
    const paths = grant.graphs.has(graph) ? grant.hiddenByGraph.get(graph) : undefined;
    return paths === undefined || paths.size === 0 ? undefined : hiddenTextOf(paths);
  };
}

/** The written hidden list, remembered per hidden set (the cached unions above come back as the same object). */
const textBySet = new WeakMap<ReadonlySet<string>, HiddenText>();

function hiddenTextOf(paths: ReadonlySet<string>): HiddenText {
  let text = textBySet.get(paths);
  if (text === undefined) {
    text = hiddenText([...paths].sort());
    textBySet.set(paths, text);
  }
  return text;
}

/**
 * FROM NAMED: the effective named graphs, then `added` (default graphs the
 * per-graph checks read, granted); the reserved empty graph when there are
 * none at all.
 */
function namedClauses(named: readonly string[], added: readonly string[], granted: ReadonlySet<string>): string {
  if (added.length === 0) return clauses('FROM NAMED <', named, granted);
  let out = '';
  for (const graph of named) if (granted.has(graph)) out += 'FROM NAMED <' + graph + '>\n';
  for (const graph of added) out += 'FROM NAMED <' + graph + '>\n';
  return out;
}

/** The clauses of a dataset text that name a graph other than the reserved empty one. */
function countClauses(text: string): number {
  let count = 0;
  for (let at = text.indexOf('FROM '); at >= 0; at = text.indexOf('FROM ', at + 5)) count += 1;
  let empty = 0;
  for (let at = text.indexOf(EMPTY_CLAUSE_END); at >= 0; at = text.indexOf(EMPTY_CLAUSE_END, at + 1)) empty += 1;
  return count - empty;
}

const EMPTY_CLAUSE_END = '<' + EMPTY_GRAPH + '>\n';

function clauses(prefix: string, graphs: readonly string[], granted: ReadonlySet<string>): string {
  let out = '';
  for (const graph of graphs) if (granted.has(graph)) out += prefix + graph + '>\n';
  return out === '' ? prefix + EMPTY_GRAPH + '>\n' : out;
}
