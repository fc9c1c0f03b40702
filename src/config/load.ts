import { parseDocument } from 'yaml';
import type { Json, JsonObject, LabelSelector } from '../model.ts';
import { ISTIO_CHART_VALUES, ISTIO_MESH_DEFAULTS, mergeValues } from '../drivers/istio/defaults.ts';
import { parseSelectorString, validateSelector } from '../selection/label-selector.ts';
import { joinPath, schemaIssues, type ConfigIssue } from './schema-issues.ts';
import type { Config, ExtraWorkloadKind, MeshName } from './types.ts';
import { validateConfigMap, validateSidecarInjection } from './validators.gen.js';

export type { ConfigIssue } from './schema-issues.ts';

/** Result of `loadConfig`: the validated config (plus non-fatal warnings) or every problem found. */
export type LoadResult = { ok: true; config: Config; warnings: string[] } | { ok: false; issues: ConfigIssue[] };

/** Istio's ignored namespaces (`IgnoredNamespaces`, pkg/kube/inject/initializer.go): the default of `ignoredNamespaces`. */
export const DEFAULT_IGNORED_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage'];

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
  nativeSidecars?: boolean;
  resultAnnotations?: boolean;
  workloadKinds?: Array<{ kind: string; apiVersion?: string; templatePath: string | string[] }>;
  istio?: {
    values?: JsonObject | string;
    meshConfig?: JsonObject | string;
    revision?: string;
    revisionTags?: string[];
    selection?: 'kube-inject' | 'webhook';
    strictInjectValues?: boolean;
    platform?: '' | 'openshift';
    compliancePolicy?: string;
    enableNamespacesByDefault?: boolean;
  };
}

const ACCEPTED = `accepted kinds: ConfigMap (apiVersion v1), ${SIDECAR_INJECTION_KIND} (apiVersion ${SIDECAR_INJECTION_API_VERSION})`;

/**
 * Validates and defaults the function's `functionConfig` (krm-ecosystem.md §1.6). Accepted:
 * - `undefined`/`null` (kpt render without config) and a `ConfigMap` with empty or absent `data` (kpt's
 *   placeholder `function-input`): all defaults;
 * - a `v1` `ConfigMap` (keys: schemas/configmap.schema.json);
 * - a `meshinject.dev/v1alpha1` `SidecarInjection` (schemas/sidecar-injection.schema.json).
 * Every problem is reported at once, each with the field path and what is expected. Any other kind is one issue
 * naming the kind and the accepted kinds.
 *
 * Defaults: mesh istio, policy enabled, defaultNamespace `default`, ignoredNamespaces
 * `DEFAULT_IGNORED_NAMESPACES`, nativeSidecars false (offline `istioctl kube-inject` has no nodes to detect),
 * resultAnnotations true, istio.selection kube-inject, strictInjectValues false, revision/platform/
 * compliancePolicy `''`, revisionTags [], enableNamespacesByDefault false.
 *
 * Istio values and mesh config: strings are parsed (values: JSON, else YAML; meshConfig: YAML) and merged onto
 * `ISTIO_CHART_VALUES` / `ISTIO_MESH_DEFAULTS` with `mergeValues`. Precedence for settings that exist both as
 * spec fields and in the values (an explicit spec field wins, then the values, then the default; a warning
 * when an explicit field overrides a different pasted value):
 * `policy` ← `global.proxy.autoInject`; `neverInjectSelector`/`alwaysInjectSelector` ←
 * `sidecarInjectorWebhook.*`; `istio.enableNamespacesByDefault` ← `sidecarInjectorWebhook.enableNamespacesByDefault`;
 * `istio.revision` ← `revision`. The resolved settings are written back into `config.istio.values`, so values and
 * config agree as they do in a cluster (the chart renders the injector config from those values).
 */
export function loadConfig(functionConfig: unknown): LoadResult {
  if (functionConfig === undefined || functionConfig === null) return normalize({}, [], []);
  if (!isObject(functionConfig)) {
    return fail([{ path: 'functionConfig', message: `functionConfig must be an object (a ConfigMap or a ${SIDECAR_INJECTION_KIND}); got ${typeof functionConfig}` }]);
  }
  const kind = functionConfig.kind;
  if (kind === 'ConfigMap') {
    const schemaProblems = validateConfigMap(functionConfig) ? [] : schemaIssues(validateConfigMap.errors ?? [], true);
    const data = isObject(functionConfig.data) ? (functionConfig.data as Record<string, unknown>) : {};
    const { spec, issues } = specFromConfigMap(data, schemaProblems);
    return normalize(spec, [...schemaProblems, ...issues], ['data']);
  }
  if (kind === SIDECAR_INJECTION_KIND) {
    const schemaProblems = validateSidecarInjection(functionConfig) ? [] : schemaIssues(validateSidecarInjection.errors ?? []);
    const spec = isObject(functionConfig.spec) ? (functionConfig.spec as RawSpec) : {};
    return normalize(spec, schemaProblems, ['spec']);
  }
  const what = kind === undefined ? 'has no kind' : `has kind ${JSON.stringify(kind)}${functionConfig.apiVersion !== undefined ? ` (apiVersion ${JSON.stringify(functionConfig.apiVersion)})` : ''}`;
  return fail([{ path: 'kind', message: `functionConfig ${what}; ${ACCEPTED}` }]);
}

