// The shapes of sparqljs tree nodes that more than one check or rewrite reads.

/** An RDF term as sparqljs gives it (NamedNode, Variable, BlankNode, Literal): only the fields read here. */
export interface Term {
  readonly termType: string;
  readonly value: string;
}

/** A property path (SPARQL 1.1 §9.1) as sparqljs gives it: an operator over IRIs and nested paths. */
export interface PathNode {
  readonly type: 'path';
  readonly pathType: string;
  readonly items: readonly (Term | PathNode)[];
}
