// The one way the guard writes a positive EXISTS test into a rewritten query.

/**
 * `EXISTS group`, written `!NOT EXISTS group`: the same test (SPARQL 1.1 §17.4.1.4; neither form raises an
 * error, so the negation of the one is the other). Virtuoso 7.2.5 drops a positive EXISTS inside a DISTINCT or
 * grouped sub-select that is joined with a pattern outside it, as if it held; it keeps a NOT EXISTS there
 * (docs/design/sparql.md, "Rows and columns"). Every positive EXISTS of a row check, merged-graph check and
 * zero-length check the guard writes is written here (an OR of row policies' tests is written with NOT EXISTS only:
 * writeRowFilter's viewCondition).
 */
export function existsTest(group: string): string {
  return `!NOT EXISTS ${group}`;
}

/** ` FILTER(EXISTS group)`, written as existsTest does. */
export function existsFilter(group: string): string {
  return ` FILTER(${existsTest(group)})`;
}
