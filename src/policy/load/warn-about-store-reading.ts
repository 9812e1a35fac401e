// Warns about the IRIs a policy set grants, hides or reads that a store may refuse to read in a query (the load's warnings, as check and the log show them).

import { storeReadingProblem } from '../../iri.js';
import type { AttachedPolicies } from './worker-messages.js';

/** IRIs named in the warnings; the rest are counted, as the prefix listing does. */
const NAMED = 5;

/**
 * One line per IRI of the table (a granted graph, written or derived; a hidden path; a column; a
 * row rule's data graph) that storeReadingProblem finds: Jena 4.5 answers every query naming an
 * IRI that is not in NFC with 500, so a caller granted one gets only errors. The load does not
 * refuse them: Oxigraph and Virtuoso read them, and the graph may hold data only those stores keep.
 */
export function warnAboutStoreReading(table: AttachedPolicies): string[] {
  const found = new Map<string, string>();
  const judge = (what: string, iri: string): void => {
    if (found.has(iri)) return;
    const problem = storeReadingProblem(iri);
    if (problem !== undefined) found.set(iri, `${what} <${iri}> ${problem}: a caller's query naming it may fail on such a store`);
  };
  for (const graph of table.graphs) judge('the graph', graph);
  for (const paths of table.hidePaths) for (const path of paths) judge('the hidden path', path);
  for (const restriction of table.restrictions) {
    for (const path of restriction.readPaths ?? []) judge('the column', path);
    for (const graph of restriction.rowRule?.data ?? []) judge('the row data graph', graph);
  }
  const lines = [...found.values()];
  if (lines.length <= NAMED) return lines;
  return [...lines.slice(0, NAMED), `and ${lines.length - NAMED} more IRIs of the policies that a store may refuse to read in a query`];
}
