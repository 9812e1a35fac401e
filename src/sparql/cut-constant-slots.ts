// Stands each constant of a query shape in by a sentinel, and cuts the prepared template at the sentinels into constant slots.

import type { ConstantSlot, PreparedQuery, TemplatePart } from './prepared-query.js';
import type { QueryShape } from './lex-query-shape.js';
import { reservedIri } from '../vocabulary.js';

/** Private-use characters that may delimit string and IRI sentinels; the first one absent from the text is used. */
const MARK_CANDIDATES = ['\uF8FF', '\uF8FE', '\uF8FD', '\uF8FC'];
/** Digit runs that may start numeric sentinels; the first one absent from the text is used. */
const DIGIT_CANDIDATES = ['7493021856', '6180339887', '2718281828', '1414213562'];
/** Four digits number a numeric sentinel, so at most this many constants are cut. */
const MAX_SLOTS = 10_000;
/** An IRI sentinel is this, its mark, `i`, its number and its mark: the marks are private-use characters, which RFC 3987 allows in a query part only. */
const SENTINEL_IRI = reservedIri('constant?');

/** The text to prepare for a shape, and how its sentinels are written. */
export interface SentinelText {
  readonly text: string;
  readonly mark: string;
  readonly digits: string;
}

/** The shape's text with every constant not in `kept` replaced by a sentinel of its class; undefined when none is free. */
export function writeSentinelText(shape: QueryShape, kept: ReadonlySet<number>): SentinelText | undefined {
  if (shape.raw.length >= MAX_SLOTS) return undefined;
  let written = shape.code.join('');
  for (let k = 0; k < shape.raw.length; k++) if (kept.has(k)) written += shape.raw[k];
  const mark = MARK_CANDIDATES.find((candidate) => !written.includes(candidate));
  const digits = DIGIT_CANDIDATES.find((candidate) => !written.includes(candidate));
  if (mark === undefined || digits === undefined) return undefined;
  let text = shape.code[0] ?? '';
  for (let o = 0; o < shape.refs.length; o++) {
    const k = shape.refs[o] ?? 0;
    text += kept.has(k) ? shape.raw[k] : sentinel(shape.classes[k] ?? '', k, mark, digits);
    text += shape.code[o + 1] ?? '';
  }
  return { text, mark, digits };
}

function sentinel(cls: string, k: number, mark: string, digits: string): string {
  const number = digits + String(k).padStart(4, '0');
  switch (cls) {
    case 'S':
      return `"${mark}s${k}${mark}"`;
    case 'I':
      return `<${SENTINEL_IRI}${mark}i${k}${mark}>`;
    case 'D':
      return number + '.5';
    case 'E':
      return number + 'e0';
    default:
      return number;
  }
}

/** The outcome of cutting: the template with constant slots, or the constants that must stay in the key. */
export type CutResult = { readonly prepared: PreparedQuery } | { readonly sensitive: readonly number[] };

/**
 * Cuts the template prepared from `sentinels` at each constant's sentinel. A constant whose sentinel
 * stands anywhere but in generated text (a named predicate, a GRAPH name, a requested graph, a
 * per-request slot) is one the planner checks or rewrites: sensitive, its value goes in the key.
 * Undefined when the sentinels cannot be accounted for.
 */
