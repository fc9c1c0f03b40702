/**
 * The meshinject command: `main(argv, env, io)` runs one command line and returns its exit code. It reads the
 * environment only from `env` and talks only through `io` (stdin, stdout, stderr, working directory, clock);
 * besides that it touches the file system (the files it is told to read and write). Importing this module does
 * nothing. `runCli` binds it to the process (src/cli/entry.ts calls it): the only code here that reads
 * `process`. It never ends the process early: piped stdout over 64 KiB would be cut and kpt would then delete
 * files (krm-ecosystem.md, hazard G1); the exit code is set and Node drains.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync } from 'node:fs';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { COMMANDS, kubeVersionError, parseCommandLine, suggest, type Command } from './cli/args.ts';
import type { FlagValue } from './contract/driver.ts';
import { DRIVERS } from './drivers/registry.ts';
import { summaryLine } from './cli/summary.ts';
import { visibleResultLines } from './cli/result-lines.ts';
import { USAGE, VERSION } from './cli/usage.ts';
import type { ConfigOverrides } from './config/layering.ts';
import type { PlanStats } from './render/plans.ts';
import { completionScript } from './cli/completion.ts';
import { WriteBatch } from './cli/atomic-write.ts';
import { aliasProblem, outputIdentity, readIdentity, type FileIdentity } from './cli/file-identity.ts';
import {
  confinementOf,
  fsMessage,
  fsPath,
  isStream,
  manifestFiles,
  onPath,
  PathError,
  rawNameOf,
  resolveReadable,
  resolveWritable,
  type Confinement,
} from './cli/paths.ts';
import { convertOutput } from './cli/convert.ts';
import { containFor, runContained, type LoadWorkerThreads } from './cli/contained.ts';
import { tierUpSchedule } from './cli/tier-up.ts';
import { patchComponent } from './cli/patches.ts';
import { unifiedDiff } from './cli/diff.ts';
import { explainText, explainWorkloads } from './reports/explain.ts';
import { junitReport, githubReport, sarifReport, tableReport } from './reports/formats.ts';
import { locateInput, type LocatedInput } from './reports/locate.ts';
import { buildReport, type Report } from './reports/report.ts';
import { runInputs, runMigration, type RunInput, type RunOptions, type RunOutput } from './run.ts';
import { formatResultLine } from './results/result.ts';
import { escapeLine } from './results/escape-line.ts';

export { USAGE };

/** An error for the user: one line on stderr, exit 2, nothing on stdout. */
class CliError extends Error {}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

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

/** The state of one `main` call (nothing is kept between calls). */
interface Session {
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
  /** The bytes read from stdin, for a run that goes on in a Worker (`ContainRun`). */
  stdinBytes?: Uint8Array;
}

/** Thrown by `prepare` (nothing written yet) when the run is to go on in a heap-capped Worker (src/cli/contained.ts). */
class ContainRun {
  constructor(
    readonly oldSpaceMb: number,
    readonly heapError: string,
  ) {}
}

function sizeText(n: number): string {
  for (const [unit, f] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const)
    if (n >= f && n % f === 0) return `${n / f} ${unit}`;
  return `${n} bytes`;
}

function tooLarge(s: Session, label: string): CliError {
  return new CliError(`${label}: input larger than the limit of ${sizeText(s.budgetTotal)} (--max-input-bytes)`);
}

/**
 * Reads a file descriptor to its end, at most `budget` bytes (a regular file's size is checked first).
 * Works for pipes, FIFOs and devices (`/dev/zero` stops at the limit); a non-blocking stdin is polled.
 */
function readFd(s: Session, fd: number, label: string): Buffer {
  const st = fstatSync(fd);
  if (st.isDirectory()) throw new CliError(`${label}: is a directory, not a file or a stream`);
  if (st.isFile() && st.size > s.budget) throw tooLarge(s, label);
  const chunks: Buffer[] = [];
  let total = 0;
  const chunk = Buffer.allocUnsafe(1 << 20);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    total += n;
    if (total > s.budget) throw tooLarge(s, label);
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  s.budget -= total;
  return Buffer.concat(chunks, total);
}

