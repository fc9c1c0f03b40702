/**
 * The Istio driver's config section: `spec.istio` of a SidecarInjection, or the `istio.*` keys of the
 * ConfigMap form (schema fragment: `./config.schema.json`). Loading merges the user's values and mesh config
 * onto the built-in chart defaults and resolves the settings that also live in the values.
 */
import { parseDocument } from 'yaml';
import { quoteData } from '../../results/quote.ts';
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { quoteValue } from '../../config/schema-issues.ts';
import { getIn, isJsonObject, setOwn } from '../../json.ts';
import type { Json, JsonObject, LabelSelector } from '../../model.ts';
import { validateSelector } from '../../selection/label-selector.ts';
import type { DriverConfigInput, DriverConfigResult, SharedSettings } from '../../contract/driver.ts';
import { ISTIO_CHART_VALUES, ISTIO_MESH_DEFAULTS, mergeValues } from './defaults.ts';
import { type IstioTemplates, parseInjectorConfig, resolveTemplates } from './template-sources.ts';
import type { ServedRevision } from './webhook.ts';
import { defined } from '../../checked.ts';

/** Istio-specific settings (`spec.istio`), validated and defaulted. */
export interface IstioSettings {
  /**
   * Helm values of the istiod chart as the injector sees them: the driver's built-in chart defaults with
   * `spec.istio.values` merged on top (objects deep-merged, everything else replaced).
   */
  values: JsonObject;
  /** Mesh config: Istio `DefaultMeshConfig()` with the chart's mesh and `spec.istio.meshConfig` merged on top. */
  meshConfig: JsonObject;
  /** Control-plane revision; `''` means the default revision (`istio.io/rev: default`). */
  revision: string;
  /** Revision tags pointing at `revision` (webhook selection: namespace `istio.io/rev: <tag>` selects it too). */
  revisionTags: string[];
  /**
   * `spec.istio.revisions` (with `selection: webhook`): every revision the render serves, in the order written, with
   * its tags (from the map form of `revisionTags`) and its own settings (`loadRevisions`); absent: the one revision
   * above. Each workload is injected by the revision whose webhook selects it (`./webhook.ts`).
   */
  served?: Array<ServedRevision & { settings: IstioSettings }>;
  /** `kube-inject` (pod-level rules only, the default) or `webhook` (MutatingWebhookConfiguration routing). */
  selection: 'kube-inject' | 'webhook';
  /** Istio >= 1.27: only exact `true`/`false` count for `sidecar.istio.io/inject`; others mean "unset". */
  strictInjectValues: boolean;
  /** `openshift` takes the proxy UID/GID from the namespace's `openshift.io/sa.scc.*` annotations. */
  platform: '' | 'openshift';
  /** Istio `COMPLIANCE_POLICY` (e.g. `fips-140-3`), `''` for none. */
  compliancePolicy: string;
  /** `sidecarInjectorWebhook.enableNamespacesByDefault` for webhook selection. */
  enableNamespacesByDefault: boolean;
  /** The injection templates of every source (see `./template-sources.ts`), Go templates parsed. */
  templates: IstioTemplates;
  /** What the template function `env` answers: `spec.istio.env` plus `ENABLE_NATIVE_SIDECARS`. */
  env: Record<string, string>;
  /**
   * Ambient-enrolled pods (`./ambient.ts` `labelsEnrol`): `coexist` (default) injects them as the webhook would (a
   * sidecar takes precedence over ztunnel) and warns; `prefer` skips them (`ambient-enrolled`), leaving them to ztunnel.
   * Absent (settings built by hand): `coexist`.
   */
  ambient?: 'coexist' | 'prefer';
  /** What the template sources were resolved from, to resolve them again with a ConfigMap of the input. */
  sourceInputs: {
    userValues: JsonObject;
    hasInjectorConfig: boolean;
    version: string;
  };
}

