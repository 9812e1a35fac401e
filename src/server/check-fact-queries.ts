// Refuses a configuration whose fact source query is not one SPARQL 1.1 CONSTRUCT, before anything starts.

import { ConfigError, type GuardConfig } from '../config/read-config.js';
import { findConstructProblem } from '../sparql/find-construct-problem.js';

/**
 * Throws the ConfigError of the first `facts[i].query` that is not one SPARQL 1.1 CONSTRUCT with
 * absolute IRIs (findConstructProblem), so a typo fails the start, not the first refresh, and the
 * guard never sends an update or a relative IRI to its store. Here rather than in readConfig:
 * config/ parses JSON and knows no SPARQL; the parser enters through sparql/ alone.
 */
export function checkFactQueries(config: Pick<GuardConfig, 'facts'>): void {
  (config.facts ?? []).forEach((source, index) => {
    const problem = findConstructProblem(source.query);
    if (problem !== undefined) {
      throw new ConfigError(
        `config facts[${index}].query: ${problem} (give one SPARQL 1.1 CONSTRUCT query with absolute IRIs (PREFIX declarations are fine))`,
      );
    }
  });
}
