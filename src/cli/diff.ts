import { structuredPatch } from 'diff';

/**
 * `meshinject diff`: the unified diff injection would make, one git-style section per changed file
 * (`diff --git a/PATH b/PATH`, `--- a/PATH`, `+++ b/PATH`, hunks with 3 lines of context), computed
 * with the `diff` package. Pure.
 */

/** ANSI colours of a diff on a terminal (as git: headers bold, hunk headers cyan, removals red, additions green). */
const COLOUR = { bold: '\u001b[1m', cyan: '\u001b[36m', red: '\u001b[31m', green: '\u001b[32m', reset: '\u001b[m' };

/**
 * The unified diff of one file, or '' when unchanged.
 *
 * @param path the path as the user named it (`-`/stdin: `stdin`)
 * @param before the file's text
 * @param after the text injection would write
 * @param colour ANSI colours (for a terminal)
 */
export function unifiedDiff(path: string, before: string, after: string, colour = false): string {
  if (before === after) return '';
  const p = structuredPatch(`a/${path}`, `b/${path}`, before, after, '', '', { context: 3 });
  const paint = (c: keyof typeof COLOUR, s: string) => (colour ? `${COLOUR[c]}${s}${COLOUR.reset}` : s);
  const out = [paint('bold', `diff --git a/${path} b/${path}`), paint('bold', `--- a/${path}`), paint('bold', `+++ b/${path}`)];
  for (const h of p.hunks) {
    const range = (start: number, n: number) => (n === 1 ? `${start}` : `${n === 0 ? start : start},${n}`);
    out.push(paint('cyan', `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`));
    for (const l of h.lines) {
      if (l.startsWith('\\')) out.push(l);
      else out.push(l[0] === '-' ? paint('red', l) : l[0] === '+' ? paint('green', l) : l);
    }
  }
  return `${out.join('\n')}\n`;
}
