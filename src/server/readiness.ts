// The process's readiness state beyond its policies: whether it is draining before a shutdown.

/**
 * Whether the process still wants new traffic. `/readyz` answers 503 "draining" once
 * `startDraining` was called (on SIGTERM), while the listener keeps serving, so a load
 * balancer takes the instance out of rotation before it stops accepting connections.
 */
export interface Readiness {
  /** True once the shutdown began. */
  readonly draining: boolean;
  /** Turns `/readyz` to 503 for good; calling it again changes nothing. */
  startDraining(): void;
}

/** A fresh state: not draining. */
export function createReadiness(): Readiness {
  let draining = false;
  return {
    get draining() {
      return draining;
    },
    startDraining() {
      draining = true;
    },
  };
}
