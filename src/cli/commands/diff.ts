/** `meshinject diff`: the unified diff injection would make; `--in-place` writes it back. */
import { unifiedDiffPieces } from '../../reports/unified-diff.ts';
import { runInputs } from '../../run.ts';
import type { Command } from '../args.ts';
import { writeInPlace } from '../in-place.ts';
import { prepare } from '../prepare.ts';
import { CliError, say, writeStdout, type Session } from '../session.ts';

/**
 * `meshinject diff`: the unified diff per file, exiting as `kubectl diff` does: 0 no change, 1 changes, 2 an
 * error (bad input or usage, or error results: nothing on stdout). `--in-place` writes the changed files back
 * and exits 0 once they are written.
 */
export async function runDiff(s: Session, cmd: Command): Promise<void> {
  const { inputs, opts } = prepare(s, cmd);
  if (cmd.inPlace && inputs.some((i) => i.name === undefined))
    throw new CliError('--in-place needs files or directories, not stdin');
  const out = runInputs(inputs, opts);
  if (out.stderr) say(s, out.stderr);
  if (out.exitCode !== 0) {
    s.exitCode = 2;
    return;
  }
  const colour =
    cmd.color === 'always' || (cmd.color === 'auto' && !cmd.inPlace && s.io.stdout.isTTY === true && !s.env.NO_COLOR);
  if (cmd.inPlace) return writeInPlace(s, out.files);
  // Written in chunks of about 1 MiB: a diff larger than one JavaScript string can hold is still written whole.
  let chunk = '';
  let changes = false;
  for (const f of out.files) {
    for (const piece of unifiedDiffPieces(f.name ?? 'stdin', f.input, f.edits, colour)) {
      changes = true;
      chunk += piece;
      if (chunk.length < 1 << 20) continue;
      writeStdout(s, chunk);
      chunk = '';
    }
  }
  writeStdout(s, chunk);
  if (s.exitCode !== 2) s.exitCode = changes ? 1 : 0;
}
