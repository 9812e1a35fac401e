// The planner: (QueryRequest, Grant) -> Plan, with prepared queries kept in a bounded LRU cache.

import { LRUCache } from 'lru-cache';
import { GuardError } from '../guard-error.js';
import type { QueryRequest } from '../http/query-request.js';
import type { Grant } from '../policy/grant.js';
import { applyGrant } from './apply-grant.js';
import { compileFunctionAllowList } from './check-function-calls.js';
import type { Plan } from './plan.js';
import { prepareQuery, type PrepareSettings } from './prepare-query.js';
import type { PreparedQuery } from './prepared-query.js';
import { hasScheme } from './resolve-iri.js';

export { EMPTY_GRAPH } from './prepare-query.js';

/** Planner settings (config keys baseIri, maxQueryDepth, planCache, allowedFunctions). */
export interface PlannerOptions {
  /** Base for relative IRIs when the query has no BASE; default 'http://localhost/'. */
  baseIri: string;
  /** Deepest bracket nesting accepted, and a quarter of the deepest algebra (checkAlgebraDepth); default 64. */
  maxQueryDepth: number;
  /** Bounds of the plan cache; defaults 1000 entries / 16 MiB; maxEntries 0 = no cache. */
  planCache: { maxEntries: number; maxBytes: number };
  /**
   * Extension functions a query may call: exact IRIs, or namespaces ending in `#` or `/`;
   * default [] (only SPARQL 1.1 built-ins and XSD casts). Fixed per planner, so not in the cache key.
   */
  allowedFunctions?: readonly string[];
}

/** Plans one query for one caller. */
export interface Planner {
  /**
   * Throws GuardError 400 (unparseable, cannot rewrite safely, bad protocol IRI, too deep or too complex),
   * 403 (update, SERVICE, a hidden path named) or 500 (a hidden path that is no valid IRI).
   */
  plan(request: QueryRequest, grant: Grant): Plan;
}

/** How a request becomes a PreparedQuery; replaceable only so tests can count cache misses. */
export type Prepare = (request: QueryRequest, settings: PrepareSettings) => PreparedQuery;

/** What the cache holds per key: the prepared query, or the refusal it led to. */
type CacheEntry = PreparedQuery | GuardError;

/**
 * Creates a planner. Parse, checks and serialisation run once per distinct
 * (query text, protocol default graphs, protocol named graphs); a cache hit
 * only intersects graph sets, unites hidden-predicate sets and joins strings.
 * The key holds nothing about the caller, so a plan serves every caller;
 * refusals are cached as well (a hidden-path 403 depends on the caller and is
 * decided per request).
 */
export function createPlanner(options: PlannerOptions, prepare: Prepare = prepareQuery): Planner {
  const { baseIri, maxQueryDepth, planCache } = options;
  if (!hasScheme(baseIri) || /[\u0000-\u0020<>"{}|^`\\]/.test(baseIri)) {
    throw new Error('baseIri must be an absolute IRI such as http://localhost/');
  }
  if (!Number.isInteger(maxQueryDepth) || maxQueryDepth < 1) {
    throw new Error('maxQueryDepth must be a positive integer, such as 64');
  }
  if (!Number.isInteger(planCache.maxEntries) || planCache.maxEntries < 0) {
    throw new Error('planCache.maxEntries must be a whole number (0 turns the cache off)');
  }
  if (planCache.maxEntries > 0 && (!Number.isInteger(planCache.maxBytes) || planCache.maxBytes < 1)) {
    throw new Error('planCache.maxBytes must be a positive whole number of bytes, such as 16777216');
  }
  const settings: PrepareSettings = {
    baseIri,
    maxQueryDepth,
    allowedFunctions: compileFunctionAllowList(options.allowedFunctions ?? []),
  };

  const prepareOrRefuse = (request: QueryRequest): CacheEntry => {
    try {
      return prepare(request, settings);
    } catch (error) {
      if (error instanceof GuardError) return error;
      throw error;
    }
  };

  const cache =
    planCache.maxEntries === 0
      ? undefined
      : new LRUCache<string, CacheEntry>({
          max: planCache.maxEntries,
          maxSize: planCache.maxBytes,
          sizeCalculation: (entry, key) => 2 * key.length + (entry instanceof GuardError ? 256 : entry.sizeBytes),
        });

  return {
    plan(request: QueryRequest, grant: Grant): Plan {
      let entry: CacheEntry | undefined;
      if (cache === undefined) entry = prepareOrRefuse(request);
      else {
        const key = cacheKey(request);
        entry = cache.get(key);
        if (entry === undefined) {
          entry = prepareOrRefuse(request);
          cache.set(key, entry); // too large for maxBytes: lru-cache leaves it out
        }
      }
      if (entry instanceof GuardError) throw entry;
      return applyGrant(entry, grant);
    },
  };
}

/**
 * An unambiguous key: the protocol graph lists as JSON (a self-delimiting
 * value) followed by the query text. No caller data, no secrets.
 */
function cacheKey(request: QueryRequest): string {
  if (request.defaultGraphs.length === 0 && request.namedGraphs.length === 0) return '[[],[]]' + request.query;
  return JSON.stringify([request.defaultGraphs, request.namedGraphs]) + request.query;
}
