// Fills a prepared query's slots for one caller: set operations on graph and predicate IRIs and string joins, nothing else.

import { GuardError } from '../guard-error.js';
import { NOT_IN_IRI } from '../iri.js';
import { sortedGraphs } from '../policy/grant.js';
import type { Columns, Grant, GraphView } from '../policy/policy-set.js';
import { EMPTY_GRAPH } from '../vocabulary.js';
import { encodeFormPiece, joinQueryForm } from '../url-encoded-form.js';
import type { Plan, PlanDataset } from './plan.js';
import { IN_ANY_NAMED_GRAPH, IN_DEFAULT_GRAPH, IN_WHOLE_DATASET } from './mark-hidden-paths.js';
import type { GraphVariableSlot, HiddenFilterSlot, PreparedQuery, RowFilterSlot, TemplatePart, ZeroLengthSlot } from './prepared-query.js';
import {
  planRowFold,
  writeRowFilter,
  type MergedGraph,
  type RowCheckForm,
  type RowContext,
  type RowFold,
  type RowTriple,
  type RowValues,
} from './write-row-filter.js';
import { writeZeroLengthRowFilter } from './write-zero-length-row-filter.js';
import { existsFilter } from './exists-test.js';
import { blankNodePrefix, relabelBlankNodes } from './relabel-blank-nodes.js';

/** The caller's hidden predicates, written the three ways the slots need them. */
export interface HiddenText {
  /** For `NOT IN (…)`: `<h1>, <h2>`. */
  readonly list: string;
  /** Forward members to append to a negated set: `|<h1>|<h2>`. */
  readonly forward: string;
  /** Inverse members to append to a negated set: `|^<h1>|^<h2>`. */
  readonly inverse: string;
  /**
   * Only for a default graph merging graphs that hide different sets (the lists above are their
   * union): the default graphs hiding less, each with its own list (docs/design/sparql.md, "The default
   * graph is redacted per graph").
   */
  readonly graphs?: readonly HiddenInGraph[];
  /** With `graphs`: the default graphs that hide something, each with its own list. */
  readonly hiding?: readonly HiddenInGraph[];
  /** True when `list` holds the predicates the graph shows (`guard:readPath`): filters keep `IN (list)`. */
  readonly allow?: boolean;
  /** With `graphs`: every default graph is listed there, and `list` is no union to test first (some graph lists columns). */
  readonly noUnion?: boolean;
  /**
   * The row rules of the active graph: hidden-filter slots then write nothing and row-filter slots the
   * whole condition; the lists above are the columns of the policies without a row rule, for paths.
   */
  readonly rows?: RowContext;
}

/** A default graph that hides less than the union of the default graphs, and its own hidden list. */
export interface HiddenInGraph {
  readonly iri: string;
  readonly list: string;
  /** True when `list` holds the predicates the graph shows. */
  readonly allow?: boolean;
}

/** What a graph whose every policy has a row rule shows to a path (which cannot check rows): nothing. */
const NOTHING_SHOWN: Columns = Object.freeze({ allow: true, set: new Set<string>() });

export const PATH_OVER_ROWS =
  'a property path cannot be held to row rules (guard:rowPattern): every policy granting the graph it reads restricts rows; write each step as a triple pattern';
export const VARIABLE_PATH_OVER_ROWS =
  'a path of variable length (*, +, ?) cannot be held to row rules (guard:rowPattern): every policy granting the graph it reads restricts rows; write a fixed number of steps as triple patterns';

const NO_CONSTANTS: readonly string[] = [];

export const BLANK_ZERO_LENGTH = 'a zero-length path between blank nodes cannot be checked for hidden paths (name a variable at one end)';

/**
 * The LIMIT that ends the query: the smaller of the query's own and the caller's result cap
 * (docs/design/policy.md, "Limits per caller"); nothing when neither is set.
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
 * Fills a prepared query for one caller (docs/design/sparql.md#rewriting): effective
 * graphs = requested (or all granted, sorted) ∩ granted, written as FROM and
 * FROM NAMED (the reserved EMPTY_GRAPH for an empty set or a part the query
 * cannot read); GRAPH slots kept or removed; hidden-path slots filled with the
 * hidden set of the graph they are read in (docs/design/sparql.md, "Hidden sets are
 * per graph"). A predicate named where it is hidden is refused (403).
 */
