// The known word that an unknown one most likely misspells, for "did you mean ...?" in load errors.

/**
 * The word of `known` that `word` most likely misspells: the same letters ignoring case,
 * else the closest within two edits (a third of its length for long words); undefined
 * when none is that close.
 */
export function nearestWord(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === word.toLowerCase() ? 0 : editDistance(candidate, word);
    if (distance <= Math.max(2, Math.floor(candidate.length / 3)) && distance < bestDistance) {
      [best, bestDistance] = [candidate, distance];
    }
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions of one character each. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
