/**
 * Where the Istio driver's injection templates come from, in precedence order (issue #12):
 * 1. `spec.istio.values.sidecarInjectorWebhook.templates` (Go templates, as the istiod chart takes them);
 * 2. `spec.istio.injectorConfig`: the `config` data of a cluster's `istio-sidecar-injector` ConfigMap
 *    (templates, defaultTemplates, aliases, policy, selectors, injectedAnnotations);
 * 3. an `istio-sidecar-injector` ConfigMap (any revision suffix) among the input resources;
 * 4. the built-in Handlebars ports (`./templates/*.hbs`), for a name none of the above has.
 * Go templates are parsed once, when the config is loaded, with the function set of their Istio version.
 */
import { parse as parseYaml } from 'yaml';
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject, LabelSelector } from '../../model.ts';
import { GoTemplate } from '../../render/gotemplate/index.ts';
import { istioFuncMap } from './go-funcs.ts';

/** Where a template came from (shown in results). */
export type TemplateOrigin = 'values' | 'injectorConfig' | 'configMap' | 'builtin';

/** Human-readable names of the origins, as field paths. */
export const ORIGIN_LABEL: Record<TemplateOrigin, string> = {
  values: 'spec.istio.values.sidecarInjectorWebhook.templates',
  injectorConfig: 'spec.istio.injectorConfig',
  configMap: 'ConfigMap istio-sidecar-injector',
  builtin: 'built-in templates',
};

/** The parsed `config` of an `istio-sidecar-injector` ConfigMap (Istio `Config`, pkg/kube/inject/inject.go). */
export interface InjectorConfig {
  templates: Record<string, string>;
  defaultTemplates?: string[];
  aliases?: Record<string, string[]>;
  policy?: 'enabled' | 'disabled';
  neverInjectSelector?: LabelSelector[];
  alwaysInjectSelector?: LabelSelector[];
  injectedAnnotations?: Record<string, string>;
}

/** One Go template with its origin. */
export interface GoTemplateEntry {
  template: GoTemplate;
  origin: TemplateOrigin;
}

/** The templates a run uses, resolved from every source. */
export interface IstioTemplates {
  /** Go templates by name (the highest-precedence source wins for a name). */
  go: Map<string, GoTemplateEntry>;
  /** Istio `defaultTemplates` (`["sidecar"]` unless the injector config says otherwise). */
  defaultTemplates: string[];
  /** Istio `aliases`: a name standing for a list of template names. */
  aliases: Record<string, string[]>;
  injectedAnnotations: Record<string, string>;
  /** Istio version of the Go templates (`spec.istio.version` or the ConfigMap's labels); `''` if unknown. */
  version: string;
  /** Minor version used for version-dependent behaviour (31, the built-in line, when unknown). */
  minor: number;
}

/** The Istio minor of a version string like `1.26.0` or `1.26.0-rc.1`; undefined if not `1.N...`. */
export function istioMinor(version: string): number | undefined {
  const m = /^v?1\.(\d+)(\.|$|-)/.exec(version.trim());
  return m ? Number(m[1]) : undefined;
}