export function cutConstantSlots(
  prepared: PreparedQuery,
  shape: QueryShape,
  kept: ReadonlySet<number>,
  sentinels: SentinelText,
): CutResult | undefined {
  const { mark, digits } = sentinels;
  const pattern = new RegExp(
    `<${SENTINEL_IRI.replace('?', '\\?')}${mark}i(\\d+)${mark}>|${mark}s(\\d+)${mark}|${digits}(\\d{4})(\\.5|e0)?`,
    'g',
  );
  /** Outside generated text a sentinel may stand without its brackets or quotes. */
  const loose = new RegExp(`${mark}[si](\\d+)${mark}|${digits}(\\d{4})`, 'g');
  const count = new Array<number>(shape.raw.length).fill(0);
  const sensitive = new Set<number>();
  let broken = false;
  const classOf = (match: RegExpExecArray): [number, string] => {
    if (match[1] !== undefined) return [Number(match[1]), 'I'];
    if (match[2] !== undefined) return [Number(match[2]), 'S'];
    const suffix = match[4];
    return [Number(match[3]), suffix === '.5' ? 'D' : suffix === 'e0' ? 'E' : 'N'];
  };
  /** Sentinels found outside generated text make their constants sensitive. */
  const scanOutside = (value: unknown): void => {
    const json = JSON.stringify(value) ?? '';
    if (!json.includes(mark) && !json.includes(digits)) return;
    for (const match of json.matchAll(loose)) {
      const k = Number(match[1] ?? match[2]);
      if (kept.has(k) || k >= shape.raw.length) broken = true;
      else sensitive.add(k);
    }
    const rest = json.replace(loose, '');
    if (rest.includes(mark) || rest.includes(digits)) broken = true;
  };
  const cut = (parts: readonly TemplatePart[]): TemplatePart[] => {
    const out: TemplatePart[] = [];
    for (const part of parts) {
      if (typeof part === 'string') {
        if (!part.includes(mark) && !part.includes(digits)) {
          out.push(part);
          continue;
        }
        let last = 0;
        for (const match of part.matchAll(pattern)) {
          const [k, cls] = classOf(match);
          const at = match.index;
          if (kept.has(k) || shape.classes[k] !== cls) {
            broken = true;
            continue;
          }
          const end = at + match[0].length;
          // A numeric sentinel must stand alone: no digit runs on after it.
          if (cls !== 'I' && cls !== 'S' && /[0-9.eE]/.test(part[end] ?? '')) broken = true;
          count[k] = (count[k] ?? 0) + 1;
          if (at > last) out.push(part.slice(last, at));
          out.push({ kind: 'constant', index: k } satisfies ConstantSlot);
          last = end;
        }
        if (last < part.length) out.push(part.slice(last));
        const rest = part.replace(pattern, '');
        if (rest.includes(mark) || rest.includes(digits)) broken = true;
      } else if (part.kind === 'graph') {
        scanOutside({ ...part, kept: [] });
        out.push({ ...part, kept: cut(part.kept) });
      } else if (part.kind === 'graph-variable') {
        scanOutside({ ...part, body: [] });
        out.push({ ...part, body: cut(part.body) });
      } else if (part.kind === 'hidden-filter' && part.triples !== null) {
        // The triples the per-graph check repeats hold the query's constants like the BGP they come from.
        scanOutside({ ...part, triples: [] });
        out.push({ ...part, triples: part.triples.map(({ predicate, pattern }) => ({ predicate, pattern: cut(pattern) })) });
      } else if (part.kind === 'row-filter') {
        // The triples a row filter names hold the query's constants like the BGP they come from; its predicates stay sensitive.
        scanOutside({ ...part, triples: part.triples.map(({ predicate, iri }) => ({ predicate, iri })) });
        out.push({
          ...part,
          triples: part.triples.map((triple) => ({
            ...triple,
            subject: triple.subject === null ? null : cut(triple.subject),
            object: triple.object === null ? null : cut(triple.object),
          })),
        });
      } else {
        scanOutside(part);
        out.push(part);
      }
    }
    return out;
  };
  const parts = cut(prepared.parts);
  // The expanded variant holds the same constants, cut the same way (its triple patterns repeat the path's ends).
  const { expanded } = prepared;
  const expandedParts = expanded === undefined || !('parts' in expanded) ? undefined : cut(expanded.parts);
  scanOutside([prepared.namedPredicates, prepared.namedIn, prepared.requestedDefault, prepared.requestedNamed]);
  if (broken) return undefined;
  for (let k = 0; k < shape.raw.length; k++) {
    if (!kept.has(k) && (count[k] ?? 0) < 1) sensitive.add(k);
  }
  if (sensitive.size > 0) return { sensitive: [...sensitive].sort((a, b) => a - b) };
  if (expanded !== undefined && 'parts' in expanded && expandedParts !== undefined) {
    return { prepared: { ...prepared, parts, expanded: { ...expanded, parts: expandedParts } } };
  }
  return { prepared: { ...prepared, parts } };
}
