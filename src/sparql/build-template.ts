// Serialises a checked query tree into template parts (text and per-request slots) and proves every filling re-parses to the intended tree.

import type sparqljs from 'sparqljs';
import { GuardError } from '../guard-error.js';
import { fillTemplate, hiddenText, zeroLengthFilter, type Filling, type HiddenText } from './apply-grant.js';
import { EMPTY_GRAPH, reservedIri } from '../vocabulary.js';
import { findGraphsToBind } from './find-graphs-to-bind.js';
import { findTransitiveGraphs } from './find-transitive-graphs.js';
import { freshVariableNamer, freshVariablePrefix } from './fresh-variable-namer.js';
import { emptyGroup, emptyLiteralSubjects } from './empty-group.js';
import { inScopeVariables } from './in-scope-variables.js';
import { markHiddenPaths, type HiddenPathMarks } from './mark-hidden-paths.js';
import { parseQuery } from './parse-query.js';
import { generateWithHooks } from './sparqljs-internals.js';
import type {
  GraphSlot,
  GraphVariableSlot,
  HiddenFilterSlot,
  NegatedSetSlot,
  RowFilterSlot,
  TemplatePart,
  ZeroLengthSlot,
} from './prepared-query.js';
import type { PathNode, Term } from './tree-shapes.js';
import type { RowContext } from './write-row-filter.js';
import { blankNodePrefix, relabelBlankNodeTerms } from './relabel-blank-nodes.js';

/** A query's template, and the hidden-path marks of the tree it was written from. */
export interface Template {
  readonly parts: TemplatePart[];
  readonly marks: HiddenPathMarks;
  /** True when parts hold a slot for hidden predicates. */
  readonly hasHiddenSlots: boolean;
  /** True when parts hold a row filter slot. */
  readonly hasRowSlots: boolean;
}

/** The root query object, with the fields the template step rewrites. */
export interface LooseQuery {
  base?: string;
  prefixes: Record<string, string>;
  queryType: string;
  from?: { default: unknown[]; named: unknown[] };
  template?: unknown[];
  where?: unknown[];
}

/** Characters that may mark slots in generated text; the first one absent from the query is used. */
const MARKER_CANDIDATES = ['\u0000', '\uE000', '\uE001', '\uE002', '\uE003', '\uFDD0', '\uFDD1'];

/** Stands in for a caller's hidden predicates while the template is checked; never sent anywhere. */
const HIDDEN_SAMPLE = reservedIri('hidden-check');

/** Stand in for named graphs while GRAPH ?var expansions are checked (two, so the UNION form is checked); never sent anywhere. */
const NAMED_SAMPLES = [reservedIri('graph-check-1'), reservedIri('graph-check-2')];

/** Row rules that stand in for a caller's while the template is checked: one graph, and a default graph merging two. */
const ROW_SAMPLES: readonly RowContext[] = (() => {
  const sample = { termType: 'NamedNode', value: HIDDEN_SAMPLE } as const;
  const rule = {
    triples: [{ subject: { termType: 'Variable', value: 'this' }, predicate: sample, object: sample }] as const,
    values: [],
    data: [],
    source: '',
  };
  const view = { open: undefined, rows: [{ policy: HIDDEN_SAMPLE, columns: { allow: false, set: new Set<string>() }, rule }] };
  const [first = '', second = ''] = NAMED_SAMPLES;
  return [
    { kind: 'one', graph: first, view },
    {
      kind: 'merge',
      graphs: [
        { iri: first, view, hidden: undefined },
        { iri: second, view: undefined, hidden: new Set([HIDDEN_SAMPLE]) },
      ],
    },
  ];
})();

/** Term types a per-graph check can write as they are. */
const NAMEABLE: ReadonlySet<string> = new Set(['Variable', 'NamedNode', 'Literal']);

/** A slot written right after a BGP, inside its group. */
type AfterSlot = HiddenFilterSlot | ZeroLengthSlot | RowFilterSlot;

type LeafSlot = AfterSlot | NegatedSetSlot;

/** A GRAPH element met while generating: its slot but for the text between its markers. */
type PendingGraph = Omit<GraphSlot, 'kept'> | Omit<GraphVariableSlot, 'body' | 'hiddenSlots'>;

/**
 * Serialises with the sparqljs Generator, the dataset position, GRAPH elements, BGPs
 * with variable predicates or zero-length paths and negated property sets wrapped in
 * markers, then cuts the text at the markers; every IRI is written in full. `text` is
 * the query text the tree came from (the marker must not occur in it).
 */
