import type { LabelSelector } from '../model.ts';
import { quoteData, quoteValue } from '../results/quote.ts';
import {
  bindDriver,
  sharedDefaultsOf,
  type ActiveMesh,
  type MeshDriver,
  type SharedSettings,
} from '../contract/driver.ts';
import { parseSelectorString, validateSelector } from '../selection/label-selector.ts';
import { joinPath, schemaIssues, type ConfigIssue } from './schema-issues.ts';
import type { Config, ExtraWorkloadKind, KindPolicy, MeshName, TemplateBudgetSetting } from '../model.ts';
import { validateConfigMap, validateSidecarInjection } from './validators.gen.js';
import { isJsonObject, setOwn } from '../json.ts';

export type { ConfigIssue } from './schema-issues.ts';

/**
 * Result of `loadConfig`: the validated core config, the selected driver bound to its settings, and the
 * driver's settings themselves (for tests and tools), plus non-fatal warnings; or every problem found.
 */
export type LoadResult =
  | { ok: true; config: Config; mesh: ActiveMesh; settings: unknown; warnings: string[]; notes: string[] }
  | { ok: false; issues: ConfigIssue[] };

/** What the run knows of its cluster, for `nativeSidecars: auto`: the Kubernetes version and where it came from. */
export interface LoadOptions {
  /** e.g. `{value: '1.33.2', from: 'KUBE_VERSION'}` (`--kube-version`, `KUBE_VERSION`, `ARGOCD_ENV_KUBE_VERSION`). */
  kubeVersion?: { value: string; from: string };
}

/** Istio's ignored namespaces (`IgnoredNamespaces`, pkg/kube/inject/initializer.go): the default of `ignoredNamespaces`. */
export const DEFAULT_IGNORED_NAMESPACES: readonly string[] = [
  'kube-system',
  'kube-public',
  'kube-node-lease',
  'local-path-storage',
];

/** `apiVersion` of the custom functionConfig form (schemas/sidecar-injection.schema.json). */
export const SIDECAR_INJECTION_API_VERSION = 'meshinject.dev/v1alpha1';
/** `kind` of the custom functionConfig form. */
export const SIDECAR_INJECTION_KIND = 'SidecarInjection';

/** `spec` of a `SidecarInjection` as the JSON Schema admits it (before defaults). */
interface RawSpec {
  mesh?: MeshName;
  policy?: 'enabled' | 'disabled';
  namespaceSelector?: LabelSelector;
  namespaces?: Array<{ name: string; labels?: Record<string, string>; annotations?: Record<string, string> }>;
  defaultNamespace?: string;
  ignoredNamespaces?: string[];
  neverInjectSelector?: LabelSelector[];
  alwaysInjectSelector?: LabelSelector[];
  nativeSidecars?: boolean | 'auto';
  resultAnnotations?: boolean;
  injectedWorkloadAnnotations?: Record<string, Record<string, string>>;
  kindPolicies?: Record<string, KindPolicy>;
  workloadKinds?: Array<{ kind: string; apiVersion?: string; templatePath: string | string[] }>;
  mode?: 'inject' | 'uninject' | 'check';
  removeWhenSkipped?: boolean;
  unknownNamespaces?: 'warn' | 'error' | 'assume-selected';
  templateBudget?: TemplateBudgetSetting;
  /** Driver sections `spec.<driver>`, handed to the drivers. */
  [driver: string]: unknown;
}

const ACCEPTED = `accepted kinds: ConfigMap (apiVersion v1), ${SIDECAR_INJECTION_KIND} (apiVersion ${SIDECAR_INJECTION_API_VERSION})`;

