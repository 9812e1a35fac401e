// Finds, once per prepared query, where hidden predicates could be reached: IRIs named as predicates and variable predicates per group.

import type { PathNode, Term } from './tree-shapes.js';
import { walkQuery } from './walk-query.js';

/**
 * Where a named predicate is read (SPARQL 1.1 §18.6), beside a graph's IRI: the default graph, any named
 * graph (`GRAPH ?var`), or the whole dataset (CONSTRUCT templates, DESCRIBE). No IRI starts with a space.
 */
export const IN_DEFAULT_GRAPH = ' default';
export const IN_ANY_NAMED_GRAPH = ' named';
export const IN_WHOLE_DATASET = ' all';

/** What the template step needs to close a query against hidden predicates (docs/design/policy.md#vocabulary). */
export interface HiddenPathMarks {
  /** IRIs in predicate position: triple patterns, every property path member, CONSTRUCT templates. */
  readonly named: ReadonlySet<string>;
  /** The same IRIs by where they are read: IN_DEFAULT_GRAPH, IN_ANY_NAMED_GRAPH, IN_WHOLE_DATASET or a graph IRI. */
  readonly namedIn: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Per BGP (by identity), the triple patterns of its group whose predicate variable is filtered after it:
   * each variable once per group, after its first BGP (HiddenFilterSlot).
   */
  readonly filters: ReadonlyMap<object, readonly VariableTriple[]>;
  /** Per BGP (by identity), one end of each path that can match zero steps (ZeroLengthSlot): the constant one if any. */
  readonly zeroLength: ReadonlyMap<object, readonly Term[]>;
  /** True when some path that can match zero steps has only blank nodes at its ends (refused while something is hidden). */
  readonly zeroLengthBlank: boolean;
  /** Per BGP (by identity), every triple pattern whose predicate is an IRI or a variable: the row filter's (RowFilterSlot). */
  readonly triples: ReadonlyMap<object, readonly VariableTriple[]>;
  /** Per BGP (by identity), its property paths other than one IRI: the row filter refuses them where every policy restricts rows. */
  readonly paths: ReadonlyMap<object, readonly PathMark[]>;
}

/** A property path of a BGP: whether it has a step of variable length (`*`, `+`, `?`), and the IRIs it names. */
export interface PathMark {
  readonly variable: boolean;
  readonly members: readonly string[];
}

/** A triple pattern with a variable predicate (or, in `triples`, an IRI). */
export interface VariableTriple {
  readonly subject: Term;
  readonly predicate: Term;
  readonly object: Term;
}

interface Triple {
  readonly subject: unknown;
  readonly predicate: Term | PathNode;
  readonly object: unknown;
}

/**
 * The end to check of a path that can match zero steps (SPARQL 1.1 §18.4), 'blank' when both are blank
 * nodes, undefined for a path of one step or more. A constant end is checked too (stores disagree on
 * whether a constant that is no node matches itself) and preferred: with zero steps the variable equals it.
 */
function zeroLengthEnd(triple: Triple): Term | 'blank' | undefined {
  if ('termType' in triple.predicate || !canMatchZeroSteps(triple.predicate)) return undefined;
  const ends = [triple.subject, triple.object] as readonly Term[];
  const constant = ends.find((end) => end.termType !== 'Variable' && end.termType !== 'BlankNode');
  return constant ?? ends.find((end) => end.termType === 'Variable') ?? 'blank';
}

/** True when `path` can match a path of length zero: `*`, `?`, and sequences, alternatives, inverses and `+` of such (§9.1). */
function canMatchZeroSteps(path: Term | PathNode): boolean {
  if ('termType' in path) return false;
  switch (path.pathType) {
    case '*':
    case '?':
      return true;
    case '/':
      return path.items.every(canMatchZeroSteps);
    case '|':
    case '^':
    case '+':
      return path.items.some(canMatchZeroSteps);
    default:
      return false; // `!`: a negated set is one step
  }
}

/**
 * Walks a parsed, normalised query. A FILTER scopes over its whole group (SPARQL 1.1 §18.2.2), so one
 * right after a BGP constrains exactly its group; a bare BGP as a UNION branch or EXISTS is a group of its own.
 */
