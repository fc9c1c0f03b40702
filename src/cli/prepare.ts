/**
 * What every command does before it runs and after: `prepare` reads the config files, flag overrides and inputs
 * (checking the files it will write first), `finish` prints the summary and sets the exit code; the reports
 * (`--report`) are staged here too.
 */
import { setFlagsFromString } from 'node:v8';
import type { ConfigOverrides } from '../config/layering.ts';
import type { FlagValue } from '../contract/driver.ts';
import { DRIVERS } from '../drivers/registry.ts';
import { junitReport, githubReport, sarifReport, tableReport } from '../reports/formats.ts';
import { locateInput, type LocatedInput } from '../reports/locate.ts';
import { buildReport, type Report } from '../reports/report.ts';
import type { RunInput, RunOptions, RunOutput } from '../run.ts';
import { kubeVersionError, type Command } from './args.ts';
import type { WriteBatch } from './atomic-write.ts';
import { aliasProblem, outputIdentity } from './file-identity.ts';
import { checkHeapFor, containIfLarge, heapGuard } from './heap-guard.ts';
import { confinementOf, fsPath, isStream, resolveWritable } from './paths.ts';
import { readInputs, readText } from './read-inputs.ts';
import { CliError, say, type CliEnv, type Session } from './session.ts';
import { summaryLine } from './summary.ts';
import { tierUpSchedule } from './tier-up.ts';
import { VERSION } from './usage.ts';

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
  const core = (['mesh', 'policy'] as const).flatMap((field) => {
    const value = cmd[field];
    return value !== undefined ? [{ field, value, from: `--${field}` }] : [];
  });
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
 * The `--report` outputs: those with a path are staged in `batch` (written when it commits); the others are
 * returned, for stdout (table: stderr), to be written once every file is staged.
 */
export function stageReports(
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

export function stageFile(s: Session, batch: WriteBatch, label: string, parts: readonly string[]): void {
  const p = s.plannedWrites.get(label);
  if (!p) throw new Error(`${label}: written without planWrite (prepare plans every file a command writes)`);
  batch.add(p.target, parts, label, p.stream);
}

export function locate(inputs: readonly RunInput[]): LocatedInput[] {
  return inputs.map((i) => locateInput(i.text, i.name)).filter((x) => x !== undefined);
}

/** The report of a run, with positions from the inputs' text (and, for a check, the fixes). */
export function reportOf(cmd: Command, inputs: readonly RunInput[], out: RunOutput): Report {
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
export function prepare(s: Session, cmd: Command): { inputs: RunInput[]; opts: RunOptions; logToStderr: boolean } {
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

export function finish(s: Session, cmd: Command, out: RunOutput, logToStderr: boolean, startedAt: number): void {
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
