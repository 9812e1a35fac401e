// Who is asking: the result of identification.

/** The agent IRI that DESIGN section 3 gives a caller without credentials. */
export const ANONYMOUS_AGENT = 'https://w3id.org/sparql-guard#Anonymous';

/** The identified caller of one request. */
export interface Caller {
  /** Agent IRI (API key entry, agentPrefix + trusted header, or ANONYMOUS_AGENT). */
  readonly agent: string;
  readonly groups: readonly string[];
  readonly authenticated: boolean;
}