export function buildTemplate(root: LooseQuery, text: string, requestedNamed: readonly string[] | null): Template {
  const marker = MARKER_CANDIDATES.find((candidate) => !text.includes(candidate));
  if (marker === undefined) throw unsafe();
  delete root.base;
  root.prefixes = {};
  root.from = { default: [], named: [] };
  // sparqljs parses `CONSTRUCT {} WHERE {}` without a template and would write it as CONSTRUCT WHERE.
  if (root.queryType === 'CONSTRUCT' && root.template === undefined) root.template = [];
  // …and `CONSTRUCT WHERE {}` with an empty basic graph pattern, which it writes as `{ }` and re-parses as no element.
  const only = root.where?.length === 1 ? (root.where[0] as { type?: unknown; triples?: readonly unknown[] }) : undefined;
  if (root.queryType === 'CONSTRUCT' && only?.type === 'bgp' && only.triples?.length === 0) root.where = [];
  const marks = markHiddenPaths(root as unknown as Record<string, unknown>);
  // After the marks: what such a BGP names is still named (a hidden predicate refused).
  emptyLiteralSubjects(root);
  const fresh = freshVariableNamer(root);
  // The zero-length filters' own variables: names no variable of the query has.
  const visible = { subject: '?' + fresh('visible_s'), predicate: '?' + fresh('visible_p'), object: '?' + fresh('visible_o') };
  const transitive = findTransitiveGraphs(root);
  const toBind = findGraphsToBind(root);
  // The row rules' own variables: written after a prefix no variable of the query starts with.
  const rowPrefix = freshVariablePrefix(root, 'row');

  const groups = groupsOfBgps(root);
  const opened = new Set<number>();
  const graphSlots: PendingGraph[] = [];
  const leafSlots: LeafSlot[] = [];
  /** Per BGP, the slots written after it. */
  const slotsAfter = new Map<object, readonly AfterSlot[]>();
  const generated = generateWithHooks(root, {
    dataset: (keyword) => (keyword === 'FROM ' ? `${marker}D${marker}` : ''),
    graph(pattern, write) {
      const variable = pattern.name.termType === 'Variable';
      if (pattern.name.termType !== 'NamedNode' && !variable) return write.graph(pattern);
      const index = graphSlots.length;
      const name = pattern.name.value;
      // Removing `GRAPH ?var { P }` must keep ?var in scope too.
      const removed = emptyGroup(inScopeVariables(variable ? [pattern] : pattern.patterns));
      graphSlots.push(
        variable
          ? { kind: 'graph-variable', variable: '?' + name, perGraph: transitive.has(pattern), bind: toBind.has(pattern), removed }
          : { kind: 'graph', iri: name, requested: requestedNamed === null || requestedNamed.includes(name), removed },
      );
      // A GRAPH ?var slot keeps only its group `{ P }`; the filling writes `GRAPH ?var` or `GRAPH <g>` per branch.
      const kept = variable ? write.group(pattern) : write.graph(pattern);
      return `${marker}O${index}${marker}` + kept + `${marker}C${index}${marker}`;
    },
    // The filter goes right after the BGP, inside the same braces: the BGP's own group.
    bgp(pattern, write) {
      let out = write.bgp(pattern);
      const after: AfterSlot[] = [];
      const triples = marks.filters.get(pattern);
      if (triples !== undefined) {
        // A blank node (or anything but a variable, IRI or literal) cannot be named in the per-graph check.
        const nameable = triples.every(({ subject, object }) => [subject, object].every((term) => NAMEABLE.has(term.termType)));
        after.push({
          kind: 'hidden-filter',
          variables: [...new Set(triples.map(({ predicate }) => '?' + predicate.value))],
          triples: nameable
            ? triples.map(({ subject, predicate, object }) => ({
                predicate: '?' + predicate.value,
                pattern: [`${write.plainEntity(subject)} ?${predicate.value} ${write.plainEntity(object)}`],
              }))
            : null,
        });
      }
      const ends = marks.zeroLength.get(pattern);
      if (ends !== undefined)
        after.push({ kind: 'zero-length', ends: ends.map((end) => write.plainEntity(end)), ...visible, prefix: rowPrefix });
      const all = marks.triples.get(pattern);
      const paths = marks.paths.get(pattern);
      if (all !== undefined || paths !== undefined) {
        const named = (term: Term): readonly TemplatePart[] | null => (NAMEABLE.has(term.termType) ? [write.plainEntity(term)] : null);
        after.push({
          kind: 'row-filter',
          prefix: rowPrefix,
          triples: (all ?? []).map(({ subject, predicate, object }) => ({
            subject: named(subject),
            predicate: write.plainEntity(predicate),
            iri: predicate.termType === 'NamedNode' ? predicate.value : undefined,
            object: named(object),
          })),
          paths: paths ?? [],
          ...openedGroup(groups, pattern, opened),
        });
      }
      if (after.length > 0) slotsAfter.set(pattern, after);
      for (const slot of after) out += `${marker}L${leafSlots.push(slot) - 1}${marker}`;
      return out;
    },
    entity(value, write) {
      const path = value as Partial<PathNode> | null;
      if (typeof path !== 'object' || path === null || path.type !== 'path' || path.pathType !== '!') return write.plainEntity(value);
      const members = negatedMembers(path as PathNode);
      leafSlots.push({
        kind: 'negated-set',
        plain: write.plainEntity(value),
        members: members.map((member) => write.entity(member)).join('|'),
        forward: members.some((member) => !isInverse(member)),
        inverse: members.some(isInverse),
      });
      return `${marker}L${leafSlots.length - 1}${marker}`;
    },
  });
  const parts = cutAtMarkers(generated, marker, graphSlots, leafSlots);
  const hasHiddenSlots = leafSlots.some((slot) => slot.kind !== 'row-filter');
  const hasRowSlots = leafSlots.some((slot) => slot.kind === 'row-filter');
  verifyTemplate(parts, root, graphSlots.length > 0, hasHiddenSlots ? slotsAfter : undefined, transitive, toBind, hasRowSlots);
  return { parts, marks, hasHiddenSlots, hasRowSlots };
}

