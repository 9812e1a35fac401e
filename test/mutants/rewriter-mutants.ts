// Mutants of the rewriter: each a small change to the built code that would let a caller read past its view; `npm run mutants` shows an attack or an oracle fails for each.

/** One change to one built module of the rewriter, applied to a copy of `dist/`. */
export interface Mutant {
  readonly id: string;
  /** The module under `dist/src/`, as built. */
  readonly file: string;
  /** Text that occurs exactly once in the built module. */
  readonly find: string;
  readonly replace: string;
  /** What the mutant would let through. */
  readonly what: string;
}

/**
 * The mutants, by the guarantee each breaks: the dataset (graphs), hidden paths, rows and columns,
 * DESCRIBE, limits. Written against the built JavaScript, which keeps the source's text but for the
 * types: a find that no longer occurs once fails the run (and `mutants.test.ts`), so a refactor
 * brings the list up to date rather than silently testing nothing.
 */
export const REWRITER_MUTANTS: readonly Mutant[] = [
  {
    id: 'from-ungranted',
    file: 'sparql/apply-grant.js',
    find: 'const fromDefault = readsDefault ? defaults.filter((graph) => grant.graphs.has(graph)) : NO_GRAPHS;',
    replace: 'const fromDefault = readsDefault ? defaults.filter((graph) => true) : NO_GRAPHS;',
    what: "a FROM or default-graph-uri the caller wrote is kept without the grant's intersection",
  },
  {
    id: 'from-named-ungranted',
    file: 'sparql/apply-grant.js',
    find: '...(readsNamed ? reachableNamed(prepared, named).filter((graph) => grant.graphs.has(graph)) : NO_GRAPHS)',
    replace: '...(readsNamed ? reachableNamed(prepared, named).filter((graph) => true) : NO_GRAPHS)',
    what: 'a FROM NAMED or named-graph-uri the caller wrote is kept without the intersection',
  },
  {
    id: 'no-empty-graph',
    file: 'sparql/apply-grant.js',
    find: "return out === '' ? prefix + EMPTY_GRAPH + '>\\n' : out;",
    replace: 'return out;',
    what: "a grant with no graph for a clause sends no clause: the store's own default dataset answers",
  },
  {
    id: 'graph-iri-ungranted',
    file: 'sparql/apply-grant.js',
    find: 'part.requested && keep.has(part.iri)',
    replace: 'part.requested',
    what: 'GRAPH <g> of a graph not granted is kept',
  },
  {
    id: 'graph-variable-ungranted',
    file: 'sparql/apply-grant.js',
    find: "named.filter((graph) => (typeof keep === 'boolean' ? keep : keep.has(graph)))",
    replace: 'named',
    what: 'GRAPH ?g ranges over requested named graphs that are not granted',
  },
  {
    id: 'graph-variable-shared-set',
    file: 'sparql/apply-grant.js',
    find: 'if (!part.perGraph && !mixed && !added)',
    replace: 'if (true)',
    what: 'GRAPH ?g over graphs that hide different predicates is checked with the first graph’s set only',
  },
  {
    id: 'hidden-filter-flipped',
    file: 'sparql/apply-grant.js',
    find: "out += ` FILTER(${variable} ${hidden.allow === true ? 'IN' : 'NOT IN'} (${hidden.list}))`;",
    replace: "out += ` FILTER(${variable} ${hidden.allow === true ? 'NOT IN' : 'IN'} (${hidden.list}))`;",
    what: 'the filter on a variable predicate keeps the hidden predicates instead of removing them',
  },
  {
    id: 'hidden-filter-dropped',
    file: 'sparql/apply-grant.js',
    find: "out += ` FILTER(${variable} ${hidden.allow === true ? 'IN' : 'NOT IN'} (${hidden.list}))`;",
    replace: "out += '';",
    what: 'a variable predicate is not filtered: hidden triples are read',
  },
  {
    id: 'negated-set-open',
    file: 'sparql/apply-grant.js',
    find: "'!(' + part.members + (part.forward ? hidden.forward : '') + (part.inverse ? hidden.inverse : '') + ')'",
    replace: "'!(' + part.members + ')'",
    what: 'a negated property set steps over hidden predicates',
  },
  {
    id: 'zero-length-open',
    file: 'sparql/apply-grant.js',
    find: '? zeroLengthFilter(part, end, hidden.list, hidden.allow)',
    replace: "? ''",
    what: 'a zero-length path end need not be a node of a visible triple',
  },
  {
    id: 'zero-length-unseen',
    file: 'sparql/mark-hidden-paths.js',
    find: "case '?':\n            return true;",
    replace: "case '?':\n            return false;",
    what: 'a path that can match zero steps is not recognised as one',
  },
  {
    id: 'per-graph-exists',
    file: 'sparql/apply-grant.js',
    find: 'hidesAll(own, allow) ? `NOT EXISTS ${held(iri)}`',
    replace: 'hidesAll(own, allow) ? `EXISTS ${held(iri)}`',
    what: 'in a default graph merging different hidden sets, a triple held only by a hiding graph is kept',
  },
  {
    id: 'row-filter-dropped',
    file: 'sparql/apply-grant.js',
    find: "if (part.triples.length === 0)\n        return '';",
    replace: "if (true)\n        return '';",
    what: 'no row check: every subject of a restricted graph is read',
  },
  {
    id: 'row-columns-open',
    file: 'sparql/write-row-filter.js',
    find: 'return columns.allow === columns.set.has(triple.iri) ? TRUE : FALSE;',
    replace: 'return TRUE;',
    what: "a constant predicate outside a policy's columns is read",
  },
  {
    id: 'row-columns-negation',
    file: 'sparql/write-row-filter.js',
    find: "return `${triple.predicate} ${columns.allow ? 'NOT IN' : 'IN'} (${iriList(columns.set)})`;",
    replace: "return `${triple.predicate} ${columns.allow ? 'IN' : 'NOT IN'} (${iriList(columns.set)})`;",
    what: 'with two policies on one graph, the negation of one policy’s columns is written the wrong way',
  },
  {
    id: 'row-disjuncts-or',
    file: 'sparql/write-row-filter.js',
    find: "return `!(${negations.join(' && ')})`;",
    replace: "return `!(${negations.join(' || ')})`;",
    what: 'with two policies on one graph, a triple passes when either rule’s negation fails',
  },
  {
    id: 'row-rule-any-agent',
    file: 'sparql/write-row-filter.js',
    find: "bound += bind('agent', [`<${agent}>`], 'iri');",
    replace: "bound += '';",
    what: 'a rule reading ?agent is not tied to the caller: every agent’s rows are read',
  },
  {
    id: 'describe-shared-tree',
    file: 'sparql/rewrite-describe.js',
    find: 'const copy = (value) => copyTree(value, blank);',
    replace: 'const copy = (value) => value;',
    what: 'DESCRIBE of two variables shares one pattern between branches: the second is written unrestricted',
  },
  {
    id: 'result-limit-ignored',
    file: 'sparql/apply-grant.js',
    find: 'const cap = grant.limits?.resultLimit;',
    replace: 'const cap = undefined;',
    what: "a policy's guard:resultLimit is not applied",
  },
  {
    id: 'service-forwarded',
    file: 'sparql/prepare-query.js',
    find: "if (node['type'] === 'service')",
    replace: 'if (false)',
    what: 'SERVICE reaches the store',
  },
  {
    id: 'graph-filter-default-unheld',
    file: 'sparql/graph-filter-form.js',
    find: 'if (!inDefault) {',
    replace: 'if (true) {',
    what: "datasetForm graph-filters: the default graph's triple patterns left outside any GRAPH, read over every graph of the store (checkHeld must refuse the text)",
  },
  {
    id: 'graph-filter-default-reads-named',
    file: 'sparql/graph-filter-form.js',
    find: 'out.push(held(fresh(), [bgp], defaults));',
    replace: 'out.push(held(fresh(), [bgp], [...defaults, ...named]));',
    what: "datasetForm graph-filters: the default graph's patterns held to the FROM NAMED graphs too, a dataset the caller did not ask for and its hidden paths unchecked",
  },
  {
    id: 'update-forwarded',
    file: 'sparql/prepare-query.js',
    find: "if (tree.type === 'update')",
    replace: 'if (false)',
    what: 'an update operation in the query text reaches the store',
  },
];

/**
 * The test files that must catch a mutant, in the order they are run (the first to fail kills it):
 * attacks and oracles that judge what a caller receives, never the golden texts or the units,
 * which would catch any change of text and prove nothing about a leak.
 */
export const KILLING_TESTS: readonly string[] = [
  'security/dataset-clauses.test.js',
  'security/service.test.js',
  'security/update-smuggling.test.js',
  'security/graph-patterns.test.js',
  'security/per-graph-hidden.test.js',
  'security/zero-length-paths.test.js',
  'security/describe.test.js',
  'security/rows/combined-policies.test.js',
  'security/rows/negation.test.js',
  'security/rows/describe.test.js',
  'integration/hidden-paths.test.js',
  'integration/limits-per-caller.test.js',
  'security/mixed-default-graph.test.js',
  'security/rows/oracle.test.js',
  'security/redaction-oracle.test.js',
  'security/rows/random-policies.test.js',
];
