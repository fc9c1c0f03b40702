/**
 * The meshinject command: the only module that touches `process` (argv, env, stdin, stdout, stderr,
 * exitCode) and the file system. It never ends the process early: piped stdout over 64 KiB would be cut
 * and kpt would then delete files (krm-ecosystem.md, hazard G1); the exit code is set and Node drains.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync } from 'node:fs';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { COMMANDS, parseCommandLine, suggest, type Command } from './cli/args.ts';
import type { FlagValue } from './contract/driver.ts';
import { DRIVERS } from './drivers/registry.ts';
import { summaryLine } from './cli/summary.ts';
import { visibleResultLines } from './cli/result-lines.ts';
import { USAGE, VERSION } from './cli/usage.ts';
import type { ConfigOverrides } from './config/layering.ts';
import type { PlanStats } from './render/plans.ts';
import { completionScript } from './cli/completion.ts';
import { WriteBatch } from './cli/atomic-write.ts';
import { confinementOf, fsMessage, isStream, manifestFiles, PathError, rawNameOf, resolveReadable, resolveWritable, type Confinement } from './cli/paths.ts';
import { convertOutput } from './cli/convert.ts';
import { patchComponent } from './cli/patches.ts';
import { unifiedDiff } from './cli/diff.ts';
import { explainText, explainWorkloads } from './reports/explain.ts';
import { junitReport, githubReport, sarifReport, tableReport } from './reports/formats.ts';
import { locateInput, type LocatedInput } from './reports/locate.ts';
import { buildReport, type Report } from './reports/report.ts';
import { runInputs, type RunInput, type RunOptions, type RunOutput } from './run.ts';
import { formatResultLine } from './results/result.ts';
import { escapeLine } from './results/escape-line.ts';

export { USAGE };

/** An error for the user: one line on stderr, exit 2, nothing on stdout. */
class CliError extends Error {}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Input size budget left for this run (`--max-input-bytes`, over all inputs and config files). */
let budget = 0;
let budgetTotal = 0;

function sizeText(n: number): string {
  for (const [unit, f] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) if (n >= f && n % f === 0) return `${n / f} ${unit}`;
  return `${n} bytes`;
}

function tooLarge(label: string): CliError {
  return new CliError(`${label}: input larger than the limit of ${sizeText(budgetTotal)} (--max-input-bytes)`);
}

/**
 * Reads a file descriptor to its end, at most `budget` bytes (a regular file's size is checked first).
 * Works for pipes, FIFOs and devices (`/dev/zero` stops at the limit); a non-blocking stdin is polled.
 */
function readFd(fd: number, label: string): Buffer {
  const st = fstatSync(fd);
  if (st.isDirectory()) throw new CliError(`${label}: is a directory, not a file or a stream`);
  if (st.isFile() && st.size > budget) throw tooLarge(label);
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
    if (total > budget) throw tooLarge(label);
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  budget -= total;
  return Buffer.concat(chunks, total);
}

/** The confinement of this run (`src/cli/paths.ts`), set by `prepare` before any file is read. */
let confinement: Confinement = { none: true, named: [], label: 'none' };

/**
 * Reads a file (or stdin for `-`) as UTF-8 within the size budget; invalid UTF-8 is an error. The file must
 * resolve inside the root (`src/cli/paths.ts`) unless `anywhere` (a `--platform-config` file); it is opened
 * by its resolved path, without following a link put there since.
 */