function fail(issues: ConfigIssue[]): LoadResult {
  return { ok: false, issues };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when a schema issue concerns `path` or something below it (that field is then left at its default). */
function hasIssueAt(issues: ConfigIssue[], path: string): boolean {
  return issues.some((i) => i.path === path || i.path.startsWith(`${path}.`) || i.path.startsWith(`${path}[`));
}

/** Converts ConfigMap `data` strings into a spec; skips keys the schema already rejected. */
function specFromConfigMap(data: Record<string, unknown>, schemaProblems: ConfigIssue[]): { spec: RawSpec; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const spec: RawSpec = {};
  const istio: NonNullable<RawSpec['istio']> = {};
  const str = (key: string): string | undefined =>
    typeof data[key] === 'string' && !hasIssueAt(schemaProblems, joinPath(['data', key])) ? (data[key] as string) : undefined;
  const list = (s: string) => s.split(',').map((x) => x.trim()).filter((x) => x !== '');
  const bool = (s: string | undefined) => (s === undefined ? undefined : s === 'true');
  const assign = <T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined) => {
    if (value !== undefined) target[key] = value;
  };
  assign(spec, 'mesh', str('mesh') as MeshName | undefined);
  assign(spec, 'policy', str('policy') as RawSpec['policy']);
  assign(spec, 'defaultNamespace', str('defaultNamespace'));
  const ignored = str('ignoredNamespaces');
  if (ignored !== undefined) spec.ignoredNamespaces = list(ignored);
  assign(spec, 'nativeSidecars', bool(str('nativeSidecars')));
  assign(spec, 'resultAnnotations', bool(str('resultAnnotations')));
  const selector = str('namespaceSelector');
  if (selector !== undefined && selector.trim() !== '') {
    try {
      spec.namespaceSelector = parseSelectorString(selector);
    } catch (e) {
      issues.push({ path: 'data.namespaceSelector', message: `data.namespaceSelector is not a valid label selector: ${(e as Error).message}` });
    }
  }
  assign(istio, 'revision', str('istio.revision'));
  const tags = str('istio.revisionTags');
  if (tags !== undefined) istio.revisionTags = list(tags);
  assign(istio, 'selection', str('istio.selection') as 'kube-inject' | 'webhook' | undefined);
  assign(istio, 'strictInjectValues', bool(str('istio.strictInjectValues')));
  assign(istio, 'platform', str('istio.platform') as '' | 'openshift' | undefined);
  assign(istio, 'compliancePolicy', str('istio.compliancePolicy'));
  assign(istio, 'enableNamespacesByDefault', bool(str('istio.enableNamespacesByDefault')));
  assign(istio, 'values', str('istio.values'));
  assign(istio, 'meshConfig', str('istio.meshConfig'));
  spec.istio = istio;
  return { spec, issues };
}

/**
 * Applies defaults and the checks a JSON Schema cannot express. `root` prefixes issue paths (`spec` or `data`);
 * fields with a schema issue are skipped (their issue is already reported) and take their default.
 */
