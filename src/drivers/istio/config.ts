/**
 * The Istio driver's config section: `spec.istio` of a SidecarInjection, or the `istio.*` keys of the
 * ConfigMap form (schema fragment: `./config.schema.json`). Loading merges the user's values and mesh config
 * onto the built-in chart defaults and resolves the settings that also live in the values.
 */
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { quoteValue } from '../../config/schema-issues.ts';
import { getIn, isJsonObject, setOwn } from '../../json.ts';
import type { JsonObject } from '../../model.ts';
import type { DriverConfigInput, DriverConfigResult, SharedSettings } from '../../contract/driver.ts';
import { ISTIO_CHART_VALUES, ISTIO_MESH_DEFAULTS, mergeValues } from './defaults.ts';
import { type IstioTemplates, parseInjectorConfig, resolveTemplates } from './template-sources.ts';
import type { ServedRevision } from './webhook.ts';
import { isPolicy, isSelectorList, parseEmbedded, resolveValueSettings, valuesReader } from './config-values.ts';

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
