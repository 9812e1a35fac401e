// Who is asking: the result of identification.

/** The agent IRI that docs/design.md#vocabulary gives a caller without credentials. */
export const ANONYMOUS_AGENT = 'https://w3id.org/sparql-guard#Anonymous';

/** The identified caller of one request. */
export interface Caller {
  /** Agent IRI (API key entry, agentPrefix + trusted header, or ANONYMOUS_AGENT). */
  readonly agent: string;
  readonly groups: readonly string[];
  readonly authenticated: boolean;
}
