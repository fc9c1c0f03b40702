import type { ActiveMesh, ReasonInfo } from '../contract/driver.ts';
import type { ParsedSource } from '../krm/source.ts';
import { outputEdits, writeOutputParts, type Edit } from '../krm/write.ts';
import type { KrmResult } from '../model.ts';
import { formatResultLine, summarize, summaryText } from '../results/result.ts';
import { escapeLine } from '../results/escape-line.ts';

import type { FileOutput, RunInput, RunOutput } from '../run.ts';
import type { Processed } from './inputs.ts';

/** What the driver's reason codes and package finding rules mean (`reasonInfo`, `findingInfo`), for the reports. */
export function reasonsOf(mesh: ActiveMesh): Readonly<Record<string, ReasonInfo>> {
  return Object.keys(mesh.findingInfo).length === 0 ? mesh.reasonInfo : { ...mesh.reasonInfo, ...mesh.findingInfo };
}

export function stderrFor(results: readonly KrmResult[], all: boolean): string {
  const lines = results.filter((r) => all || r.severity === 'error').map(formatResultLine);
  if (all) {
    lines.push(`meshinject: ${summaryText(summarize(results))}`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Exit 2: bad input, nothing on stdout, the reason on stderr (one line: `escapeLine`). */
export function badInput(message: string, results: KrmResult[] = []): RunOutput {
  return {
    stdout: '',
    stdoutParts: [],
    stderr: `meshinject: error: ${escapeLine(message)}\n`,
    exitCode: 2,
    results,
    files: [],
    workloads: [],
  };
}

/** Joins the outputs of several inputs into one YAML stream: each on its own lines, separated by `---`. */
/**
 * The outputs of several stream inputs as one stream, as pieces: a `---` line before each output after the first
 * that does not start with one, a newline after each but the last that does not end with one.
 */
export function joinStreams(outputs: ReadonlyArray<readonly string[]>): string[] {
  const nonEmpty = outputs.filter((parts) => parts.length > 0);
  const out: string[] = [];
  nonEmpty.forEach((parts, i) => {
    if (i > 0 && !/^---(\s|$)/.test((parts[0] ?? '').slice(0, 4))) out.push('---\n');
    out.push(...parts);
    if (i < nonEmpty.length - 1 && !parts[parts.length - 1]?.endsWith('\n')) out.push('\n');
  });
  return out;
}

/** A text held as pieces and joined once, on first read. */
export function joinedOnce(parts: readonly string[]): () => string {
  let text: string | undefined;
  return () => (text ??= parts.join(''));
}

/** Each input's output text (changed resources spliced in, dropped documents cut out), and how many top-level resources are kept. */
export function writeFiles(
  sources: readonly ParsedSource[],
  inputs: readonly RunInput[],
  processed: Processed,
  results: readonly KrmResult[],
): { files: FileOutput[]; kept: number } {
  let kept = 0;
  const files = sources.map((source, i): FileOutput => {
    const { changed, edits: fine, drops } = processed[i] ?? { changed: new Map(), edits: new Map(), drops: [] };
    const items = source.items.slice();
    const edits = new Map(changed);
    for (const d of drops) {
      items[d.position] = d;
      edits.set(d.position, '');
    }
    kept += source.items.filter((it) => it.position === it.topPosition).length - drops.length;
    const name = inputs[i]?.name;
    const parts = writeOutputParts({ ...source, items }, edits, results);
    const output = joinedOnce(parts);
    let made: Edit[] | undefined;
    const fineKept = new Map(fine);
    for (const d of drops) fineKept.delete(d.position);
    const editsOf = () => (made ??= outputEdits({ ...source, items }, edits, results, fineKept));
    return {
      ...(name !== undefined ? { name } : {}),
      input: source.text,
      parts,
      get output() {
        return output();
      },
      get edits() {
        return editsOf();
      },
    };
  });
  return { files, kept };
}
