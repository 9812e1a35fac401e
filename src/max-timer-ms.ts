// The longest delay a Node timer accepts, and so the largest time bound the guard takes from a file.

/** Largest delay a Node timer accepts (2^31 - 1 ms); larger values fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;
