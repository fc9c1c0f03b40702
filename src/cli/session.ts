/**
 * The state of one `main` call (src/cli.ts) and how a command talks back: the streams (`CliIo`), stdout
 * written once and safely (`writeStdout`), stderr lines (`say`), and the error line that ends a run (`fail`).
 * Nothing here reads `process`: the streams, environment and clock are passed in.
 */
import type { PlanStats } from '../render/plans.ts';
import { escapeLine } from '../results/escape-line.ts';
import type { FileIdentity } from './file-identity.ts';
import { PathError, type Confinement } from './paths.ts';

/** An error for the user: one line on stderr, exit 2, nothing on stdout. */
export class CliError extends Error {}

/** The environment a run reads: variable name to value (`process.env` for the command). */
export type CliEnv = Readonly<Record<string, string | undefined>>;

/** An output stream of the command: stdout or stderr. */
export interface CliWriter {
  /**
   * Writes text. May throw a system error (`EPIPE`, `ENOSPC`): on stdout a closed pipe ends the output quietly,
   * any other error is one line on stderr and exit 2; on stderr errors are ignored (messages are lost, the
   * exit code is unchanged). Errors a stream reports later, while it drains, are the caller's (`runCli`).
   */
  write(text: string): unknown;
  /**
   * Writes bytes (UTF-8 text), with the same errors as `write`. Present on the process's stdout (src/cli.ts) and
   * the contained Worker's relay (src/cli/contained.ts): `writeStdoutParts` then writes the output in Buffers of
   * `STDOUT_CHUNK` bytes instead of one write per piece. Absent (a test's collecting writer): text pieces.
   */
  writeBytes?(bytes: Uint8Array): unknown;
  /** On a terminal: the summary line and progress (stderr), diff colours (stdout) are shown only there. */
  readonly isTTY?: boolean;
}

/**
 * What a run uses besides its arguments, environment and the files it names.
 *
 * - `stdin`: a file descriptor (read to its end, a regular file's size checked first; a non-blocking one is
 *   polled) or the bytes themselves; read only when `-` (or no input) is given.
 * - `stdout`, `stderr`: the output streams.
 * - `cwd`: the working directory (absolute): relative paths are opened from it (joined as text, so names in
 *   messages and outputs stay as given; `fsPath` in src/cli/paths.ts), and it is the default root under
 *   Argo CD.
 * - `now`: a monotonic clock in milliseconds (`process.hrtime`), for the terminal summary's duration and
 *   the progress line's pace.
 */
export interface CliIo {
  stdin: number | Uint8Array;
  stdout: CliWriter;
  stderr: CliWriter;
  cwd: string;
  now(): number;
  /**
   * Runs this command line again in a heap-capped Worker (src/cli/contained.ts) on the stdin bytes read, with an
   * old generation of `oldSpaceMb` megabytes; `heapError` is the message should it run out. Absent: never
   * (`main` called in-process, and inside that Worker).
   */
  contain?: (stdin: Uint8Array, oldSpaceMb: number, heapError: string) => Promise<number>;
}

/** A file this run will write: its real target (links resolved) and whether it is a stream (FIFO, device). */
export interface PlannedWrite {
  target: string;
  stream: boolean;
  identity: FileIdentity;
}

/** The state of one `main` call (nothing is kept between calls). */
export interface Session {
  env: CliEnv;
  io: CliIo;
  /** Input size budget left for this run (`--max-input-bytes`, over all inputs and config files). */
  budget: number;
  budgetTotal: number;
  /** The confinement of this run (`src/cli/paths.ts`), set by `prepare` before any file is read. */
  confinement: Confinement;
  /** The files this run writes (`--output-file`, `--report F=PATH`), by label, checked by `prepare` before any input is read. */
  plannedWrites: Map<string, PlannedWrite>;
  /** The files this run read (inputs, configs, file flags, stdin), for `aliasProblem`. */
  reads: FileIdentity[];
  /** Writing stdout failed (reported once; later writes are skipped). */
  outputFailed: boolean;
  /** The exit code so far; undefined is 0. */
  exitCode?: number;
  /** This run's plan counters (`MESHINJECT_PLAN_STATS=1`), printed by `finish`. */
  planStats?: PlanStats;
  /** When the command started (`io.now()`, milliseconds). */
  startedAt: number;
  /** The bytes read from stdin, for a run that goes on in a Worker (`ContainRun`, src/cli/heap-guard.ts). */
  stdinBytes?: Uint8Array;
}

/** What writing stdout uses and sets of a `Session`: its streams, whether stdout failed, the exit code. */
export type OutputState = Pick<Session, 'io' | 'outputFailed' | 'exitCode'>;