export function markHiddenPaths(root: Record<string, unknown>): HiddenPathMarks {
  const named = new Set<string>();
  const namedIn = new Map<string, Set<string>>();
  /** The active graph of the patterns being walked: the innermost GRAPH around them. */
  let scope = IN_DEFAULT_GRAPH;
  const filters = new Map<object, VariableTriple[]>();
  const zeroLength = new Map<object, Term[]>();
  let zeroLengthBlank = false;
  const allTriples = new Map<object, VariableTriple[]>();
  const paths = new Map<object, PathMark[]>();

  const collectPath = (predicate: Term | PathNode): void => {
    if ('termType' in predicate) {
      if (predicate.termType !== 'NamedNode') return;
      named.add(predicate.value);
      let here = namedIn.get(scope);
      if (here === undefined) namedIn.set(scope, (here = new Set()));
      here.add(predicate.value);
      return;
    }
    for (const item of predicate.items) collectPath(item);
  };

  /** One group: its BGPs get the filters, everything else is walked for nested groups. */
  const visitGroup = (patterns: readonly unknown[]): void => {
    /** Per predicate variable, the triple list of the BGP that holds its filter. */
    const seen = new Map<string, VariableTriple[]>();
    const seenEnds = new Set<string>();
    for (const pattern of patterns) {
      const record = pattern as Record<string, unknown> | null;
      if (record === null || typeof record !== 'object' || record['type'] !== 'bgp') {
        visit(pattern);
        continue;
      }
      /** The triples filtered after this BGP: those of the variables it is the first to use. */
      const filtered: VariableTriple[] = [];
      const ends: Term[] = [];
      const plain: VariableTriple[] = [];
      const pathMarks: PathMark[] = [];
      for (const triple of record['triples'] as readonly Triple[]) {
        const predicate = triple.predicate;
        if ('termType' in predicate) plain.push({ subject: triple.subject as Term, predicate, object: triple.object as Term });
        else pathMarks.push({ variable: hasVariableLength(predicate), members: pathMembers(predicate) });
        if ('termType' in predicate && predicate.termType === 'Variable') {
          let triples = seen.get(predicate.value);
          if (triples === undefined) seen.set(predicate.value, (triples = filtered));
          triples.push({ subject: triple.subject as Term, predicate, object: triple.object as Term });
        } else {
          collectPath(predicate);
          const end = zeroLengthEnd(triple);
          if (end === 'blank') zeroLengthBlank = true;
          else if (end !== undefined && !seenEnds.has(end.termType + ' ' + end.value)) {
            seenEnds.add(end.termType + ' ' + end.value);
            ends.push(end);
          }
        }
      }
      if (filtered.length > 0) filters.set(record, filtered);
      if (ends.length > 0) zeroLength.set(record, ends);
      if (plain.length > 0) allTriples.set(record, plain);
      if (pathMarks.length > 0) paths.set(record, pathMarks);
    }
  };

  /** Any other node: walked down to the next group or sub-query. */
  const visit = (node: unknown): void =>
    walkQuery(node, {
      enter(record) {
        switch (record['type']) {
          case 'bgp':
            visitGroup([record]); // a bare BGP as a UNION branch or EXISTS argument
            return false;
          case 'graph': {
            const name = record['name'] as Term;
            const outer = scope;
            scope = name.termType === 'NamedNode' ? name.value : IN_ANY_NAMED_GRAPH;
            visitGroup(record['patterns'] as readonly unknown[]);
            scope = outer;
            return false;
          }
          case 'group':
          case 'optional':
          case 'minus':
            visitGroup(record['patterns'] as readonly unknown[]);
            return false;
          case 'query':
            visitQuery(record);
            return false;
          default:
            return true;
        }
      },
    });

  const visitQuery = (query: Record<string, unknown>): void => {
    for (const key of Object.keys(query)) {
      const value = query[key];
      if (key === 'where') visitGroup(value as readonly unknown[]);
      else if (key === 'template') {
        const outer = scope;
        scope = IN_WHOLE_DATASET;
        for (const triple of value as readonly Triple[]) collectPath(triple.predicate);
        scope = outer;
      } else visit(value);
    }
  };

  visitQuery(root);
  return { named, namedIn, filters, zeroLength, zeroLengthBlank, triples: allTriples, paths };
}

/** True when a path has a step of variable length (`*`, `+`, `?`, SPARQL 1.1 §9.1). */
function hasVariableLength(path: Term | PathNode): boolean {
  if ('termType' in path) return false;
  return path.pathType === '*' || path.pathType === '+' || path.pathType === '?' || path.items.some(hasVariableLength);
}

/** The IRIs a path names, negated sets' members included. */
function pathMembers(path: Term | PathNode): string[] {
  if ('termType' in path) return path.termType === 'NamedNode' ? [path.value] : [];
  return path.items.flatMap(pathMembers);
}