/**
 * Validates and defaults the function's `functionConfig` (krm-ecosystem.md §1.6). Accepted:
 * - `undefined`/`null` (kpt render without config) and a `ConfigMap` with empty or absent `data` (kpt's
 *   placeholder `function-input`): all defaults;
 * - a `v1` `ConfigMap` (keys: schemas/configmap.schema.json; a driver's keys are `<driver>.<field>`);
 * - a `meshinject.dev/v1alpha1` `SidecarInjection` (schemas/sidecar-injection.schema.json).
 * Every problem is reported at once, each with the field path and what is expected. Any other kind is one issue
 * naming the kind and the accepted kinds.
 *
 * Core defaults: mesh = the first of `drivers` (the registry lists Istio first), policy enabled, defaultNamespace `default`, ignoredNamespaces
 * `DEFAULT_IGNORED_NAMESPACES`, nativeSidecars false (offline `istioctl kube-inject` has no nodes to detect),
 * resultAnnotations true, mode inject, removeWhenSkipped false, unknownNamespaces warn. Each driver section present (`spec.<driver>`, or `<driver>.*` ConfigMap keys) is
 * loaded by its driver, so its problems are reported even when another mesh is selected (with a warning
 * that it is unused); the selected driver may resolve `policy` and the never/always selectors from its own
 * configuration when they are not set explicitly (Istio's values).
 *
 * @param drivers the known drivers (src/drivers/registry.ts `DRIVERS`); an unknown `mesh` is an issue listing them
 */
export function loadConfig(
  functionConfig: unknown,
  drivers: readonly MeshDriver<unknown>[],
  options: LoadOptions = {},
): LoadResult {
  if (functionConfig === undefined || functionConfig === null)
    return normalize({}, [], 'spec', drivers, false, options);
  if (!isJsonObject<unknown>(functionConfig)) {
    const got = Array.isArray(functionConfig) ? 'a list' : typeof functionConfig;
    return fail([
      {
        path: 'functionConfig',
        message: `functionConfig must be an object (a ConfigMap or a ${SIDECAR_INJECTION_KIND}); got ${got}`,
      },
    ]);
  }
  const kind = functionConfig.kind;
  if (kind === 'ConfigMap') {
    const schemaProblems = validateConfigMap(functionConfig) ? [] : schemaIssues(validateConfigMap.errors ?? [], true);
    const data = isJsonObject<unknown>(functionConfig.data) ? (functionConfig.data as Record<string, unknown>) : {};
    const { spec, issues } = specFromConfigMap(data, schemaProblems, drivers);
    return normalize(spec, [...schemaProblems, ...issues], 'data', drivers, true, options);
  }
  if (kind === SIDECAR_INJECTION_KIND) {
    const schemaProblems = validateSidecarInjection(functionConfig)
      ? []
      : schemaIssues(validateSidecarInjection.errors ?? []);
    const spec = isJsonObject<unknown>(functionConfig.spec) ? (functionConfig.spec as RawSpec) : {};
    return normalize(spec, schemaProblems, 'spec', drivers, false, options);
  }
  const what =
    kind === undefined
      ? 'has no kind'
      : `has kind ${quoteData(kind)}${functionConfig.apiVersion !== undefined ? ` (apiVersion ${quoteData(functionConfig.apiVersion)})` : ''}`;
  return fail([{ path: 'kind', message: `functionConfig ${what}; ${ACCEPTED}` }]);
}

/** A kind, name or apiVersion for a message: quoted (`quoteValue`), cut at 64 characters with its length; absent: `undefined`. */
function shortWord(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  return quoteValue(v, 64);
}

/**
 * A Kubernetes object in words for a message, by kind, name and apiVersion only (never its content):
 * `a Secret named "db" (apiVersion "v1")`; each part cut at 64 characters.
 */
export function describeObject(value: Record<string, unknown>): string {
  const kind = value.kind;
  const metadata = isJsonObject<unknown>(value.metadata) ? value.metadata : {};
  return [
    kind === undefined
      ? 'a document without kind'
      : typeof kind === 'string' && /^[A-Za-z][A-Za-z0-9]{0,62}$/.test(kind)
        ? `a ${kind}`
        : `a document of kind ${shortWord(kind) ?? '(not a string)'}`,
    shortWord(metadata.name) !== undefined ? `named ${shortWord(metadata.name)}` : '',
    shortWord(value.apiVersion) !== undefined ? `(apiVersion ${shortWord(value.apiVersion)})` : '',
  ]
    .filter((x) => x !== '')
    .join(' ');
}

