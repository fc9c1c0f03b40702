import { foreignConfigMessage, loadConfig, type LoadResult } from './config/load.ts';
import {
  describeShape,
  mergeConfigLayers,
  overrideLayers,
  parseConfigLayer,
  type ConfigLayer,
  type ConfigOverrides,
} from './config/layering.ts';
import { DRIVERS } from './drivers/registry.ts';
import type { ActiveMesh, PackageFinding, PackageResource, PackageWorkload, ReasonInfo } from './contract/driver.ts';
import { parseSource, rangeOf, type ParsedSource, type SourceItem } from './krm/source.ts';
import { outputEdits, writeOutput, writeOutputParts } from './krm/write.ts';
import { applyEdits, type Edit } from './yaml/flow-edit.ts';
import type { Config } from './model.ts';
import type { JsonObject, KrmResult, ResourceId } from './model.ts';
import {
  collectNamespaces,
  collectServices,
  processItems,
  resourceId,
  unknownNamespaceResults,
  type SharedRun,
  type WorkloadRecord,
} from './pipeline.ts';
import { MeshInjectError } from './results/errors.ts';
import {
  exitCodeOf,
  formatResultLine,
  generalResult,
  resourceResult,
  summarize,
  summaryText,
} from './results/result.ts';
import { isJsonObject } from './json.ts';
import { escapeLine } from './results/escape-line.ts';
import { applyFailOn, checkWorkloads, readCheckRules, type CheckRules, type FailOn } from './reports/check.ts';
import { lookupWorkloadKind } from './workloads/kinds.ts';
import { withPlanSettings, type RunPlanSettings } from './render/plans.ts';
import { beginRun, DEFAULT_TEMPLATE_BUDGETS } from './render/budget.ts';
import { checkPlatformWord } from './config/platform-word.ts';
import { IdentityTable, repeatedKeys } from './krm/identity.ts';
import { migrationEdits, type MigrateRequest } from './migrate.ts';

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
   * changed; findings (`src/reports/check.ts`) are results, and any error result fails the run. A
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