/** `spec.istio` as the schema fragment admits it (ConfigMap strings already converted). */
interface RawIstio {
  values?: JsonObject | string;
  meshConfig?: JsonObject | string;
  revision?: string;
  revisionTags?: string[] | Record<string, string>;
  revisions?: Record<string, RawRevision>;
  selection?: 'kube-inject' | 'webhook';
  strictInjectValues?: boolean;
  platform?: '' | 'openshift';
  compliancePolicy?: string;
  enableNamespacesByDefault?: boolean;
  injectorConfig?: JsonObject | string;
  version?: string;
  env?: Record<string, string>;
  ambient?: 'coexist' | 'prefer';
}

/** One revision of `spec.istio.revisions`: what it does not set, it takes from `spec.istio`. */
type RawRevision = Pick<RawIstio, 'values' | 'meshConfig' | 'injectorConfig' | 'version' | 'env'>;

/** The fields of `spec.istio` a revision of `spec.istio.revisions` may set instead. */
const REVISION_FIELDS = ['values', 'meshConfig', 'injectorConfig', 'version', 'env'] as const;

const BOOLEAN_KEYS = new Set(['strictInjectValues', 'enableNamespacesByDefault']);
const LIST_KEYS = new Set(['revisionTags']);

/** Converts the ConfigMap form's strings (`"true"`, `"a, b"`) into the spec form's types. */
function fromConfigMapStrings(raw: Record<string, unknown>): RawIstio {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string') continue;
    if (BOOLEAN_KEYS.has(k)) setOwn(out, k, v === 'true');
    else if (LIST_KEYS.has(k))
      setOwn(
        out,
        k,
        v
          .split(',')
          .map((x) => x.trim())
          .filter((x) => x !== ''),
      );
    else setOwn(out, k, v);
  }
  return out as RawIstio;
}

/**
 * Loads `spec.istio` (Istio driver `loadConfig`). Defaults: revision/platform/compliancePolicy `''`,
 * revisionTags `[]`, selection `kube-inject`, strictInjectValues false, enableNamespacesByDefault false, ambient
 * `coexist`.
 *
 * Values and mesh config: strings are parsed (values: JSON, else YAML; meshConfig: YAML) and merged onto
 * `ISTIO_CHART_VALUES` / `ISTIO_MESH_DEFAULTS` with `mergeValues`. Settings that exist both as spec fields
 * and in the values resolve as: an explicit spec field wins (a warning when it overrides a different pasted
 * value), then the values, then the default: `policy` ← `global.proxy.autoInject`;
 * `neverInjectSelector`/`alwaysInjectSelector` ← `sidecarInjectorWebhook.*`; `istio.enableNamespacesByDefault`
 * ← `sidecarInjectorWebhook.enableNamespacesByDefault`; `istio.revision` ← `revision`. The resolved settings
 * are written back into `values`, so values and config agree as they do in a cluster (the chart renders the
 * injector config from those values).
 */