/** Standard input (`io.stdin`): a file descriptor is read by `readFd`; given bytes are checked against the budget. */
function readStdin(s: Session): Buffer {
  const { stdin } = s.io;
  if (typeof stdin === 'number') {
    s.reads.push(readIdentity(stdin, 'stdin'));
    const bytes = readFd(s, stdin, 'stdin');
    s.stdinBytes = bytes;
    return bytes;
  }
  if (stdin.length > s.budget) throw tooLarge(s, 'stdin');
  s.budget -= stdin.length;
  return Buffer.from(stdin.buffer, stdin.byteOffset, stdin.length);
}

/**
 * Reads a file (or stdin for `-`) as UTF-8 within the size budget; invalid UTF-8 is an error. The file must
 * resolve inside the root (`src/cli/paths.ts`) unless `anywhere` (a `--platform-config` file); it is opened
 * by its resolved path, without following a link put there since.
 */
function readText(s: Session, path: string, label = path, anywhere = false): string {
  let bytes: Buffer;
  if (path === '-') bytes = readStdin(s);
  else {
    let fd: number;
    const open = anywhere || isStream(s.confinement, path) ? path : resolveReadable(s.confinement, path, label);
    try {
      fd =
        open === path
          ? onPath(s.confinement, path, (p) => openSync(p, constants.O_RDONLY))
          : openSync(open, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (e) {
      throw new CliError(fsMessage(label, e));
    }
    try {
      s.reads.push(readIdentity(fd, label === path ? `the input ${path}` : label, fsPath(s.confinement, open)));
      bytes = readFd(s, fd, label);
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError(fsMessage(label, e));
    } finally {
      closeSync(fd);
    }
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new CliError(`${label}: not valid UTF-8 (YAML and Kubernetes manifests must be UTF-8)`);
  }
}

/**
 * The inputs named on the command line, read: files, directories (expanded; with `manifestsOnly`, the files
 * read from a directory are marked so, see `RunInput.manifestsOnly`), `-` for stdin. A package's own files in
 * a directory (`PACKAGE_FILES`) are pushed to `leftOut`.
 */
function readInputs(
  s: Session,
  paths: readonly string[],
  manifestsOnly: boolean,
  leftOut: Array<{ path: string; why: string }>,
): RunInput[] {
  const inputs: RunInput[] = [];
  let stdinUsed = false;
  for (const p of paths.length ? paths : ['-']) {
    if (p === '-') {
      if (stdinUsed) throw new CliError("'-' (stdin) is given twice");
      stdinUsed = true;
      inputs.push({ text: readText(s, '-') });
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) {
      throw new CliError(
        `${p}: URLs are not read (meshinject works offline); download it first, e.g. curl -fsSL '${p}' | meshinject -`,
      );
    }
    let st;
    try {
      st = onPath(s.confinement, p, (q) => statSync(q));
    } catch (e) {
      if (
        (e as NodeJS.ErrnoException).code === 'ENOENT' &&
        lstatSync(fsPath(s.confinement, p), { throwIfNoEntry: false })?.isSymbolicLink()
      ) {
        throw new CliError(`${p}: a dangling symbolic link (its target does not exist)`);
      }
      const raw = rawNameOf(p, s.confinement);
      if (raw !== undefined)
        throw new CliError(`${raw}: the name is not valid UTF-8 (bytes shown as \\xNN); rename it`);
      // A mistyped subcommand (`meshinject chek`) is read as a file name: say what was probably meant.
      const meant = !inputs.length && /^[a-z]+$/.test(p) ? suggest(p, COMMANDS) : undefined;
      throw new CliError(`${fsMessage(p, e)}${meant ? ` (did you mean meshinject ${meant}?)` : ''}`);
    }
    if (st.isDirectory()) {
      const files = manifestFiles(s.confinement, p, leftOut);
      if (files.length === 0)
        throw new CliError(`${p}: a directory without manifests (no *.yaml, *.yml or *.json files)`);
      for (const f of files)
        inputs.push({ name: f, text: readText(s, f), ...(manifestsOnly ? { manifestsOnly } : {}) });
    } else {
      inputs.push({ name: p, text: readText(s, p) });
    }
  }
  return inputs;
}

/**
 * The overrides of the drivers' flags (`MeshDriver.flags`): file flags are read (within the size budget), in
 * the order the driver declares its flags, and the driver turns the values into fields of its section.
 * @throws CliError naming the flag and file of a value the driver cannot use
 */
function driverOverrides(s: Session, cmd: Command): NonNullable<ConfigOverrides['sections']> {
  const out: Array<NonNullable<ConfigOverrides['sections']>[number]> = [];
  for (const driver of DRIVERS) {
    const given = cmd.driverFlags[driver.name];
    if (!given || !driver.flags) continue;
    const values: Record<string, FlagValue> = {};
    for (const f of driver.flags.options) {
      const raw = given[f.name];
      if (raw === undefined) continue;
      const name = f.file ? `--${f.name} ${raw}` : `--${f.name}`;
      values[f.name] = { name, text: f.file ? readText(s, raw, name) : raw };
    }
    const r = driver.flags.overrides(values);
    if (!r.ok) throw new CliError(r.message);
    out.push(...r.overrides.map((o) => ({ section: driver.name, ...o })));
  }
  return out;
}

/** Settings from flags and the environment that win over the functionConfig. */
function overridesFrom(s: Session, cmd: Command): ConfigOverrides {
  const env = s.env;
  const sections = driverOverrides(s, cmd);
  const o: ConfigOverrides = sections.length ? { sections } : {};
  const core = (['mesh', 'policy'] as const).flatMap((field) =>
    cmd[field] !== undefined ? [{ field, value: cmd[field]!, from: `--${field}` }] : [],
  );
  if (core.length) o.core = core;
  // --default-namespace, else Argo CD's application namespace (where Argo CD applies resources without one),
  // else Helm's (`HELM_NAMESPACE`, which a post-renderer inherits from helm's environment).
  if (cmd.defaultNamespace !== undefined)
    o.defaultNamespace = { value: cmd.defaultNamespace, from: '--default-namespace' };
  else if (env.ARGOCD_APP_NAMESPACE)
    o.defaultNamespace = { value: env.ARGOCD_APP_NAMESPACE, from: 'ARGOCD_APP_NAMESPACE' };
  else if (env.HELM_NAMESPACE) o.defaultNamespace = { value: env.HELM_NAMESPACE, from: 'HELM_NAMESPACE' };
  if (cmd.command === 'uninject') o.mode = { value: 'uninject', from: 'meshinject uninject' };
  return o;
}

/**
 * The stderr line for an error writing stdout, or undefined for a closed pipe (the reader went away, `| head`:
 * the output stops quietly, as Unix tools do). Any other error means exit 2.
 */
export function outputErrorLine(e: NodeJS.ErrnoException): string | undefined {
  if (e.code === 'EPIPE') return undefined;
  return `meshinject: error: cannot write the output: ${escapeLine(e.code === 'ENOSPC' ? 'no space left on device' : e.message)}\n`;
}

/** What went wrong writing stdout, once: a closed pipe ends quietly, anything else is one line and exit 2. */
function onOutputError(s: Session, e: NodeJS.ErrnoException): void {
  if (s.outputFailed) return;
  s.outputFailed = true;
  const line = outputErrorLine(e);
  if (line === undefined) return;
  say(s, line);
  s.exitCode = 2;
}

function writeStdout(s: Session, text: string): void {
  if (!text || s.outputFailed) return;
  try {
    s.io.stdout.write(text);
  } catch (e) {
    onOutputError(s, e as NodeJS.ErrnoException);
  }
}

/** Writes to stderr; an error there loses the message but never changes the exit code. */
function say(s: Session, text: string): void {
  try {
    s.io.stderr.write(text);
  } catch {
    // stderr closed: nothing else to tell it with
  }
}

/**
 * The `--report` outputs: those with a path are staged in `batch` (written when it commits); the others are
 * returned, for stdout (table: stderr), to be written once every file is staged.
 */
function stageReports(
  s: Session,
  cmd: Command,
  report: () => Report,
  batch: WriteBatch,
): { stdout: string[]; stderr: string[] } {
  const streams = { stdout: [] as string[], stderr: [] as string[] };
  if (cmd.reports.length === 0) return streams;
  const r = report();
  for (const { format, path } of cmd.reports) {
    const text =
      format === 'junit'
        ? junitReport(r)
        : format === 'sarif'
          ? sarifReport(r)
          : format === 'github'
            ? githubReport(r)
            : tableReport(r);
    if (path !== undefined) stageFile(s, batch, `--report ${format}=${path}`, [text]);
    else (format === 'table' ? streams.stderr : streams.stdout).push(text);
  }
  return streams;
}

/** A file this run will write: its real target (links resolved) and whether it is a stream (FIFO, device). */
interface PlannedWrite {
  target: string;
  stream: boolean;
  identity: FileIdentity;
}

/**
 * Checks a file the run will write, before anything is read or written (`resolveWritable`: inside the root,
 * its directory there and writable, not a directory).
 */
function planWrite(s: Session, path: string, label: string): void {
  const stream = isStream(s.confinement, path);
  const target = stream ? fsPath(s.confinement, path) : resolveWritable(s.confinement, path, label);
  s.plannedWrites.set(label, { stream, target, identity: outputIdentity(target, label) });
  const problem = aliasProblem([...s.plannedWrites.values()].map((w) => w.identity));
  if (problem) throw new CliError(problem);
}

function stageFile(s: Session, batch: WriteBatch, label: string, parts: readonly string[]): void {
  const p = s.plannedWrites.get(label)!;
  batch.add(p.target, parts, label, p.stream);
}

function locate(inputs: readonly RunInput[]): LocatedInput[] {
  return inputs.map((i) => locateInput(i.text, i.name)).filter((x) => x !== undefined);
}

/** The report of a run, with positions from the inputs' text (and, for a check, the fixes). */
function reportOf(cmd: Command, inputs: readonly RunInput[], out: RunOutput): Report {
  return buildReport(out.results, locate(inputs), {
    mesh: out.config?.mesh ?? '',
    command: cmd.command,
    toolVersion: VERSION,
    ...(out.reasonInfo ? { reasons: out.reasonInfo } : {}),
    ...(out.fixes ? { fixes: out.fixes } : {}),
  });
}

/** Inputs above this many resources show progress on a terminal. */
const PROGRESS_FROM = 2000;

/** A progress line on stderr when it is a terminal: `meshinject: 12000/50000 resources`, at most 10 times a second. */
function progressOnTty(s: Session, cmd: Command): RunOptions['progress'] {
  if (cmd.quiet || !s.io.stderr.isTTY) return undefined;
  let last = 0;
  return (done, total) => {
    if (total <= PROGRESS_FROM) return;
    const now = s.io.now();
    if (done < total && now - last < 100) return;
    last = now;
    say(s, done < total ? `\rmeshinject: ${done}/${total} resources` : '\r\u001b[K');
  };
}

/**
 * Share of the old generation (`--max-old-space-size`) in live use at which a run stops with advice instead of
 * crashing out of memory. Measured: many small workloads (2 000 one-container Deployments, 378 KB) peak at 62 MB
 * of heap with 13 MB of output, and V8 aborted at 4 000 of them under a 64 MB old space while the old check
 * (90% of the whole heap, young generation included, every 64 resources) never fired; what is left above this
 * share is the room for writing the output out.
 */
const HEAP_STOP = 0.85;

/**
 * A full garbage collection, to tell live data from garbage before stopping a run (`--expose-gc` set on first
 * use, not at import: a V8 flag set changes V8's flag hash, and the bin's code cache is accepted only when the
 * hash matches the one it was written with; undefined where V8 refuses it).
 */
let gc: { collect?: () => void } | undefined;

function collectGarbage(): (() => void) | undefined {
  if (gc) return gc.collect;
  try {
    setFlagsFromString('--expose-gc');
    gc = { collect: runInNewContext('gc') as () => void };
  } catch {
    gc = {};
  }
  return gc.collect;
}

/**
 * A progress hook that stops the run with a clear error, before V8 aborts with "JavaScript heap out of memory",
 * when the heap nears the old generation's limit (checked after every resource; the first time above the mark,
 * a full collection first, so that garbage alone does not stop a run): the message gives
 * the limit, how far the run got and a `--max-old-space-size` value that should suffice. Nothing has been
 * written then (output is complete or none).
 * @throws CliError
 */
function heapGuard(): (done: number, total: number) => void {
  const oldSpace = getHeapStatistics().heap_size_limit - YOUNG_GENERATION;
  const stop = HEAP_STOP * oldSpace;
  let collected = false;
  return (done, total) => {
    let used = getHeapStatistics().used_heap_size;
    if (used < stop) return;
    const collect = collectGarbage();
    if (collect && !collected) {
      // Once: garbage is not a reason to stop; past the mark again, the run stops.
      collected = true;
      collect();
      used = getHeapStatistics().used_heap_size;
      if (used < stop) return;
    }
    // Early in a run the rate says little: twice what is in use then, else what the rate needs for all.
    throw heapError(
      oldSpace,
      used,
      `after ${done} of ${total} resources`,
      done < total / 10 ? 2 * used : used * (total / done),
    );
  };
}

/** The error of a run that cannot fit the heap: exit 2, naming `NODE_OPTIONS=--max-old-space-size`. */
function heapError(oldSpace: number, used: number, where: string, need: number): CliError {
  return new CliError(
    `the input needs more memory than Node's heap limit of ${mebibytes(oldSpace)} MB (${mebibytes(used)} MB in use ${where}); run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(need)} (megabytes), or split the input`,
  );
}

/**
 * Old-generation heap a run needs per input byte, measured: a 4.9 MB ResourceList of 3 000 workloads runs with
 * `--max-old-space-size=80` and aborts with 60; the 162 MB ResourceList of 100 000 workloads runs with the
 * default of about 4 GB (bench/RESULTS.md, "Beyond 10 000").
 */
const OLD_SPACE_PER_INPUT_BYTE = 16;
/**
 * Old-generation heap a run needs per resource, measured on the worst class, many small workloads: 2 000
 * one-container Deployments (378 KB) hold 73 bytes of heap per input byte once parsed (14 KB per resource) and
 * peak near 60 MB while rendering output 34 times the input. An input needs the larger of the two estimates.
 */
const OLD_SPACE_PER_RESOURCE = 20 * 1024;
/** V8's young generation, the part of `heap_size_limit` that `--max-old-space-size` does not set (16 MiB semi-spaces). */
const YOUNG_GENERATION = 48 * 1048576;

const mebibytes = (n: number): number => Math.round(n / 1048576);

/**
 * Refuses, before processing starts, an input that cannot fit Node's heap (V8 would abort with "JavaScript heap
 * out of memory" and a core dump): the message names the flag and a value that should suffice.
 * @throws CliError
 */
function checkHeapFor(inputs: readonly RunInput[]): void {
  const bytes = inputs.reduce((n, i) => n + i.text.length, 0);
  const resources = inputs.reduce((n, i) => n + countResources(i.text), 0);
  const oldSpace = getHeapStatistics().heap_size_limit - YOUNG_GENERATION;
  const need = Math.max(bytes * OLD_SPACE_PER_INPUT_BYTE, resources * OLD_SPACE_PER_RESOURCE);
  if (need <= oldSpace) return;
  throw new CliError(
    `the input (${mebibytes(bytes)} MB) needs about ${mebibytes(need)} MB of heap, more than Node's limit of ${mebibytes(oldSpace)} MB; run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(need)} (megabytes), or split the input`,
  );
}

/**
 * Sends a run whose heap need (inputs and configs, `OLD_SPACE_PER_INPUT_BYTE`) is a large share of the heap
 * (`containFor`) on into a heap-capped Worker, where running out of heap inside one resource is the heap error,
 * not V8's abort (src/cli/contained.ts).
 * @throws ContainRun when `io.contain` is given and the run is that large
 */
function containIfLarge(s: Session, texts: ReadonlyArray<{ text: string }>): void {
  if (!s.io.contain) return;
  const oldSpace = getHeapStatistics().heap_size_limit - YOUNG_GENERATION;
  const need = texts.reduce((n, t) => n + t.text.length, 0) * OLD_SPACE_PER_INPUT_BYTE;
  if (!containFor(need, oldSpace)) return;
  throw new ContainRun(
    mebibytes(oldSpace),
    `the input needs more memory than Node's heap limit of ${mebibytes(oldSpace)} MB (it ran out while building one resource or output); run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(4 * Math.max(need, oldSpace))} (megabytes), or make the input or its configs smaller`,
  );
}

/** Resources in a text, counted before parsing: each has an `apiVersion` (a linear scan). */
function countResources(text: string): number {
  let n = 0;
  for (let i = text.indexOf('apiVersion'); i >= 0; i = text.indexOf('apiVersion', i + 10)) n++;
  return n;
}

/** A `--max-old-space-size` value (MB) with room above `bytes`: 1.5 times, rounded up to a whole GiB. */
function adviseHeap(bytes: number): number {
  return Math.ceil((mebibytes(bytes) * 1.5) / 1024) * 1024;
}

/**
 * The cluster's Kubernetes version for `nativeSidecars: auto`: `--kube-version`, else `KUBE_VERSION` (Argo CD's
 * build environment for config management plugins), else `ARGOCD_ENV_KUBE_VERSION` (set in the Application's
 * `plugin.env`, which Argo CD prefixes with `ARGOCD_ENV_`).
 * @throws CliError (exit 2) for a value set but not a version (`kubeVersionError`), naming the variable
 */
function kubeVersionFrom(cmd: Command, env: CliEnv): { kubeVersion?: { value: string; from: string } } {
  if (cmd.kubeVersion !== undefined) return { kubeVersion: { value: cmd.kubeVersion, from: '--kube-version' } };
  for (const name of ['KUBE_VERSION', 'ARGOCD_ENV_KUBE_VERSION']) {
    const value = env[name];
    if (!value) continue;
    const bad = kubeVersionError(value, name);
    if (bad) throw new CliError(bad);
    return { kubeVersion: { value, from: name } };
  }
  return {};
}

/** What every command reads: the size budget, config files, flag overrides, inputs, plan switches. */
function prepare(s: Session, cmd: Command): { inputs: RunInput[]; opts: RunOptions; logToStderr: boolean } {
  const env = s.env;
  const logToStderr = /^(true|1)$/i.test(env.LOG_TO_STDERR ?? '');
  // Plan switches and counters travel in the run options (RunOptions.plans), not process-wide.
  const planStats =
    env.MESHINJECT_PLAN_STATS === '1' ? { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 } : undefined;
  if (planStats) s.planStats = planStats;
  const plans: RunOptions['plans'] = {
    enabled: env.MESHINJECT_PLANS !== '0',
    verify: env.MESHINJECT_VERIFY_PLANS === '1',
    recordOnRepeat: true,
    ...(planStats ? { stats: planStats } : {}),
  };
  s.budget = s.budgetTotal = cmd.maxInputBytes;
  s.confinement = confinementOf({
    ...(cmd.root !== undefined ? { root: cmd.root } : {}),
    restrictor: cmd.loadRestrictor,
    inputs: cmd.inputs,
    cwd: s.io.cwd,
    argocd: Boolean(env.ARGOCD_APP_NAME),
  });
  if (cmd.outputFile !== undefined) planWrite(s, cmd.outputFile, `--output-file ${cmd.outputFile}`);
  for (const r of cmd.reports) if (r.path !== undefined) planWrite(s, r.path, `--report ${r.format}=${r.path}`);
  const functionConfigs = cmd.configs.map((c, i) => {
    const platform = cmd.platformConfigs.includes(i);
    const name = `${platform ? '--platform-config' : '--config'} ${c}`;
    return { name, text: readText(s, c, name, platform), ...(platform ? { platform } : {}) };
  });
  const overrides = overridesFrom(s, cmd);
  const leftOutFiles: Array<{ path: string; why: string }> = [];
  const inputs = readInputs(s, cmd.inputs, cmd.command === 'inject' || cmd.command === 'uninject', leftOutFiles);
  const aliased = aliasProblem(
    [...s.plannedWrites.values()].map((w) => w.identity),
    s.reads,
  );
  if (aliased) throw new CliError(aliased);
  checkHeapFor(inputs);
  containIfLarge(s, [...inputs, ...functionConfigs]);
  const tierUp = tierUpSchedule(
    inputs.reduce((n, i) => n + i.text.length, 0),
    s.startedAt,
    () => s.io.now(),
    setFlagsFromString,
  );
  const onTty = progressOnTty(s, cmd);
  const guard = heapGuard();
  const progress: RunOptions['progress'] = (done, total) => {
    guard(done, total);
    tierUp();
    onTty?.(done, total);
  };
  const opts: RunOptions = {
    logToStderr,
    progress,
    plans,
    ...(functionConfigs.length ? { functionConfigs } : {}),
    ...(Object.keys(overrides).length ? { overrides } : {}),
    ...(leftOutFiles.length && (cmd.command === 'inject' || cmd.command === 'uninject') ? { leftOutFiles } : {}),
    ...kubeVersionFrom(cmd, env),
  };
  return { inputs, opts, logToStderr };
}

function finish(s: Session, cmd: Command, out: RunOutput, logToStderr: boolean, startedAt: number): void {
  if (!cmd.quiet && !logToStderr && s.io.stderr.isTTY) say(s, summaryLine(cmd.command, out, s.io.now() - startedAt));
  const p = s.planStats;
  if (p) {
    say(
      s,
      `meshinject plans: ${p.hits} hits of ${p.lookups} lookups (${p.recorded} recorded, ${p.full} full renders, ${p.keyed} by key)\n`,
    );
  }
  if (!s.outputFailed) s.exitCode = out.exitCode;
}

async function runInject(s: Session, cmd: Command, startedAt: number): Promise<void> {
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
  for (const p of stdout) writeStdout(s, p);
  for (const p of streams.stdout) writeStdout(s, p);
  for (const p of streams.stderr) say(s, p);
  await batch.commit();
  finish(s, cmd, out, logToStderr, startedAt);
}

/** `meshinject check`: nothing changes; findings on stderr (and in reports); exit 1 when one fails. */
async function runCheck(s: Session, cmd: Command, startedAt: number): Promise<void> {
  const { inputs, opts, logToStderr } = prepare(s, cmd);
  const out = runInputs(inputs, { ...opts, check: { failOn: cmd.failOn } });
  // Without LOG_TO_STDERR only errors are on stderr; a check also shows what it found short of failing.
  const shown = logToStderr
    ? out.stderr
    : out.results
        .filter((r) => r.severity !== 'info')
        .map((r) => `${formatResultLine(r)}\n`)
        .join('');
  if (shown) say(s, shown);
  const batch = new WriteBatch();
  const streams =
    out.exitCode !== 2 ? stageReports(s, cmd, () => reportOf(cmd, inputs, out), batch) : { stdout: [], stderr: [] };
  await batch.write();
  if (out.stdout) writeStdout(s, out.stdout);
  for (const p of streams.stdout) writeStdout(s, p);
  for (const p of streams.stderr) say(s, p);
  await batch.commit();
  finish(s, cmd, out, logToStderr, startedAt);
}

/** `meshinject explain`: the decision trace per workload. */
function runExplain(s: Session, cmd: Command): void {
  const { inputs, opts } = prepare(s, cmd);
  const out = runInputs(inputs, opts);
  if (out.exitCode === 2) {
    say(s, out.stderr);
    s.exitCode = 2;
    return;
  }
  const general = out.results.filter((r) => !r.resourceRef && r.severity !== 'info');
  for (const r of general) say(s, `${formatResultLine(r)}\n`);
  const list = explainWorkloads(out.workloads, out.results, locate(inputs));
  writeStdout(s, cmd.output === 'json' ? `${JSON.stringify(list, null, 2)}\n` : explainText(list));
  if (!s.outputFailed) s.exitCode = out.exitCode;
}

/**
 * `meshinject diff`: the unified diff per file, exiting as `kubectl diff` does: 0 no change, 1 changes, 2 an
 * error (bad input or usage, or error results: nothing on stdout). `--in-place` writes the changed files back
 * and exits 0 once they are written.
 */
async function runDiff(s: Session, cmd: Command): Promise<void> {
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
    for (const piece of unifiedDiff(f.name ?? 'stdin', f.input, f.edits, colour)) {
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

/**
 * `--in-place`: the changed files written back, all or nothing (each to a temporary beside it first, then all
 * renamed over), and a line naming them; exit 0.
 */
async function writeInPlace(s: Session, files: RunOutput['files']): Promise<void> {
  const changed = files.filter((f) => f.output !== f.input);
  // All or nothing: every changed file goes to a temporary beside it first, then all are renamed over.
  const batch = new WriteBatch();
  const targets = changed.map((f) => ({
    f,
    label: `${f.name!} (--in-place)`,
    target: resolveWritable(s.confinement, f.name!, `${f.name!} (--in-place)`),
  }));
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

/**
 * `meshinject migrate --to TARGET --namespace NS ...` (src/migrate.ts): the migrated package on stdout, or with
 * `--diff` a unified diff (exit 1 when it changes something), or with `-i` written back into the files, all or
 * none. Exit 2 for bad input or a request the driver refuses, 1 for error results (nothing written).
 */
async function runMigrate(s: Session, cmd: Command): Promise<void> {
  const { inputs, opts } = prepare(s, cmd);
  if (cmd.inPlace && inputs.some((i) => i.name === undefined))
    throw new CliError('--in-place needs files or directories, not stdin');
  const m = cmd.migrate!;
  const out = runMigration(
    inputs,
    { ...opts, logToStderr: !cmd.quiet },
    { to: m.to!, namespaces: m.namespaces, options: m.waypoint !== undefined ? { waypoint: m.waypoint } : {} },
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
  writeStdout(s, out.files.flatMap((f) => [...unifiedDiff(f.name ?? 'stdin', f.input, f.edits, colour)]).join(''));
  if (s.exitCode !== 2) s.exitCode = changed.length > 0 ? 1 : 0;
}

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
  if (cmd.command === 'completion') return writeStdout(s, completionScript(cmd.shell!));
  if (cmd.command === 'check') return runCheck(s, cmd, startedAt);
  if (cmd.command === 'explain') return runExplain(s, cmd);
  if (cmd.command === 'diff') return runDiff(s, cmd);
  if (cmd.command === 'migrate') return runMigrate(s, cmd);
  return runInject(s, cmd, startedAt);
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
      inputs.map((input, i) => ({ ...input, text: texts[i]! })),
      opts,
    );
    return out.exitCode === 2 || out.files.length !== inputs.length ? undefined : out.files;
  };
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
  const io: CliIo = {
    stdin: 0,
    stdout: {
      isTTY: process.stdout.isTTY,
      write: (text: string) => {
        try {
          return process.stdout.write(text);
        } catch (e) {
          thrown = true;
          throw e;
        }
      },
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
    for (const [k, v] of Object.entries(processEnv)) if (v !== undefined) env[k] = v;
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

/** Ends the run on an error thrown by a command: one line on stderr, exit 2. */
function fail(s: Session, e: unknown): void {
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