function normalize(spec: RawSpec, schemaProblems: ConfigIssue[], root: string[]): LoadResult {
  const issues = [...schemaProblems];
  const warnings: string[] = [];
  const at = (...keys: Array<string | number>) => joinPath([...root, ...keys]);
  const ok = (...keys: Array<string | number>) => !hasIssueAt(schemaProblems, at(...keys));
  const take = <T>(value: T | undefined, ...keys: string[]): T | undefined => (value !== undefined && ok(...keys) ? value : undefined);

  const mesh = take(spec.mesh, 'mesh') ?? 'istio';
  if (mesh !== 'istio') issues.push({ path: at('mesh'), message: `${at('mesh')}: mesh ${mesh} is not implemented yet (implemented: istio)` });

  const selectorIssues = (sel: LabelSelector | undefined, ...keys: Array<string | number>) => {
    if (sel !== undefined && ok(...keys)) issues.push(...validateSelector(sel, at(...keys)));
  };
  const namespaceSelector = take(spec.namespaceSelector, 'namespaceSelector');
  selectorIssues(namespaceSelector, 'namespaceSelector');
  const neverExplicit = take(spec.neverInjectSelector, 'neverInjectSelector');
  const alwaysExplicit = take(spec.alwaysInjectSelector, 'alwaysInjectSelector');
  neverExplicit?.forEach((s, i) => selectorIssues(s, 'neverInjectSelector', i));
  alwaysExplicit?.forEach((s, i) => selectorIssues(s, 'alwaysInjectSelector', i));

  const namespaces = (take(spec.namespaces, 'namespaces') ?? []).map((n) => ({ name: n.name, labels: n.labels ?? {}, annotations: n.annotations ?? {} }));
  const seen = new Map<string, number>();
  namespaces.forEach((n, i) => {
    const first = seen.get(n.name);
    if (first !== undefined) issues.push({ path: at('namespaces', i, 'name'), message: `${at('namespaces', i, 'name')}: namespace ${n.name} is listed twice (also ${at('namespaces', first)})` });
    else seen.set(n.name, i);
  });

  const workloadKinds: ExtraWorkloadKind[] = (take(spec.workloadKinds, 'workloadKinds') ?? []).map((w) => ({
    kind: w.kind,
    ...(w.apiVersion !== undefined ? { apiVersion: w.apiVersion } : {}),
    templatePath: typeof w.templatePath === 'string' ? w.templatePath.split('.') : [...w.templatePath],
  }));

  const istio = spec.istio ?? {};
  const userValues = parseEmbedded(take(istio.values, 'istio', 'values'), at('istio', 'values'), 'values', issues);
  const userMesh = parseEmbedded(take(istio.meshConfig, 'istio', 'meshConfig'), at('istio', 'meshConfig'), 'meshConfig', issues);
  const values = mergeValues(ISTIO_CHART_VALUES, userValues);
  const meshConfig = mergeValues(ISTIO_MESH_DEFAULTS, userMesh);
  const fromValues = valuesReader(values, userValues, at('istio', 'values'), issues, warnings);

  const policy = fromValues.pick(take(spec.policy, 'policy'), at('policy'), ['global', 'proxy', 'autoInject'], isPolicy, 'enabled or disabled') ?? 'enabled';
  const never = fromValues.pick(neverExplicit, at('neverInjectSelector'), ['sidecarInjectorWebhook', 'neverInjectSelector'], isSelectorList, 'a list of label selectors') ?? [];
  const always = fromValues.pick(alwaysExplicit, at('alwaysInjectSelector'), ['sidecarInjectorWebhook', 'alwaysInjectSelector'], isSelectorList, 'a list of label selectors') ?? [];
  const byDefault = fromValues.pick(take(istio.enableNamespacesByDefault, 'istio', 'enableNamespacesByDefault'), at('istio', 'enableNamespacesByDefault'), ['sidecarInjectorWebhook', 'enableNamespacesByDefault'], isBoolean, 'a boolean') ?? false;
  const revision = fromValues.pick(take(istio.revision, 'istio', 'revision'), at('istio', 'revision'), ['revision'], isRevision, 'empty or a DNS label') ?? '';
  if (neverExplicit === undefined) never.forEach((s, i) => issues.push(...validateSelector(s, `${at('istio', 'values')}.sidecarInjectorWebhook.neverInjectSelector[${i}]`)));
  if (alwaysExplicit === undefined) always.forEach((s, i) => issues.push(...validateSelector(s, `${at('istio', 'values')}.sidecarInjectorWebhook.alwaysInjectSelector[${i}]`)));
  setIn(values, ['global', 'proxy', 'autoInject'], policy);
  setIn(values, ['sidecarInjectorWebhook', 'neverInjectSelector'], never as unknown as Json);
  setIn(values, ['sidecarInjectorWebhook', 'alwaysInjectSelector'], always as unknown as Json);
  setIn(values, ['sidecarInjectorWebhook', 'enableNamespacesByDefault'], byDefault);
  setIn(values, ['revision'], revision);

  const selection = take(istio.selection, 'istio', 'selection') ?? 'kube-inject';
  if (selection !== 'webhook') {
    const inert = [
      istio.revisionTags?.length ? 'revisionTags' : undefined,
      istio.enableNamespacesByDefault !== undefined ? 'enableNamespacesByDefault' : undefined,
    ].filter((x) => x !== undefined);
    for (const f of inert) warnings.push(`${at('istio', f)} has no effect unless ${at('istio', 'selection')} is webhook`);
  }

  if (issues.length > 0) return fail(issues);
  const config: Config = {
    mesh,
    policy,
    ...(namespaceSelector !== undefined ? { namespaceSelector } : {}),
    namespaces,
    defaultNamespace: take(spec.defaultNamespace, 'defaultNamespace') ?? 'default',
    ignoredNamespaces: take(spec.ignoredNamespaces, 'ignoredNamespaces') ?? [...DEFAULT_IGNORED_NAMESPACES],
    neverInjectSelector: never,
    alwaysInjectSelector: always,
    nativeSidecars: take(spec.nativeSidecars, 'nativeSidecars') ?? false,
    resultAnnotations: take(spec.resultAnnotations, 'resultAnnotations') ?? true,
    workloadKinds,
    istio: {
      values,
      meshConfig,
      revision,
      revisionTags: take(istio.revisionTags, 'istio', 'revisionTags') ?? [],
      selection,
      strictInjectValues: take(istio.strictInjectValues, 'istio', 'strictInjectValues') ?? false,
      platform: take(istio.platform, 'istio', 'platform') ?? '',
      compliancePolicy: take(istio.compliancePolicy, 'istio', 'compliancePolicy') ?? '',
      enableNamespacesByDefault: byDefault,
    },
  };
  return { ok: true, config, warnings };
}

