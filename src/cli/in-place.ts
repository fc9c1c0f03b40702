/** `--in-place` (`meshinject diff -i`, `meshinject migrate -i`): the changed files written back, all or none. */
import { escapeLine } from '../results/escape-line.ts';
import type { RunOutput } from '../run.ts';
import { WriteBatch } from './atomic-write.ts';
import { aliasProblem, outputIdentity } from './file-identity.ts';
import { resolveWritable } from './paths.ts';
import { CliError, say, type Session } from './session.ts';

/**
 * `--in-place`: the changed files written back, all or nothing (each to a temporary beside it first, then all
 * renamed over), and a line naming them; exit 0.
 */
export async function writeInPlace(s: Session, files: RunOutput['files']): Promise<void> {
  const changed = files.filter((f) => f.output !== f.input);
  // All or nothing: every changed file goes to a temporary beside it first, then all are renamed over.
  const batch = new WriteBatch();
  const targets = changed.map((f) => {
    // Stdin is refused before the run (`--in-place needs files or directories`): every file has a name.
    const name = f.name ?? 'stdin';
    const label = `${name} (--in-place)`;
    return { f, label, target: resolveWritable(s.confinement, name, label) };
  });
  // Two names of one file (`a.yaml ./a.yaml`, a hard link) would each be written over the other.
  const aliased = aliasProblem(targets.map((x) => outputIdentity(x.target, x.label)));
  if (aliased) throw new CliError(aliased);
  for (const x of targets) batch.add(x.target, x.f.parts, x.label);
  await batch.write();
  await batch.commit();
  say(
    s,
    `${escapeLine(`meshinject: ${changed.length} file(s) changed${changed.length ? `: ${changed.map((f) => f.name).join(', ')}` : ''}`)}\n`,
  );
  s.exitCode = 0;
}