function readText(path: string, label = path, anywhere = false): string {
  let bytes: Buffer;
  if (path === '-') bytes = readFd(0, 'stdin');
  else {
    let fd: number;
    const open = anywhere || isStream(confinement, path) ? path : resolveReadable(confinement, path, label);
    try {
      fd = openSync(open, open === path ? constants.O_RDONLY : constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (e) {
      throw new CliError(fsMessage(label, e));
    }
    try {
      bytes = readFd(fd, label);
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
function readInputs(paths: readonly string[], manifestsOnly: boolean, leftOut: Array<{ path: string; why: string }>): RunInput[] {
  const inputs: RunInput[] = [];
  let stdinUsed = false;
  for (const p of paths.length ? paths : ['-']) {
    if (p === '-') {
      if (stdinUsed) throw new CliError("'-' (stdin) is given twice");
      stdinUsed = true;
      inputs.push({ text: readText('-') });
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) {
      throw new CliError(`${p}: URLs are not read (meshinject works offline); download it first, e.g. curl -fsSL '${p}' | meshinject -`);
    }
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) {
        throw new CliError(`${p}: a dangling symbolic link (its target does not exist)`);
      }
      const raw = rawNameOf(p);
      if (raw !== undefined) throw new CliError(`${raw}: the name is not valid UTF-8 (bytes shown as \\xNN); rename it`);
      // A mistyped subcommand (`meshinject chek`) is read as a file name: say what was probably meant.
      const meant = !inputs.length && /^[a-z]+$/.test(p) ? suggest(p, COMMANDS) : undefined;
      throw new CliError(`${fsMessage(p, e)}${meant ? ` (did you mean meshinject ${meant}?)` : ''}`);
    }
    if (st.isDirectory()) {
      const files = manifestFiles(confinement, p, leftOut);
      if (files.length === 0) throw new CliError(`${p}: a directory without manifests (no *.yaml, *.yml or *.json files)`);
      for (const f of files) inputs.push({ name: f, text: readText(f), ...(manifestsOnly ? { manifestsOnly } : {}) });
    } else {
      inputs.push({ name: p, text: readText(p) });
    }
  }
  return inputs;
}

/**
 * The overrides of the drivers' flags (`MeshDriver.flags`): file flags are read (within the size budget), in
 * the order the driver declares its flags, and the driver turns the values into fields of its section.
 * @throws CliError naming the flag and file of a value the driver cannot use
 */
function driverOverrides(cmd: Command): NonNullable<ConfigOverrides['sections']> {
  const out: Array<NonNullable<ConfigOverrides['sections']>[number]> = [];
  for (const driver of DRIVERS) {
    const given = cmd.driverFlags[driver.name];
    if (!given || !driver.flags) continue;
    const values: Record<string, FlagValue> = {};
    for (const f of driver.flags.options) {
      const raw = given[f.name];
      if (raw === undefined) continue;
      const name = f.file ? `--${f.name} ${raw}` : `--${f.name}`;
      values[f.name] = { name, text: f.file ? readText(raw, name) : raw };
    }
    const r = driver.flags.overrides(values);
    if (!r.ok) throw new CliError(r.message);
    out.push(...r.overrides.map((o) => ({ section: driver.name, ...o })));
  }
  return out;
}

/** Settings from flags and the environment that win over the functionConfig. */
function overridesFrom(cmd: Command, env: NodeJS.ProcessEnv): ConfigOverrides {
  const sections = driverOverrides(cmd);
  const o: ConfigOverrides = sections.length ? { sections } : {};
  // --default-namespace, else Argo CD's application namespace (where Argo CD applies resources without one).
  if (cmd.defaultNamespace !== undefined) o.defaultNamespace = { value: cmd.defaultNamespace, from: '--default-namespace' };
  else if (env.ARGOCD_APP_NAMESPACE) o.defaultNamespace = { value: env.ARGOCD_APP_NAMESPACE, from: 'ARGOCD_APP_NAMESPACE' };
  return o;
}

/** What went wrong writing stdout, once: a closed pipe ends quietly, anything else is one line. */
let outputFailed = false;

function onOutputError(e: NodeJS.ErrnoException): void {
  if (outputFailed) return;
  outputFailed = true;
  if (e.code === 'EPIPE') return; // the reader went away (`| head`): stop quietly, as Unix tools do
  process.stderr.write(`meshinject: error: cannot write the output: ${escapeLine(e.code === 'ENOSPC' ? 'no space left on device' : e.message)}\n`);
  process.exitCode = 2;
}

function writeStdout(text: string): void {
  if (!text || outputFailed) return;
  try {
    process.stdout.write(text);
  } catch (e) {
    onOutputError(e as NodeJS.ErrnoException);
  }
}

/**
 * The `--report` outputs: those with a path are staged in `batch` (written when it commits); the others are
 * returned, for stdout (table: stderr), to be written once every file is staged.
 */
function stageReports(cmd: Command, report: () => Report, batch: WriteBatch): { stdout: string[]; stderr: string[] } {
  const streams = { stdout: [] as string[], stderr: [] as string[] };
  if (cmd.reports.length === 0) return streams;
  const r = report();
  for (const { format, path } of cmd.reports) {
    const text = format === 'junit' ? junitReport(r) : format === 'sarif' ? sarifReport(r) : format === 'github' ? githubReport(r) : tableReport(r);
    if (path !== undefined) stageFile(batch, `--report ${format}=${path}`, [text]);
    else (format === 'table' ? streams.stderr : streams.stdout).push(text);
  }
  return streams;
}

/** A file this run will write: its real target (links resolved) and whether it is a stream (FIFO, device). */
interface PlannedWrite {
  target: string;
  stream: boolean;
}

/** The files this run writes (`--output-file`, `--report F=PATH`), by label, checked by `prepare` before any input is read. */
const plannedWrites = new Map<string, PlannedWrite>();

/**
 * Checks a file the run will write, before anything is read or written (`resolveWritable`: inside the root,
 * its directory there and writable, not a directory).
 */
function planWrite(path: string, label: string): void {
  const stream = isStream(confinement, path);
  plannedWrites.set(label, { stream, target: stream ? path : resolveWritable(confinement, path, label) });
}

function stageFile(batch: WriteBatch, label: string, parts: readonly string[]): void {
  const p = plannedWrites.get(label)!;
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
function progressOnTty(cmd: Command): RunOptions['progress'] {
  if (cmd.quiet || !process.stderr.isTTY) return undefined;
  let last = 0;
  return (done, total) => {
    if (total <= PROGRESS_FROM) return;
    const now = performance.now();
    if (done < total && now - last < 100) return;
    last = now;
    process.stderr.write(done < total ? `\rmeshinject: ${done}/${total} resources` : '\r\u001b[K');
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
 * A full garbage collection, to tell live data from garbage before stopping a run (`--expose-gc` set at the
 * first call, not at import: a V8 flag set changes V8's flag hash, and the bin's code cache is accepted only
 * when the hash matches the one it was written with). Returns false where V8 refuses it.
 */
function collectGarbage(): boolean {
  try {
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    return true;
  } catch {
    return false;
  }
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
    if (!collected) {
      // Once: garbage is not a reason to stop; past the mark again, the run stops.
      collected = true;
      if (collectGarbage()) {
        used = getHeapStatistics().used_heap_size;
        if (used < stop) return;
      }
    }
    // Early in a run the rate says little: twice what is in use then, else what the rate needs for all.
    throw heapError(oldSpace, used, `after ${done} of ${total} resources`, done < total / 10 ? 2 * used : used * (total / done));
  };
}

/** The error of a run that cannot fit the heap: exit 2, naming `NODE_OPTIONS=--max-old-space-size`. */
function heapError(oldSpace: number, used: number, where: string, need: number): CliError {
  return new CliError(`the input needs more memory than Node's heap limit of ${mebibytes(oldSpace)} MB (${mebibytes(used)} MB in use ${where}); run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(need)} (megabytes), or split the input`);
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
  throw new CliError(`the input (${mebibytes(bytes)} MB) needs about ${mebibytes(need)} MB of heap, more than Node's limit of ${mebibytes(oldSpace)} MB; run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(need)} (megabytes), or split the input`);
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
 */
function kubeVersionFrom(cmd: Command, env: NodeJS.ProcessEnv): { kubeVersion?: { value: string; from: string } } {
  if (cmd.kubeVersion !== undefined) return { kubeVersion: { value: cmd.kubeVersion, from: '--kube-version' } };
  for (const name of ['KUBE_VERSION', 'ARGOCD_ENV_KUBE_VERSION']) if (env[name]) return { kubeVersion: { value: env[name]!, from: name } };
  return {};
}

/** This run's plan counters (`MESHINJECT_PLAN_STATS=1`), printed by `finish`. */
let planStats: PlanStats | undefined;

/** What every command reads: the size budget, config files, flag overrides, inputs, plan switches. */
function prepare(cmd: Command): { inputs: RunInput[]; opts: RunOptions; logToStderr: boolean } {
  const env = process.env;
  const logToStderr = /^(true|1)$/i.test(env.LOG_TO_STDERR ?? '');
  // Plan switches and counters travel in the run options (RunOptions.plans), not process-wide.
  planStats = env.MESHINJECT_PLAN_STATS === '1' ? { lookups: 0, hits: 0, recorded: 0, full: 0 } : undefined;
  const plans: RunOptions['plans'] = { enabled: env.MESHINJECT_PLANS !== '0', verify: env.MESHINJECT_VERIFY_PLANS === '1', recordOnRepeat: true, ...(planStats ? { stats: planStats } : {}) };
  budget = budgetTotal = cmd.maxInputBytes;
  confinement = confinementOf({ ...(cmd.root !== undefined ? { root: cmd.root } : {}), restrictor: cmd.loadRestrictor, inputs: cmd.inputs, cwd: process.cwd(), argocd: Boolean(process.env.ARGOCD_APP_NAME) });
  if (cmd.outputFile !== undefined) planWrite(cmd.outputFile, `--output-file ${cmd.outputFile}`);
  for (const r of cmd.reports) if (r.path !== undefined) planWrite(r.path, `--report ${r.format}=${r.path}`);
  const functionConfigs = cmd.configs.map((c, i) => {
    const platform = cmd.platformConfigs.includes(i);
    const name = `${platform ? '--platform-config' : '--config'} ${c}`;
    return { name, text: readText(c, name, platform) };
  });
  const overrides = overridesFrom(cmd, env);
  const leftOutFiles: Array<{ path: string; why: string }> = [];
  const inputs = readInputs(cmd.inputs, cmd.command === 'inject', leftOutFiles);
  checkHeapFor(inputs);
  const onTty = progressOnTty(cmd);
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
  return { inputs, opts, logToStderr };
}

function finish(cmd: Command, out: RunOutput, logToStderr: boolean, startedAt: number): void {
  if (!cmd.quiet && !logToStderr && process.stderr.isTTY) process.stderr.write(summaryLine(cmd.command, out, performance.now() - startedAt));
  const p = planStats;
  if (p) {
    process.stderr.write(`meshinject plans: ${p.hits} hits of ${p.lookups} lookups (${p.recorded} recorded, ${p.full} full renders)\n`);
  }
  if (!outputFailed) process.exitCode = out.exitCode;
}

async function runInject(cmd: Command, startedAt: number): Promise<void> {
  const stdoutReport = cmd.reports.find((r) => r.path === undefined && r.format !== 'table');
  if (stdoutReport && cmd.outputFile === undefined) {
    throw new CliError(`--report ${stdoutReport.format} needs a path (--report ${stdoutReport.format}=PATH): stdout carries the manifests (or use --output-file)`);
  }
  const { inputs, opts, logToStderr } = prepare(cmd);
  const out = runInputs(inputs, { ...opts, ...(process.env.ARGOCD_APP_NAME ? { dropLocalConfig: true } : {}) });
  // Stream input: warnings are shown by default, one line each (-q: errors only); a ResourceList's results travel in
  // it. Under Argo CD (a plugin's stderr is its log, shown only on failure) the plugin's own switch decides (LOG_TO_STDERR).
  const warningsVisible = !logToStderr && !cmd.quiet && !out.resourceList && out.exitCode !== 2 && !process.env.ARGOCD_APP_NAME;
  const shown = warningsVisible ? visibleResultLines(out.results) : out.stderr;
  if (shown) process.stderr.write(shown);
  const batch = new WriteBatch();
  let stdout: readonly string[] = [];
  // A failed stream run has nothing to write (not even an empty conversion); a failed ResourceList comes back with its results.
  if (out.exitCode !== 2 && out.stdoutParts.some((p) => p.length > 0)) {
    // Written piece by piece: an output larger than one JavaScript string can hold is still written whole.
    let parts = out.stdoutParts;
    if (cmd.output) {
      try {
        parts = [cmd.output === 'patches' ? patchComponent(out.files) : convertOutput(out.stdout, cmd.output)];
      } catch (e) {
        throw new CliError((e as Error).message);
      }
    }
    if (cmd.outputFile !== undefined) stageFile(batch, `--output-file ${cmd.outputFile}`, parts);
    else stdout = parts;
  }
  // Every file is written to its temporary before stdout gets anything, and renamed after (see atomic-write.ts).
  const streams = out.exitCode !== 2 ? stageReports(cmd, () => reportOf(cmd, inputs, out), batch) : { stdout: [], stderr: [] };
  await batch.write();
  for (const p of stdout) writeStdout(p);
  for (const p of streams.stdout) writeStdout(p);
  for (const p of streams.stderr) process.stderr.write(p);
  batch.commit();
  finish(cmd, out, logToStderr, startedAt);
}

/** `meshinject check`: nothing changes; findings on stderr (and in reports); exit 1 when one fails. */
async function runCheck(cmd: Command, startedAt: number): Promise<void> {
  const { inputs, opts, logToStderr } = prepare(cmd);
  const out = runInputs(inputs, { ...opts, check: { failOn: cmd.failOn } });
  // Without LOG_TO_STDERR only errors are on stderr; a check also shows what it found short of failing.
  const shown = logToStderr ? out.stderr : out.results.filter((r) => r.severity !== 'info').map((r) => `${formatResultLine(r)}\n`).join('');
  if (shown) process.stderr.write(shown);
  const batch = new WriteBatch();
  const streams = out.exitCode !== 2 ? stageReports(cmd, () => reportOf(cmd, inputs, out), batch) : { stdout: [], stderr: [] };
  await batch.write();
  if (out.stdout) writeStdout(out.stdout);
  for (const p of streams.stdout) writeStdout(p);
  for (const p of streams.stderr) process.stderr.write(p);
  batch.commit();
  finish(cmd, out, logToStderr, startedAt);
}

/** `meshinject explain`: the decision trace per workload. */
function runExplain(cmd: Command): void {
  const { inputs, opts } = prepare(cmd);
  const out = runInputs(inputs, opts);
  if (out.exitCode === 2) {
    process.stderr.write(out.stderr);
    process.exitCode = 2;
    return;
  }
  const general = out.results.filter((r) => !r.resourceRef && r.severity !== 'info');
  for (const r of general) process.stderr.write(`${formatResultLine(r)}\n`);
  const list = explainWorkloads(out.workloads, out.results, locate(inputs));
  writeStdout(cmd.output === 'json' ? `${JSON.stringify(list, null, 2)}\n` : explainText(list));
  if (!outputFailed) process.exitCode = out.exitCode;
}

/**
 * `meshinject diff`: the unified diff per file, exiting as `kubectl diff` does: 0 no change, 1 changes, 2 an
 * error (bad input or usage, or error results: nothing on stdout). `--in-place` writes the changed files back
 * and exits 0 once they are written.
 */
async function runDiff(cmd: Command): Promise<void> {
  const { inputs, opts } = prepare(cmd);
  if (cmd.inPlace && inputs.some((i) => i.name === undefined)) throw new CliError('--in-place needs files or directories, not stdin');
  const out = runInputs(inputs, opts);
  if (out.stderr) process.stderr.write(out.stderr);
  if (out.exitCode !== 0) {
    process.exitCode = 2;
    return;
  }
  const colour = cmd.color === 'always' || (cmd.color === 'auto' && !cmd.inPlace && process.stdout.isTTY === true && !process.env.NO_COLOR);
  if (cmd.inPlace) {
    const changed = out.files.filter((f) => f.output !== f.input);
    // All or nothing: every changed file goes to a temporary beside it first, then all are renamed over.
    const batch = new WriteBatch();
    for (const f of changed) batch.add(resolveWritable(confinement, f.name!, `${f.name!} (--in-place)`), f.parts, `${f.name!} (--in-place)`);
    await batch.write();
    batch.commit();
    process.stderr.write(`${escapeLine(`meshinject: ${changed.length} file(s) changed${changed.length ? `: ${changed.map((f) => f.name).join(', ')}` : ''}`)}\n`);
    process.exitCode = 0;
    return;
  }
  // Written in chunks of about 1 MiB: a diff larger than one JavaScript string can hold is still written whole.
  let chunk = '';
  let changes = false;
  for (const f of out.files) {
    for (const piece of unifiedDiff(f.name ?? 'stdin', f.input, f.edits, colour)) {
      changes = true;
      chunk += piece;
      if (chunk.length < 1 << 20) continue;
      writeStdout(chunk);
      chunk = '';
    }
  }
  writeStdout(chunk);
  if (process.exitCode !== 2) process.exitCode = changes ? 1 : 0;
}

function main(startedAt: number): void | Promise<void> {
  const cmd = parseCommandLine(process.argv.slice(2));
  if ('error' in cmd) {
    process.stderr.write(`meshinject: ${escapeLine(cmd.error)}\nRun 'meshinject --help' for usage.\n`);
    process.exitCode = 2;
    return;
  }
  if (cmd.help) return writeStdout(USAGE);
  if (cmd.version) return writeStdout(`meshinject ${VERSION}\n`);
  if (cmd.command === 'completion') return writeStdout(completionScript(cmd.shell!));
  if (cmd.command === 'check') return runCheck(cmd, startedAt);
  if (cmd.command === 'explain') return runExplain(cmd);
  if (cmd.command === 'diff') return runDiff(cmd);
  return runInject(cmd, startedAt);
}

/**
 * Runs the meshinject command on the process (its argv, environment and streams) and sets its exit code. Called
 * by the process entry (src/cli/entry.ts); importing this module does nothing.
 */
export function runCli(): void {
  process.stdout.on('error', onOutputError);
  // A closed stderr (EPIPE) loses messages but never changes the exit code, which stdout's success and the results decide.
  process.stderr.on('error', () => {});
  try {
    // Synchronous up to the write phase of a command that writes files (which yields to handle signals).
    main(performance.now())?.catch(fail);
  } catch (e) {
    fail(e);
  }
}

/** Ends the run on an error thrown by `main`: one line on stderr, exit 2. */
function fail(e: unknown): void {
  process.exitCode = 2;
  if (e instanceof CliError || e instanceof PathError) process.stderr.write(`meshinject: error: ${escapeLine(e.message)}\n`);
  else if ((e as Error).name === 'RangeError' && /Invalid string length|Array buffer allocation/.test((e as Error).message)) {
    process.stderr.write(`meshinject: error: the input or output is too large to hold in memory (${(e as Error).message}); split the input, or lower --max-input-bytes to refuse such inputs early\n`);
  } else {
    // The message may quote the input: escaped to one line; the stack frames (our code) follow it.
    const frames = ((e as Error).stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
    process.stderr.write(`meshinject: internal error: ${escapeLine(String((e as Error).message ?? e))}\n${frames.map((f) => `${escapeLine(f)}\n`).join('')}`);
  }
}

