/**
 * Runs a command in a `worker_threads` Worker whose heap is capped (`resourceLimits`), so that a run that
 * outgrows the heap inside one resource (a tenant's patch adding a 400 000-item list, a huge rendered value, an
 * output flag converting it) ends in the documented heap error (exit 2, naming
 * `NODE_OPTIONS=--max-old-space-size`) instead of V8's `FATAL ERROR` and a core dump (exit 134): V8 aborts the
 * whole process when the main thread's heap is full, but only stops a Worker (`ERR_WORKER_OUT_OF_MEMORY`).
 *
 * A Worker costs a new V8 isolate and a compile of the bundle without the code cache (measured on a loaded
 * 2-core machine: an empty Worker up in 160-320 ms wall; 300 workloads, 668 KB, 2.1 s of CPU in-process at a
 * 400 MB heap against 2.55 s contained at 64 MB, GC at the smaller heap included), so the CLI uses one only for
 * inputs whose heap need is a large share of the heap (`containFor`); a smaller run
 * cannot grow past the heap inside one resource except by amplifying, which is bounded where it happens
 * (template budgets, src/render/budget.ts; Kuma patch growth, src/drivers/kuma/patches.ts).
 *
 * The Worker runs the same command line (`main`) on the bytes already read from stdin; what it writes to stdout
 * is held until it ends and written only when it ended normally (so a run that runs out of heap writes nothing
 * on stdout); stderr passes through as it comes. Files are written by the Worker's own write batch
 * (src/cli/atomic-write.ts), after every output was built.
 */
import type * as WorkerThreads from 'node:worker_threads';
import { constants } from 'node:os';
import type { CliEnv, CliIo } from './session.ts';
import { useSignals } from './atomic-write.ts';

/**
 * `node:worker_threads`, loaded only when a run needs it (the module and what it loads cost every start-up a
 * little otherwise): the bundle's `require` (src/cli/entry.ts).
 */
export type LoadWorkerThreads = () => typeof WorkerThreads;

/** What the main thread hands the Worker: the command line, its environment and the stdin bytes read. */
export interface ContainedJob {
  /**
   * One Int32 shared with the main thread: `IDLE`, `WRITING` (a write batch catches signals: the main thread
   * forwards them) or `ENDED` (a signal came while idle: the main thread ends the process).
   */
  phase: SharedArrayBuffer;
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** Standard input as read by the main thread (empty when the command did not read it). */
  stdin: Uint8Array;
  stdoutTTY: boolean;
  stderrTTY: boolean;
}

