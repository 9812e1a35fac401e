// The plan cache: a query's template by its shape (lexQueryShape and the protocol dataset), else its preparation by exact text, in one bounded LRU.

import { LRUCache } from 'lru-cache';
import { GuardError } from '../guard-error.js';
import type { Grant } from '../policy/policy-set.js';
import { applyGrant } from './apply-grant.js';
import { cutConstantSlots, writeSentinelText, type CutResult } from './cut-constant-slots.js';
import { lexQueryShape, type QueryShape } from './lex-query-shape.js';
import type { Plan } from './plan.js';
import type { PreparedQuery } from './prepared-query.js';
import type { QueryRequest } from './query-request.js';
import type { RowCheckForm, RowValues } from './write-row-filter.js';

/** Plans a request by its exact text. */
export type PlanByText = (request: QueryRequest, grant: Grant, values: RowValues | undefined) => Plan;

/** A refusal, or the preparation of one exact text. */
export type ExactEntry = PreparedQuery | GuardError;

/** The plan cache of one planner. */
export interface ShapeCache {
  /**
   * The plan of `request` from the template of its shape; a text the cache plans by itself (the
   * lexer cannot classify it, or its shape is planned by exact text) goes to `byText`. A plan
   * of a lexed text carries its shape.
   */
  plan(request: QueryRequest, grant: Grant, values: RowValues | undefined, byText: PlanByText): Plan;
  /** The preparation or refusal of the request's exact text, cached under the same bounds. */
  exact(request: QueryRequest): ExactEntry;
  /** What the cache holds now. */
  size(): { entries: number; bytes: number };
}

/** What the cache knows of one query shape (the key of lexQueryShape plus the protocol dataset). */
interface ShapeInfo {
  readonly kind: 'shape';
  /** Unique in the cache: its variants are keyed by it, not by the long shape key (a shape learned anew gets a new one). */
  readonly id: number;
  /** 'exact': every query of this shape is planned by its exact text (its sentinel text was refused or could not be cut). */
  readonly mode: 'slots' | 'exact';
  /** Constants whose values stay in the key (second level): the planner checks or rewrites them. */
  readonly sensitive: readonly number[];
  /** Variants of this shape held in the cache, for the per-shape bound. */
  variants: number;
}

/** One filled-in variant of a shape: its template with constant slots, or 'exact' (plan by exact text). */
interface ShapeVariant {
  readonly kind: 'variant';
  readonly shape: ShapeInfo;
  readonly prepared: PreparedQuery | 'exact';
}

type CacheEntry = { readonly kind: 'exact'; readonly entry: ExactEntry } | ShapeInfo | ShapeVariant;

/** One text's lex and its cache keys, kept for the last texts: their strings keep the hashes V8 computed. */
interface Lexed {
  readonly dataset: string;
  readonly shape: QueryShape;
  readonly shapeKey: string;
  /** The variant key, for the shape as last learned. */
  variant?: { readonly shape: ShapeInfo; readonly key: string };
}

/** How many texts, of up to what length, the cache keeps the lexes of (docs/design/sparql.md#plan-cache). */
const RECENT_TEXTS = 32;
const RECENT_TEXT_LENGTH = 16_384;

const NO_CONSTANT: ReadonlySet<number> = new Set();

/**
 * Creates the cache. Parse, checks and serialisation run once per query shape (plus the
 * protocol dataset) and per value of its sensitive constants; a hit lexes the text (unless it
 * is one of the last texts, whose lexes are kept), fills the template with its constants and
 * never parses (docs/design/sparql.md#plan-cache). Text the lexer cannot classify, and shapes whose
 * sentinel text is refused, are planned by exact text, and so are refusals cached. No key holds
 * anything of the caller. `prepareOrRefuse` prepares one request (a GuardError is its refusal).
 */