/**
 * Screens a file given as a functionConfig (`--config`) before it is validated (issue #19): a file that is
 * not a meshinject config at all (a Secret, a Deployment, an application's ConfigMap) is reported by its kind
 * and name only, never by its fields or values, since validation messages would quote them into results that
 * reach CI logs and the Argo CD UI. Not one: any kind other than `SidecarInjection` and `ConfigMap`, or a
 * ConfigMap none of whose `data` keys is a meshinject key or shaped like one (lower camelCase, optionally
 * `driver.field`); kpt's empty placeholder passes.
 *
 * @param value the file's single document, parsed
 * @param name the file as named in messages (`--config app/secret.yaml`)
 * @returns the message, or undefined when the file is a meshinject config (valid or not)
 */
export function foreignConfigMessage(value: Record<string, unknown>, name: string): string | undefined {
  const kind = value.kind;
  if (kind === SIDECAR_INJECTION_KIND) return undefined;
  if (kind === 'ConfigMap') {
    const data = isJsonObject<unknown>(value.data) ? Object.keys(value.data) : [];
    if (
      data.length === 0 ||
      validateConfigMap({ apiVersion: 'v1', kind: 'ConfigMap', data: Object.fromEntries(data.map((k) => [k, ''])) })
    )
      return undefined;
    const unknown = new Set(
      (validateConfigMap.errors ?? [])
        .filter((e) => e.keyword === 'additionalProperties')
        .map((e) => String(e.params.additionalProperty)),
    );
    // A known key, or one shaped like meshinject's (`polcy`, `istio.revison`: a misspelling, answered with a
    // "did you mean"), makes it a meshinject config; `DATABASE_URL` or `api-token` do not.
    if (data.some((k) => !unknown.has(k) || /^[a-z][a-zA-Z]*(\.[a-z][a-zA-Z]*)?$/.test(k))) return undefined;
  }
  const what = describeObject(value);
  const why = kind === 'ConfigMap' ? ' (none of its data keys is one meshinject reads)' : '';
  return `${name}: ${what} is not a meshinject config${why}; its content is not shown. Expected a ${SIDECAR_INJECTION_KIND} (apiVersion ${SIDECAR_INJECTION_API_VERSION}) or a ConfigMap of meshinject's keys`;
}

function fail(issues: ConfigIssue[]): LoadResult {
  return { ok: false, issues };
}

/** True when a schema issue concerns `path` or something below it (that field is then left at its default). */
function hasIssueAt(issues: ConfigIssue[], path: string): boolean {
  return issues.some((i) => i.path === path || i.path.startsWith(`${path}.`) || i.path.startsWith(`${path}[`));
}

/**
 * Converts ConfigMap `data` strings into a spec; skips keys the schema already rejected. A driver's keys
 * `<driver>.<field>` are collected, still as strings, into `spec.<driver>` for the driver to convert.
 */
function specFromConfigMap(
  data: Record<string, unknown>,
  schemaProblems: ConfigIssue[],
  drivers: readonly MeshDriver<unknown>[],
): { spec: RawSpec; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const spec: RawSpec = {};
  const str = (key: string): string | undefined =>
    typeof data[key] === 'string' && !hasIssueAt(schemaProblems, joinPath(['data', key])) ? data[key] : undefined;
  const list = (s: string) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  const bool = (s: string | undefined) => (s === undefined ? undefined : s === 'true');
  const assign = <K extends keyof RawSpec>(key: K, value: RawSpec[K] | undefined) => {
    if (value !== undefined) spec[key] = value;
  };
  assign('mesh', str('mesh'));
  assign('policy', str('policy') as RawSpec['policy']);
  assign('defaultNamespace', str('defaultNamespace'));
  const ignored = str('ignoredNamespaces');
  if (ignored !== undefined) spec.ignoredNamespaces = list(ignored);
  assign('nativeSidecars', str('nativeSidecars') === 'auto' ? 'auto' : bool(str('nativeSidecars')));
  const kinds = str('kindPolicies');
  if (kinds !== undefined)
    spec.kindPolicies = Object.fromEntries(
      list(kinds).map((pair) => pair.split('=').map((x) => x.trim()) as [string, KindPolicy]),
    );
  assign('resultAnnotations', bool(str('resultAnnotations')));
  assign('mode', str('mode') as RawSpec['mode']);
  assign('removeWhenSkipped', bool(str('removeWhenSkipped')));
  assign('unknownNamespaces', str('unknownNamespaces') as RawSpec['unknownNamespaces']);
  const selector = str('namespaceSelector');
  if (selector !== undefined && selector.trim() !== '') {
    const parsed = parseSelectorString(selector);
    if (parsed.ok) spec.namespaceSelector = parsed.selector;
    else
      issues.push({
        path: 'data.namespaceSelector',
        message: `data.namespaceSelector is not a valid label selector: ${parsed.error.message}`,
      });
  }
  for (const d of drivers) {
    const prefix = `${d.name}.`;
    const section: Record<string, string> = {};
    for (const key of Object.keys(data)) {
      const v = str(key);
      if (key.startsWith(prefix) && v !== undefined) section[key.slice(prefix.length)] = v;
    }
    if (Object.keys(section).length > 0) spec[d.name] = section;
  }
  return { spec, issues };
}

