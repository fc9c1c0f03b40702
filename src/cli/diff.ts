import { unifiedDiffPieces, type TextEdit } from '../reports/unified-diff.ts';

/**
 * `meshinject diff`: the unified diff injection would make, one git-style section per changed file
 * (`diff --git a/PATH b/PATH`, `--- a/PATH`, `+++ b/PATH`, hunks with 3 lines of context), built from the
 * edits the run made (`src/reports/unified-diff.ts`), in time linear in the file. Pure.
 */

/**
 * The unified diff of one file, as text pieces in order (none when unchanged).
 *
 * @param path the path as the user named it (`-`/stdin: `stdin`); quoted in the headers as git quotes paths
 * @param before the file's text
 * @param edits the edits that make the text injection would write (`FileOutput.edits`)
 * @param colour ANSI colours (for a terminal)
 */
export function unifiedDiff(path: string, before: string, edits: readonly TextEdit[], colour = false): string[] {
  return unifiedDiffPieces(path, before, edits, colour);
}
