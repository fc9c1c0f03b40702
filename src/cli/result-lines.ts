import type { KrmResult } from '../model.ts';
import { formatResultLine } from '../results/result.ts';

/**
 * The warning and error results of a run as stderr lines, one per result, in result order (as kubectl prints
 * its `Warning:` lines): `[warning] apps/v1/Deployment/shop/web: skipped (...) (web.yaml)`, control characters
 * escaped by `formatResultLine` (`escapeLine`), so a result is always one line. The one place that formats
 * them for the CLI's stream runs.
 */
export function visibleResultLines(results: readonly KrmResult[]): string {
  let out = '';
  for (const r of results) if (r.severity !== 'info') out += `${formatResultLine(r)}\n`;
  return out;
}
