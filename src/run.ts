import type { ConfigOverrides } from './config/layering.ts';
import type { ActiveMesh, ReasonInfo } from './contract/driver.ts';
import type { ParsedSource } from './krm/source.ts';
import { writeOutput, type Edit } from './krm/write.ts';
import type { Config } from './model.ts';
import type { KrmResult } from './model.ts';
import type { WorkloadRecord } from './pipeline.ts';
import { exitCodeOf, generalResult } from './results/result.ts';
import { applyFailOn, checkWorkloads, readCheckRules, type CheckRules, type FailOn } from './check/findings.ts';
import { lookupWorkloadKind } from './workloads/kinds.ts';
import type { RunPlanSettings } from './render/plans.ts';
import { createRenderRun } from './render/run-state.ts';

import { resolveConfig } from './run/config.ts';
import { type ProcessedRun, orBadInput, parseInputs, processInputs } from './run/inputs.ts';
import { badInput, joinStreams, joinedOnce, reasonsOf, stderrFor, writeFiles } from './run/output.ts';
export { runMigration } from './run/migrate.ts';

/** Options of one run; everything ambient (env, argv, files) is resolved by the CLI and passed in here. */
export interface RunOptions {
  /** functionConfig as YAML text (CLI `--config`); overrides the ResourceList's `functionConfig`. */
  functionConfig?: string;
  /**
   * Several functionConfig files (repeated `--config`), merged in order as Helm merges values files
   * (`mergeConfigLayers`); they override the ResourceList's `functionConfig`. Used instead of `functionConfig`.
   * `platform`: a `--platform-config` file, merged before every other layer, which may only narrow the fields
   * the platform owns (src/config/platform-word.ts).
   */
  functionConfigs?: ReadonlyArray<{ name: string; text: string; platform?: boolean }>;
  /**
   * The cluster's Kubernetes version, for `nativeSidecars: auto` (`--kube-version`, else `KUBE_VERSION`, which
   * Argo CD sets for config management plugins), with where it came from for messages.
   */
  kubeVersion?: { value: string; from: string };
  /** CLI flags and environment settings that win over the functionConfig (`overrideLayers`). */
  overrides?: ConfigOverrides;
  /** Name of the input for messages and `file.path` of plain streams (a file path, or `stdin`). */
  inputName?: string;
  /** `LOG_TO_STDERR=true`: one human line per result on stderr. */
  logToStderr?: boolean;
  /**
   * Running under Argo CD (`ARGOCD_APP_NAME` set): resources annotated `config.kubernetes.io/local-config:
   * "true"` are dropped from plain-stream output (kustomize and kpt drop them too; Argo CD would apply
   * them), and an output without resources is an error rather than an empty stream.
   */
  dropLocalConfig?: boolean;
  /**
   * Check mode (`meshinject check`; also when the functionConfig says `spec.mode: check`): nothing is
   * changed; findings (`src/check/findings.ts`) are results, and any error result fails the run. A
   * ResourceList comes back with its items unchanged and the results; other forms write nothing.
   */
  check?: { failOn: FailOn };
  /**
   * Files of directory inputs that are not inputs (`kustomization.yaml`, `Kptfile`, ...), each reported as an
   * info result: `{path, why}`.
   */
  leftOutFiles?: ReadonlyArray<{ path: string; why: string }>;
  /** Progress: called after each resource with the count done and the total (the CLI draws it on a terminal). */
  progress?: (done: number, total: number) => void;
  /**
   * Sidecar plan switches of this run (src/render/plans.ts): `enabled` (`MESHINJECT_PLANS=0` → false), `verify`
   * (`MESHINJECT_VERIFY_PLANS=1`), `recordOnRepeat` (a shape's plan recorded at its second workload; the CLI
   * sets it), and `stats`, counters this run adds to (`MESHINJECT_PLAN_STATS=1`). The CLI reads the environment;
   * unset fields take the defaults (plans on, recorded at a shape's first workload, no verification).
   */
  plans?: RunPlanSettings;
}