export function applyGrant(
  cached: PreparedQuery,
  grant: Grant,
  constants: readonly string[] = NO_CONSTANTS,
  values?: RowValues,
  rowChecks: RowCheckForm = 'join',
): Plan {
  let prepared = cached;
  const granted = grant.graphs;
  const all = prepared.requestedDefault === null || prepared.requestedNamed === null ? sortedGraphs(grant) : undefined;
  const defaults = prepared.requestedDefault ?? all ?? [];
  const named = prepared.requestedNamed ?? all ?? [];
  let hidden: HiddenText | undefined;
  let hiddenIn: Filling['hiddenIn'] = NOTHING_HIDDEN;
  /** Default graphs the per-graph checks read with GRAPH that are no effective named graph. */
  let added: readonly string[] = [];
  const views = grant.views !== undefined && grant.views.size > 0 ? grant.views : undefined;
  if (grant.hiddenByGraph.size > 0 || views !== undefined) {
    const sets = grant.hiddenByGraph.size > 0 ? hiddenSets(prepared, grant, defaults, named) : undefined;
    if (sets !== undefined) refuseNamedHidden(prepared, grant, sets);
    const viewed = views === undefined ? false : refuseNamedUnseen(prepared, grant, views, defaults, named);
    // Rows or columns restrict a graph the query reads: its fixed-length paths are filled as triple patterns and its blank nodes as variables,
    // each step held to the view (expandFixedPaths). Decided per request, never by the cached template.
    if (viewed && prepared.expanded !== undefined) {
      if (prepared.expanded instanceof GuardError) throw prepared.expanded;
      prepared = prepared.expanded;
    }
    if (sets !== undefined || viewed) {
      if (prepared.blankZeroLength) throw new GuardError(403, 'forbidden', BLANK_ZERO_LENGTH);
      if (prepared.hasHiddenSlots || prepared.hasRowSlots) {
        /** Graphs the checks read with GRAPH: per-graph checks of the default graph, row rules' data. */
        const reads = new Set<string>();
        // A query that reads no default graph has no slot outside GRAPH to fill for it.
        const effective = prepared.reach.readsDefault ? [...new Set(defaults)].filter((iri) => grant.graphs.has(iri)) : [];
        if (views !== undefined && effective.some((iri) => views.has(iri))) {
          hidden = defaultViewText(grant, views, effective, reads);
        } else if (sets !== undefined && sets.inDefault.size > 0 && prepared.reach.readsDefault) {
          hidden = hiddenTextOf(sets.inDefault);
          const { graphs, hiding } = perGraphLists(grant, defaults, sets.inDefault);
          if (graphs.length > 0) {
            hidden = { ...hidden, graphs, hiding };
            for (const { iri } of [...graphs, ...hiding]) reads.add(iri);
          }
        }
        if (views !== undefined && prepared.hasRowSlots && prepared.reach.readsNamed) {
          for (const iri of named) {
            const view = grant.graphs.has(iri) ? views.get(iri) : undefined;
            if (view !== undefined) addRuleData(view, iri, reads);
          }
        }
        // FROM NAMED lists the effective named graphs only for a query that reads them: granted ones (datasetOf), so a
        // rule's data graph the query names in GRAPH, FROM NAMED or named-graph-uri (not granted) is still added.
        const listed = prepared.reach.readsNamed ? reachableNamed(prepared, named).filter((iri) => granted.has(iri)) : [];
        added = [...reads].filter((iri) => !listed.includes(iri));
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
    ...(values !== undefined && { values }),
    rowChecks,
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
      pieces.push(template[i]!);
    } else if (part.kind === 'dataset') {
      query += dataset.text;
      pieces.push(dataset.encoded);
    } else {
      if (part.kind === 'row-filter' && part.opens) openGroup(parts, part, filling, hidden);
      const text = fillPart(part, filling, hidden);
      query += text;
      pieces.push(text);
    }
  }
  const cap = grant.limits?.resultLimit;
  const limit = limitClause(prepared.limit, cap);
  if (limit !== '') {
    query += limit;
    pieces.push(limit);
  }
  const own = prepared.limit.kind === 'outer' ? prepared.limit.limit : undefined;
  const limitedTo = prepared.limit.kind === 'outer' && cap !== undefined && (own === undefined || cap < own) ? cap : undefined;
  const existsBesideNegation = prepared.negates && checksWithExists.has(filling);
  return new FilledPlan(
    query,
    joinFormParts(pieces),
    prepared.form,
    dataset.graphs,
    prepared.defaultAccept,
    dataset,
    limitedTo,
    existsBesideNegation,
    prepared.existsInProjection,
  );
}

/** A Plan whose form body is joined when first read (by tests and tools); a class, so no closure keeps applyGrant's context. */
class FilledPlan implements Plan {
  readonly formBytes: number;
  shape: string | undefined = undefined;
  #formBody: Buffer | undefined;

  constructor(
    readonly query: string,
    readonly formParts: readonly Buffer[],
    readonly form: Plan['form'],
    readonly datasetGraphs: number,
    readonly defaultAccept: Plan['defaultAccept'],
    readonly dataset: PlanDataset,
    readonly limitedTo: number | undefined,
    readonly existsBesideNegation: boolean,
    readonly existsInProjection: boolean,
  ) {
    this.formBytes = formParts.reduce((bytes, part) => bytes + part.length, 0);
  }

  get formBody(): Buffer {
    return (this.#formBody ??= this.formParts.length === 1 ? this.formParts[0]! : Buffer.concat(this.formParts));
  }
}

/** From this size an encoded piece (a grant's dataset) is sent as its own part rather than copied into the body. */
const OWN_PART_BYTES = 16 * 1024;

/** The form body in parts: small pieces joined (the first with `query=`), each large Buffer piece as it is, not copied per request. */
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

/**
 * A template's strings encoded for the form body (undefined for its slots), made on its first plan and
 * kept as long as the template (the plan cache's byte bound counts two bytes per character of its text).
 */
const encodedTemplates = new WeakMap<readonly TemplatePart[], readonly (Buffer | undefined)[]>();

function encodedTemplateOf(parts: readonly TemplatePart[]): readonly (Buffer | undefined)[] {
  let pieces = encodedTemplates.get(parts);
  if (pieces === undefined) {
    pieces = parts.map((part) => (typeof part === 'string' ? encodeFormPiece(part) : undefined));
    encodedTemplates.set(parts, pieces);
  }
  return pieces;
}

/** A request's FROM / FROM NAMED clauses, their graphs, and their form encoding. */
interface Dataset extends PlanDataset {
  readonly text: string;
  readonly encoded: Buffer;
  /** Clauses naming a granted graph (Plan.datasetGraphs). */
  readonly graphs: number;
}

/** The datasets of queries that request none, per grant and per reach (readsDefault + 2 x readsNamed): written once. */
const allGrantedDatasets = new WeakMap<Grant, (Dataset | undefined)[]>();

const NO_GRAPHS: readonly string[] = [];

/**
 * FROM and FROM NAMED for the parts of the dataset the query reads (PreparedQuery.reach), the reserved
 * empty graph for the others; `added` (the per-graph checks' graphs) goes into FROM NAMED either way.
 */
function datasetOf(
  grant: Grant,
  prepared: PreparedQuery,
  defaults: readonly string[],
  named: readonly string[],
  added: readonly string[],
): Dataset {
  const { readsDefault, readsNamed, namedIris } = prepared.reach;
  // With all granted graphs named nothing is added; without FROM NAMED, what is added varies per query.
  // A query whose GRAPH elements all name IRIs lists only those: its dataset is its own.
  const allGranted =
    prepared.requestedDefault === null && prepared.requestedNamed === null && added.length === 0 && namedIris === undefined;
  const index = (readsDefault ? 1 : 0) + (readsNamed ? 2 : 0);
  let byReach = allGranted ? allGrantedDatasets.get(grant) : undefined;
  let dataset = byReach?.[index];
  if (dataset === undefined) {
    const fromDefault = readsDefault ? defaults.filter((graph) => grant.graphs.has(graph)) : NO_GRAPHS;
    // `added` is what the checks read and the granted named graphs below do not list (a rule's data graph need not be granted).
    const fromNamed = [...(readsNamed ? reachableNamed(prepared, named).filter((graph) => grant.graphs.has(graph)) : NO_GRAPHS), ...added];
    const text = clauses('FROM <', fromDefault) + clauses('FROM NAMED <', fromNamed);
    dataset = {
      text,
      encoded: encodeFormPiece(text),
      graphs: fromDefault.length + fromNamed.length,
      default: fromDefault,
      named: fromNamed,
    };
    if (allGranted) {
      if (byReach === undefined) allGrantedDatasets.set(grant, (byReach = []));
      byReach[index] = dataset;
    }
  }
  return dataset;
}

/** The effective named graphs the query's GRAPH elements can read: those they name, when all name IRIs (DatasetReach.namedIris). */
function reachableNamed(prepared: PreparedQuery, named: readonly string[]): readonly string[] {
  const iris = prepared.reach.namedIris;
  return iris === undefined ? named : iris.filter((graph) => prepared.requestedNamed?.includes(graph) ?? true);
}

/** How a template is filled: for one request, or for one of the planner's checks. */
export interface Filling {
  readonly dataset: string;
  /** Decides GRAPH slots: the granted set, or true / false (all kept or all removed, for checks). */
  readonly keep: ReadonlySet<string> | boolean;
  /** The candidate named graphs a `GRAPH ?var` slot ranges over (the requested ones, or all granted; those `keep` keeps). */
  readonly named: readonly string[];
  /** True when `keep` keeps every graph of `named` (all granted ones, unrequested). */
  readonly namedAllKept?: boolean;
  /** The hidden predicates of a named graph as the active graph, written; undefined: nothing hidden there. */
  readonly hiddenIn: (graph: string) => HiddenText | undefined;
  /** The constant slots' values (the request's constants as generated). */
  readonly constants: readonly string[];
  /** True when FROM NAMED also lists default graphs for the per-graph checks: `GRAPH ?var` is then written per graph. */
  readonly added?: boolean;
  /** The caller's values for row rules (`?agent`, `?group`, `?claim_NAME`); absent: a rule reading one matches nothing. */
  readonly values?: RowValues;
  /** How row rules are checked (config `rowChecks`); absent: `join`. */
  readonly rowChecks?: RowCheckForm;
}

const NOTHING_HIDDEN = (): undefined => undefined;

/** Writes the template; `hidden` fills the hidden-path slots of the active graph (undefined: nothing hidden there). */
export function fillTemplate(parts: readonly TemplatePart[], filling: Filling, hidden: HiddenText | undefined): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else {
      // A group's first row filter starts its written checks afresh (a GRAPH ?var body is filled once per graph).
      if (part.kind === 'row-filter' && part.opens) openGroup(parts, part, filling, hidden);
      out += fillPart(part, filling, hidden);
    }
  }
  return out;
}

