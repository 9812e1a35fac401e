// Counts the queries each agent has in flight in this process and refuses the one past its limit with 429.

import { GuardError } from '../guard-error.js';

/** Seconds a refused client is asked to wait (RFC 9110 section 10.2.3): queries usually end within one. */
export const RETRY_AFTER_SECONDS = 1;

/** The per-agent counters of one process. */
export interface ConcurrencyLimiter {
  /**
   * Counts one more query of `agent`, or throws GuardError 429 with `Retry-After` when it
   * already has `max` in flight. Returns the function that ends the count (idempotent).
   * Without `max` nothing is counted.
   */
  enter(agent: string, max: number | undefined): () => void;
  /** Queries in flight of `agent` (for tests). */
  inFlight(agent: string): number;
}

/**
 * Creates the counters. They live in one process: with `workers` > 1 each worker counts its
 * own, so an agent may have up to workers x max queries in flight on one host, and each
 * replica counts separately (docs/design/policy.md, "Limits per caller"). An agent's entry is
 * removed when its count drops to zero, so the map holds only agents with queries in flight.
 */
export function createConcurrencyLimiter(): ConcurrencyLimiter {
  const counts = new Map<string, number>();
  const refusal = (max: number) =>
    new GuardError(
      429,
      'too_many_requests',
      `this caller already has ${max} ${max === 1 ? 'query' : 'queries'} running (its limit); retry later`,
      {
        'retry-after': String(RETRY_AFTER_SECONDS),
      },
    );
  return {
    inFlight: (agent) => counts.get(agent) ?? 0,
    enter(agent, max) {
      if (max === undefined) return noop;
      const count = counts.get(agent) ?? 0;
      if (count >= max) throw refusal(max);
      counts.set(agent, count + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        const now = (counts.get(agent) ?? 1) - 1;
        if (now <= 0) counts.delete(agent);
        else counts.set(agent, now);
      };
    },
  };
}

function noop(): void {}
