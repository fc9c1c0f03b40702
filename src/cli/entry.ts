/**
 * The process entry of the `meshinject` command (bundled into dist/meshinject.cjs): runs the CLI on the
 * process, or, loaded in the heap-capped Worker of a large run, serves that run (src/cli/contained.ts).
 * `src/cli.ts` itself does nothing when imported.
 */
import type * as WorkerThreads from 'node:worker_threads';
import { main, runCli } from '../cli.ts';
import { isContained, serveContained } from './contained.ts';

// In the bundle (CommonJS): its own path, which a large run's Worker loads, and `require`, which loads
// `node:worker_threads` only when a run needs it. Run from source (tests), neither exists and runs stay in-process.
const bundle =
  typeof __filename === 'string' && typeof require === 'function'
    ? { entry: __filename, load: () => require('node:worker_threads') as typeof WorkerThreads }
    : undefined;
if (isContained() && bundle) void serveContained(bundle.load, main);
else runCli(bundle);
