// Percentiles of a sample, nearest-rank, as the bench tables report them.

/** Nearest-rank percentile (p in 0..100) of an ascending array; NaN for an empty one. */
export function percentile(ascending: ArrayLike<number>, p: number): number {
  if (ascending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * ascending.length);
  return ascending[Math.min(ascending.length, Math.max(1, rank)) - 1]!;
}
