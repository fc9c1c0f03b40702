/**
 * The process entry of the `meshinject` command (bundled into dist/meshinject.cjs): runs the CLI on the
 * process. `src/cli.ts` itself does nothing when imported.
 */
import { runCli } from '../cli.ts';

runCli();
