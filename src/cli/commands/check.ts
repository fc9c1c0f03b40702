/** `meshinject check`: nothing changes; findings on stderr and in reports. */
import { formatResultLine } from '../../results/result.ts';
import { runInputs } from '../../run.ts';
import type { Command } from '../args.ts';
import { WriteBatch } from '../atomic-write.ts';
import { finish, prepare, reportOf, stageReports } from '../prepare.ts';
import { say, writeStdout, type Session } from '../session.ts';

/** `meshinject check`: nothing changes; findings on stderr (and in reports); exit 1 when one fails. */
export async function runCheck(s: Session, cmd: Command, startedAt: number): Promise<void> {
  const { inputs, opts, logToStderr } = prepare(s, cmd);
  const out = runInputs(inputs, { ...opts, check: { failOn: cmd.failOn } });
  // Without LOG_TO_STDERR only errors are on stderr; a check also shows what it found short of failing. Bad
  // input (exit 2: a document that cannot be read) is in stderr only: shown as every other command shows it.
  const shown =
    logToStderr || (out.exitCode === 2 && out.stderr !== '')
      ? out.stderr
      : out.results
          .filter((r) => r.severity !== 'info')
          .map((r) => `${formatResultLine(r)}\n`)
          .join('');
  if (shown) say(s, shown);
  const batch = new WriteBatch();
  const streams =
    out.exitCode !== 2 ? stageReports(s, cmd, () => reportOf(cmd, inputs, out), batch) : { stdout: [], stderr: [] };
  await batch.write();
  if (out.stdout) writeStdout(s, out.stdout);
  for (const p of streams.stdout) writeStdout(s, p);
  for (const p of streams.stderr) say(s, p);
  await batch.commit();
  finish(s, cmd, out, logToStderr, startedAt);
}
