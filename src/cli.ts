/**
 * The meshinject command: `main(argv, env, io)` runs one command line and returns its exit code. With
 * `src/cli/entry.ts` (which hands it `process`) it is the only code that touches the file system, the
 * environment and the standard streams; importing this module does nothing. It never ends the process early:
 * piped stdout over 64 KiB would be cut and kpt would then delete files (krm-ecosystem.md, hazard G1); the
 * entry sets the exit code and Node drains.
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { COMMANDS, parseCommandLine, suggest, type Command } from './cli/args.ts';
import type { FlagValue } from './contract/driver.ts';
import { DRIVERS } from './drivers/registry.ts';
import { summaryLine } from './cli/summary.ts';
import { visibleResultLines } from './cli/result-lines.ts';
import { USAGE, VERSION } from './cli/usage.ts';
import type { ConfigOverrides } from './config/layering.ts';
import type { PlanStats } from './render/plans.ts';
import { completionScript } from './cli/completion.ts';
import { convertOutput } from './cli/convert.ts';
import { patchComponent } from './cli/patches.ts';
import { unifiedDiff } from './cli/diff.ts';
import { explainText, explainWorkloads } from './reports/explain.ts';
import { junitReport, githubReport, sarifReport, tableReport } from './reports/formats.ts';
import { locateInput, type LocatedInput } from './reports/locate.ts';
import { buildReport, type Report } from './reports/report.ts';
import { runInputs, type RunInput, type RunOptions, type RunOutput } from './run.ts';
import { formatResultLine } from './results/result.ts';

export { USAGE };

/** An error for the user: one line on stderr, exit 2, nothing on stdout. */
class CliError extends Error {}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** One output stream of the CLI: stdout or stderr. */
export interface CliOutput {
  /** Writes text; may throw a system error (`EPIPE`, `ENOSPC`). */
  write(text: string): unknown;
  /** True on a terminal (the summary line, progress and diff colours are shown only there). */
  readonly isTTY?: boolean;
}

/** What the CLI touches besides the file system: stdin (a file descriptor), stdout and stderr. */
export interface CliIo {
  stdin: number;
  stdout: CliOutput;
  stderr: CliOutput;
}

/** The state of one `main` call. */
interface Session {
  env: Readonly<Record<string, string | undefined>>;
  io: CliIo;
  /** Input size budget left for this run (`--max-input-bytes`, over all inputs and config files). */
  budget: number;
  budgetTotal: number;
  /** Writing stdout failed (once): later writes are skipped. */
  outputFailed: boolean;
  exitCode: number;
}

function sizeText(n: number): string {
  for (const [unit, f] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) if (n >= f && n % f === 0) return `${n / f} ${unit}`;
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

/** A file system error in the user's terms, naming the path. */
function fsMessage(path: string, e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const what: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EISDIR: 'is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    ELOOP: 'too many symbolic links',
    EMFILE: 'too many open files',
  };
  return `${path}: ${what[err.code ?? ''] ?? err.message}`;
}

