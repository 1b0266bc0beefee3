/**
 * "Did you mean" hints for unknown config keys.
 */

/** Edit distance (insert, delete, substitute, adjacent swap), bounded by small inputs. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j] ?? 0;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      d[i * cols + j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The closest candidate to `word`, when it is close enough to be a likely typo
 * (distance at most 2, and at most a third of the word's length, rounded up), else the one
 * candidate that the word is a prefix of, or that is a prefix of the word.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const budget = Math.min(2, Math.ceil(word.length / 3));
  let best: string | undefined;
  let bestDistance = budget + 1;
  for (const c of candidates) {
    const dist = editDistance(word.toLowerCase(), c);
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  if (best !== undefined || word.length < 4) return best;
  // A truncated or extended key (`shadow` for `shadow_mode`) when exactly one candidate fits.
  const lower = word.toLowerCase();
  const related = [...candidates].filter((c) => c.startsWith(lower) || lower.startsWith(c));
  return related.length === 1 ? related[0] : undefined;
}
