// Who is asking: the result of identification.

/** The identified caller of one request. */
export interface Caller {
  /** Agent IRI (API key entry, agentPrefix + trusted header, or guard:Anonymous). */
  readonly agent: string;
  readonly groups: readonly string[];
  readonly authenticated: boolean;
  /** How the caller was identified: an API key (Bearer, Basic or X-API-Key), a JWT, the trusted headers, or none; absent for a caller a tool made up (check, explain). */
  readonly via?: 'api-key' | 'jwt' | 'trusted-headers' | 'anonymous';
  /**
   * A JWT caller's top-level claims, for graph templates (`{claim.NAME}`): the value of a
   * string claim, null for a claim present with any other type. Absent for other callers.
   */
  readonly claims?: ReadonlyMap<string, string | null>;
}