/** Reads a file (or stdin for `-`) as UTF-8 within the size budget; invalid UTF-8 is an error. */
function readText(s: Session, path: string, label = path): string {
  let bytes: Buffer;
  if (path === '-') bytes = readFd(s, s.io.stdin, 'stdin');
  else {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      throw new CliError(fsMessage(label, e));
    }
    try {
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

const MANIFEST = /\.(ya?ml|json)$/i;

/** Files of a directory that are not inputs: a kustomize or kpt package's own files, with what they are. */
const PACKAGE_FILES: Readonly<Record<string, string>> = {
  'kustomization.yaml': 'a kustomize Kustomization',
  'kustomization.yml': 'a kustomize Kustomization',
  Kustomization: 'a kustomize Kustomization',
  Kptfile: 'a kpt Kptfile',
};

/**
 * The manifest files under a directory: `*.yaml`, `*.yml`, `*.json`, recursively, sorted by path (code
 * unit order). Entries whose name starts with `.` (`.git`, `.github`) and symbolic links to directories
 * are not followed. A package's own files (`PACKAGE_FILES`) are not inputs: they go to `leftOut`.
 */
function manifestFiles(dir: string, leftOut: Array<{ path: string; why: string }>): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch (e) {
      throw new CliError(fsMessage(d, e));
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (Object.hasOwn(PACKAGE_FILES, e.name) && !e.isDirectory()) leftOut.push({ path: p, why: PACKAGE_FILES[e.name]! });
      else if (e.isDirectory()) walk(p);
      else if (MANIFEST.test(e.name) && (e.isFile() || (e.isSymbolicLink() && statSync(p, { throwIfNoEntry: false })?.isFile()))) out.push(p);
    }
  };
  walk(dir);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The inputs named on the command line, read: files, directories (expanded; with `manifestsOnly`, the files
 * read from a directory are marked so, see `RunInput.manifestsOnly`), `-` for stdin. A package's own files in
 * a directory (`PACKAGE_FILES`) are pushed to `leftOut`.
 */
function readInputs(s: Session, paths: readonly string[], manifestsOnly: boolean, leftOut: Array<{ path: string; why: string }>): RunInput[] {
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
      throw new CliError(`${p}: URLs are not read (meshinject works offline); download it first, e.g. curl -fsSL '${p}' | meshinject -`);
    }
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      // A mistyped subcommand (`meshinject chek`) is read as a file name: say what was probably meant.
      const meant = !inputs.length && /^[a-z]+$/.test(p) ? suggest(p, COMMANDS) : undefined;
      throw new CliError(`${fsMessage(p, e)}${meant ? ` (did you mean meshinject ${meant}?)` : ''}`);
    }
    if (st.isDirectory()) {
      const files = manifestFiles(p, leftOut);
      if (files.length === 0) throw new CliError(`${p}: a directory without manifests (no *.yaml, *.yml or *.json files)`);
      for (const f of files) inputs.push({ name: f, text: readText(s, f), ...(manifestsOnly ? { manifestsOnly } : {}) });
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
  const sections = driverOverrides(s, cmd);
  const o: ConfigOverrides = sections.length ? { sections } : {};
  // --default-namespace, else Argo CD's application namespace (where Argo CD applies resources without one).
  if (cmd.defaultNamespace !== undefined) o.defaultNamespace = { value: cmd.defaultNamespace, from: '--default-namespace' };
  else if (s.env.ARGOCD_APP_NAMESPACE) o.defaultNamespace = { value: s.env.ARGOCD_APP_NAMESPACE, from: 'ARGOCD_APP_NAMESPACE' };
  return o;
}

/**
 * The line for a failed write of the output, or undefined for a closed pipe (the reader went away, `| head`:
 * stop quietly, as Unix tools do).
 */
export function outputErrorLine(e: NodeJS.ErrnoException): string | undefined {
  if (e.code === 'EPIPE') return undefined;
  return `meshinject: error: cannot write the output: ${e.code === 'ENOSPC' ? 'no space left on device' : e.message}\n`;
}

/** What went wrong writing stdout, once: a closed pipe ends quietly, anything else is one line and exit 2. */
function onOutputError(s: Session, e: NodeJS.ErrnoException): void {
  if (s.outputFailed) return;
  s.outputFailed = true;
  const line = outputErrorLine(e);
  if (line === undefined) return;
  s.io.stderr.write(line);
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

/** Writes the `--report` outputs: each to its path, or stdout (table: stderr). */
function writeReports(s: Session, cmd: Command, report: () => Report): void {
  if (cmd.reports.length === 0) return;
  const r = report();
  for (const { format, path } of cmd.reports) {
    const text = format === 'junit' ? junitReport(r) : format === 'sarif' ? sarifReport(r) : format === 'github' ? githubReport(r) : tableReport(r);
    if (path !== undefined) writeFile(path, text, `--report ${format}=`);
    else if (format === 'table') s.io.stderr.write(text);
    else writeStdout(s, text);
  }
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
    const now = performance.now();
    if (done < total && now - last < 100) return;
    last = now;
    s.io.stderr.write(done < total ? `\rmeshinject: ${done}/${total} resources` : '\r\u001b[K');
  };
}

/** Share of V8's heap limit at which a run stops with advice instead of crashing out of memory. */
const HEAP_STOP = 0.9;

/**
 * A progress hook that stops the run with a clear error, before V8 aborts with "JavaScript heap out of memory",
 * when the live heap nears its limit (checked every 64 resources): the message gives the limit, how far the run
 * got and a `--max-old-space-size` value that should suffice. Nothing has been written then (output is complete
 * or none).
 * @throws CliError
 */
