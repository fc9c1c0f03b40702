import type { KrmResult } from '../model.ts';
import { resultsYaml } from '../results/result.ts';
import type { ParsedSource } from './source.ts';

/**
 * Writes the output in the input's framing: the input text with each changed resource's range replaced by
 * its new text, so unchanged resources (and the wrapper, `functionConfig`, comments between items) stay
 * byte for byte. For a ResourceList, an input `results` entry is dropped and the run's results are appended.
 *
 * @param source the parsed input
 * @param changed new source text of changed resources, by `SourceItem.position`
 * @param results results to append (ResourceList only; other forms report results on stderr)
 */
export function writeOutput(source: ParsedSource, changed: ReadonlyMap<number, string>, results: readonly KrmResult[]): string {
  return writeOutputParts(source, changed, results).join('');
}

/**
 * `writeOutput` as the pieces that make it up, in order, without joining them: slices of the input and the new
 * texts. An output larger than a JavaScript string can hold (about 512 MiB) is written piece by piece.
 */
export function writeOutputParts(source: ParsedSource, changed: ReadonlyMap<number, string>, results: readonly KrmResult[]): string[] {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const [position, text] of changed) {
    const item = source.items[position]!;
    edits.push({ start: item.start, end: item.end, text });
  }
  if (source.form === 'resource-list' && source.resultsRange) {
    const [s, e] = source.resultsRange;
    edits.push({ start: s, end: e, text: '' });
  }
  const layout = source.form === 'resource-list' && results.length > 0 ? source.jsonLayout : undefined;
  if (layout) {
    // Inserted after the wrapper's last entry: never inside a trailing comment, never a second `results`.
    const json = layout.pad === undefined ? JSON.stringify(results) : JSON.stringify(results, null, layout.unit).replace(/\n/g, `\n${layout.pad}`);
    edits.push({ start: layout.at, end: layout.at, text: layout.pad === undefined ? `, "results": ${json}` : `,\n${layout.pad}"results": ${json}` });
  }
  edits.sort((a, b) => a.start - b.start || a.end - b.end);
  const text = source.text;
  const parts: string[] = [];
  let at = 0;
  for (const e of edits) {
    parts.push(text.slice(at, e.start), e.text);
    at = e.end;
  }
  parts.push(text.slice(at));
  if (source.form === 'resource-list' && results.length > 0 && !source.json) {
    const eol = text.includes('\r\n') ? '\r\n' : '\n';
    const last = [...parts].reverse().find((p) => p.length > 0);
    if (last !== undefined && !last.endsWith('\n')) parts.push(eol);
    let block = resultsYaml(results);
    if (eol === '\r\n') block = block.replace(/\n/g, '\r\n');
    parts.push(block);
  }
  return parts.filter((p) => p.length > 0);
}