/** Starts a group's row checks: none written yet, and its constant subjects folded where it can (planRowFold). */
function openGroup(parts: readonly TemplatePart[], first: RowFilterSlot, filling: Filling, hidden: HiddenText | undefined): void {
  let fold: RowFold | undefined;
  const rows = hidden?.rows;
  const slots = rows?.kind === 'one' && (filling.rowChecks ?? 'join') === 'join' ? foldableGroups(parts).get(first.group) : undefined;
  if (slots !== undefined && rows !== undefined) {
    fold = planRowFold(
      slots.map((slot) => filledTriples(slot, filling)),
      rows,
      filling.values,
      first.prefix,
      'join',
    );
  }
  groupChecks(filling).set(first.group, { written: new Set(), fold });
}

/** Per template, the row filter slots of each group that names a constant subject and a variable one (in text order). */
const foldable = new WeakMap<readonly TemplatePart[], ReadonlyMap<number, readonly RowFilterSlot[]>>();

function foldableGroups(parts: readonly TemplatePart[]): ReadonlyMap<number, readonly RowFilterSlot[]> {
  let groups = foldable.get(parts);
  if (groups === undefined) {
    const all = new Map<number, RowFilterSlot[]>();
    for (const part of parts) {
      if (typeof part === 'string' || part.kind !== 'row-filter') continue;
      let slots = all.get(part.group);
      if (slots === undefined) all.set(part.group, (slots = []));
      slots.push(part);
    }
    const variable = (subject: readonly TemplatePart[]): boolean =>
      subject.length === 1 && typeof subject[0] === 'string' && subject[0].startsWith('?');
    for (const [group, slots] of all) {
      const subjects = slots.flatMap((slot) => slot.triples.flatMap(({ subject }) => (subject === null ? [] : [variable(subject)])));
      if (!subjects.includes(true) || !subjects.includes(false)) all.delete(group);
    }
    foldable.set(parts, (groups = all));
  }
  return groups;
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
  if (part.kind === 'graph-variable') return fillGraphVariable(part, filling);
  if (hidden === undefined) return part.kind === 'negated-set' ? part.plain : '';
  if (part.kind === 'row-filter') return hidden.rows === undefined ? '' : fillRowFilter(part, filling, hidden, hidden.rows);
  if (part.kind === 'hidden-filter') {
    // Under row rules the row filter holds every triple pattern to the view, columns included.
    if (hidden.rows !== undefined) return '';
    if (hidden.graphs !== undefined) {
      // Its NOT EXISTS beside a caller's negation, as a row check's EXISTS: Plan.existsBesideNegation.
      checksWithExists.add(filling);
      return perGraphFilters(part, hidden, filling);
    }
    let out = '';
    for (const variable of part.variables) out += ` FILTER(${variable} ${hidden.allow === true ? 'IN' : 'NOT IN'} (${hidden.list}))`;
    return out;
  }
  if (part.kind === 'zero-length') {
    let out = '';
    // Under row rules an end must be a node of the view, rows included, not only of the open columns.
    if (hidden.rows !== undefined) {
      for (const end of part.ends) out += writeZeroLengthRowFilter(part, end, hidden.rows, filling.values, filling.rowChecks ?? 'join');
      return out;
    }
    for (const end of part.ends) {
      out +=
        hidden.graphs === undefined
          ? zeroLengthFilter(part, end, hidden.list, hidden.allow)
          : zeroLengthPerGraph(part, end, hidden.noUnion === true ? undefined : hidden.list, hidden.graphs);
    }
    return out;
  }
  // Under row rules some policy shows predicates beyond the open columns for its rows only (GraphView.rows):
  // a negated set may step over one, and a step inside a path cannot be held to a row.
  if (hidden.allow === true || hidden.rows !== undefined)
    throw new GuardError(
      403,
      'forbidden',
      'a negated property set cannot be held to a list of columns (guard:readPath) or to row rules; name the predicates it may step over',
    );
  // A negated set steps over triples of the merge; which graph a step came from cannot be asked inside a path.
  if (hidden.graphs !== undefined)
    throw new GuardError(
      403,
      'forbidden',
      'a negated property set cannot be checked for hidden paths where the default graph merges graphs that hide different predicates (read one of them: FROM <g> or GRAPH <g>)',
    );
  return '!(' + part.members + (part.forward ? hidden.forward : '') + (part.inverse ? hidden.inverse : '') + ')';
}

