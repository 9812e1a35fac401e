// The protocol request of the query operation: what the planner takes, as the HTTP edge reads it.

/**
 * A read query as the SPARQL 1.1 Protocol delivers it: the query text and the
 * protocol dataset (`default-graph-uri` / `named-graph-uri`, section 2.1.4),
 * in the order they arrived, not yet resolved or checked.
 */
export interface QueryRequest {
  readonly query: string;
  readonly defaultGraphs: readonly string[];
  readonly namedGraphs: readonly string[];
}
