// The planner: (QueryRequest, Grant) -> Plan, from the plan cache by the query's shape, else by its exact text.

import { LRUCache } from 'lru-cache';
import { GuardError } from '../guard-error.js';
import type { Grant } from '../policy/policy-set.js';
import { applyGrant } from './apply-grant.js';
import { compileFunctionAllowList } from './check-function-calls.js';
import { createShapeCache, type ExactEntry } from './create-shape-cache.js';
import { inGraphFilterForm, type DatasetForm } from './graph-filter-form.js';
import type { Plan } from './plan.js';
import { prepareQuery, type PrepareSettings } from './prepare-query.js';
import type { PreparedQuery } from './prepared-query.js';
import type { QueryRequest } from './query-request.js';
import type { RowCheckForm, RowValues } from './write-row-filter.js';

/** The config keys baseIri, maxQueryDepth, planCache and allowedFunctions, as checked there (docs/design/config.md). */
export interface PlannerOptions {
  /** Base for relative IRIs when the query has no BASE: an absolute IRI without fragment. */
  baseIri: string;
  /** Deepest bracket nesting accepted, and a quarter of the deepest algebra (checkAlgebraDepth). */
  maxQueryDepth: number;
  /** Bounds of the plan cache; maxEntries 0 (never configured) = no cache, for tests and bench/'s cold plan. */
  planCache: { maxEntries: number; maxBytes: number };
  /** Extension functions a query may call (exact IRIs or namespaces ending in `#` or `/`); fixed per planner. */
  allowedFunctions?: readonly string[];
  /** How row rules are checked (config `rowChecks`); absent: `join`, right on every store. */
  rowChecks?: RowCheckForm;
  /**
   * How the forwarded query names its dataset (config `datasetForm`); absent: `clauses`. A function is
   * asked for each plan (config "auto": the form follows the store the dataset check found).
   */
  datasetForm?: DatasetForm | (() => DatasetForm);
}

/** Plans one query for one caller. */
export interface Planner {
  /**
   * Throws GuardError 400 (unparseable, cannot rewrite safely, bad protocol IRI, too deep or too complex),
   * 403 (update, SERVICE, a hidden path named) or 500 (a hidden path that is no valid IRI).
   */
  plan(request: QueryRequest, grant: Grant, values?: RowValues): Plan;
  /** Plans served without parsing (hits) and with a parse (misses), and what the cache holds now. */
  cacheStats(): { hits: number; misses: number; entries: number; bytes: number };
}

/** How a request becomes a PreparedQuery; replaceable only so tests can count cache misses. */
export type Prepare = (request: QueryRequest, settings: PrepareSettings) => PreparedQuery;

/**
 * Creates a planner. Each query is planned from the template of its shape (createShapeCache:
 * parse, checks and serialisation once per shape and per value of its sensitive constants),
 * else from the preparation of its exact text, cached too; refusals are cached as well. With
 * `planCache.maxEntries` 0 every query is prepared anew: the reference the cached plans must equal.
 */
export function createPlanner(options: PlannerOptions, prepare: Prepare = prepareQuery): Planner {
  const planner = createClausePlanner(options, prepare);
  const { datasetForm = 'clauses' } = options;
  if (datasetForm === 'clauses') return planner;
  // Both forms answer alike (the oracles run each), so a plan made before the store was known may keep its clauses.
  const withFilters = typeof datasetForm === 'function' ? () => datasetForm() === 'graph-filters' : () => true;
  const { maxEntries, maxBytes } = options.planCache;
  if (maxEntries === 0) {
    return {
      plan(request, grant, values) {
        const plan = planner.plan(request, grant, values);
        return withFilters() ? inGraphFilterForm(plan) : plan;
      },
      cacheStats: () => planner.cacheStats(),
    };
  }
  // The form parses the finished text again (2 to 4 ms for a BSBM BI query): each text's form is
  // kept, by the text with clauses, which names the whole dataset, beside the plan cache's bounds.
  const forms = new LRUCache<string, Plan | typeof CLAUSES>({
    max: maxEntries,
    maxSize: maxBytes,
    sizeCalculation: (form, text) => 2 * text.length + (form === CLAUSES ? 0 : 2 * form.query.length + form.formBytes),
  });
  return {
    plan(request, grant, values) {
      const plan = planner.plan(request, grant, values);
      if (!withFilters()) return plan;
      const known = forms.get(plan.query);
      if (known === CLAUSES) return plan;
      if (known !== undefined)
        return {
          ...plan,
          query: known.query,
          clausesQuery: plan.query,
          formBody: known.formBody,
          formParts: known.formParts,
          formBytes: known.formBytes,
        };
      const form = inGraphFilterForm(plan);
      forms.set(plan.query, form === plan ? CLAUSES : form);
      return form;
    },
    cacheStats: () => planner.cacheStats(),
  };
}

/** A text the graph-filter form keeps with its clauses, in the planner's cache of forms. */
const CLAUSES = 'clauses';

/** The planner of texts with dataset clauses. */
function createClausePlanner(options: PlannerOptions, prepare: Prepare): Planner {
  const { baseIri, maxQueryDepth, planCache, rowChecks = 'join' } = options;
  const settings: PrepareSettings = {
    baseIri,
    maxQueryDepth,
    allowedFunctions: compileFunctionAllowList(options.allowedFunctions ?? []),
  };

  let prepares = 0;
  const prepareOrRefuse = (request: QueryRequest): ExactEntry => {
    prepares++;
    try {
      return prepare(request, settings);
    } catch (error) {
      if (error instanceof GuardError) return error;
      throw error;
    }
  };
  const fromEntry = (entry: ExactEntry, grant: Grant, values: RowValues | undefined): Plan => {
    if (entry instanceof GuardError) throw entry;
    return applyGrant(entry, grant, undefined, values, rowChecks);
  };

  if (planCache.maxEntries === 0) {
    return {
      plan: (request, grant, values) => fromEntry(prepareOrRefuse(request), grant, values),
      cacheStats: () => ({ hits: 0, misses: 0, entries: 0, bytes: 0 }),
    };
  }

  const cache = createShapeCache(planCache, baseIri, prepareOrRefuse, rowChecks);
  const byText = (request: QueryRequest, grant: Grant, values: RowValues | undefined): Plan =>
    fromEntry(cache.exact(request), grant, values);
  let hits = 0;
  let misses = 0;
  return {
    plan(request: QueryRequest, grant: Grant, values?: RowValues): Plan {
      // A hit is a plan that parsed nothing; a refusal thrown from the cache is a hit too.
      const before = prepares;
      try {
        return cache.plan(request, grant, values, byText);
      } finally {
        if (prepares === before) hits++;
        else misses++;
      }
    },
    cacheStats: () => ({ hits, misses, ...cache.size() }),
  };
}