/**
 * Reads fields of one raw spec: `at` builds an issue path under `root`, `take` returns a field's value
 * unless the schema already reported an issue at it; `issues` collects every problem in report order.
 */
interface SpecReader {
  issues: ConfigIssue[];
  at: (...keys: Array<string | number>) => string;
  take: <T>(value: T | undefined, ...keys: Array<string | number>) => T | undefined;
  /** Reports the problems of a selector that passed the schema (nothing when `sel` is absent). */
  selectorIssues: (sel: LabelSelector | undefined, ...keys: Array<string | number>) => void;
}

/** A `SpecReader` over `schemaProblems`; its `issues` start as a copy of them. */
function specReader(schemaProblems: ConfigIssue[], root: 'spec' | 'data'): SpecReader {
  const issues = [...schemaProblems];
  const at = (...keys: Array<string | number>) => joinPath([root, ...keys]);
  const ok = (...keys: Array<string | number>) => !hasIssueAt(schemaProblems, at(...keys));
  return {
    issues,
    at,
    take: <T>(value: T | undefined, ...keys: Array<string | number>): T | undefined =>
      value !== undefined && ok(...keys) ? value : undefined,
    selectorIssues: (sel, ...keys) => {
      if (sel !== undefined && ok(...keys)) issues.push(...validateSelector(sel, at(...keys)));
    },
  };
}

/** The shared settings as the user set them (`DriverConfigInput.explicit`); a driver's traits default the rest. */
type ExplicitFields = SharedSettings;

/** The user's `policy`, selectors and `nativeSidecars`, with each selector's problems reported. */
function readExplicitFields(spec: RawSpec, r: SpecReader): ExplicitFields {
  const explicit = {
    policy: r.take(spec.policy, 'policy'),
    neverInjectSelector: r.take(spec.neverInjectSelector, 'neverInjectSelector'),
    alwaysInjectSelector: r.take(spec.alwaysInjectSelector, 'alwaysInjectSelector'),
    nativeSidecars: ((v) => (v === 'auto' ? undefined : v))(r.take(spec.nativeSidecars, 'nativeSidecars')),
  };
  for (const [i, s] of (explicit.neverInjectSelector ?? []).entries()) r.selectorIssues(s, 'neverInjectSelector', i);
  for (const [i, s] of (explicit.alwaysInjectSelector ?? []).entries()) r.selectorIssues(s, 'alwaysInjectSelector', i);
  return explicit;
}

/** `namespaces` with labels and annotations defaulted to `{}`; a name listed twice is an issue. */
function readNamespaces(spec: RawSpec, r: SpecReader): Config['namespaces'] {
  const namespaces = (r.take(spec.namespaces, 'namespaces') ?? []).map((n) => ({
    name: n.name,
    labels: n.labels ?? {},
    annotations: n.annotations ?? {},
  }));
  const seen = new Map<string, number>();
  namespaces.forEach((n, i) => {
    const first = seen.get(n.name);
    if (first !== undefined)
      r.issues.push({
        path: r.at('namespaces', i, 'name'),
        message: `${r.at('namespaces', i, 'name')}: namespace ${n.name} is listed twice (also ${r.at('namespaces', first)})`,
      });
    else seen.set(n.name, i);
  });
  return namespaces;
}

