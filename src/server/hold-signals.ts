// Holds SIGHUP, SIGTERM and SIGINT from the first moment of `serve` until its code takes them over, so none ends the process by default.

/** The signals `serve` answers: SIGHUP reloads, SIGTERM and SIGINT shut down. */
export type ServeSignal = 'SIGHUP' | 'SIGTERM' | 'SIGINT';

/**
 * SIGHUP is taken last: whoever watches the process (the signal tests read /proc's caught set)
 * and sees SIGHUP caught knows SIGTERM and SIGINT are too. Taken first, a SIGTERM sent the moment
 * SIGHUP showed could land before its own handler (CI saw the process end by the signal).
 */
const SERVE_SIGNALS: readonly ServeSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Signals held since `holdSignals`; `release` hands them over. */
export interface HeldSignals {
  /**
   * Stops holding and returns the signals that arrived meanwhile, in order. Call it after the
   * real listeners are installed: a signal that found no listener at all would end the process.
   */
  release(): ServeSignal[];
}

/**
 * Starts holding the serve signals. It imports nothing, so the command line can call it before
 * it imports the server (about half a second in which SIGHUP's and SIGTERM's default action,
 * ending the process, would otherwise apply; docs/design/server.md, "Signals from the start").
 */
export function holdSignals(): HeldSignals {
  const arrived: ServeSignal[] = [];
  const hold = (signal: NodeJS.Signals): void => {
    arrived.push(signal as ServeSignal);
  };
  for (const signal of SERVE_SIGNALS) process.on(signal, hold);
  return {
    release() {
      for (const signal of SERVE_SIGNALS) process.off(signal, hold);
      return arrived;
    },
  };
}
