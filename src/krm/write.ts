import type { KrmResult } from '../model.ts';
import { resultsYaml } from '../results/result.ts';
import type { ParsedSource } from './source.ts';

/**
 * A text edit: replace [start, end) of the input text with `text` (UTF-16 offsets into the whole input text). The
 * output is the input with these splices (`outputEdits`); the editors of `src/edit/` produce them.
 */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Writes the output in the input's framing: the input text with each changed resource's range replaced by
 * its new text, so unchanged resources (and the wrapper, `functionConfig`, comments between items) stay
 * byte for byte. For a ResourceList, an input `results` entry is dropped and the run's results are appended.
 *
 * @param source the parsed input
 * @param changed new source text of changed resources, by `SourceItem.position`
 * @param results results to append (ResourceList only; other forms report results on stderr)
 */
export function writeOutput(
  source: ParsedSource,
  changed: ReadonlyMap<number, string>,
  results: readonly KrmResult[],
): string {
  return writeOutputParts(source, changed, results).join('');
}

/**
 * `writeOutput` as the pieces that make it up, in order, without joining them: slices of the input and the new
 * texts. An output larger than a JavaScript string can hold (about 512 MiB) is written piece by piece.
 */
export function writeOutputParts(
  source: ParsedSource,
  changed: ReadonlyMap<number, string>,
  results: readonly KrmResult[],
): string[] {
  const text = source.text;
  const parts: string[] = [];
  let at = 0;
  for (const e of outputEdits(source, changed, results)) {
    parts.push(text.slice(at, e.start), e.text);
    at = e.end;
  }
  parts.push(text.slice(at));
  return parts.filter((p) => p.length > 0);
}

/**
 * The edits that make `writeOutput`'s text from the input text: replacements of [start, end) of
 * `source.text` (UTF-16 offsets), sorted, non-overlapping; the results of a YAML ResourceList are an insertion
 * at the end. Applied in order they give exactly `writeOutputParts(...).join('')` (`meshinject diff` builds its
 * hunks from them).
 *
 * @param fine for a changed resource, finer edits inside its range that give its new text (`ChangedResource.edits`),
 *   used instead of one edit replacing the whole resource
 */
export function outputEdits(
  source: ParsedSource,
  changed: ReadonlyMap<number, string>,
  results: readonly KrmResult[],
  fine?: ReadonlyMap<number, readonly Edit[]>,
): Edit[] {
  const edits: Edit[] = [];
  for (const [position, text] of changed) {
    const item = source.items[position];
    if (item === undefined) throw new Error(`outputEdits: no resource at position ${position}`);
    const own = fine?.get(position);
    if (own) edits.push(...own);
    else edits.push({ start: item.start, end: item.end, text });
  }
  if (source.form === 'resource-list' && source.resultsRange) {
    const [s, e] = source.resultsRange;
    edits.push({ start: s, end: e, text: '' });
  }
  const layout = source.form === 'resource-list' && results.length > 0 ? source.jsonLayout : undefined;
  if (layout) {
    // Inserted after the wrapper's last entry: never inside a trailing comment, never a second `results`.
    const json =
      layout.pad === undefined
        ? JSON.stringify(results)
        : JSON.stringify(results, null, layout.unit).replace(/\n/g, `\n${layout.pad}`);
    edits.push({
      start: layout.at,
      end: layout.at,
      text: layout.pad === undefined ? `, "results": ${json}` : `,\n${layout.pad}"results": ${json}`,
    });
  }
  edits.sort((a, b) => a.start - b.start || a.end - b.end);
  const text = source.text;
  if (source.form === 'resource-list' && results.length > 0 && !source.json) {
    const eol = text.includes('\r\n') ? '\r\n' : '\n';
    let block = resultsYaml(results);
    if (eol === '\r\n') block = block.replace(/\n/g, '\r\n');
    edits.push({
      start: text.length,
      end: text.length,
      text: (lastCharOf(text, edits) ?? '\n') === '\n' ? block : `${eol}${block}`,
    });
  }
  return edits;
}

/** The last character of `text` with the sorted `edits` applied (undefined when that is empty). */
function lastCharOf(text: string, edits: readonly Edit[]): string | undefined {
  let end = text.length;
  for (let i = edits.length - 1; i >= 0; i--) {
    const e = edits[i];
    if (e === undefined) continue;
    if (e.end < end) return text[end - 1];
    if (e.text.length > 0) return e.text[e.text.length - 1];
    end = e.start;
  }
  return end > 0 ? text[end - 1] : undefined;
}