/**
 * Per BGP, the group graph pattern it is an element of, numbered: the elements of a query's WHERE, of
 * `{ }`, OPTIONAL, MINUS, GRAPH and SERVICE. A BGP anywhere else (a UNION branch written without
 * braces, say) gets a number of its own, so no check is ever shared outside one group.
 */
function groupsOfBgps(root: unknown): Map<object, number> {
  const groups = new Map<object, number>();
  let next = 0;
  const visit = (value: unknown, group: number | undefined): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, group);
      return;
    }
    if (typeof value !== 'object' || value === null || 'termType' in value) return;
    const node = value as Record<string, unknown>;
    if (node['type'] === 'bgp') {
      groups.set(node, group ?? next++);
      return;
    }
    const grouping = ['group', 'optional', 'minus', 'graph', 'service'].includes(node['type'] as string);
    for (const [key, field] of Object.entries(node)) {
      const members = (grouping && key === 'patterns') || (node['type'] === 'query' && key === 'where');
      visit(field, members ? next++ : undefined);
    }
  };
  visit(root, undefined);
  return groups;
}

/** A row filter slot's group, and whether it is the first of it. */
function openedGroup(groups: ReadonlyMap<object, number>, bgp: object, opened: Set<number>): { group: number; opens: boolean } {
  const group = groups.get(bgp);
  if (group === undefined) throw unsafe();
  const opens = !opened.has(group);
  opened.add(group);
  return { group, opens };
}

/** The members of a negated property set: `!a` has one, `!(a|^b)` an alternative of them (§9.1, [95]-[96]). */
function negatedMembers(path: PathNode): readonly unknown[] {
  const inner = path.items[0] as Partial<PathNode> | undefined;
  return inner?.type === 'path' && inner.pathType === '|' ? (inner.items ?? []) : path.items;
}

function isInverse(member: unknown): boolean {
  const path = member as Partial<PathNode>;
  return path.type === 'path' && path.pathType === '^';
}

function unsafe(): GuardError {
  return new GuardError(400, 'unsafe_rewrite', 'query cannot be rewritten safely');
}

/** True for a hidden-path or row slot (filled with the active graph's hidden set and rules). */
function isLeafSlot(part: TemplatePart): boolean {
  return (
    typeof part !== 'string' &&
    (part.kind === 'hidden-filter' || part.kind === 'negated-set' || part.kind === 'zero-length' || part.kind === 'row-filter')
  );
}