function heapGuard(): (done: number, total: number) => void {
  const limit = getHeapStatistics().heap_size_limit;
  return (done, total) => {
    if (done % 64 !== 0) return;
    const used = getHeapStatistics().used_heap_size;
    if (used < HEAP_STOP * limit) return;
    throw new CliError(`the input needs more memory than Node's heap limit of ${mebibytes(limit)} MB (${mebibytes(used)} MB in use after ${done} of ${total} resources); run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(used * (total / done))} (megabytes), or split the input`);
  };
}

/**
 * Old-generation heap a run needs per input byte, measured: a 4.9 MB ResourceList of 3 000 workloads runs with
 * `--max-old-space-size=80` and aborts with 60; the 162 MB ResourceList of 100 000 workloads runs with the
 * default of about 4 GB (bench/RESULTS.md, "Beyond 10 000").
 */
const OLD_SPACE_PER_INPUT_BYTE = 16;
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
  const oldSpace = getHeapStatistics().heap_size_limit - YOUNG_GENERATION;
  const need = bytes * OLD_SPACE_PER_INPUT_BYTE;
  if (need <= oldSpace) return;
  throw new CliError(`the input (${mebibytes(bytes)} MB) needs about ${mebibytes(need)} MB of heap, more than Node's limit of ${mebibytes(oldSpace)} MB; run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(need)} (megabytes), or split the input`);
}

/** A `--max-old-space-size` value (MB) with room above `bytes`: 1.5 times, rounded up to a whole GiB. */
function adviseHeap(bytes: number): number {
  return Math.ceil((mebibytes(bytes) * 1.5) / 1024) * 1024;
}

/**
 * The cluster's Kubernetes version for `nativeSidecars: auto`: `--kube-version`, else `KUBE_VERSION` (Argo CD's
 * build environment for config management plugins), else `ARGOCD_ENV_KUBE_VERSION` (set in the Application's
 * `plugin.env`, which Argo CD prefixes with `ARGOCD_ENV_`).
 */
function kubeVersionFrom(cmd: Command, env: Session['env']): { kubeVersion?: { value: string; from: string } } {
  if (cmd.kubeVersion !== undefined) return { kubeVersion: { value: cmd.kubeVersion, from: '--kube-version' } };
  for (const name of ['KUBE_VERSION', 'ARGOCD_ENV_KUBE_VERSION']) if (env[name]) return { kubeVersion: { value: env[name]!, from: name } };
  return {};
}

/** What every command reads: the size budget, config files, flag overrides, inputs, plan switches. */
function prepare(s: Session, cmd: Command): { inputs: RunInput[]; opts: RunOptions; logToStderr: boolean; planStats?: PlanStats } {
  const env = s.env;
  const logToStderr = /^(true|1)$/i.test(env.LOG_TO_STDERR ?? '');
  const planStats = env.MESHINJECT_PLAN_STATS === '1' ? { lookups: 0, hits: 0, recorded: 0, full: 0 } : undefined;
  const plans: RunOptions['plans'] = { enabled: env.MESHINJECT_PLANS !== '0', verify: env.MESHINJECT_VERIFY_PLANS === '1', ...(planStats ? { stats: planStats } : {}) };
  s.budget = s.budgetTotal = cmd.maxInputBytes;
  const functionConfigs = cmd.configs.map((c) => ({ name: `--config ${c}`, text: readText(s, c, `--config ${c}`) }));
  const overrides = overridesFrom(s, cmd);
  const leftOutFiles: Array<{ path: string; why: string }> = [];
  const inputs = readInputs(s, cmd.inputs, cmd.command === 'inject', leftOutFiles);
  checkHeapFor(inputs);
  const onTty = progressOnTty(s, cmd);
  const guard = heapGuard();
  const progress: RunOptions['progress'] = onTty ? (done, total) => { guard(done, total); onTty(done, total); } : guard;
  const opts: RunOptions = {
    logToStderr,
    progress,
    plans,
    ...(functionConfigs.length ? { functionConfigs } : {}),
    ...(Object.keys(overrides).length ? { overrides } : {}),
    ...(leftOutFiles.length && cmd.command === 'inject' ? { leftOutFiles } : {}),
    ...kubeVersionFrom(cmd, env),
  };
  return { inputs, opts, logToStderr, ...(planStats ? { planStats } : {}) };
}