/**
 * Writes a `GRAPH ?var` slot: one branch per effective named graph for a `*` or `+` path (Virtuoso walks
 * those across graphs) or when the graphs hide different sets and the body has slots of its own (Oxigraph
 * evaluates a sub-select over all named graphs at once); else the element as written, for the shared set; with
 * no effective named graph, the empty group.
 */
function fillGraphVariable(part: GraphVariableSlot, filling: Filling): string {
  const { keep, named, hiddenIn, added = false } = filling;
  const graphs =
    filling.namedAllKept === true || keep === true ? named : named.filter((graph) => (typeof keep === 'boolean' ? keep : keep.has(graph)));
  const first = graphs[0];
  // No named graph: no solution. Written as GRAPH ?var over FROM NAMED of the reserved empty graph, a body that
  // matches without triples (`{}`, BIND, VALUES, a zero-length path, COUNT(*)) would bind ?var to that graph.
  if (first === undefined) return part.removed;
  const shared = hiddenIn(first);
  const sharedKey = keyOf(shared, first);
  const mixed = part.hiddenSlots && graphs.some((graph) => keyOf(hiddenIn(graph), graph) !== sharedKey);
  if (!part.perGraph && !mixed && !added) return 'GRAPH ' + part.variable + ' ' + fillTemplate(part.body, filling, shared);
  // The body depends on the graph only through its hidden set: written once per set.
  const bodies = new Map<string, string>();
  let branches = '';
  for (const [index, graph] of graphs.entries()) {
    const text = hiddenIn(graph);
    const key = keyOf(text, graph);
    let body = bodies.get(key);
    if (body === undefined) bodies.set(key, (body = fillTemplate(part.body, filling, text)));
    // Each branch is a BGP of its own: a blank node label of the body in two branches is refused by every store (§4.1.4).
    const labelled = relabelBlankNodes(body, blankNodePrefix(index + 1));
    const bound = part.bind ? ' BIND(<' + graph + '> AS ' + part.variable + ')' : ' VALUES ' + part.variable + ' { <' + graph + '> }';
    branches += (branches === '' ? '{ GRAPH <' : '\nUNION\n{ GRAPH <') + graph + '> ' + labelled + bound + ' }';
  }
  return branches;
}