/** Rebuilds the slot tree from the marked text; any unexpected marker layout is a refusal. */
function cutAtMarkers(
  generated: string,
  marker: string,
  graphSlots: readonly PendingGraph[],
  leafSlots: readonly LeafSlot[],
): TemplatePart[] {
  const pieces = generated.split(marker);
  // pieces alternate text, marker body, text, marker body, ...
  const stack: { parts: TemplatePart[]; index: number }[] = [{ parts: [], index: -1 }];
  let datasetSeen = false;
  let closed = 0;
  const leavesSeen = new Set<number>();
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
    } else if (kind === 'O' && graphSlots[index] !== undefined) {
      stack.push({ parts: [], index });
    } else if (kind === 'C' && top.index === index && stack.length > 1) {
      stack.pop();
      const slot = graphSlots[index];
      const parent = stack[stack.length - 1];
      if (slot === undefined || parent === undefined) throw unsafe();
      const graphSlot: GraphSlot | GraphVariableSlot =
        slot.kind === 'graph-variable'
          ? { ...slot, hiddenSlots: top.parts.some(isLeafSlot), body: top.parts }
          : { ...slot, kept: top.parts };
      parent.parts.push(graphSlot);
      closed++;
    } else if (kind === 'L' && leafSlots[index] !== undefined && !leavesSeen.has(index)) {
      leavesSeen.add(index);
      top.parts.push(leafSlots[index]);
    } else throw unsafe();
  }
  const root = stack[0];
  if (stack.length !== 1 || root === undefined || !datasetSeen || closed !== graphSlots.length || leavesSeen.size !== leafSlots.length) {
    throw unsafe();
  }
  return root.parts;
}

/**
 * Rule 1 of the planner: every filling re-parses (all GRAPH kept or removed, with and without a
 * sample hidden predicate, per-graph ones), and the all-kept ones parse back to the serialised
 * tree, with exactly the intended filters, set members and per-graph branches added.
 */
function verifyTemplate(
  parts: readonly TemplatePart[],
  root: LooseQuery,
  hasGraphSlots: boolean,
  slotsAfter: ReadonlyMap<object, readonly AfterSlot[]> | undefined,
  transitive: ReadonlySet<object>,
  toBind: ReadonlySet<object>,
  hasRowSlots: boolean,
): void {
  const dataset = `FROM <${EMPTY_GRAPH}>\nFROM NAMED <${EMPTY_GRAPH}>\n`;
  const sample: HiddenText | undefined = slotsAfter === undefined ? undefined : hiddenText([HIDDEN_SAMPLE]);
  let kept: sparqljs.SparqlQuery;
  let keptHidden: sparqljs.SparqlQuery | undefined;
  const fill = (keep: boolean, hiddenIn: Filling['hiddenIn'], active: HiddenText | undefined, added = false) =>
    parseQuery(fillTemplate(parts, { dataset, keep, named: NAMED_SAMPLES, hiddenIn, constants: [], added }, active));
  const nothing = (): undefined => undefined;
  try {
    kept = fill(true, nothing, undefined);
    // Without GRAPH slots the all-removed fillings are the all-kept ones.
    if (hasGraphSlots) fill(false, nothing, undefined);
    if (sample !== undefined) {
      const always = (): HiddenText => sample;
      keptHidden = fill(true, always, sample);
      if (hasGraphSlots) {
        fill(false, always, sample);
        // The first sample graph hides something, the second nothing: GRAPH ?var with slots of its own writes a branch per graph.
        fill(true, (graph) => (graph === NAMED_SAMPLES[0] ? sample : undefined), undefined);
      }
      // A default graph merging a graph that hides the sample with one that hides nothing: per-graph checks,
      // unless the filling refuses them there (403: negated sets, blank nodes beside variable predicates).
      const graphs = [{ iri: NAMED_SAMPLES[0] ?? '', list: '' }];
      const hiding = [{ iri: NAMED_SAMPLES[1] ?? '', list: sample.list }];
      try {
        fill(true, always, { ...sample, graphs, hiding }, true);
      } catch (error) {
        if (!(error instanceof GuardError && error.status === 403)) throw error;
      }
    }
    // Row filters: one graph under a rule, and a default graph merging it with one that shows everything.
    if (hasRowSlots) {
      for (const rows of ROW_SAMPLES) {
        const text = { list: '', forward: '', inverse: '', rows };
        try {
          fill(true, () => text, text, true);
        } catch (error) {
          if (!(error instanceof GuardError && error.status === 403)) throw error;
        }
      }
    }
  } catch (error) {
    if (error instanceof RangeError) throw error;
    throw unsafe();
  }
  const empty = { termType: 'NamedNode', value: EMPTY_GRAPH };
  root.from = { default: [empty], named: [empty] };
  const same =
    canonical(kept) === canonical(expectedTree(root, transitive, toBind)) &&
    (slotsAfter === undefined || canonical(keptHidden) === canonical(expectedTree(root, transitive, toBind, slotsAfter)));
  root.from = { default: [], named: [] };
  if (!same) throw unsafe();
}

