// Gives the event loop a turn every few milliseconds of a long piece of work on the thread that serves requests.

/** The longest stretch of work between two turns of the event loop, milliseconds. */
const SLICE_MS = 4;

/**
 * A pacer for one piece of work: call it after each item; it returns a promise to await (a turn
 * of the event loop, so requests that wait are served) once SLICE_MS have passed since the last
 * turn, and undefined otherwise. Work is paced by time, not by items, because items differ in
 * cost by orders of magnitude; an item should cost well over the clock read (about 0.1 us).
 */
export function createPacer(): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