export function createShapeCache(
  bounds: { readonly maxEntries: number; readonly maxBytes: number },
  baseIri: string,
  prepareOrRefuse: (request: QueryRequest) => ExactEntry,
  rowChecks: RowCheckForm = 'join',
): ShapeCache {
  /** One shape may hold at most this many variants, so it cannot push every other plan out. */
  const variantsPerShape = Math.max(1, Math.ceil(bounds.maxEntries / 10));
  const cache = new LRUCache<string, CacheEntry>({
    max: bounds.maxEntries,
    maxSize: bounds.maxBytes,
    sizeCalculation: (entry, key) => 2 * key.length + entrySize(entry),
    dispose: (entry) => {
      if (entry.kind === 'variant') entry.shape.variants--;
    },
  });

  const exact = (request: QueryRequest): ExactEntry => {
    const key = 'E' + datasetKey(request) + request.query;
    const cached = cache.get(key);
    if (cached?.kind === 'exact') return cached.entry;
    const entry = prepareOrRefuse(request);
    cache.set(key, { kind: 'exact', entry }); // too large for maxBytes: lru-cache leaves it out
    return entry;
  };

  /** Prepares the shape's text with `kept` constants as written and the others as sentinels, and cuts it. */
  const prepareSlots = (request: QueryRequest, shape: QueryShape, kept: ReadonlySet<number>): CutResult | undefined => {
    const sentinels = writeSentinelText(shape, kept);
    if (sentinels === undefined) return undefined;
    const prepared = prepareOrRefuse({ ...request, query: sentinels.text });
    if (prepared instanceof GuardError) return undefined;
    return cutConstantSlots(prepared, shape, kept, sentinels);
  };

  // The lexes of the last texts, in a ring searched by equality: a text sent again is not lexed again.
  const recentTexts: string[] = new Array<string>(RECENT_TEXTS).fill('');
  const recentLexes: (Lexed | undefined)[] = new Array<Lexed | undefined>(RECENT_TEXTS).fill(undefined);
  let nextRecent = 0;
  const lex = (request: QueryRequest): Lexed | undefined => {
    const dataset = datasetKey(request);
    for (let i = 0; i < RECENT_TEXTS; i++) {
      if (recentTexts[i] === request.query && recentLexes[i]?.dataset === dataset) return recentLexes[i];
    }
    const shape = lexQueryShape(request.query, baseIri);
    if (shape === undefined) return undefined;
    const lexed: Lexed = { dataset, shape, shapeKey: 'K' + dataset + shape.key };
    if (request.query.length <= RECENT_TEXT_LENGTH) {
      recentTexts[nextRecent] = request.query;
      recentLexes[nextRecent] = lexed;
      nextRecent = (nextRecent + 1) % RECENT_TEXTS;
    }
    return lexed;
  };

  let shapes = 0;
  const plan = (request: QueryRequest, grant: Grant, values: RowValues | undefined, byText: PlanByText): Plan => {
    const lexed = lex(request);
    if (lexed === undefined) return byText(request, grant, values);
    const planned = planShaped(request, grant, lexed, values, byText);
    planned.shape = lexed.shape.key;
    return planned;
  };
  const planShaped = (request: QueryRequest, grant: Grant, lexed: Lexed, values: RowValues | undefined, byText: PlanByText): Plan => {
    const { shape, shapeKey } = lexed;
    const fromTemplate = (prepared: PreparedQuery | 'exact'): Plan =>
      prepared === 'exact' ? byText(request, grant, values) : applyGrant(prepared, grant, shape.fill, values, rowChecks);
    const found = cache.get(shapeKey);
    // A shape without sensitive constants is one entry: its template.
    if (found?.kind === 'variant') return fromTemplate(found.prepared);
    let info = found?.kind === 'shape' ? found : undefined;
    if (info === undefined) {
      const learned = learnShape(request, shape, shapeKey);
      if (learned.prepared !== undefined) return applyGrant(learned.prepared, grant, shape.fill, values, rowChecks);
      info = learned.info;
    }
    if (info.mode === 'exact') return byText(request, grant, values);
    if (lexed.variant?.shape !== info) lexed.variant = { shape: info, key: variantKeyOf(info, shape) };
    const variantKey = lexed.variant.key;
    const cached = cache.get(variantKey);
    if (cached?.kind === 'variant') return fromTemplate(cached.prepared);
    const cut = prepareSlots(request, shape, new Set(info.sensitive));
    // A variant whose sentinels land elsewhere than the shape's first one did is planned by its exact text.
    const prepared = cut !== undefined && 'prepared' in cut ? cut.prepared : 'exact';
    if (info.variants < variantsPerShape) {
      info.variants++;
      cache.set(variantKey, { kind: 'variant', shape: info, prepared });
    }
    return fromTemplate(prepared);
  };

  return { plan, exact, size: () => ({ entries: cache.size, bytes: cache.calculatedSize }) };

  /**
   * First sight of a shape: finds its sensitive constants and caches them. The verb-position
   * constants are guessed first (kept as written, the others sentinels: one prepare settles it
   * when each is a named predicate and no sentinel landed in a checked place); else every
   * constant is a sentinel and the caller prepares the variant. Returns the template if settled.
   */
  function learnShape(request: QueryRequest, shape: QueryShape, shapeKey: string): { info: ShapeInfo; prepared?: PreparedQuery } {
    const learn = (mode: ShapeInfo['mode'], sensitive: readonly number[], prepared?: PreparedQuery) => {
      const info: ShapeInfo = { kind: 'shape', id: shapes++, mode, sensitive, variants: prepared === undefined ? 0 : 1 };
      // A shape without sensitive constants is one entry, its template; else the shape, and a variant if prepared.
      if (prepared === undefined || sensitive.length > 0) cache.set(shapeKey, info);
      if (prepared !== undefined) {
        cache.set(sensitive.length > 0 ? variantKeyOf(info, shape) : shapeKey, { kind: 'variant', shape: info, prepared });
      }
      return { info, prepared };
    };
    if (shape.verbs.length > 0) {
      const guessed = new Set(shape.verbs);
      const cut = prepareSlots(request, shape, guessed);
      if (cut !== undefined && 'prepared' in cut) {
        const { prepared } = cut;
        if ([...guessed].every((k) => prepared.namedPredicates.includes((shape.fill[k] ?? '').slice(1, -1)))) {
          return learn(
            'slots',
            [...guessed].sort((a, b) => a - b),
            prepared,
          );
        }
      }
    }
    const first = prepareSlots(request, shape, NO_CONSTANT);
    if (first === undefined) return learn('exact', []);
    return 'prepared' in first ? learn('slots', [], first.prepared) : learn('slots', first.sensitive);
  }
}

/** The key of one variant of a shape: the shape's number and its sensitive constants, each length-prefixed. */
function variantKeyOf(info: ShapeInfo, shape: QueryShape): string {
  let key = 'S' + info.id;
  for (const k of info.sensitive) {
    const raw = shape.raw[k] ?? '';
    key += '\u0002' + raw.length + ':' + raw;
  }
  return key;
}

function entrySize(entry: CacheEntry): number {
  switch (entry.kind) {
    case 'exact':
      return entry.entry instanceof GuardError ? 256 : entry.entry.sizeBytes;
    case 'shape':
      return 64 + 8 * entry.sensitive.length;
    default:
      return 64 + (entry.prepared === 'exact' ? 0 : entry.prepared.sizeBytes);
  }
}

/** The protocol graph lists as JSON (self-delimiting), before the text or shape in every key. */
function datasetKey(request: QueryRequest): string {
  if (request.defaultGraphs.length === 0 && request.namedGraphs.length === 0) return '[[],[]]';
  return JSON.stringify([request.defaultGraphs, request.namedGraphs]);
}