/** One input of a run: its text and its name (a file path; absent for stdin). */
export interface RunInput {
  text: string;
  name?: string;
  /**
   * Manifests only (a file read from a directory input, `meshinject inject`): documents annotated
   * `config.kubernetes.io/local-config: "true"` and meshinject's own config kinds (`meshinject.dev/*`) are
   * read (a Namespace's labels, the config itself) but not written, kpt's convention; each one left out is an
   * info result. A ResourceList keeps its contract (kpt expects local-config items back).
   */
  manifestsOnly?: boolean;
}

/** The output of one input: what `--in-place` writes back to its file. */
export interface FileOutput {
  name?: string;
  /** The input text. */
  input: string;
  /** The output text in the input's framing (equal to `input` when nothing changed); joined from `parts` on first read. */
  readonly output: string;
  /** The output as pieces in order (see `writeOutputParts`), for outputs too large for one string. */
  readonly parts: readonly string[];
  /**
   * The edits that make `output` from `input` (`outputEdits`): replacements of [start, end) of `input`
   * (UTF-16 offsets), sorted, non-overlapping, as fine as the text editor made them. `meshinject diff`
   * builds its hunks from them.
   */
  readonly edits: readonly Edit[];
}

/**
 * The outcome of one run. `stdout` is complete or empty: with exit code 2 (bad input or usage) it is empty;
 * with exit code 1 a ResourceList carries every result and its items unchanged, other forms write nothing.
 */
export interface RunOutput {
  /** The output, joined from `stdoutParts` on first read (a RangeError for an output too large for one string). */
  readonly stdout: string;
  /** The output as pieces in order: what the CLI writes, one piece at a time. */
  readonly stdoutParts: readonly string[];
  stderr: string;
  exitCode: 0 | 1 | 2;
  results: KrmResult[];
  /** Per input, its text and its output (empty unless the run got as far as writing output). */
  files: FileOutput[];
  /** The config the run used (absent when it could not be loaded). */
  config?: Config;
  /** Every decided workload (with the index of its input), in input order; empty when the run stopped before deciding. */
  workloads: Array<WorkloadRecord & { input: number }>;
  /** Check mode: the resource text that fixes a finding (injecting it), by result. */
  fixes?: Map<KrmResult, string>;
  /** What the selected driver's reason codes mean (`MeshDriver.reasonInfo`; absent when no config was loaded). */
  reasonInfo?: Readonly<Record<string, ReasonInfo>>;
  /** True when the (only) input is a ResourceList: its results travel in the list (the CLI prints no warnings). */
  resourceList?: boolean;
}

/**
 * Runs meshinject on one input: bytes in, bytes out, no process access.
 *
 * @param input a ResourceList, a `kind: List`, or a multi-document YAML stream (a leading BOM is ignored)
 * @returns stdout/stderr text and the exit code (0 ok, 1 error results, 2 bad input)
 */
export function run(input: string, opts: RunOptions = {}): RunOutput {
  return runInputs([{ text: input, ...(opts.inputName !== undefined ? { name: opts.inputName } : {}) }], opts);
}

/** What every step of one run shares: the inputs as read, the options, and the results so far. */
interface RunContext {
  sources: readonly ParsedSource[];
  inputs: readonly RunInput[];
  opts: RunOptions;
  /** The only input, when there is one. */
  single: ParsedSource | undefined;
  results: KrmResult[];
}

/** The config of a run, once loaded and valid: the config, its driver, the check rules and the check switch. */
interface RunSetup {
  config: Config;
  mesh: ActiveMesh;
  checkRules: CheckRules;
  check: { failOn: FailOn } | undefined;
  /** The only input is a stream without resources. */
  nothing: boolean;
}