function finish(s: Session, cmd: Command, out: RunOutput, prepared: { logToStderr: boolean; planStats?: PlanStats }, startedAt: number): void {
  if (!cmd.quiet && !prepared.logToStderr && s.io.stderr.isTTY) s.io.stderr.write(summaryLine(cmd.command, out, performance.now() - startedAt));
  const p = prepared.planStats;
  if (p) s.io.stderr.write(`meshinject plans: ${p.hits} hits of ${p.lookups} lookups (${p.recorded} recorded, ${p.full} full renders)\n`);
  if (!s.outputFailed) s.exitCode = out.exitCode;
}

/** Writes a file the user named; `what` names the option in the error (`--output-file `, `--report junit=`). */
function writeFile(path: string, text: string | readonly string[], what: string): void {
  try {
    if (typeof text === 'string') writeFileSync(path, text);
    else {
      const fd = openSync(path, 'w');
      try {
        for (const p of text) writeFileSync(fd, p);
      } finally {
        closeSync(fd);
      }
    }
  } catch (e) {
    throw new CliError(`cannot write ${what}${fsMessage(path, e)}`);
  }
}

function runInject(s: Session, cmd: Command, startedAt: number): void {
  const stdoutReport = cmd.reports.find((r) => r.path === undefined && r.format !== 'table');
  if (stdoutReport && cmd.outputFile === undefined) {
    throw new CliError(`--report ${stdoutReport.format} needs a path (--report ${stdoutReport.format}=PATH): stdout carries the manifests (or use --output-file)`);
  }
  const prepared = prepare(s, cmd);
  const { inputs, opts, logToStderr } = prepared;
  const out = runInputs(inputs, { ...opts, ...(s.env.ARGOCD_APP_NAME ? { dropLocalConfig: true } : {}) });
  // Stream input: warnings are shown by default, one line each (-q: errors only); a ResourceList's results travel in
  // it. Under Argo CD (a plugin's stderr is its log, shown only on failure) the plugin's own switch decides (LOG_TO_STDERR).
  const warningsVisible = !logToStderr && !cmd.quiet && !out.resourceList && out.exitCode !== 2 && !s.env.ARGOCD_APP_NAME;
  const shown = warningsVisible ? visibleResultLines(out.results) : out.stderr;
  if (shown) s.io.stderr.write(shown);
  if (out.exitCode !== 2 && out.stdoutParts.length > 0) {
    // Written piece by piece: an output larger than one JavaScript string can hold is still written whole.
    let parts = out.stdoutParts;
    if (cmd.output) {
      try {
        parts = [cmd.output === 'patches' ? patchComponent(out.files) : convertOutput(out.stdout, cmd.output)];
      } catch (e) {
        throw new CliError((e as Error).message);
      }
    }
    if (cmd.outputFile !== undefined) writeFile(cmd.outputFile, parts, '--output-file ');
    else for (const p of parts) writeStdout(s, p);
  }
  if (out.exitCode !== 2) writeReports(s, cmd, () => reportOf(cmd, inputs, out));
  finish(s, cmd, out, prepared, startedAt);
}

/** `meshinject check`: nothing changes; findings on stderr (and in reports); exit 1 when one fails. */
function runCheck(s: Session, cmd: Command, startedAt: number): void {
  const prepared = prepare(s, cmd);
  const { inputs, opts, logToStderr } = prepared;
  const out = runInputs(inputs, { ...opts, check: { failOn: cmd.failOn } });
  // Without LOG_TO_STDERR only errors are on stderr; a check also shows what it found short of failing.
  const shown = logToStderr ? out.stderr : out.results.filter((r) => r.severity !== 'info').map((r) => `${formatResultLine(r)}\n`).join('');
  if (shown) s.io.stderr.write(shown);
  if (out.stdout) writeStdout(s, out.stdout);
  if (out.exitCode !== 2) writeReports(s, cmd, () => reportOf(cmd, inputs, out));
  finish(s, cmd, out, prepared, startedAt);
}

