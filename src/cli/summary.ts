import type { CommandName } from './args.ts';
import type { RunOutput } from '../run.ts';
import { summarize, summaryText } from '../results/result.ts';
import { escapeLine } from '../results/escape-line.ts';

/**
 * The one-line summary for a terminal: `meshinject: 3 injected, 1 skipped, 0 error(s) (120 ms)` (with `N uninjected` and `N warning(s)` when there are any, `summaryText`); for a
 * check, `meshinject check: 2 failing, 1 warning(s), 7 workload(s) (120 ms)`. Pure: the CLI measures the time.
 */
export function summaryLine(command: CommandName, out: RunOutput, elapsedMs: number): string {
  const ms = `(${Math.round(elapsedMs)} ms)`;
  if (command === 'check') {
    const failing = out.results.filter((r) => r.severity === 'error').length;
    const warnings = out.results.filter((r) => r.severity === 'warning').length;
    return `${escapeLine(`meshinject check: ${failing} failing, ${warnings} warning(s), ${out.workloads.length} workload(s) ${ms}`)}\n`;
  }
  return `${escapeLine(`meshinject: ${summaryText(summarize(out.results))} ${ms}`)}\n`;
}