/** What the driver's reason codes and package finding rules mean (`reasonInfo`, `findingInfo`), for the reports. */
function reasonsOf(mesh: ActiveMesh): Readonly<Record<string, ReasonInfo>> {
  return Object.keys(mesh.findingInfo).length === 0 ? mesh.reasonInfo : { ...mesh.reasonInfo, ...mesh.findingInfo };
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

const LOCAL_CONFIG = 'config.kubernetes.io/local-config';
/** apiVersion prefix of meshinject's own config kinds (`SidecarInjection`). */
const OWN_API_GROUP = 'meshinject.dev/';

function stderrFor(results: readonly KrmResult[], all: boolean): string {
  const lines = results.filter((r) => all || r.severity === 'error').map(formatResultLine);
  if (all) {
    lines.push(`meshinject: ${summaryText(summarize(results))}`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Exit 2: bad input, nothing on stdout, the reason on stderr (one line: `escapeLine`). */
function badInput(message: string, results: KrmResult[] = []): RunOutput {
  return {
    stdout: '',
    stdoutParts: [],
    stderr: `meshinject: error: ${escapeLine(message)}\n`,
    exitCode: 2,
    results,
    files: [],
    workloads: [],
  };
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

/** The functionConfig of the run: the `--config` layers (or the ResourceList's), then the overrides. */
function resolveConfig(
  sources: readonly ParsedSource[],
  opts: RunOptions,
): { fatal?: string; loaded?: LoadResult; problem?: string; problems?: string[]; raw?: JsonObject } {
  const layers: ConfigLayer[] = [];
  const platform: ConfigLayer[] = [];
  const texts =
    opts.functionConfigs ??
    (opts.functionConfig !== undefined ? [{ name: 'functionConfig', text: opts.functionConfig }] : undefined);
  if (texts) {
    for (const t of texts) {
      const p = parseConfigLayer(t.text, t.name);
      if (!p.ok) return p.syntax ? { fatal: p.message } : { problem: p.message };
      const foreign = foreignConfigMessage(p.value, t.name);
      if (foreign !== undefined) return { problem: foreign };
      (t.platform ? platform : layers).push({ name: t.name, value: p.value });
    }
  } else {
    const fc = sources.find((s) => s.form === 'resource-list')?.functionConfig;
    if (fc !== undefined && fc !== null) {
      if (typeof fc !== 'object' || Array.isArray(fc)) {
        return {
          problem: `the ResourceList's functionConfig must be a map (a SidecarInjection or a ConfigMap); got ${describeShape(fc)}`,
        };
      }
      layers.push({ name: "the ResourceList's functionConfig", value: fc });
    }
  }
  // The platform's layers first: the tenant's narrow them (checked below), whatever the command-line order.
  const tenant = layers.splice(0, layers.length, ...platform);
  layers.push(...tenant);
  if (opts.overrides) {
    const o = overrideLayers(opts.overrides, layers[0]?.value.kind);
    if (!o.ok) return { problem: o.message };
    if (o.layers.length > 0 && layers.length === 0) {
      layers.push({
        name: 'the default functionConfig',
        value: { apiVersion: 'meshinject.dev/v1alpha1', kind: 'SidecarInjection' },
      });
    }
    layers.push(...o.layers);
    tenant.push(...o.layers);
  }
  const options = opts.kubeVersion ? { kubeVersion: opts.kubeVersion } : {};
  if (layers.length === 0) return { loaded: loadConfig(undefined, DRIVERS, options) };
  const merged = layers.length === 1 ? { ok: true as const, value: layers[0]!.value } : mergeConfigLayers(layers);
  if (!merged.ok) return { problem: merged.message };
  const loaded = loadConfig(merged.value as JsonObject, DRIVERS, options);
  const load = (raw: JsonObject) => loadConfig(raw, DRIVERS, options);
  const fieldsOf = (mesh: string) => DRIVERS.find((d) => d.name === mesh)?.traits?.platformFields ?? [];
  const problems = checkPlatformWord(
    { platform, tenant },
    { raw: merged.value, loaded },
    load,
    fieldsOf,
    DEFAULT_TEMPLATE_BUDGETS,
  );
  if (problems.length > 0) return { problems };
  return { loaded, raw: merged.value };
}

/** Whether a document is one a manifests-only output leaves out, and why (undefined: it is written). */
function leftOutWhy(v: unknown, ownKinds: boolean): string | undefined {
  if (!isJsonObject(v)) return undefined;
  const ann = isJsonObject(v.metadata) && isJsonObject(v.metadata.annotations) ? v.metadata.annotations : undefined;
  if (ann && Object.hasOwn(ann, LOCAL_CONFIG) && ann[LOCAL_CONFIG] === 'true')
    return `annotated ${LOCAL_CONFIG}: "true"`;
  if (ownKinds && typeof v.apiVersion === 'string' && v.apiVersion.startsWith(OWN_API_GROUP))
    return `meshinject's own config (${v.apiVersion})`;
  return undefined;
}

/**
 * The top-level stream documents of `source` to leave out of the output, as replacement ranges: each covers
 * the document and the separator and comments before it, so no empty document is left. Under Argo CD
 * (`ownKinds` false) local-config documents; for a manifests-only input also meshinject's own config kinds.
 */
function localConfigDrops(source: ParsedSource, ownKinds: boolean, name: string | undefined): Drop[] {
  if (source.form !== 'stream') return [];
  const out: Drop[] = [];
  let prevEnd = 0;
  for (const item of source.items) {
    if (item.position !== item.topPosition) continue;
    const why = leftOutWhy(item.value, ownKinds);
    if (why !== undefined)
      out.push(Object.assign(rangeOf(item), { start: prevEnd, why, id: resourceId(item, source, name) }));
    prevEnd = item.end;
  }
  return out;
}

/** A document left out of the output: its range (with the separator before it), why, and its identity for the result. */
type Drop = SourceItem & { why: string; id: ResourceId };

/** The info result of a document a manifests-only input leaves out. */
function leftOutResult(d: Drop): KrmResult {
  return resourceResult(
    'info',
    `read but not written: ${d.why} (the output of a directory input holds only what the cluster is to apply)`,
    d.id,
    { tags: { 'meshinject.dev/outcome': 'left-out', 'meshinject.dev/reason': 'local-config' } },
  );
}

/** Joins the outputs of several inputs into one YAML stream: each on its own lines, separated by `---`. */
/**
 * The outputs of several stream inputs as one stream, as pieces: a `---` line before each output after the first
 * that does not start with one, a newline after each but the last that does not end with one.
 */
function joinStreams(outputs: ReadonlyArray<readonly string[]>): string[] {
  const nonEmpty = outputs.filter((parts) => parts.length > 0);
  const out: string[] = [];
  nonEmpty.forEach((parts, i) => {
    if (i > 0 && !/^---(\s|$)/.test(parts[0]!.slice(0, 4))) out.push('---\n');
    out.push(...parts);
    if (i < nonEmpty.length - 1 && !parts[parts.length - 1]!.endsWith('\n')) out.push('\n');
  });
  return out;
}

/** A text held as pieces and joined once, on first read. */
function joinedOnce(parts: readonly string[]): () => string {
  let text: string | undefined;
  return () => (text ??= parts.join(''));
}

/**
 * Reads every input (a leading BOM ignored). A ResourceList must be the only input. A stream without resources
 * (empty, blank, comments or `---` only) is an empty stream when it is the only input (Helm runs a
 * post-renderer on whatever it rendered, nothing included: `execRender.Run`, pkg/postrender/exec.go); among
 * several inputs it is an error.
 * @throws MeshInjectError `BAD_INPUT` naming the input
 */
function parseInputs(inputs: readonly RunInput[]): ParsedSource[] {
  return inputs.map((input) => {
    const where = input.name ?? 'input';
    const text = input.text.charCodeAt(0) === 0xfeff ? input.text.slice(1) : input.text;
    const source = parseSource(text, where);
    if (source.form === 'resource-list' && inputs.length > 1) {
      throw new MeshInjectError(
        'BAD_INPUT',
        `${where}: a ResourceList must be the only input (got ${inputs.length} inputs)`,
      );
    }
    if (source.form === 'stream' && source.items.length === 0 && inputs.length > 1) {
      throw new MeshInjectError(
        'BAD_INPUT',
        `${where}: no resources: expected a ResourceList, a List or Kubernetes YAML documents`,
      );
    }
    return source;
  });
}

/** `f()`, or the message of the `BAD_INPUT` error it throws (the run then writes nothing, exit 2); other errors propagate. */
function orBadInput<T>(f: () => T): { ok: true; value: T } | { ok: false; message: string } {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (!(e instanceof MeshInjectError) || e.code !== 'BAD_INPUT') throw e;
    return { ok: false, message: e.message };
  }
}

/**
 * The run's identity table. When the fast block reader read every resource (their data is in memory already),
 * the identities that repeat are counted first, so that only their resources get a fingerprint; otherwise
 * (resources composed one at a time by the `yaml` path) every resource gets one.
 */
function identityTableFor(items: readonly SourceItem[], config: Config): IdentityTable {
  if (!items.every((it) => it.reader === 'block')) return new IdentityTable();
  return new IdentityTable(
    repeatedKeys(
      items.map((it) => it.value),
      config.defaultNamespace,
    ),
  );
}

/** What processing the inputs gave: per input its changed resources and dropped local-config documents. */
type Processed = Array<{ changed: Map<number, string>; edits: Map<number, readonly Edit[]>; drops: Drop[] }>;

/** What processing every input gave: the run's shared tables, each input's changes, the decided workloads. */
interface ProcessedRun {
  shared: SharedRun;
  processed: Processed;
  workloads: Array<WorkloadRecord & { input: number }>;
}

/**
 * Processes every input as one run: one namespace table over every input's Namespace objects (they win
 * over spec.namespaces entries), unknown namespaces reported once. Results are pushed to `results`.
 * @throws MeshInjectError `BAD_INPUT` for a resource that cannot be composed
 */
function processInputs(
  sources: readonly ParsedSource[],
  inputs: readonly RunInput[],
  config: Config,
  mesh: ActiveMesh,
  results: KrmResult[],
  opts: RunOptions,
): ProcessedRun {
  const processed: Processed = [];
  const workloads: Array<WorkloadRecord & { input: number }> = [];
  const pkg: { workloads: PackageWorkload[]; resources: PackageResource[] } = { workloads: [], resources: [] };
  const items = sources.flatMap((s) => s.items);
  const shared: SharedRun = {
    namespaces: collectNamespaces(items, config, results),
    services: collectServices(items, config),
    unknownNamespaces: new Map(),
    identities: identityTableFor(items, config),
  };
  if (opts.progress) {
    const total = sources.reduce((n, s) => n + s.items.length, 0);
    let done = 0;
    const progress = opts.progress;
    shared.onItem = () => progress(++done, total);
  }
  for (const f of opts.leftOutFiles ?? [])
    results.push(generalResult('info', `${f.path}: not an input, left out (${f.why})`));
  sources.forEach((source, i) => {
    for (const at of source.kindless ?? [])
      results.push(
        generalResult('warning', `${at}: document missing "kind" field, skipped (a null List item, left as it is)`),
      );
    const manifestsOnly = inputs[i]!.manifestsOnly === true && !opts.check;
    const drops = opts.dropLocalConfig || manifestsOnly ? localConfigDrops(source, manifestsOnly, inputs[i]!.name) : [];
    if (manifestsOnly) results.push(...drops.map(leftOutResult));
    const out = processItems(source, config, mesh, inputs[i]!.name, shared);
    results.push(...out.results);
    processed.push({ changed: out.changed, edits: out.edits, drops });
    for (const w of out.workloads) workloads.push({ ...w, input: i });
    pkg.workloads.push(...out.pkg.workloads);
    pkg.resources.push(...out.pkg.resources);
  });
  results.push(...unknownNamespaceResults(shared.unknownNamespaces, config.unknownNamespaces));
  if (mesh.packageFindings)
    results.push(
      ...packageResults(
        mesh.packageFindings({ ...pkg, namespaces: shared.namespaces, config }),
        opts.check !== undefined,
      ),
    );
  return { shared, processed, workloads };
}

/**
 * A driver's findings about the package (`MeshDriver.packageFindings`) as results: in a check, errors tagged as
 * check findings (`meshinject.dev/check`, outcome and reason the rule); in an injection, warnings tagged with the rule.
 */
function packageResults(findings: readonly PackageFinding[], check: boolean): KrmResult[] {
  return findings.map((f) =>
    resourceResult(check ? 'error' : 'warning', `${f.rule}: ${f.message}`, f.id, {
      ...(f.field ? { field: f.field } : {}),
      tags: check
        ? { 'meshinject.dev/check': 'true', 'meshinject.dev/outcome': f.rule, 'meshinject.dev/reason': f.rule }
        : { 'meshinject.dev/reason': f.rule },
    }),
  );
}

/** Each input's output text (changed resources spliced in, dropped documents cut out), and how many top-level resources are kept. */
function writeFiles(
  sources: readonly ParsedSource[],
  inputs: readonly RunInput[],
  processed: Processed,
  results: readonly KrmResult[],
): { files: FileOutput[]; kept: number } {
  let kept = 0;
  const files = sources.map((source, i): FileOutput => {
    const { changed, edits: fine, drops } = processed[i]!;
    const items = source.items.slice();
    const edits = new Map(changed);
    for (const d of drops) {
      items[d.position] = d;
      edits.set(d.position, '');
    }
    kept += source.items.filter((it) => it.position === it.topPosition).length - drops.length;
    const name = inputs[i]!.name;
    const parts = writeOutputParts({ ...source, items }, edits, results);
    const output = joinedOnce(parts);
    let made: Edit[] | undefined;
    const fineKept = new Map(fine);
    for (const d of drops) fineKept.delete(d.position);
    const editsOf = () => (made ??= outputEdits({ ...source, items }, edits, results, fineKept));
    return {
      ...(name !== undefined ? { name } : {}),
      input: source.text,
      parts,
      get output() {
        return output();
      },
      get edits() {
        return editsOf();
      },
    };
  });
  return { files, kept };
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
  // Template budgets: the run's counters start at zero, under the config's budgets (capped at the ceilings).
  beginRun(config.templateBudget);
  // Resources are composed as they are processed: a broken one is bad input, and nothing is written.
  const run = orBadInput(() =>
    withPlanSettings(opts.plans, () =>
      processInputs(sources, inputs, config, mesh, ctx.results, {
        ...opts,
        dropLocalConfig: opts.dropLocalConfig === true && !check,
        ...(check ? { check } : {}),
      }),
    ),
  );
  if (!run.ok) return badInput(run.message);
  if (check) return checkOutput(ctx, setup, run.value, check.failOn);
  if (exitCodeOf(ctx.results) !== 0)
    return { ...failedRun(ctx, config, run.value.workloads), reasonInfo: reasonsOf(mesh) };
  return writtenOutput(ctx, setup, run.value);
}

/**
 * `meshinject migrate` (src/migrate.ts): the inputs (YAML streams; a ResourceList is bad input, exit 2) moved to
 * `req.to` for `req.namespaces`, as the driver plans it. Exit 2 also for a request the driver refuses; exit 1 when a
 * workload cannot be uninjected or a change cannot be written faithfully (nothing written). `files` holds each
 * input's new text and its edits (for `-i` and `--diff`); results: one per change (`meshinject.dev/outcome:
 * migrated`), then the driver's notes.
 */
export function runMigration(inputs: readonly RunInput[], opts: RunOptions, req: MigrateRequest): RunOutput {
  let sources: ParsedSource[];
  try {
    sources = parseInputs(inputs);
  } catch (e) {
    if (e instanceof MeshInjectError && e.code === 'BAD_INPUT') return badInput(e.message);
    throw e;
  }
  if (sources.some((s) => s.form !== 'stream'))
    return badInput(
      'meshinject migrate reads YAML files and directories (a stream of documents), not a ResourceList or a List',
    );
  const results: KrmResult[] = [];
  const failed = (): RunOutput => ({
    stdout: '',
    stdoutParts: [],
    stderr: stderrFor(results, opts.logToStderr === true),
    exitCode: 1,
    results,
    files: [],
    workloads: [],
  });
  const cfg = resolveConfig(sources, opts);
  if (cfg.fatal !== undefined) return badInput(cfg.fatal);
  if (cfg.problem !== undefined) results.push(generalResult('error', `functionConfig: ${cfg.problem}`));
  else if (!cfg.loaded!.ok)
    for (const issue of cfg.loaded!.issues)
      results.push(generalResult('error', `functionConfig: ${issue.message}`, issue.path));
  if (exitCodeOf(results) !== 0 || !cfg.loaded?.ok) return failed();
  const { mesh, config } = cfg.loaded;
  const edits = migrationEdits(
    sources,
    inputs.map((i) => i.name),
    config,
    mesh,
    req,
    results,
  );
  if ('error' in edits) return badInput(edits.error);
  if (exitCodeOf(results) !== 0) return failed();
  const files = sources.map((source, i): FileOutput => {
    const own = (edits.get(i) ?? []).sort((a, b) => a.start - b.start || a.end - b.end);
    const output = applyEdits(source.text, 0, source.text.length, own);
    const name = inputs[i]!.name;
    return { ...(name !== undefined ? { name } : {}), input: source.text, output, parts: [output], edits: own };
  });
  const stdoutParts = files.length === 1 ? [...files[0]!.parts] : joinStreams(files.map((f) => f.parts));
  return {
    stdout: stdoutParts.join(''),
    stdoutParts,
    stderr: stderrFor(results, opts.logToStderr === true),
    exitCode: 0,
    results,
    files,
    config,
    workloads: [],
  };
}