/** `meshinject explain`: the decision trace per workload. */
function runExplain(s: Session, cmd: Command): void {
  const { inputs, opts } = prepare(s, cmd);
  const out = runInputs(inputs, opts);
  if (out.exitCode === 2) {
    s.io.stderr.write(out.stderr);
    s.exitCode = 2;
    return;
  }
  const general = out.results.filter((r) => !r.resourceRef && r.severity !== 'info');
  for (const r of general) s.io.stderr.write(`${formatResultLine(r)}\n`);
  const list = explainWorkloads(out.workloads, out.results, locate(inputs));
  writeStdout(s, cmd.output === 'json' ? `${JSON.stringify(list, null, 2)}\n` : explainText(list));
  if (!s.outputFailed) s.exitCode = out.exitCode;
}

/** `meshinject diff`: the unified diff per file; `--in-place` writes the changed files back. */
function runDiff(s: Session, cmd: Command): void {
  const { inputs, opts } = prepare(s, cmd);
  if (cmd.inPlace && inputs.some((i) => i.name === undefined)) throw new CliError('--in-place needs files or directories, not stdin');
  const out = runInputs(inputs, opts);
  if (out.stderr) s.io.stderr.write(out.stderr);
  if (out.exitCode !== 0) {
    s.exitCode = out.exitCode;
    return;
  }
  const colour = cmd.color === 'always' || (cmd.color === 'auto' && !cmd.inPlace && s.io.stdout.isTTY === true && !s.env.NO_COLOR);
  const text = out.files.map((f) => unifiedDiff(f.name ?? 'stdin', f.input, f.output, colour)).join('');
  if (cmd.inPlace) {
    const changed = out.files.filter((f) => f.output !== f.input);
    for (const f of changed) writeFile(f.name!, f.output, '--in-place: ');
    s.io.stderr.write(`meshinject: ${changed.length} file(s) changed${changed.length ? `: ${changed.map((f) => f.name).join(', ')}` : ''}\n`);
  } else writeStdout(s, text);
  s.exitCode = 0;
}

/** Runs the command of a parsed command line. */
function runCommand(s: Session, argv: readonly string[], startedAt: number): void {
  const cmd = parseCommandLine(argv);
  if ('error' in cmd) {
    s.io.stderr.write(`meshinject: ${cmd.error}\nRun 'meshinject --help' for usage.\n`);
    s.exitCode = 2;
    return;
  }
  if (cmd.help) return writeStdout(s, USAGE);
  if (cmd.version) return writeStdout(s, `meshinject ${VERSION}\n`);
  if (cmd.command === 'completion') return writeStdout(s, completionScript(cmd.shell!));
  if (cmd.command === 'check') return runCheck(s, cmd, startedAt);
  if (cmd.command === 'explain') return runExplain(s, cmd);
  if (cmd.command === 'diff') return runDiff(s, cmd);
  runInject(s, cmd, startedAt);
}

/**
 * Runs one meshinject command line: `argv` without `node` and the script, `env` the environment it reads
 * (`LOG_TO_STDERR`, `ARGOCD_APP_NAMESPACE`, `ARGOCD_APP_NAME`, `NO_COLOR`, `MESHINJECT_PLANS`,
 * `MESHINJECT_VERIFY_PLANS`, `MESHINJECT_PLAN_STATS`), `io` its streams. Reads the files it names and writes
 * the ones it is asked to (`--output-file`, `--report`, `--in-place`); nothing else outside `io`.
 *
 * @returns the exit code: 0 success, 1 error results or a failed check, 2 bad input or usage (one line on
 *   stderr, nothing on stdout)
 */
export function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: CliIo): number {
  const s: Session = { env, io, budget: 0, budgetTotal: 0, outputFailed: false, exitCode: 0 };
  try {
    runCommand(s, argv, performance.now());
  } catch (e) {
    s.exitCode = 2;
    if (e instanceof CliError) io.stderr.write(`meshinject: error: ${e.message}\n`);
    else if ((e as Error).name === 'RangeError' && /Invalid string length|Array buffer allocation/.test((e as Error).message)) {
      io.stderr.write(`meshinject: error: the input or output is too large to hold in memory (${(e as Error).message}); split the input, or lower --max-input-bytes to refuse such inputs early\n`);
    } else io.stderr.write(`meshinject: internal error: ${(e as Error).stack ?? String(e)}\n`);
  }
  return s.exitCode;
}