export function loadIstioConfig(input: DriverConfigInput): DriverConfigResult<IstioSettings> {
  const istio: RawIstio = input.fromConfigMap ? fromConfigMapStrings(input.raw) : (input.raw as RawIstio);
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const at = (key: string) => `${input.path}.${key}`;
  const core = input.fromConfigMap ? 'data' : 'spec';
  const userValues = parseEmbedded(istio.values, at('values'), 'values', issues);
  const userMesh = parseEmbedded(istio.meshConfig, at('meshConfig'), 'meshConfig', issues);
  const injector = parseInjectorConfig(istio.injectorConfig, at('injectorConfig'), issues);
  // Next to an injector config, values are that release's complete rendered values (not a delta).
  const values = injector ? structuredClone(userValues) : mergeValues(ISTIO_CHART_VALUES, userValues);
  const meshConfig = mergeValues(ISTIO_MESH_DEFAULTS, userMesh);
  const fromValues = valuesReader(values, userValues, at('values'), issues, warnings);
  const explicit = {
    policy: input.explicit.policy ?? injector?.policy,
    neverInjectSelector: input.explicit.neverInjectSelector ?? injector?.neverInjectSelector,
    alwaysInjectSelector: input.explicit.alwaysInjectSelector ?? injector?.alwaysInjectSelector,
  };

  const { byDefault, revision } = resolveValueSettings(values, fromValues, explicit, istio, input.path, core, issues);

  const env = { ...(istio.env ?? {}) };
  const swi = userValues.sidecarInjectorWebhook;
  const templates = resolveTemplates(
    {
      valuesTemplates: isJsonObject(swi) ? swi.templates : undefined,
      injectorConfig: injector,
      version: istio.version ?? '',
      env,
    },
    input.path,
    issues,
  );
  checkImageValues(values, at('values'), issues, warnings);

  const selection = istio.selection ?? 'kube-inject';
  warnInertFields(istio, selection, at, warnings);
  const tags = tagsOf(istio, revision, at('revisionTags'), issues);
  const served =
    istio.revisions && selection === 'webhook'
      ? loadRevisions(istio, istio.revisions, input, issues, warnings)
      : undefined;
  return {
    settings: {
      values,
      meshConfig,
      revision,
      revisionTags: tags,
      ...(served ? { served } : {}),
      selection,
      strictInjectValues: istio.strictInjectValues ?? false,
      platform: istio.platform ?? '',
      compliancePolicy: istio.compliancePolicy ?? '',
      enableNamespacesByDefault: byDefault,
      templates,
      env,
      ambient: istio.ambient ?? 'coexist',
      sourceInputs: { userValues, hasInjectorConfig: injector !== undefined, version: istio.version ?? '' },
    },
    issues,
    warnings,
  };
}

/**
 * The Istio driver's defaults for the shared settings (its `sharedDefaults` trait): the policy and the
 * never/always selectors its loaded values hold (`global.proxy.autoInject`,
 * `sidecarInjectorWebhook.neverInjectSelector` / `alwaysInjectSelector`; `loadIstioConfig` resolved and wrote
 * them there: an injector config's, else the values', else enabled and none).
 */
export function istioSharedDefaults(settings: IstioSettings): SharedSettings {
  const policy = getIn(settings.values, ['global', 'proxy', 'autoInject']);
  const never = getIn(settings.values, ['sidecarInjectorWebhook', 'neverInjectSelector']);
  const always = getIn(settings.values, ['sidecarInjectorWebhook', 'alwaysInjectSelector']);
  return {
    ...(isPolicy(policy) ? { policy } : {}),
    ...(isSelectorList(never) ? { neverInjectSelector: never } : {}),
    ...(isSelectorList(always) ? { alwaysInjectSelector: always } : {}),
  };
}

/** The settings that exist both as spec fields and in the chart values, resolved (see `loadIstioConfig`). */
interface ValueSettings {
  policy: 'enabled' | 'disabled';
  never: LabelSelector[];
  always: LabelSelector[];
  byDefault: boolean;
  revision: string;
}

/**
 * Resolves the settings shared by spec fields and values (explicit field, else values, else default),
 * checks selectors taken from the values, and writes the resolved settings back into `values`. `path` is
 * the driver section's path, `core` the root of the core fields (`spec` or `data`).
 */
