/** `meshinject explain`: every decision rule per workload, in order, and which decided. */
import { explainText, explainWorkloads } from '../../reports/explain.ts';
import { formatResultLine } from '../../results/result.ts';
import { runInputs } from '../../run.ts';
import type { Command } from '../args.ts';
import { locate, prepare } from '../prepare.ts';
import { say, writeStdout, type Session } from '../session.ts';

/** `meshinject explain`: the decision trace per workload. */
export function runExplain(s: Session, cmd: Command): void {
  const { inputs, opts } = prepare(s, cmd);
  const out = runInputs(inputs, opts);
  if (out.exitCode === 2) {
    say(s, out.stderr);
    s.exitCode = 2;
    return;
  }
  const general = out.results.filter((r) => !r.resourceRef && r.severity !== 'info');
  for (const r of general) say(s, `${formatResultLine(r)}\n`);
  const list = explainWorkloads(out.workloads, out.results, locate(inputs));
  writeStdout(s, cmd.output === 'json' ? `${JSON.stringify(list, null, 2)}\n` : explainText(list));
  if (!s.outputFailed) s.exitCode = out.exitCode;
}
