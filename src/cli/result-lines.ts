import type { KrmResult } from '../model.ts';
import { formatResultLine } from '../results/result.ts';

/**
 * Text for one stderr line: control characters (a newline, an ESC sequence in a resource name or message)
 * are written as `\n`, `\u001b`, so a result is always one line and cannot move a terminal's cursor.
 */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * The warning and error results of a run as stderr lines, one per result, in result order (as kubectl prints
 * its `Warning:` lines): `[warning] apps/v1/Deployment/shop/web: skipped (...) (web.yaml)`. The one place
 * that formats them for the CLI's stream runs.
 */
export function visibleResultLines(results: readonly KrmResult[]): string {
  let out = '';
  for (const r of results) if (r.severity !== 'info') out += `${oneLine(formatResultLine(r))}\n`;
  return out;
}
