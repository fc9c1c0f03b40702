/** "Did you mean": the nearest known name to a misspelt one (options, commands, config fields). Pure. */
import { defined } from './checked.ts';

/** Edit distance (Levenshtein), for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  const cell = (j: number): number => defined(row[j], 'an edit-distance cell');
  for (let i = 1; i <= a.length; i++) {
    let prev = cell(0);
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = cell(j);
      row[j] = Math.min(cur + 1, cell(j - 1) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return cell(b.length);
}

/**
 * The closest known name to `word` (case-insensitive edit distance at most a third of its length, at
 * least 2), or undefined.
 */
export function suggest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = distance(word.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}
