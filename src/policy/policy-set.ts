// The compiled, immutable form of the loaded policies that every request looks up (on the serving thread).

import type { GraphTemplate } from './compile-graph-template.js';

/**
 * Whom a policy applies to, as derived by the rules: every caller, every
 * authenticated caller, one agent IRI, or one group name.
 */
export type Principal =
  | { readonly kind: 'everyone' }
  | { readonly kind: 'authenticated' }
  | { readonly kind: 'agent'; readonly agent: string }
  | { readonly kind: 'group'; readonly group: string };

/**
 * The limits one policy sets for its callers; an absent member sets nothing (the caller's
 * other policies, or the configuration, decide).
 */
export interface PolicyLimits {
  /** `guard:timeoutMs`: how long the store may take for this caller (the global timeoutMs caps it). */
  readonly timeoutMs?: number;
  /** `guard:resultLimit`: the most solutions a query of this caller may return (a LIMIT). */
  readonly resultLimit?: number;
  /** `guard:maxConcurrent`: the most queries of one agent in flight at once, per process. */
  readonly maxConcurrent?: number;
}

/** A term of a row rule's pattern, as RDF/JS names its parts (no blank nodes: the loader refuses them). */
export type RuleTerm =
  | { readonly termType: 'NamedNode'; readonly value: string }
  | { readonly termType: 'Variable'; readonly value: string }
  | { readonly termType: 'Literal'; readonly value: string; readonly language: string; readonly datatype: string };

/** One triple pattern of a row rule. */
export interface RuleTriple {
  readonly subject: RuleTerm;
  readonly predicate: RuleTerm;
  readonly object: RuleTerm;
}

/** One VALUES block of a row rule: its variables and rows (undefined: UNDEF). */
export interface RuleValues {
  readonly variables: readonly string[];
  readonly rows: readonly (readonly (RuleTerm | undefined)[])[];
}

/**
 * A row rule (docs/policies.md, "Rows and columns"): a basic graph pattern over `?this`, read in the
 * unrestricted `data` graphs (empty: the granted graph itself), with the caller's identity bound to
 * `?agent`, `?group` and `?claim_NAME` by the rewriter. A triple (s p o) of a granted graph is in the
 * policy's rows when the pattern has a solution with `?this` = s.
 */
export interface RowRule {
  readonly triples: readonly RuleTriple[];
  readonly values: readonly RuleValues[];
  /** `guard:rowData` graphs, sorted; empty: the graph the triple is read in. */
  readonly data: readonly string[];
  /** The rule as the policy states it, for explain and check: the pattern text, or `?this a <C>`. */
  readonly source: string;
}

/** The predicates a graph shows: every one but `set` (`allow` false), or only those of `set` (`allow` true). */
export interface Columns {
  readonly allow: boolean;
  readonly set: ReadonlySet<string>;
}

/** A policy with a row rule granting a graph: its rule and its own columns. */
export interface RowGrant {
  /** The policy IRI, bare. */
  readonly policy: string;
  readonly columns: Columns;
  readonly rule: RowRule;
}

/**
 * What the caller sees of one graph when a policy granting it lists columns or rows
 * (docs/policies.md, "Rows and columns"): a triple (s p o) is visible when `open` shows p, or
 * when some entry of `rows` shows p and its rule holds for s.
 */
export interface GraphView {
  /** The columns the policies without a row rule show, merged; undefined when every policy granting the graph has one. */
  readonly open: Columns | undefined;
  /** The policies with a row rule whose columns `open` does not already show, in order of listing. */
  readonly rows: readonly RowGrant[];
}

/**
 * The graphs the policies of one caller grant, computed per request by map
 * look-ups in the compiled policy set.
 */
export interface Grant {
  /**
   * The caller's limits: per kind, the largest value among its policies that set one
   * (the most generous policy wins, as graphs are a union); a kind absent, or no limits at
   * all, = no policy sets it.
   */
  readonly limits?: PolicyLimits;
  /** Policy IRIs (bare, without angle brackets), in order of listing. */
  readonly policies: readonly string[];
  /** Every graph IRI granted for reading by at least one of those policies. */
  readonly graphs: ReadonlySet<string>;
  /**
   * Per granted graph, the predicates that stay hidden in it (docs/design/policy.md#vocabulary:
   * intersection of the hidePath sets of the caller's policies granting that
   * graph). Graphs with nothing hidden are absent.
   */
  readonly hiddenByGraph: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Per granted graph whose policies list columns (`guard:readPath`) or rows (a row rule), what the
   * caller sees of it; such a graph is absent from `hiddenByGraph`. Absent or empty when none does.
   */
  readonly views?: ReadonlyMap<string, GraphView>;
  /** The graphs this caller's graph templates gave (`guard:readGraphTemplate`), sorted, also in `graphs`; absent when none. */
  readonly templateGraphs?: readonly string[];
}