/** `resourceList: true` when the only input is a ResourceList (its results travel in the list). */
function listFlagOf(ctx: RunContext): { resourceList?: true } {
  return ctx.single?.form === 'resource-list' ? { resourceList: true } : {};
}

/** Output of a failed run: a single ResourceList unchanged with its results, nothing otherwise (exit 1 at least). */
function failedRun(ctx: RunContext, used?: Config, workloads: RunOutput['workloads'] = []): RunOutput {
  const stdout = ctx.single?.form === 'resource-list' ? writeOutput(ctx.single, new Map(), ctx.results) : '';
  return {
    stdout,
    stdoutParts: [stdout],
    stderr: stderrFor(ctx.results, ctx.opts.logToStderr === true),
    exitCode: exitCodeOf(ctx.results) || 1,
    results: ctx.results,
    files: [],
    workloads,
    ...(used ? { config: used } : {}),
    ...listFlagOf(ctx),
  };
}

/**
 * Loads the run's config (results for its warnings and notes), reads the check rules and decides check mode.
 * @returns the setup, or the output of a run that stops here (bad input, exit 2; a config problem, exit 1)
 */
function setUpRun(ctx: RunContext): RunSetup | { output: RunOutput } {
  const { results, opts, single } = ctx;
  const cfg = resolveConfig(ctx.sources, opts);
  if (cfg.fatal !== undefined) return { output: badInput(cfg.fatal) };
  const nothing = single?.form === 'stream' && single.items.length === 0;
  if (nothing)
    results.push(generalResult('warning', `${ctx.inputs[0]?.name ?? 'stdin'}: no resources: the output is empty too`));
  const problems = cfg.problems ?? (cfg.problem !== undefined ? [cfg.problem] : []);
  if (problems.length > 0 || cfg.loaded === undefined) {
    for (const p of problems) results.push(generalResult('error', `functionConfig: ${p}`));
    return { output: failedRun(ctx) };
  }
  const loaded = cfg.loaded;
  if (!loaded.ok) {
    for (const issue of loaded.issues)
      results.push(generalResult('error', `functionConfig: ${issue.message}`, issue.path));
    return { output: failedRun(ctx) };
  }
  for (const w of loaded.warnings) results.push(generalResult('warning', `functionConfig: ${w}`));
  for (const n of loaded.notes) results.push(generalResult('info', `functionConfig: ${n}`));
  const checkSpec = readCheckRules(cfg.raw);
  if (checkSpec.issues.length > 0) {
    for (const issue of checkSpec.issues)
      results.push(generalResult('error', `functionConfig: ${issue.message}`, issue.path));
    return { output: failedRun(ctx) };
  }
  const check = opts.check ?? (checkSpec.mode === 'check' ? { failOn: 'drift' as const } : undefined);
  // A check compares pod templates only: the result annotation is not written, so it never counts as a change.
  const config: Config = check ? { ...loaded.config, mode: 'check', resultAnnotations: false } : loaded.config;
  return { config, mesh: loaded.mesh, checkRules: checkSpec.rules, check, nothing };
}

/** The output of a check (`meshinject check`, `spec.mode: check`): the findings as results, nothing changed. */
function checkOutput(ctx: RunContext, setup: RunSetup, ran: ProcessedRun, failOn: FailOn): RunOutput {
  const { config, mesh } = setup;
  const { results, single } = ctx;
  const templatePath = (w: WorkloadRecord) =>
    lookupWorkloadKind(w.id.apiVersion, w.id.kind, config.workloadKinds)?.templatePath.join('.') || 'metadata';
  const optOuts = new Set(
    Object.entries(mesh.reasonInfo)
      .filter(([, info]) => info.optOut)
      .map(([reason]) => reason),
  );
  const found = checkWorkloads(
    ran.workloads,
    ran.processed.map((p) => p.changed),
    ran.shared.namespaces,
    setup.checkRules,
    failOn,
    templatePath,
    optOuts,
  );
  results.push(...found.results);
  applyFailOn(results, failOn);
  const stdout = single?.form === 'resource-list' ? writeOutput(single, new Map(), results) : '';
  return {
    stdout,
    stdoutParts: [stdout],
    stderr: stderrFor(results, ctx.opts.logToStderr === true),
    exitCode: exitCodeOf(results),
    results,
    files: [],
    workloads: ran.workloads,
    config,
    fixes: found.fixes,
    reasonInfo: reasonsOf(mesh),
    ...listFlagOf(ctx),
  };
}