/** `workloadKinds` with a dotted `templatePath` split into its keys. */
function readWorkloadKinds(spec: RawSpec, r: SpecReader): ExtraWorkloadKind[] {
  return (r.take(spec.workloadKinds, 'workloadKinds') ?? []).map((w) => ({
    kind: w.kind,
    ...(w.apiVersion !== undefined ? { apiVersion: w.apiVersion } : {}),
    templatePath: typeof w.templatePath === 'string' ? w.templatePath.split('.') : [...w.templatePath],
  }));
}

/**
 * Hands each driver section present (and the selected driver's, present or not) to its driver; issues
 * go to `r.issues`, a section of a driver not selected is a warning. Returns the selected driver's
 * settings and its defaults for the shared settings (`DriverTraits.sharedDefaults` under those settings;
 * `{}` when none).
 */
function loadDriverSections(
  spec: RawSpec,
  r: SpecReader,
  schemaProblems: ConfigIssue[],
  drivers: readonly MeshDriver<unknown>[],
  driver: MeshDriver<unknown> | undefined,
  meshName: string,
  fromConfigMap: boolean,
  explicit: ExplicitFields,
  warnings: string[],
): { settings: unknown; resolved: SharedSettings } {
  let settings: unknown;
  let resolved: SharedSettings = {};
  for (const d of drivers) {
    const selected = d === driver;
    const section = spec[d.name];
    if (!selected && section === undefined) continue;
    const path = r.at(d.name);
    const raw = withoutIssues(isJsonObject<unknown>(section) ? section : {}, path, schemaProblems);
    const loaded = d.loadConfig({ raw, path, fromConfigMap, explicit });
    r.issues.push(...loaded.issues);
    if (!selected) {
      warnings.push(`${path} is not used: ${r.at('mesh')} is ${meshName}`);
      continue;
    }
    warnings.push(...loaded.warnings);
    settings = loaded.settings;
    resolved = sharedDefaultsOf(d, loaded.settings);
  }
  return { settings, resolved };
}

/**
 * Applies defaults and the checks a JSON Schema cannot express, then hands each driver section to its
 * driver. `root` prefixes issue paths (`spec` or `data`); fields with a schema issue are skipped (their
 * issue is already reported) and take their default.
 */
