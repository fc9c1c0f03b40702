/** `meshinject inject` and `meshinject uninject`: the resources written to stdout (or `--output-file`), with reports. */
import { runInputs, type RunInput, type RunOptions } from '../../run.ts';
import { WriteBatch } from '../atomic-write.ts';
import { convertOutput } from '../convert.ts';
import { patchComponent } from '../patches.ts';
import { finish, prepare, reportOf, stageFile, stageReports } from '../prepare.ts';
import { visibleResultLines } from '../result-lines.ts';
import { CliError, say, writeStdoutParts, type Session } from '../session.ts';
import type { Command } from '../args.ts';

export async function runInject(s: Session, cmd: Command, startedAt: number): Promise<void> {
  const stdoutReport = cmd.reports.find((r) => r.path === undefined && r.format !== 'table');
  if (stdoutReport && cmd.outputFile === undefined) {
    throw new CliError(
      `--report ${stdoutReport.format} needs a path (--report ${stdoutReport.format}=PATH): stdout carries the manifests (or use --output-file)`,
    );
  }
  const { inputs, opts, logToStderr } = prepare(s, cmd);
  const out = runInputs(inputs, { ...opts, ...(s.env.ARGOCD_APP_NAME ? { dropLocalConfig: true } : {}) });
  // Stream input: warnings are shown by default, one line each (-q: errors only); a ResourceList's results travel in
  // it. Under Argo CD (a plugin's stderr is its log, shown only on failure) the plugin's own switch decides (LOG_TO_STDERR).
  const warningsVisible =
    !logToStderr && !cmd.quiet && !out.resourceList && out.exitCode !== 2 && !s.env.ARGOCD_APP_NAME;
  const shown = warningsVisible ? visibleResultLines(out.results) : out.stderr;
  if (shown) say(s, shown);
  const batch = new WriteBatch();
  let stdout: readonly string[] = [];
  // A failed stream run has nothing to write (not even an empty conversion); a failed ResourceList comes back with its results.
  if (out.exitCode !== 2 && out.stdoutParts.some((p) => p.length > 0)) {
    // Written piece by piece: an output larger than one JavaScript string can hold is still written whole.
    let parts = out.stdoutParts;
    if (cmd.output) {
      try {
        parts = [
          cmd.output === 'patches'
            ? patchComponent(out.files, reinjectWith(inputs, opts))
            : convertOutput(out.stdout, cmd.output),
        ];
      } catch (e) {
        throw new CliError((e as Error).message);
      }
    }
    if (cmd.outputFile !== undefined) stageFile(s, batch, `--output-file ${cmd.outputFile}`, parts);
    else stdout = parts;
  }
  // Every file is written to its temporary before stdout gets anything, and renamed after (see atomic-write.ts).
  const streams =
    out.exitCode !== 2 ? stageReports(s, cmd, () => reportOf(cmd, inputs, out), batch) : { stdout: [], stderr: [] };
  await batch.write();
  writeStdoutParts(s, [...stdout, ...streams.stdout]);
  for (const p of streams.stderr) say(s, p);
  await batch.commit();
  finish(s, cmd, out, logToStderr, startedAt);
}

/**
 * For `--output patches`: runs the same injection on other texts of the same inputs (one per input, in order)
 * and gives each input's output, or undefined when the run fails or its files do not line up with the inputs.
 */
function reinjectWith(
  inputs: readonly RunInput[],
  opts: RunOptions,
): (texts: string[]) => Array<{ input: string; output: string }> | undefined {
  return (texts) => {
    if (texts.length !== inputs.length) return undefined;
    const out = runInputs(
      texts.map((text, i) => ({ ...inputs[i], text })),
      opts,
    );
    return out.exitCode === 2 || out.files.length !== inputs.length ? undefined : out.files;
  };
}
