/**
 * The meshinject command: `main(argv, env, io)` runs one command line and returns its exit code. It reads the
 * environment only from `env` and talks only through `io` (stdin, stdout, stderr, working directory, clock);
 * besides that it touches the file system (the files it is told to read and write). Importing this module does
 * nothing. `runCli` binds it to the process (src/cli/entry.ts calls it): the only code here that reads
 * `process`. It never ends the process early: piped stdout over 64 KiB would be cut and kpt would then delete
 * files (krm-ecosystem.md, hazard G1); the exit code is set and Node drains.
 */
import { parseCommandLine, type Command } from './cli/args.ts';
import { runCheck } from './cli/commands/check.ts';
import { runDiff } from './cli/commands/diff.ts';
import { runExplain } from './cli/commands/explain.ts';
import { runInject } from './cli/commands/inject.ts';
import { runMigrate } from './cli/commands/migrate.ts';
import { completionScript } from './cli/completion.ts';
import { runContained, type LoadWorkerThreads } from './cli/contained.ts';
import { setOwn } from './json.ts';
import { ContainRun } from './cli/heap-guard.ts';
import { fail, outputErrorLine, say, writeStdout, type CliEnv, type CliIo, type Session } from './cli/session.ts';
import { USAGE, VERSION } from './cli/usage.ts';
import { escapeLine } from './results/escape-line.ts';

export { USAGE };
export { outputErrorLine };
export type { CliEnv, CliIo, CliWriter } from './cli/session.ts';

/** How a command runs: its session, its parsed command line, and when it started (`io.now()`, milliseconds). */
type CommandRunner = (s: Session, cmd: Command, startedAt: number) => void | Promise<void>;

/** The command table: each command's module (src/cli/commands/); `inject` and `uninject` share one. */
const COMMAND_TABLE: Readonly<Record<Command['command'], CommandRunner>> = {
  inject: runInject,
  uninject: runInject,
  check: runCheck,
  explain: (s, cmd) => runExplain(s, cmd),
  diff: (s, cmd) => runDiff(s, cmd),
  migrate: (s, cmd) => runMigrate(s, cmd),
  completion: (s, cmd) => {
    if (cmd.shell === undefined) throw new Error('meshinject completion without a shell (the parser sets one)');
    writeStdout(s, completionScript(cmd.shell));
  },
};

/** Runs the command line `argv` in session `s`, its exit code left in `s.exitCode`. */
function runCommand(s: Session, argv: readonly string[], startedAt: number): void | Promise<void> {
  const cmd = parseCommandLine([...argv]);
  if ('error' in cmd) {
    say(s, `meshinject: ${escapeLine(cmd.error)}\nRun 'meshinject --help' for usage.\n`);
    s.exitCode = 2;
    return;
  }
  if (cmd.help) return writeStdout(s, USAGE);
  if (cmd.version) return writeStdout(s, `meshinject ${VERSION}\n`);
  return COMMAND_TABLE[cmd.command](s, cmd, startedAt);
}

/**
 * Runs one meshinject command line and resolves to its exit code: 0 success (`diff`: no change), 1 error
 * results, a failed check or (`diff`) changes, 2 bad input or usage (one line on stderr, nothing on stdout).
 * `argv` is the arguments without `node` and the script; `env` the environment it reads (`LOG_TO_STDERR`,
 * `ARGOCD_APP_NAME`, `ARGOCD_APP_NAMESPACE`, `HELM_NAMESPACE`, `KUBE_VERSION`, `ARGOCD_ENV_KUBE_VERSION`, `NO_COLOR`,
 * `MESHINJECT_PLANS`, `MESHINJECT_VERIFY_PLANS`, `MESHINJECT_PLAN_STATS`); `io` its streams, working directory
 * and clock (`CliIo`). Reads the files it names and writes those it is asked to (`--output-file`,
 * `--report F=PATH`, `diff --in-place`); sets nothing process-wide (a signal caught while files are written
 * still ends the process: src/cli/atomic-write.ts). Synchronous up to the write phase of a command that
 * writes files (which yields to handle signals). Never rejects: an unexpected error is an internal error
 * line on stderr and exit 2.
 */
export async function main(argv: readonly string[], env: CliEnv, io: CliIo): Promise<number> {
  const startedAt = io.now();
  const s: Session = {
    env,
    io,
    budget: 0,
    budgetTotal: 0,
    confinement: { none: true, named: [], label: 'none', cwd: io.cwd },
    plannedWrites: new Map(),
    reads: [],
    outputFailed: false,
    startedAt,
  };
  try {
    await runCommand(s, argv, startedAt);
  } catch (e) {
    if (e instanceof ContainRun && io.contain)
      return io.contain(s.stdinBytes ?? new Uint8Array(0), e.oldSpaceMb, e.heapError);
    fail(s, e);
  }
  return s.exitCode ?? 0;
}

/**
 * Runs the meshinject command on the process (its argv, environment, working directory and streams) and sets
 * `process.exitCode` from `main`. Called by the process entry (src/cli/entry.ts); importing this module does
 * nothing. A write error stdout reports later, while Node drains it (after `main` returned), is handled as
 * `main` handles one thrown at once (`outputErrorLine`), once; a closed stderr is ignored.
 */
export function runCli(bundle?: { entry: string; load: LoadWorkerThreads }): void {
  let thrown = false; // a write error thrown at once: main reports it and its exit code says so
  let reported = false; // a write error reported later, while Node drains stdout: its exit code stands
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (thrown || reported) return;
    reported = true;
    const line = outputErrorLine(e);
    if (line === undefined) return;
    process.stderr.write(line);
    process.exitCode = 2;
  });
  process.stderr.on('error', () => {});
  const argv = process.argv.slice(2);
  const writeOut = (chunk: string | Uint8Array): boolean => {
    try {
      return process.stdout.write(chunk);
    } catch (e) {
      thrown = true;
      throw e;
    }
  };
  const io: CliIo = {
    stdin: 0,
    stdout: {
      isTTY: process.stdout.isTTY,
      write: (text: string) => writeOut(text),
      writeBytes: (bytes: Uint8Array) => writeOut(bytes),
    },
    stderr: { isTTY: process.stderr.isTTY, write: (text: string) => process.stderr.write(text) },
    cwd: process.cwd(),
    // process.hrtime, not performance.now: the `performance` global loads perf_hooks (~1-3 ms of every start).
    now: () => Number(process.hrtime.bigint()) / 1e6,
  };
  if (bundle) io.contain = containedBy(bundle.load, bundle.entry, argv, io, process.env);
  void main(argv, process.env, io).then((code) => {
    if (!reported) process.exitCode = code;
  });
}

/**
 * `CliIo.contain` for the process: the same command line, environment and directory, in a Worker on `entry`
 * (the bundle; `load` gives `node:worker_threads`).
 */
function containedBy(
  load: LoadWorkerThreads,
  entry: string,
  argv: readonly string[],
  io: CliIo,
  processEnv: CliEnv,
): NonNullable<CliIo['contain']> {
  return (stdin, oldSpaceMb, heapError) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(processEnv)) if (v !== undefined) setOwn(env, k, v);
    const job = {
      phase: new SharedArrayBuffer(4),
      argv,
      env,
      cwd: io.cwd,
      stdin,
      stdoutTTY: io.stdout.isTTY === true,
      stderrTTY: io.stderr.isTTY === true,
    };
    return runContained(load, entry, job, io, oldSpaceMb, heapError);
  };
}