function normalize(
  spec: RawSpec,
  schemaProblems: ConfigIssue[],
  root: 'spec' | 'data',
  drivers: readonly MeshDriver<unknown>[],
  fromConfigMap: boolean,
  options: LoadOptions,
): LoadResult {
  const r = specReader(schemaProblems, root);
  const { at, take } = r;
  const warnings: string[] = [];

  // Without spec.mesh: the registry's first driver (the default mesh, src/drivers/registry.ts).
  const meshName = take(spec.mesh, 'mesh') ?? drivers[0]?.name ?? '';
  const driver = drivers.find((d) => d.name === meshName);
  if (!driver) {
    r.issues.push({
      path: at('mesh'),
      message: `${at('mesh')}: unknown mesh ${quoteData(meshName)}; known meshes: ${drivers.map((d) => d.name).join(', ')}`,
    });
  }
  const namespaceSelector = take(spec.namespaceSelector, 'namespaceSelector');
  r.selectorIssues(namespaceSelector, 'namespaceSelector');
  const explicit = readExplicitFields(spec, r);
  const notes: string[] = [];
  if (take(spec.nativeSidecars, 'nativeSidecars') === 'auto' && driver) {
    const section = spec[meshName];
    explicit.nativeSidecars = resolveAutoNative(
      driver,
      isJsonObject<unknown>(section) ? section : {},
      at('nativeSidecars'),
      options,
      notes,
    );
  }
  const namespaces = readNamespaces(spec, r);
  const workloadKinds = readWorkloadKinds(spec, r);
  const { settings, resolved } = loadDriverSections(
    spec,
    r,
    schemaProblems,
    drivers,
    driver,
    meshName,
    fromConfigMap,
    explicit,
    warnings,
  );

  if (r.issues.length > 0 || !driver) return fail(r.issues);
  const config: Config = {
    mesh: meshName,
    policy: explicit.policy ?? resolved.policy ?? 'enabled',
    ...(namespaceSelector !== undefined ? { namespaceSelector } : {}),
    namespaces,
    defaultNamespace: take(spec.defaultNamespace, 'defaultNamespace') ?? 'default',
    ignoredNamespaces: take(spec.ignoredNamespaces, 'ignoredNamespaces') ?? [...DEFAULT_IGNORED_NAMESPACES],
    neverInjectSelector: explicit.neverInjectSelector ?? resolved.neverInjectSelector ?? [],
    alwaysInjectSelector: explicit.alwaysInjectSelector ?? resolved.alwaysInjectSelector ?? [],
    nativeSidecars: explicit.nativeSidecars ?? resolved.nativeSidecars ?? false,
    resultAnnotations: take(spec.resultAnnotations, 'resultAnnotations') ?? true,
    injectedWorkloadAnnotations: take(spec.injectedWorkloadAnnotations, 'injectedWorkloadAnnotations') ?? {},
    kindPolicies: take(spec.kindPolicies, 'kindPolicies') ?? {},
    workloadKinds,
    mode: take(spec.mode, 'mode') ?? 'inject',
    removeWhenSkipped: take(spec.removeWhenSkipped, 'removeWhenSkipped') ?? false,
    unknownNamespaces: take(spec.unknownNamespaces, 'unknownNamespaces') ?? 'warn',
  };
  const templateBudget = take(spec.templateBudget, 'templateBudget');
  if (templateBudget !== undefined) config.templateBudget = templateBudget;
  return { ok: true, config, mesh: bindDriver(driver, settings), settings, warnings, notes };
}

/** A Kubernetes version as `[major, minor]`: `1.33`, `v1.33.2`, `1.33.2-eks-1234`, `v1.30.4+k3s1`; undefined otherwise. */
export function parseKubeVersion(text: string): [number, number] | undefined {
  const m = /^\s*v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?\s*$/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/**
 * `nativeSidecars: auto`: native when the driver's mesh turns native sidecars on by itself from a Kubernetes
 * version (`MeshDriver.nativeSidecarsAuto`) and the run's Kubernetes version (`options.kubeVersion`) is at least
 * that; classic otherwise, including when the version is unknown or unreadable. Each case adds a note (an info
 * result of the run) saying which and why.
 */
function resolveAutoNative(
  driver: MeshDriver<unknown>,
  section: Record<string, unknown>,
  field: string,
  options: LoadOptions,
  notes: string[],
): boolean {
  const rule = driver.nativeSidecarsAuto?.(section);
  const say = (native: boolean, why: string): boolean => {
    notes.push(`${field}: auto: ${native ? 'native' : 'classic'} sidecars: ${why}`);
    return native;
  };
  if (!rule) return say(false, `the ${driver.name} driver has no native sidecars`);
  if (rule.minKube === undefined) return say(false, rule.because);
  const kube = options.kubeVersion;
  if (!kube)
    return say(
      false,
      `the cluster's Kubernetes version is unknown (give --kube-version, or KUBE_VERSION as Argo CD sets it); ${rule.because}`,
    );
  const v = parseKubeVersion(kube.value);
  if (!v)
    return say(
      false,
      `${kube.from} ${quoteData(kube.value)} is not a Kubernetes version such as 1.33 or v1.33.2; ${rule.because}`,
    );
  const [major, minor] = rule.minKube.split('.').map(Number) as [number, number];
  const atLeast = v[0] > major || (v[0] === major && v[1] >= minor);
  return say(atLeast, `Kubernetes ${v[0]}.${v[1]} (${kube.from}); ${rule.because}`);
}

/** A driver section without the fields the schema already rejected (they take their defaults). */
function withoutIssues(
  section: Record<string, unknown>,
  path: string,
  schemaProblems: ConfigIssue[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(section)) if (!hasIssueAt(schemaProblems, `${path}.${k}`)) setOwn(out, k, v);
  return out;
}
