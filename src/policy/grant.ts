// What a caller may read: the result of policy look-up.

/**
 * The graphs the policies of one caller grant, computed per request by map
 * look-ups in the compiled policy set.
 */
export interface Grant {
  /** Policy IRIs (bare, without angle brackets), in order of listing. */
  readonly policies: readonly string[];
  /** Every graph IRI granted for reading by at least one of those policies. */
  readonly graphs: ReadonlySet<string>;
  /**
   * Per granted graph, the predicates that stay hidden in it (DESIGN section 3:
   * intersection of the hidePath sets of the caller's policies granting that
   * graph). Graphs with nothing hidden are absent.
   */
  readonly hiddenByGraph: ReadonlyMap<string, ReadonlySet<string>>;
}