/** What decides a body's text in the active graph: its hidden or shown list, or the graph itself under row rules. */
function keyOf(text: HiddenText | undefined, graph: string): string {
  if (text === undefined) return '';
  if (text.rows !== undefined) return 'rows ' + graph;
  return (text.allow === true ? '+' : '-') + text.list;
}

/** The filter a ZeroLengthSlot writes for one end: it must be a node of a visible triple of the active graph. */
export function zeroLengthFilter(slot: ZeroLengthSlot, end: string, list: string, allow = false): string {
  const { subject, predicate, object } = slot;
  return existsFilter(
    `{ { ${end} ${predicate} ${object} } UNION { ${subject} ${predicate} ${end} } FILTER(${predicate} ${allow ? 'IN' : 'NOT IN'} (${list})) }`,
  );
}

/**
 * A RowFilterSlot under row rules: its paths checked (refused where every policy restricts rows; their
 * IRIs must be columns of a policy without a row rule), then writeRowFilter for its triple patterns.
 */
function fillRowFilter(part: RowFilterSlot, filling: Filling, hidden: HiddenText, rows: RowContext): string {
  if (part.paths.length > 0) {
    const opens =
      rows.kind === 'one'
        ? [rows.view.open]
        : rows.graphs.map(({ view, hidden: paths }) =>
            view === undefined ? { allow: false, set: paths ?? new Set<string>() } : view.open,
          );
    for (const path of part.paths) {
      if (opens.some((open) => open === undefined))
        throw new GuardError(403, 'forbidden', path.variable ? VARIABLE_PATH_OVER_ROWS : PATH_OVER_ROWS);
      for (const open of opens as Columns[]) {
        if (path.members.some((iri) => open.allow !== open.set.has(iri)))
          throw new GuardError(403, 'hidden_path', 'the query uses a hidden path');
      }
    }
  }
  void hidden;
  if (part.triples.length === 0) return '';
  const checks = groupChecks(filling);
  let group = checks.get(part.group);
  if (group === undefined) checks.set(part.group, (group = { written: new Set(), fold: undefined }));
  const text = writeRowFilter(
    filledTriples(part, filling),
    rows,
    filling.values,
    part.prefix,
    filling.rowChecks ?? 'join',
    group.written,
    group.fold,
  );
  // In one graph, an EXISTS is a row rule's test in a filter (writeRowFilter's viewCondition): Plan.existsBesideNegation.
  if (rows.kind === 'one' && text.includes('NOT EXISTS')) checksWithExists.add(filling);
  return text;
}