/** One policy after reasoning and validation. */
export interface CompiledPolicy {
  /** Policy IRI, bare (without angle brackets). */
  readonly iri: string;
  /** Absolute path of the policy file where the policy first appears. */
  readonly file: string;
  /** Position in order of listing (files in order, then first appearance in each file), from 0. */
  readonly order: number;
  /**
   * Graph IRIs the policy grants for reading: those derived (`guard:grantsGraph`), then the
   * graphs the store listed under its prefixes at this load, sorted, each once.
   */
  readonly graphs: readonly string[];
  /** `guard:readGraphPrefix` values of the policy, as stated. */
  readonly graphPrefixes: readonly string[];
  /** Predicate IRIs the policy hides in the graphs it grants (`guard:hidePath`). */
  readonly hidePaths: readonly string[];
  /**
   * Predicate IRIs the policy lets its callers read (`guard:readPath`, an allow-list of columns), sorted;
   * undefined when it lists none (every predicate but its hidden ones is visible).
   */
  readonly readPaths?: readonly string[];
  /** The policy's row rule (`guard:rowPattern`, `guard:rowClass`, `guard:rowData`); undefined: every row is visible. */
  readonly rowRule?: RowRule;
  /** Graphs granted per caller (`guard:readGraphTemplate`), expanded by grantFor; hidePath applies to them too. */
  readonly graphTemplates: readonly GraphTemplate[];
  readonly limits: PolicyLimits;
  /** Principals the policy applies to (`guard:appliesTo`, derived). */
  readonly principals: readonly Principal[];
}

/** For an operator tool: one principal with the policies that apply to it and what they grant. */
export interface PrincipalEntry {
  readonly principal: Principal;
  /** Human-readable: `Everyone`, `AuthenticatedAgent`, `<iri>` or `group "name"`. */
  readonly label: string;
  /** Policies that target this principal directly, in order of listing. */
  readonly policies: readonly CompiledPolicy[];
  /** Union of their graphs, sorted. */
  readonly graphs: readonly string[];
}

/**
 * For an operator tool printing every principal: the same entries as `PolicySet.principals`
 * with each union of graphs as sorted numbers into one table, so a large listing is written
 * without a string per graph reference.
 */
export interface PrincipalListing {
  /** Every graph some policy grants, sorted (as `Array.prototype.sort` orders strings). */
  readonly graphs: readonly string[];
  /** Every principal that some policy targets, in order of its first policy. */
  readonly entries: readonly ListedPrincipal[];
}

/** One principal of a `PrincipalListing`: a `PrincipalEntry` whose graphs are numbers. */
export interface ListedPrincipal extends Omit<PrincipalEntry, 'graphs'> {
  /** Union of their graphs, as ascending indexes into `PrincipalListing.graphs`. */
  readonly graphs: Int32Array;
}

/**
 * The frozen result of `loadPolicySet`. `grantFor` reads only `lookup`; the
 * rest serves explain and operator tools.
 */
export interface PolicySet {
  /** Every policy in order of listing. */
  readonly policies: readonly CompiledPolicy[];
  /** Every principal that some policy targets, in order of its first policy. */
  readonly principals: readonly PrincipalEntry[];
  /** The same listing with graphs as numbers (built when first read). */
  readonly listing: PrincipalListing;
  /** The look-up table behind `grantFor`. */
  readonly lookup: PrincipalLookup;
}

/** Principal -> policies in order of listing, split by kind so an agent IRI can never collide with a group name or a special principal. */
export interface PrincipalLookup {
  readonly everyone: readonly CompiledPolicy[];
  readonly authenticated: readonly CompiledPolicy[];
  readonly agents: PoliciesByName;
  readonly groups: PoliciesByName;
  /**
   * The claim names some graph template reads, sorted: with the agent and the groups, they
   * are everything a grant depends on (the key of the policy holder's cache of grants).
   */
  readonly templateClaims: readonly string[];
  /** True when a policy for Everyone or AuthenticatedAgent has a graph template: no precomputed grant then. */
  readonly baseTemplates: boolean;
  /** Precomputed grant of a caller matched only by Everyone (undefined: none apply). */
  readonly everyoneGrant: Grant | undefined;
  /** Precomputed grant of an authenticated caller matched only by Everyone and AuthenticatedAgent. */
  readonly authenticatedGrant: Grant | undefined;
}

/** The policies naming one agent IRI (or one group name), in order of listing; undefined when none does. */
export interface PoliciesByName {
  get(name: string): readonly CompiledPolicy[] | undefined;
}
