// Who is asking: the result of identification.

/** The identified caller of one request. */
export interface Caller {
  /** Agent IRI (API key entry, agentPrefix + trusted header, or guard:Anonymous). */
  readonly agent: string;
  readonly groups: readonly string[];
  readonly authenticated: boolean;
}