/**
 * The fillings with a check that holds an EXISTS in a filter: a row check in one graph whose rule is a filter
 * (not a join), or a hidden-path check of a default graph merging graphs that hide different sets.
 */
const checksWithExists = new WeakSet<Filling>();

/** A row filter slot's triple patterns with their constant slots filled. */
function filledTriples(part: RowFilterSlot, filling: Filling): RowTriple[] {
  return part.triples.map(({ subject, predicate, iri, object }) => ({
    subject: subject === null ? null : fillTemplate(subject, filling, undefined),
    predicate,
    iri,
    object: object === null ? null : fillTemplate(object, filling, undefined),
  }));
}

/** A group graph pattern's row checks in one filling: those written so far, and its fold. */
interface GroupChecks {
  readonly written: Set<string>;
  readonly fold: RowFold | undefined;
}

/** Per filling, per group graph pattern (RowFilterSlot.group), its row checks. */
const checksOfGroups = new WeakMap<Filling, Map<number, GroupChecks>>();

function groupChecks(filling: Filling): Map<number, GroupChecks> {
  let checks = checksOfGroups.get(filling);
  if (checks === undefined) checksOfGroups.set(filling, (checks = new Map()));
  return checks;
}

/**
 * The filters of a HiddenFilterSlot in a default graph whose graphs hide different sets: per `s ?p o`,
 * kept when ?p is hidden in no default graph, or when no graph hiding ?p holds the triple (a graph
 * showing it then does: docs/design/sparql.md, "The default graph is redacted per graph").
 */
function perGraphFilters(part: HiddenFilterSlot, hidden: HiddenText, filling: Filling): string {
  if (part.triples === null)
    throw new GuardError(
      403,
      'forbidden',
      'a blank node beside a variable predicate cannot be checked for hidden paths where the default graph merges graphs that hide different predicates (write a variable)',
    );
  const { list, hiding = [] } = hidden;
  let out = '';
  const written = new Set<string>();
  for (const triple of part.triples) {
    const { predicate } = triple;
    const pattern = fillTemplate(triple.pattern, filling, undefined);
    if (written.has(pattern)) continue;
    written.add(pattern);
    // Per graph that hides something, a NOT EXISTS of its own with the column test beside it rather than in it
    // (docs/design/sparql.md, "The hidden-path checks of such a default graph"). The triple is in the merged
    // default graph, so once no graph hiding ?p holds it, a graph showing ?p does.
    const held = (iri: string) => `{ GRAPH <${iri}> { ${pattern} } }`;
    // Past `?p NOT IN (list)`, a graph hiding the whole union hides ?p.
    const hidesAll = (own: string, allow: boolean) => !allow && own === list && hidden.noUnion !== true;
    const checks = hiding
      .map(({ iri, list: own, allow = false }) =>
        hidesAll(own, allow) ? `NOT EXISTS ${held(iri)}` : `(${predicate} ${allow ? 'IN' : 'NOT IN'} (${own}) || NOT EXISTS ${held(iri)})`,
      )
      .join(' && ');
    out += hidden.noUnion === true ? ` FILTER(${checks})` : ` FILTER(${predicate} NOT IN (${list}) || (${checks}))`;
  }
  return out;
}