/** The built-in templates' Istio line (the 1.31 line). */
export const BUILTIN_MINOR = 31;

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * Parses an injector `config` (object, or the YAML text of the ConfigMap's `config` key). Unknown keys are
 * ignored as Istio's `UnmarshalConfig` ignores them (e.g. the legacy `template`). Pushes an issue for a
 * malformed field and leaves it out.
 */
export function parseInjectorConfig(
  input: Json | undefined,
  path: string,
  issues: ConfigIssue[],
): InjectorConfig | undefined {
  if (input === undefined || input === null) return undefined;
  let raw: unknown = input;
  if (typeof input === 'string') {
    try {
      raw = parseYaml(input, { version: '1.1' }) ?? {};
    } catch (e) {
      issues.push({
        path,
        message: `${path} is a string but not valid YAML: ${String((e as Error).message).split('\n')[0]}`,
      });
      return undefined;
    }
  }
  if (!isJsonObject(raw as Json)) {
    issues.push({ path, message: `${path} must be the injector config: an object or its YAML text` });
    return undefined;
  }
  const o = raw as Record<string, unknown>;
  const out: InjectorConfig = { templates: {} };
  const bad = (key: string, expected: string) =>
    issues.push({ path: `${path}.${key}`, message: `${path}.${key} must be ${expected}` });
  if (o.templates !== undefined && o.templates !== null) {
    if (isJsonObject(o.templates as Json) && Object.values(o.templates as object).every((t) => typeof t === 'string'))
      out.templates = o.templates as Record<string, string>;
    else bad('templates', 'a map of template name to Go template text');
  }
  if (o.defaultTemplates !== undefined && o.defaultTemplates !== null) {
    if (isStringList(o.defaultTemplates)) out.defaultTemplates = o.defaultTemplates;
    else bad('defaultTemplates', 'a list of template names');
  }
  if (o.aliases !== undefined && o.aliases !== null) {
    if (isJsonObject(o.aliases as Json) && Object.values(o.aliases as object).every(isStringList))
      out.aliases = o.aliases as Record<string, string[]>;
    else bad('aliases', 'a map of alias to a list of template names');
  }
  if (o.policy !== undefined && o.policy !== null && o.policy !== '') {
    if (o.policy === 'enabled' || o.policy === 'disabled') out.policy = o.policy;
    else bad('policy', 'enabled or disabled');
  }
  for (const key of ['neverInjectSelector', 'alwaysInjectSelector'] as const) {
    const v = o[key];
    if (v === undefined || v === null) continue;
    if (Array.isArray(v) && v.every((s) => isJsonObject(s as Json))) out[key] = v as LabelSelector[];
    else bad(key, 'a list of label selectors');
  }
  if (o.injectedAnnotations !== undefined && o.injectedAnnotations !== null) {
    if (
      isJsonObject(o.injectedAnnotations as Json) &&
      Object.values(o.injectedAnnotations as object).every((x) => typeof x === 'string')
    ) {
      out.injectedAnnotations = o.injectedAnnotations as Record<string, string>;
    } else bad('injectedAnnotations', 'a map of annotation to string value');
  }
  return out;
}

/** What {@link resolveTemplates} combines. */
export interface TemplateSourceInput {
  /** `values.sidecarInjectorWebhook.templates` as the user gave them (not the built-in defaults). */
  valuesTemplates: Json | undefined;
  injectorConfig: InjectorConfig | undefined;
  /** Injector config of an `istio-sidecar-injector` ConfigMap found in the input, with its version label. */
  configMap?: { config: InjectorConfig; version: string };
  version: string;
  /** What `env` answers in the templates (allow-list). */
  env: Record<string, string>;
}

/**
 * Parses every Go template of every source once and resolves precedence (values > injectorConfig >
 * ConfigMap). A template that does not parse is a config issue with Go's message.
 */
export function resolveTemplates(input: TemplateSourceInput, path: string, issues: ConfigIssue[]): IstioTemplates {
  const version = input.version || input.configMap?.version || '';
  const minor = istioMinor(version) ?? BUILTIN_MINOR;
  const funcs = istioFuncMap({ minor, env: input.env });
  const go = new Map<string, GoTemplateEntry>();
  const add = (templates: Record<string, string>, origin: TemplateOrigin, at: string) => {
    for (const [name, text] of Object.entries(templates)) {
      try {
        go.set(name, { template: GoTemplate.parse(name, text, funcs), origin });
      } catch (e) {
        issues.push({ path: `${at}.${name}`, message: `${at}.${name}: ${(e as Error).message}` });
      }
    }
  };
  const base = input.injectorConfig ?? input.configMap?.config;
  if (input.configMap && !input.injectorConfig)
    add(input.configMap.config.templates, 'configMap', 'ConfigMap istio-sidecar-injector config.templates');
  if (input.injectorConfig) add(input.injectorConfig.templates, 'injectorConfig', `${path}.injectorConfig.templates`);
  const vt = input.valuesTemplates;
  if (vt !== undefined && vt !== null) {
    if (isJsonObject(vt) && Object.values(vt).every((t) => typeof t === 'string'))
      add(vt as Record<string, string>, 'values', `${path}.values.sidecarInjectorWebhook.templates`);
    else
      issues.push({
        path: `${path}.values.sidecarInjectorWebhook.templates`,
        message: `${path}.values.sidecarInjectorWebhook.templates must be a map of template name to Go template text`,
      });
  }
  return {
    go,
    defaultTemplates: base?.defaultTemplates ?? ['sidecar'],
    aliases: base?.aliases ?? {},
    injectedAnnotations: base?.injectedAnnotations ?? {},
    version,
    minor,
  };
}

/**
 * Istio `resolveAliases`: each name replaced by its alias list, if it is an alias. Own properties only: a name
 * like `constructor` is a name, not a prototype member (issue #21 §6).
 */
export function resolveAliases(names: string[], aliases: Record<string, string[]>): string[] {
  return names.flatMap((n) => (Object.hasOwn(aliases, n) ? aliases[n] : undefined) ?? [n]);
}

/** Whether the values hold user templates (`sidecarInjectorWebhook.templates` with at least one entry). */
export function hasValuesTemplates(values: JsonObject | undefined): boolean {
  const swi = values?.sidecarInjectorWebhook;
  return isJsonObject(swi) && isJsonObject(swi.templates) && Object.keys(swi.templates).length > 0;
}

/** The template set when no source gives Go templates: the built-in ports only. */
export function builtinOnlyTemplates(): IstioTemplates {
  return {
    go: new Map(),
    defaultTemplates: ['sidecar'],
    aliases: {},
    injectedAnnotations: {},
    version: '',
    minor: BUILTIN_MINOR,
  };
}