/** The output of an injection (or uninjection) without error results: every input's output, joined. */
function writtenOutput(ctx: RunContext, setup: RunSetup, ran: ProcessedRun): RunOutput {
  const { sources, inputs, opts, results, single } = ctx;
  const { files, kept } = writeFiles(sources, inputs, ran.processed, results);
  if (opts.dropLocalConfig && kept === 0 && sources.every((s) => s.form === 'stream')) {
    return badInput(
      `the output would hold no resources (${setup.nothing ? 'the input holds none' : 'every resource is config.kubernetes.io/local-config, dropped under Argo CD'}); Argo CD must never apply an empty stream`,
      results,
    );
  }
  const stdoutParts = single && files[0] ? files[0].parts : joinStreams(files.map((f) => f.parts));
  const stdout = joinedOnce(stdoutParts);
  return {
    get stdout() {
      return stdout();
    },
    stdoutParts,
    stderr: stderrFor(results, opts.logToStderr === true),
    exitCode: 0,
    results,
    files,
    config: setup.config,
    workloads: ran.workloads,
    reasonInfo: reasonsOf(setup.mesh),
    ...listFlagOf(ctx),
  };
}

/**
 * Runs meshinject on several inputs as one: one namespace table (a Namespace in one file selects a
 * workload in another), one config, one set of results, one output (the inputs' outputs joined as one YAML
 * stream, in order). Bytes in, bytes out, no process access. A ResourceList must be the only input.
 *
 * Output is all or nothing: with any input unreadable (exit 2) or any error result (exit 1) nothing is
 * written, except that a single ResourceList comes back unchanged with its results (exit 1).
 *
 * @param inputs the inputs in order (a leading BOM of each is ignored)
 * @returns stdout/stderr text, the exit code, the results and each input's own output (`files`)
 */
export function runInputs(inputs: readonly RunInput[], opts: RunOptions = {}): RunOutput {
  const parsed = orBadInput(() => parseInputs(inputs));
  if (!parsed.ok) return badInput(parsed.message);
  const sources = parsed.value;
  const ctx: RunContext = { sources, inputs, opts, single: sources.length === 1 ? sources[0] : undefined, results: [] };
  const setup = setUpRun(ctx);
  if ('output' in setup) return setup.output;
  const { config, mesh, check } = setup;
  // The run's rendering state: template budgets (the config's, capped at the ceilings) with counters at zero,
  // plan switches and counters, empty plan caches; passed down to the pipeline.
  const state = createRenderRun({
    ...(config.templateBudget ? { budgets: config.templateBudget } : {}),
    ...(opts.plans ? { plans: opts.plans } : {}),
  });
  // Resources are composed as they are processed: a broken one is bad input, and nothing is written.
  const run = orBadInput(() =>
    processInputs(
      sources,
      inputs,
      config,
      mesh,
      ctx.results,
      {
        ...opts,
        dropLocalConfig: opts.dropLocalConfig === true && !check,
        ...(check ? { check } : {}),
      },
      state,
    ),
  );
  if (!run.ok) return badInput(run.message);
  if (check) return checkOutput(ctx, setup, run.value, check.failOn);
  if (exitCodeOf(ctx.results) !== 0)
    return { ...failedRun(ctx, config, run.value.workloads), reasonInfo: reasonsOf(mesh) };
  return writtenOutput(ctx, setup, run.value);
}
