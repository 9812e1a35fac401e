// Names the outcome of a refused or failed query for the metrics, from the status and message of its GuardError.

import type { GuardError } from '../guard-error.js';
import type { QueryOutcome } from '../metrics/create-metrics.js';

/** Per status, the first message pattern that matches names the outcome; the last entry is the status's fallback. */
const OUTCOMES: Readonly<Record<number, readonly (readonly [RegExp, QueryOutcome])[]>> = {
  400: [
    [/nested deeper|too complex/, 'too_complex'],
    [/not valid SPARQL/, 'parse'],
    [/function|aggregate/, 'function'],
    [/rewritten safely/, 'unsafe_rewrite'],
    [/(?:)/, 'bad_request'],
  ],
  401: [[/(?:)/, 'unauthenticated']],
  403: [
    [/update/i, 'update'],
    [/SERVICE/, 'service'],
    [/hidden path/, 'hidden_path'],
    [/(?:)/, 'forbidden'],
  ],
  413: [[/(?:)/, 'too_large']],
  415: [[/(?:)/, 'unsupported_media_type']],
  429: [[/(?:)/, 'too_many_requests']],
  502: [[/(?:)/, 'upstream_failed']],
  503: [
    [/ignores FROM/, 'store_ignores_from'],
    [/(?:)/, 'not_ready'],
  ],
};

/** The outcome label of a query that ended with `error`. */
export function queryOutcomeOf(error: GuardError): QueryOutcome {
  for (const [pattern, outcome] of OUTCOMES[error.status] ?? []) if (pattern.test(error.message)) return outcome;
  return error.status >= 500 ? 'internal_error' : 'bad_request';
}
