/**
 * The process entry of the `meshinject` command (bundled into dist/meshinject.cjs): hands `main` the
 * process's arguments, environment and streams, and sets the exit code it returns. It never ends the process
 * early (piped stdout over 64 KiB would be cut: krm-ecosystem.md, hazard G1); Node drains stdout and exits.
 */
import { main, outputErrorLine } from '../cli.ts';

// A write error reported after the run (a pipe closed while Node drains stdout): a closed pipe ends quietly,
// anything else is one line on stderr and exit 2.
let reported = false;
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (reported) return;
  reported = true;
  const line = outputErrorLine(e);
  if (line === undefined) return;
  process.stderr.write(line);
  process.exitCode = 2;
});
process.exitCode = main(process.argv.slice(2), process.env, { stdin: 0, stdout: process.stdout, stderr: process.stderr });