/**
 * The stderr line for an error writing stdout, or undefined for a closed pipe (the reader went away, `| head`:
 * the output stops quietly, as Unix tools do). Any other error means exit 2.
 */
export function outputErrorLine(e: NodeJS.ErrnoException): string | undefined {
  if (e.code === 'EPIPE') return undefined;
  return `meshinject: error: cannot write the output: ${escapeLine(e.code === 'ENOSPC' ? 'no space left on device' : e.message)}\n`;
}

/** What went wrong writing stdout, once: a closed pipe ends quietly, anything else is one line and exit 2. */
function onOutputError(s: OutputState, e: NodeJS.ErrnoException): void {
  if (s.outputFailed) return;
  s.outputFailed = true;
  const line = outputErrorLine(e);
  if (line === undefined) return;
  say(s, line);
  s.exitCode = 2;
}

/** Runs one write to stdout unless a write failed before (`outputFailed`); a failure is reported once. */
function guardedWrite(s: OutputState, write: () => unknown): void {
  if (s.outputFailed) return;
  try {
    write();
  } catch (e) {
    onOutputError(s, e as NodeJS.ErrnoException);
  }
}

/** Writes `text` to stdout; after a failed write (`outputFailed`) nothing more is written. */
export function writeStdout(s: OutputState, text: string): void {
  if (text) guardedWrite(s, () => s.io.stdout.write(text));
}

/**
 * Size in bytes of the Buffers `writeStdoutParts` encodes output pieces into (2 MiB): measured on the 10 000-workload
 * kpt packages (20 000 pieces of 3.9 KB on average), encoding them into Buffers of this size and writing those cost
 * less CPU than one write per piece; joining pieces into strings cost more.
 */
export const STDOUT_CHUNK = 2 * 1024 * 1024;

/**
 * Writes the pieces of an output to stdout in order, the same bytes as `writeStdout` on each piece (UTF-8; a lone
 * surrogate of a piece is U+FFFD's bytes either way). With `writeBytes`, pieces are encoded into fresh Buffers of
 * `STDOUT_CHUNK` bytes, each written when full (the output is never held whole: memory stays flat however long it
 * is); a piece longer than a Buffer is written as text. A failed write stops the output (`writeStdout`).
 * `chunk` (bytes, default `STDOUT_CHUNK`) is smaller only in tests, to cross Buffer ends often.
 */
export function writeStdoutParts(s: OutputState, parts: readonly string[], chunk = STDOUT_CHUNK): void {
  const writeBytes = s.io.stdout.writeBytes?.bind(s.io.stdout);
  if (writeBytes === undefined) {
    for (const p of parts) writeStdout(s, p);
    return;
  }
  let buf: Buffer | undefined;
  let used = 0;
  const flush = (): void => {
    const full = buf?.subarray(0, used);
    if (full !== undefined && used > 0) guardedWrite(s, () => writeBytes(full));
    buf = undefined;
    used = 0;
  };
  for (const p of parts) {
    if (s.outputFailed) return;
    if (p.length === 0) continue;
    // At most 3 bytes per UTF-16 unit: the exact length is counted only near a Buffer's end.
    if (p.length * 3 > chunk - used) {
      const bytes = Buffer.byteLength(p);
      if (bytes > chunk - used) {
        flush();
        if (bytes > chunk) {
          writeStdout(s, p);
          continue;
        }
      }
    }
    buf ??= Buffer.allocUnsafe(chunk);
    used += buf.write(p, used);
  }
  flush();
}

/** Writes to stderr; an error there loses the message but never changes the exit code. */
export function say(s: Pick<Session, 'io'>, text: string): void {
  try {
    s.io.stderr.write(text);
  } catch {
    // stderr closed: nothing else to tell it with
  }
}

/** Ends the run on an error thrown by a command: one line on stderr, exit 2. */
export function fail(s: Session, e: unknown): void {
  s.exitCode = 2;
  if (e instanceof CliError || e instanceof PathError) say(s, `meshinject: error: ${escapeLine(e.message)}\n`);
  else if (
    (e as Error).name === 'RangeError' &&
    /Invalid string length|Array buffer allocation/.test((e as Error).message)
  ) {
    say(
      s,
      `meshinject: error: the input or output is too large to hold in memory (${(e as Error).message}); split the input, or lower --max-input-bytes to refuse such inputs early\n`,
    );
  } else {
    // The message may quote the input: escaped to one line; the stack frames (our code) follow it.
    const frames = ((e as Error).stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
    say(
      s,
      `meshinject: internal error: ${escapeLine(String((e as Error).message ?? e))}\n${frames.map((f) => `${escapeLine(f)}\n`).join('')}`,
    );
  }
}