const IDLE = 0;
const WRITING = 1;
const ENDED = 2;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** A message from the Worker: a piece of stdout or stderr (text, or stdout's UTF-8 bytes), or the exit code. */
type Message = { fd: 1 | 2; text: string } | { fd: 1; bytes: Uint8Array } | { exit: number };

/**
 * Share of the old generation (`--max-old-space-size`) above which a run's estimated heap need sends it into a
 * Worker: the estimate (bytes of inputs and configs times 16, `OLD_SPACE_PER_INPUT_BYTE` in src/cli/heap-guard.ts) is of
 * the whole run, and one resource can grow far past its share (a 2.7 MB functionConfig holding a 400 000-item
 * patch list needs more than 64 MB); below an eighth, growth by a factor of 8 over the estimate still fits.
 */
export const CONTAIN_SHARE = 1 / 8;

/** Does a run needing about `need` bytes of heap, under an old generation of `oldSpace` bytes, go to a Worker? */
export function containFor(need: number, oldSpace: number): boolean {
  return need > oldSpace * CONTAIN_SHARE;
}

/**
 * Starts the Worker (`load`: src/cli/entry.ts) on `entry` (the bundle, dist/meshinject.cjs, which serves a job when it is not the main
 * thread: src/cli/entry.ts) with an old generation of `oldSpaceMb` megabytes, and resolves to the command's exit
 * code. `heapError` is the line for a Worker that ran out of heap (`ERR_WORKER_OUT_OF_MEMORY`): written to
 * stderr, exit 2, nothing on stdout.
 */
export function runContained(
  load: LoadWorkerThreads,
  entry: string,
  job: ContainedJob,
  io: CliIo,
  oldSpaceMb: number,
  heapError: string,
): Promise<number> {
  const { Worker } = load();
  const held: Array<string | Uint8Array> = [];
  const phase = new Int32Array(job.phase);
  return new Promise<number>((resolve) => {
    let exit: number | undefined;
    // Node delivers signals to the main thread only: while the Worker computes, a signal ends the process as
    // it would have (nothing is written then); while its write batch runs, the batch gets it (atomic-write.ts).
    const onSignal = (sig: NodeJS.Signals): void => {
      if (Atomics.compareExchange(phase, 0, IDLE, ENDED) === IDLE) {
        process.exit(128 + (constants.signals[sig] ?? 15));
      }
      worker.postMessage({ signal: sig });
    };
    for (const sig of SIGNALS) process.on(sig, onSignal);
    const worker = new Worker(
      `globalThis[Symbol.for('meshinject.contained')] = true; require(${JSON.stringify(entry)});`,
      {
        eval: true,
        workerData: job,
        env: job.env,
        stdin: false,
        resourceLimits: { maxOldGenerationSizeMb: oldSpaceMb },
      },
    );
    worker.on('message', (m: Message) => {
      if ('exit' in m) exit = m.exit;
      else if ('bytes' in m) held.push(m.bytes);
      else if (m.fd === 1) held.push(m.text);
      else write(io.stderr, m.text);
    });
    worker.on('error', (e: NodeJS.ErrnoException) => {
      exit = 2;
      held.length = 0;
      write(
        io.stderr,
        e.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `meshinject: error: ${heapError}\n`
          : `meshinject: internal error: ${String(e.message).split('\n')[0]}\n`,
      );
    });
    worker.on('exit', (code) => {
      for (const sig of SIGNALS) process.removeListener(sig, onSignal);
      const status = exit ?? (code === 0 ? 2 : code);
      if (exit !== undefined && held.length) {
        try {
          for (const t of held) writeOut(io.stdout, t);
        } catch {
          // a closed stdout: runCli reports it as it does for a run on the main thread
        }
      }
      resolve(status);
    });
  });
}

/** Writes a held piece of stdout: bytes as bytes where the writer takes them, else decoded (the same UTF-8). */
function writeOut(w: CliIo['stdout'], t: string | Uint8Array): void {
  if (typeof t === 'string') w.write(t);
  else if (w.writeBytes) w.writeBytes(t);
  else w.write(new TextDecoder().decode(t));
}

function write(w: CliIo['stderr'], text: string): void {
  try {
    w.write(text);
  } catch {
    // stderr closed: nothing else to tell it with
  }
}

/** Is this the bundle loaded by `runContained`'s Worker? */
export function isContained(): boolean {
  return (globalThis as Record<symbol, unknown>)[Symbol.for('meshinject.contained')] === true;
}

/**
 * The Worker's side: runs `main` on the job it was given (stdin as bytes; stdout and stderr posted to the main
 * thread) and posts the exit code.
 */
export async function serveContained(
  load: LoadWorkerThreads,
  main: (argv: readonly string[], env: CliEnv, io: CliIo) => Promise<number>,
): Promise<void> {
  const { parentPort, workerData } = load();
  const job = workerData as ContainedJob;
  const phase = new Int32Array(job.phase);
  const handlers = new Set<(sig: NodeJS.Signals) => void>();
  parentPort?.on('message', (m: { signal?: NodeJS.Signals }) => {
    if (m.signal) for (const h of handlers) h(m.signal);
  });
  parentPort?.unref();
  useSignals({
    on: (h) => {
      handlers.add(h);
      Atomics.compareExchange(phase, 0, IDLE, WRITING);
    },
    off: (h) => {
      handlers.delete(h);
      Atomics.compareExchange(phase, 0, WRITING, IDLE);
    },
  });
  const post = (m: Message): void => parentPort?.postMessage(m);
  const io: CliIo = {
    stdin: job.stdin,
    stdout: {
      isTTY: job.stdoutTTY,
      write: (text: string) => post({ fd: 1, text }),
      writeBytes: (bytes: Uint8Array) => post({ fd: 1, bytes }),
    },
    stderr: { isTTY: job.stderrTTY, write: (text: string) => post({ fd: 2, text }) },
    cwd: job.cwd,
    now: () => Number(process.hrtime.bigint()) / 1e6,
  };
  post({ exit: await main(job.argv, job.env, io) });
}