/**
 * A ZeroLengthSlot end in a default graph whose graphs hide different sets: a node of a triple visible in one
 * of them (`list`, their union, first: visible everywhere; undefined when every graph is listed in `graphs`).
 */
function zeroLengthPerGraph(slot: ZeroLengthSlot, end: string, list: string | undefined, graphs: readonly HiddenInGraph[]): string {
  const { subject, predicate, object } = slot;
  const node = `{ ${end} ${predicate} ${object} } UNION { ${subject} ${predicate} ${end} }`;
  const branches = list === undefined ? [] : [`{ ${node} FILTER(${predicate} NOT IN (${list})) }`];
  for (const { iri, list: own, allow = false } of graphs) {
    const filter = own === '' && !allow ? '' : ` FILTER(${predicate} ${allow ? 'IN' : 'NOT IN'} (${own}))`;
    branches.push(`{ GRAPH <${iri}> { ${node} }${filter} }`);
  }
  return existsFilter(`{ ${branches.join(' UNION ')} }`);
}

/**
 * Per effective default graph, in dataset order, its own hidden list ('' for none): `graphs`, those
 * that hide less than `union` (their hidden sets' union); `hiding`, those that hide something.
 */
function perGraphLists(grant: Grant, defaults: readonly string[], union: ReadonlySet<string>) {
  const effective = [...new Set(defaults)].filter((iri) => grant.graphs.has(iri));
  const listOf = (iri: string): string => {
    const paths = grant.hiddenByGraph.get(iri);
    return paths === undefined || paths.size === 0 ? '' : hiddenTextOf(paths).list;
  };
  const graphs = effective.filter((iri) => grant.hiddenByGraph.get(iri)?.size !== union.size).map((iri) => ({ iri, list: listOf(iri) }));
  // Only a default graph whose graphs hide different sets needs the graphs that hide something.
  if (graphs.length === 0) return { graphs, hiding: graphs };
  const hiding = effective.map((iri) => ({ iri, list: listOf(iri) })).filter(({ list }) => list !== '');
  return { graphs, hiding };
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

/** The hidden sets of the effective graphs (remembered per grant when all granted ones are), or undefined when none hides anything. */
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

/** Refuses (403) a query naming a predicate hidden where it is read (PreparedQuery.namedIn); a removed GRAPH counts as anywhere. */
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
    if (!grant.graphs.has(graph)) return undefined;
    const view = grant.views?.get(graph);
    if (view !== undefined) return viewText(view, graph);
    const paths = grant.hiddenByGraph.get(graph);
    return paths === undefined || paths.size === 0 ? undefined : hiddenTextOf(paths);
  };
}

/** A graph's text under its view: the columns of its policies without a row rule (nothing for paths when none), and its rows. */
function viewText(view: GraphView, graph: string): HiddenText | undefined {
  const text = columnsText(view.open ?? NOTHING_SHOWN);
  if (view.rows.length === 0) return text;
  return { ...(text ?? hiddenText([])), rows: { kind: 'one', graph, view } };
}

const textByColumns = new WeakMap<Columns, HiddenText | undefined>();

/** The text of some columns: hidden paths as before, a list of shown predicates with `allow`; undefined when all are shown. */
function columnsText(columns: Columns): HiddenText | undefined {
  if (textByColumns.has(columns)) return textByColumns.get(columns);
  const text =
    !columns.allow && columns.set.size === 0
      ? undefined
      : { ...hiddenText([...columns.set].sort()), ...(columns.allow && { allow: true }) };
  textByColumns.set(columns, text);
  return text;
}

/** The columns of a graph for paths and per-graph column checks: its view's open columns, else its hidden paths. */
function columnsIn(grant: Grant, graph: string): Columns {
  const view = grant.views?.get(graph);
  if (view !== undefined) return view.open ?? NOTHING_SHOWN;
  return { allow: false, set: grant.hiddenByGraph.get(graph) ?? new Set<string>() };
}