function resolveValueSettings(
  values: JsonObject,
  fromValues: ReturnType<typeof valuesReader>,
  explicit: Pick<DriverConfigInput['explicit'], 'policy' | 'neverInjectSelector' | 'alwaysInjectSelector'>,
  istio: RawIstio,
  path: string,
  core: 'spec' | 'data',
  issues: ConfigIssue[],
): ValueSettings {
  const at = (key: string) => `${path}.${key}`;
  const policy =
    fromValues.pick(
      explicit.policy,
      `${core}.policy`,
      ['global', 'proxy', 'autoInject'],
      isPolicy,
      'enabled or disabled',
    ) ?? 'enabled';
  const never =
    fromValues.pick(
      explicit.neverInjectSelector,
      `${core}.neverInjectSelector`,
      ['sidecarInjectorWebhook', 'neverInjectSelector'],
      isSelectorList,
      'a list of label selectors',
    ) ?? [];
  const always =
    fromValues.pick(
      explicit.alwaysInjectSelector,
      `${core}.alwaysInjectSelector`,
      ['sidecarInjectorWebhook', 'alwaysInjectSelector'],
      isSelectorList,
      'a list of label selectors',
    ) ?? [];
  const byDefault =
    fromValues.pick(
      istio.enableNamespacesByDefault,
      at('enableNamespacesByDefault'),
      ['sidecarInjectorWebhook', 'enableNamespacesByDefault'],
      isBoolean,
      'a boolean',
    ) ?? false;
  const revision =
    fromValues.pick(istio.revision, at('revision'), ['revision'], isRevision, 'empty or a DNS label') ?? '';
  if (explicit.neverInjectSelector === undefined)
    never.forEach((s, i) => {
      issues.push(...validateSelector(s, `${at('values')}.sidecarInjectorWebhook.neverInjectSelector[${i}]`));
    });
  if (explicit.alwaysInjectSelector === undefined)
    always.forEach((s, i) => {
      issues.push(...validateSelector(s, `${at('values')}.sidecarInjectorWebhook.alwaysInjectSelector[${i}]`));
    });
  setIn(values, ['global', 'proxy', 'autoInject'], policy);
  setIn(values, ['sidecarInjectorWebhook', 'neverInjectSelector'], never);
  setIn(values, ['sidecarInjectorWebhook', 'alwaysInjectSelector'], always);
  setIn(values, ['sidecarInjectorWebhook', 'enableNamespacesByDefault'], byDefault);
  setIn(values, ['revision'], revision);
  return { policy, never, always, byDefault, revision };
}

/**
 * The tags of the one revision (`revision`, `''` the default): the list form as written; the map form (tag →
 * revision) only without `spec.istio.revisions`, where each tag must name that revision (an issue otherwise).
 */
function tagsOf(istio: RawIstio, revision: string, path: string, issues: ConfigIssue[]): string[] {
  const tags = istio.revisionTags;
  if (tags === undefined) return [];
  if (Array.isArray(tags)) {
    if (istio.revisions)
      issues.push({
        path,
        message: `${path} must map each tag to a revision of spec.istio.revisions ({tag: revision}), not list tags`,
      });
    return tags;
  }
  if (istio.revisions) return [];
  const own = revision === '' ? 'default' : revision;
  for (const [tag, rev] of Object.entries(tags)) {
    if (rev !== own)
      issues.push({
        path: `${path}.${tag}`,
        message: `${path}.${tag} names revision "${rev}", but this config serves only revision "${own}"; list it under spec.istio.revisions`,
      });
  }
  return Object.keys(tags);
}

/**
 * `spec.istio.revisions` (with `selection: webhook`): each revision loaded as `spec.istio` would be, with its own
 * `values`, `meshConfig`, `injectorConfig`, `version`, `env` where it sets them and the section's otherwise, its
 * name as the revision (`default` is the default revision, `''`); its tags from the map form of `revisionTags`.
 * Issues: a tag naming no revision; a `revision` field that is not one of them; the default webhooks (the revision
 * `default`, or the tag `default`) held by two revisions.
 */