/**
 * Parses `spec.istio.values` / `spec.istio.meshConfig`: an object is used as is; a string is the pasted
 * ConfigMap content (values: JSON, else YAML; meshConfig: YAML). Empty text is `{}`. Pushes an issue and
 * returns `{}` when the text does not parse or does not hold an object.
 */
function parseEmbedded(input: JsonObject | string | undefined, path: string, what: 'values' | 'meshConfig', issues: ConfigIssue[]): JsonObject {
  if (input === undefined) return {};
  if (typeof input !== 'string') return input;
  let parsed: unknown;
  const expected = what === 'values' ? 'JSON or YAML' : 'YAML';
  try {
    parsed = what === 'values' ? JSON.parse(input) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined) {
    try {
      const doc = parseDocument(input, { prettyErrors: false });
      if (doc.errors.length > 0) throw doc.errors[0]!;
      parsed = JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null)); // plain JSON only (no Infinity, binary)
    } catch (e) {
      issues.push({ path, message: `${path} is a string but not valid ${expected}: ${String((e as Error).message).split('\n')[0]}` });
      return {};
    }
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isObject(parsed)) {
    issues.push({ path, message: `${path} must hold a ${expected} object (a map of settings); got ${Array.isArray(parsed) ? 'a list' : typeof parsed}` });
    return {};
  }
  return parsed as JsonObject;
}

/** Reads derived settings from the merged values, checking their type; see `loadConfig` for precedence. */
function valuesReader(values: JsonObject, userValues: JsonObject, valuesPath: string, issues: ConfigIssue[], warnings: string[]) {
  return {
    pick<T>(explicit: T | undefined, explicitPath: string, keys: string[], check: (v: unknown) => v is T, expected: string): T | undefined {
      const fromUser = getIn(userValues, keys);
      const source = `${valuesPath}.${keys.join('.')}`;
      if (explicit !== undefined) {
        if (fromUser !== undefined && JSON.stringify(fromUser) !== JSON.stringify(explicit)) {
          warnings.push(`${explicitPath} (${JSON.stringify(explicit)}) overrides ${source} (${JSON.stringify(fromUser)})`);
        }
        return explicit;
      }
      const v = getIn(values, keys);
      if (v === undefined || v === null) return undefined;
      if (!check(v)) {
        issues.push({ path: source, message: `${source} must be ${expected}; got ${JSON.stringify(v)}` });
        return undefined;
      }
      return v;
    },
  };
}

function getIn(obj: JsonObject, keys: string[]): Json | undefined {
  let cur: Json | undefined = obj;
  for (const k of keys) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function setIn(obj: JsonObject, keys: string[], value: Json): void {
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    const next = cur[k];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as JsonObject;
  }
  cur[keys[keys.length - 1]!] = value;
}

const isPolicy = (v: unknown): v is 'enabled' | 'disabled' => v === 'enabled' || v === 'disabled';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isRevision = (v: unknown): v is string => typeof v === 'string' && /^(?=.{0,63}$)([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/.test(v);

/** Shape check of a selector list taken from free-form values (the JSON Schema does not cover values). */
function isSelectorList(v: unknown): v is LabelSelector[] {
  if (!Array.isArray(v)) return false;
  const strings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === 'string');
  return v.every((s) => isObject(s)
    && Object.keys(s).every((k) => k === 'matchLabels' || k === 'matchExpressions')
    && (s.matchLabels === undefined || (isObject(s.matchLabels) && Object.values(s.matchLabels).every((x) => typeof x === 'string')))
    && (s.matchExpressions === undefined || (Array.isArray(s.matchExpressions) && s.matchExpressions.every((e) => isObject(e)
      && typeof e.key === 'string'
      && ['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator as string)
      && (e.values === undefined || strings(e.values))))));
}