/** The row rules' data graphs of a view read in `graph` (the graph itself for a rule without guard:rowData). */
function addRuleData(view: GraphView, graph: string, reads: Set<string>): void {
  for (const { rule } of view.rows) for (const iri of rule.data.length > 0 ? rule.data : [graph]) reads.add(iri);
}

/**
 * The default graph's text when one of its graphs has a view: that graph's own text when it is the only one;
 * for several, one shared text when they show the same columns and none has rows, else per-graph checks
 * (docs/design/sparql.md, "Rows and columns"). Adds to `reads` the graphs the checks name.
 */
function defaultViewText(
  grant: Grant,
  views: ReadonlyMap<string, GraphView>,
  effective: readonly string[],
  reads: Set<string>,
): HiddenText | undefined {
  const [only] = effective;
  if (effective.length === 1 && only !== undefined) {
    const view = views.get(only);
    const text = view === undefined ? hiddenInOf(grant)(only) : viewText(view, only);
    if (text?.rows !== undefined && view !== undefined) {
      addRuleData(view, only, reads);
    }
    return text;
  }
  const columns = effective.map((iri) => columnsIn(grant, iri));
  const rowed = effective.some((iri) => (views.get(iri)?.rows.length ?? 0) > 0);
  const [first] = columns;
  if (!rowed && first !== undefined && columns.every((other) => sameColumns(other, first))) return columnsText(first);
  const graphs: HiddenInGraph[] = effective.map((iri, index) => {
    const own = columns[index] ?? NOTHING_SHOWN;
    return { iri, list: hiddenText([...own.set].sort()).list, ...(own.allow && { allow: true }) };
  });
  for (const iri of effective) reads.add(iri);
  const hiding = graphs.filter(({ list, allow }) => allow === true || list !== '');
  const text: HiddenText = { ...hiddenText([]), graphs, hiding, noUnion: true };
  if (!rowed) return text;
  const merged: MergedGraph[] = effective.map((iri) => {
    const view = views.get(iri);
    if (view !== undefined) addRuleData(view, iri, reads);
    return { iri, view, hidden: grant.hiddenByGraph.get(iri) };
  });
  return { ...text, rows: { kind: 'merge', graphs: merged } };
}

function sameColumns(a: Columns, b: Columns): boolean {
  return a.allow === b.allow && a.set.size === b.set.size && [...a.set].every((iri) => b.set.has(iri));
}

/**
 * Refuses (403) a query naming a predicate that no policy granting a graph it is read in shows there, as
 * refuseNamedHidden does for hidden paths (docs/policies.md, "Rows and columns"). True when some
 * effective graph has a view (the query must then be filled for it).
 */
function refuseNamedUnseen(
  prepared: PreparedQuery,
  grant: Grant,
  views: ReadonlyMap<string, GraphView>,
  defaults: readonly string[],
  named: readonly string[],
): boolean {
  const effectiveDefault = defaults.filter((iri) => views.has(iri) && grant.graphs.has(iri));
  const effectiveNamed = named.filter((iri) => views.has(iri) && grant.graphs.has(iri));
  if (effectiveDefault.length === 0 && effectiveNamed.length === 0) return false;
  for (const [where, iris] of prepared.namedIn) {
    let graphs: readonly string[];
    if (where === IN_DEFAULT_GRAPH) graphs = effectiveDefault;
    else if (where === IN_ANY_NAMED_GRAPH) graphs = effectiveNamed;
    else if (
      where !== IN_WHOLE_DATASET &&
      (prepared.requestedNamed === null || prepared.requestedNamed.includes(where)) &&
      grant.graphs.has(where)
    ) {
      graphs = views.has(where) ? [where] : [];
    } else graphs = [...effectiveDefault, ...effectiveNamed]; // the whole dataset, or a removed GRAPH (named anywhere)
    for (const graph of graphs) {
      const view = views.get(graph);
      if (view === undefined) continue;
      for (const iri of iris) {
        const shown =
          (view.open !== undefined && view.open.allow === view.open.set.has(iri)) ||
          view.rows.some(({ columns }) => columns.allow === columns.set.has(iri));
        if (!shown) throw new GuardError(403, 'hidden_path', 'the query uses a hidden path');
      }
    }
  }
  return true;
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

/** A clause per graph, or one of the reserved empty graph when there is none. */
function clauses(prefix: string, graphs: readonly string[]): string {
  let out = '';
  for (const graph of graphs) out += prefix + graph + '>\n';
  return out === '' ? prefix + EMPTY_GRAPH + '>\n' : out;
}