function loadRevisions(
  istio: RawIstio,
  revisions: Record<string, RawRevision>,
  input: DriverConfigInput,
  issues: ConfigIssue[],
  warnings: string[],
): Array<ServedRevision & { settings: IstioSettings }> {
  const path = `${input.path}.revisions`;
  const tagMap = istio.revisionTags !== undefined && !Array.isArray(istio.revisionTags) ? istio.revisionTags : {};
  for (const [tag, rev] of Object.entries(tagMap)) {
    if (!Object.hasOwn(revisions, rev))
      issues.push({
        path: `${input.path}.revisionTags.${tag}`,
        message: `${input.path}.revisionTags.${tag} names revision "${rev}", which is not under ${path} (${Object.keys(revisions).join(', ')})`,
      });
  }
  if (istio.revision !== undefined && !Object.hasOwn(revisions, istio.revision === '' ? 'default' : istio.revision)) {
    issues.push({
      path: `${input.path}.revision`,
      message: `${input.path}.revision is "${istio.revision}", which is not under ${path}; with several revisions each workload is injected by the revision its namespace or pod selects`,
    });
  }
  const served = Object.entries(revisions).map(([name, own]) => {
    const raw: Record<string, unknown> = { ...istio, revision: name === 'default' ? '' : name, revisionTags: [] };
    delete raw.revisions;
    for (const f of REVISION_FIELDS) if (own[f] !== undefined) raw[f] = own[f];
    const loaded = loadIstioConfig({ ...input, raw, path: `${path}.${name}` });
    issues.push(...loaded.issues);
    warnings.push(...loaded.warnings.filter((w) => !warnings.includes(w)));
    const tags = Object.entries(tagMap)
      .filter(([, rev]) => rev === name)
      .map(([tag]) => tag);
    return { revision: loaded.settings.revision, tags, settings: { ...loaded.settings, revisionTags: tags } };
  });
  const holders = served.filter((r) => r.revision === '' || r.tags.includes('default'));
  if (holders.length > 1) {
    issues.push({
      path: `${input.path}.revisionTags`,
      message: `two revisions would hold Istio's default webhooks (the revision "default" or the tag "default"): ${holders.map((r) => r.revision || 'default').join(', ')}`,
    });
  }
  return served;
}

/** Warns about fields set that only matter under `selection: webhook` (`revisionTags`, `revisions`, `enableNamespacesByDefault`). */
function warnInertFields(istio: RawIstio, selection: string, at: (key: string) => string, warnings: string[]): void {
  if (selection === 'webhook') return;
  const inert = [
    istio.revisionTags !== undefined && Object.keys(istio.revisionTags).length ? 'revisionTags' : undefined,
    istio.revisions !== undefined ? 'revisions' : undefined,
    istio.enableNamespacesByDefault !== undefined ? 'enableNamespacesByDefault' : undefined,
  ].filter((x) => x !== undefined);
  for (const f of inert) warnings.push(`${at(f)} has no effect unless ${at('selection')} is webhook`);
}

/** Values that name images: a wrong type would silently render a wrong image reference. */
const IMAGE_VALUE_PATHS: ReadonlyArray<readonly string[]> = [
  ['global', 'hub'],
  ['global', 'proxy', 'image'],
  ['global', 'proxy_init', 'image'],
  ['global', 'variant'],
];

/**
 * Checks the image values after merging: `global.hub`, `global.proxy.image`, `global.proxy_init.image` and
 * `global.variant` must be strings; `global.tag` a string or a number, and a non-integer number is a
 * warning, since YAML reads an unquoted `1.20` as the float 1.2 (Istio renders `1.2`).
 */
function checkImageValues(values: JsonObject, valuesPath: string, issues: ConfigIssue[], warnings: string[]): void {
  for (const path of IMAGE_VALUE_PATHS) {
    const v = getIn(values, path);
    if (v !== undefined && v !== null && typeof v !== 'string') {
      const field = `${valuesPath}.${path.join('.')}`;
      issues.push({ path: field, message: `${field} must be a string; got ${quoteValue(v)}` });
    }
  }
  const tag = getIn(values, ['global', 'tag']);
  const field = `${valuesPath}.global.tag`;
  if (tag !== undefined && tag !== null && typeof tag !== 'string' && typeof tag !== 'number') {
    issues.push({ path: field, message: `${field} must be a string or a number; got ${quoteValue(tag)}` });
  } else if (typeof tag === 'number' && !Number.isInteger(tag)) {
    warnings.push(
      `${field} is the number ${tag}: an unquoted YAML version such as 1.20 reads as the float ${tag} and the image tag becomes "${tag}"; quote it ("1.20")`,
    );
  }
}