/**
 * The tree an all-kept filling must parse to: each expanded `GRAPH ?v { P }` becomes
 * `{ GRAPH <s1> { P } VALUES ?v { <s1> } } UNION { … <s2> … }` (NAMED_SAMPLES; `BIND(<s1> AS ?v)` for the
 * elements of findGraphsToBind); for the filling with
 * HIDDEN_SAMPLE (`slotsAfter` given), each BGP followed by its slots' filters (a bare BGP as a UNION
 * branch or EXISTS becomes a group) and the sample in every negated set.
 */
function expectedTree(
  root: LooseQuery,
  transitive: ReadonlySet<object>,
  toBind: ReadonlySet<object>,
  slotsAfter?: ReadonlyMap<object, readonly AfterSlot[]>,
): unknown {
  if (transitive.size === 0 && slotsAfter === undefined) return root;
  const sample = { termType: 'NamedNode', value: HIDDEN_SAMPLE };
  const list = hiddenText([HIDDEN_SAMPLE]).list;
  const filtersAfter = (item: object): unknown[] | undefined => {
    const filters = slotsAfter?.get(item)?.flatMap((slot) => {
      // The EXISTS pattern as the parser reads the text the slot writes.
      const exists = (text: string) => (parseQuery(`ASK { ${text} }`) as { where?: unknown[] }).where?.[0];
      if (slot.kind === 'row-filter') return []; // the sample hides a path; it restricts no rows
      if (slot.kind === 'zero-length') return slot.ends.map((end) => exists(zeroLengthFilter(slot, end, list)));
      return slot.variables.map((variable) => ({
        type: 'filter',
        expression: { type: 'operation', operator: 'notin', args: [{ termType: 'Variable', value: variable.slice(1) }, [sample]] },
      }));
    });
    // A BGP whose only slot is a row filter gets nothing from the sample: it stays as it is.
    return filters === undefined || filters.length === 0 ? undefined : filters;
  };
  const copy = (node: unknown, bareIsGroup: boolean): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (const item of node) {
        const filters = typeof item === 'object' && item !== null ? filtersAfter(item) : undefined;
        if (filters === undefined) out.push(copy(item, false));
        else if (bareIsGroup) out.push({ type: 'group', patterns: [copy(item, false), ...filters] });
        else out.push(copy(item, false), ...filters);
      }
      return out;
    }
    const record = node as Record<string, unknown>;
    if (typeof record['termType'] === 'string') return record;
    if (slotsAfter !== undefined && record['type'] === 'path' && record['pathType'] === '!') {
      const members = negatedMembers(record as unknown as PathNode);
      const added: unknown[] = [];
      if (members.some((member) => !isInverse(member))) added.push(sample);
      if (members.some(isInverse)) added.push({ type: 'path', pathType: '^', items: [sample] });
      return { type: 'path', pathType: '!', items: [{ type: 'path', pathType: '|', items: [...members, ...added] }] };
    }
    const out: Record<string, unknown> = {};
    const operator = record['type'] === 'operation' ? record['operator'] : undefined;
    for (const key of Object.keys(record)) {
      const bare =
        (record['type'] === 'union' && key === 'patterns') || ((operator === 'exists' || operator === 'notexists') && key === 'args');
      out[key] = copy(record[key], bare);
    }
    if (!transitive.has(record)) return out;
    const variable = '?' + (record['name'] as { value: string }).value;
    const branches = NAMED_SAMPLES.map((graph, index) => {
      const name = { termType: 'NamedNode', value: graph };
      return {
        type: 'group',
        patterns: [
          { type: 'graph', patterns: relabelBlankNodeTerms(out['patterns'], blankNodePrefix(index + 1)), name },
          toBind.has(record)
            ? { type: 'bind', variable: { termType: 'Variable', value: variable.slice(1) }, expression: name }
            : { type: 'values', values: [{ [variable]: name }] },
        ],
      };
    });
    return { type: 'union', patterns: branches };
  };
  return copy(root, false);
}

/** JSON of a tree with sorted keys and blank-node labels made comparable across a generate/parse round trip. */
function canonical(tree: unknown): string {
  return JSON.stringify(tree, (key, value: unknown) => {
    if (key === 'base') return undefined;
    if (key === 'template' && Array.isArray(value) && value.length === 0) return undefined; // {} and none mean the same
    if (key === 'args' && Array.isArray(value) && value.length === 1) {
      // `EXISTS { { SELECT … } }` is written back as `EXISTS { SELECT … }`: the same group (§18.2.2.6).
      const group = value[0] as { type?: unknown; patterns?: unknown[] } | null;
      const only = group?.type === 'group' && group.patterns?.length === 1 ? (group.patterns[0] as { type?: unknown }) : undefined;
      if (only?.type === 'query') return [only];
    }
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
