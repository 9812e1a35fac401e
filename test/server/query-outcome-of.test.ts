// The metrics name every refusal the guard answers on the query path by its own outcome, never by a fallback.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GuardError, type GuardStatus } from '../../src/guard-error.js';
import { createConcurrencyLimiter } from '../../src/server/create-concurrency-limiter.js';
import { queryOutcomeOf } from '../../src/server/query-outcome-of.js';

test('queryOutcomeOf: a caller past its guard:maxConcurrent is too_many_requests, not bad_request', () => {
  const limiter = createConcurrencyLimiter();
  const leave = limiter.enter('https://example.org/agents/alice', 1);
  let refusal: unknown;
  try {
    limiter.enter('https://example.org/agents/alice', 1);
  } catch (error) {
    refusal = error;
  }
  leave();
  assert.ok(refusal instanceof GuardError && refusal.status === 429, 'the limiter refuses the second query with 429');
  assert.equal(queryOutcomeOf(refusal), 'too_many_requests');
});

test('queryOutcomeOf: each status of the query path has its own outcome', () => {
  const cases: readonly [GuardStatus, string, string][] = [
    [400, 'query is not valid SPARQL: x', 'parse'],
    [401, 'unknown API key', 'unauthenticated'],
    [403, 'SERVICE is not allowed', 'service'],
    [413, 'request body too large', 'too_large'],
    [415, 'unsupported content type', 'unsupported_media_type'],
    [502, 'upstream unreachable', 'upstream_failed'],
    [503, 'upstream not verified', 'not_ready'],
    [500, 'boom', 'internal_error'],
  ];
  for (const [status, message, outcome] of cases)
    assert.equal(queryOutcomeOf(new GuardError(status, message)), outcome, `${status} ${message}`);
});
