/** `meshinject migrate`: the package's namespaces moved to another data plane of the mesh (src/migrate.ts). */
import { unifiedDiffPieces } from '../../reports/unified-diff.ts';
import { runMigration } from '../../run.ts';
import type { Command } from '../args.ts';
import { writeInPlace } from '../in-place.ts';
import { prepare } from '../prepare.ts';
import { CliError, say, writeStdout, type Session } from '../session.ts';

/**
 * `meshinject migrate --to TARGET --namespace NS ...` (src/migrate.ts): the migrated package on stdout, or with
 * `--diff` a unified diff (exit 1 when it changes something), or with `-i` written back into the files, all or
 * none. Exit 2 for bad input or a request the driver refuses, 1 for error results (nothing written).
 */
export async function runMigrate(s: Session, cmd: Command): Promise<void> {
  const { inputs, opts } = prepare(s, cmd);
  if (cmd.inPlace && inputs.some((i) => i.name === undefined))
    throw new CliError('--in-place needs files or directories, not stdin');
  const m = cmd.migrate;
  // The parser refuses `migrate` without --to (src/cli/args.ts).
  if (m?.to === undefined) throw new CliError('meshinject migrate needs --to TARGET');
  const out = runMigration(
    inputs,
    { ...opts, logToStderr: !cmd.quiet },
    { to: m.to, namespaces: m.namespaces, options: m.waypoint !== undefined ? { waypoint: m.waypoint } : {} },
  );
  if (out.stderr) say(s, out.stderr);
  if (out.exitCode !== 0) {
    s.exitCode = out.exitCode;
    return;
  }
  const changed = out.files.filter((f) => f.output !== f.input);
  if (cmd.inPlace) return writeInPlace(s, out.files);
  if (!m.diff) {
    writeStdout(s, out.stdout);
    s.exitCode = 0;
    return;
  }
  const colour = cmd.color === 'always' || (cmd.color === 'auto' && s.io.stdout.isTTY === true && !s.env.NO_COLOR);
  writeStdout(
    s,
    out.files.flatMap((f) => [...unifiedDiffPieces(f.name ?? 'stdin', f.input, f.edits, colour)]).join(''),
  );
  if (s.exitCode !== 2) s.exitCode = changed.length > 0 ? 1 : 0;
}