/**
 * Parses `spec.istio.values` / `spec.istio.meshConfig`: an object is used as is; a string is the pasted
 * ConfigMap content (values: JSON, else YAML; meshConfig: YAML). Empty text is `{}`. Pushes an issue and
 * returns `{}` when the text does not parse or does not hold an object.
 */
function parseEmbedded(
  input: JsonObject | string | undefined,
  path: string,
  what: 'values' | 'meshConfig',
  issues: ConfigIssue[],
): JsonObject {
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
      const [error] = doc.errors;
      if (error) throw error;
      parsed = JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null)); // plain JSON only (no Infinity, binary)
    } catch (e) {
      issues.push({
        path,
        message: `${path} is a string but not valid ${expected}: ${String((e as Error).message).split('\n')[0]}`,
      });
      return {};
    }
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isJsonObject(parsed as Json)) {
    issues.push({
      path,
      message: `${path} must hold a ${expected} object (a map of settings); got ${Array.isArray(parsed) ? 'a list' : typeof parsed}`,
    });
    return {};
  }
  return parsed as JsonObject;
}

/** Reads derived settings from the merged values, checking their type; see `loadIstioConfig` for precedence. */
function valuesReader(
  values: JsonObject,
  userValues: JsonObject,
  valuesPath: string,
  issues: ConfigIssue[],
  warnings: string[],
) {
  return {
    pick<T>(
      explicit: T | undefined,
      explicitPath: string,
      keys: string[],
      check: (v: unknown) => v is T,
      expected: string,
    ): T | undefined {
      const fromUser = getIn(userValues, keys);
      const source = `${valuesPath}.${keys.join('.')}`;
      if (explicit !== undefined) {
        if (fromUser !== undefined && JSON.stringify(fromUser) !== JSON.stringify(explicit)) {
          warnings.push(`${explicitPath} (${quoteData(explicit)}) overrides ${source} (${quoteData(fromUser)})`);
        }
        return explicit;
      }
      const v = getIn(values, keys);
      if (v === undefined || v === null) return undefined;
      if (!check(v)) {
        issues.push({ path: source, message: `${source} must be ${expected}; got ${quoteValue(v)}` });
        return undefined;
      }
      return v;
    },
  };
}

function setIn(obj: JsonObject, keys: readonly string[], value: Json): void {
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    let next = Object.hasOwn(cur, k) ? cur[k] : undefined;
    if (!isJsonObject(next)) {
      next = {};
      setOwn(cur, k, next);
    }
    cur = next;
  }
  setOwn(cur, defined(keys.at(-1), 'the last key of a values path'), value);
}

const isPolicy = (v: unknown): v is 'enabled' | 'disabled' => v === 'enabled' || v === 'disabled';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isRevision = (v: unknown): v is string =>
  typeof v === 'string' && /^(?=.{0,63}$)([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/.test(v);

/** Shape check of a selector list taken from free-form values (the JSON Schema does not cover values). */
function isSelectorList(v: unknown): v is LabelSelector[] {
  if (!Array.isArray(v)) return false;
  const strings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === 'string');
  const obj = (x: unknown): x is Record<string, unknown> => isJsonObject(x as Json);
  return v.every(
    (s) =>
      obj(s) &&
      Object.keys(s).every((k) => k === 'matchLabels' || k === 'matchExpressions') &&
      (s.matchLabels === undefined ||
        (obj(s.matchLabels) && Object.values(s.matchLabels).every((x) => typeof x === 'string'))) &&
      (s.matchExpressions === undefined ||
        (Array.isArray(s.matchExpressions) &&
          s.matchExpressions.every(
            (e) =>
              obj(e) &&
              typeof e.key === 'string' &&
              ['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator as string) &&
              (e.values === undefined || strings(e.values)),
          ))),
  );
}
