/**
 * The custom driver's settings (`spec.custom`, or `custom.*` ConfigMap keys): named templates, inline or from
 * local-config ConfigMaps in the input, and the free-form `values` they read. Every key that comes from input
 * is held in a `Map` (prototype names such as `constructor` are valid template and value names).
 */
import type { JsonObject } from '../../model.ts';
import type { DriverConfigInput, DriverConfigResult } from '../../contract/driver.ts';
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { MeshInjectError } from '../../results/errors.ts';
import { isJsonObject } from '../../json.ts';

/** A template and where it came from, for messages (`spec.custom.templates.sidecar`, `ConfigMap log-templates data.sidecar.hbs`). */
export interface CustomTemplate {
  source: string;
  from: string;
}

/** The custom driver's settings. */
export interface CustomSettings {
  /** Templates by name, in the order they were declared (inline first, then each ConfigMap). */
  templates: Map<string, CustomTemplate>;
  /** Local-config ConfigMaps in the input to read templates from (the driver's `fromInput`). */
  templateConfigMaps: string[];
  /** `spec.custom.values`, the `values` of the template data. */
  values: JsonObject;
  /** Where the section is, for messages (`spec.custom` or `data`). */
  path: string;
}

/** The default template name. */
export const DEFAULT_TEMPLATE = 'sidecar';
/** Template names: a DNS label (also what `meshinject.dev/templates` lists). */
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Loads `spec.custom` (already checked against `config.schema.json`): inline templates, the template ConfigMap
 * names (a comma list in the ConfigMap form), and values. No template at all is an issue unless ConfigMaps are
 * named (they are read per run by {@link templatesFromPackage}).
 */
export function loadCustomConfig(input: DriverConfigInput): DriverConfigResult<CustomSettings> {
  const issues: ConfigIssue[] = [];
  const raw = input.raw;
  const templates = new Map<string, CustomTemplate>();
  if (isJsonObject(raw.templates)) {
    for (const [name, source] of Object.entries(raw.templates)) {
      if (typeof source === 'string') templates.set(name, { source, from: `${input.path}.templates.${name}` });
    }
  }
  const cms = raw.templateConfigMaps;
  const templateConfigMaps =
    typeof cms === 'string'
      ? cms
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : Array.isArray(cms)
        ? cms.filter((s): s is string => typeof s === 'string')
        : [];
  const values = (isJsonObject(raw.values) ? raw.values : {}) as JsonObject;
  if (templates.size === 0 && templateConfigMaps.length === 0) {
    issues.push({
      path: `${input.path}.templates`,
      message: `${input.path}: the custom mesh needs templates: ${input.path}.templates (inline) or ${input.path}.templateConfigMaps (ConfigMaps in the input)`,
    });
  }
  return { settings: { templates, templateConfigMaps, values, path: input.path }, issues, warnings: [] };
}

/**
 * Adds the templates of the local-config ConfigMaps named by `templateConfigMaps`: each `data` key is a
 * template, named by the key without a trailing `.hbs`. Returns new settings.
 * @throws MeshInjectError (BAD_CONFIG) for a named ConfigMap missing from the input's local-config objects, a
 *   key that is not a template name, or a name given twice (inline and in a ConfigMap, or in two ConfigMaps)
 */
export function templatesFromPackage(settings: CustomSettings, configMaps: readonly JsonObject[]): CustomSettings {
  if (settings.templateConfigMaps.length === 0) return settings;
  const templates = new Map(settings.templates);
  for (const name of settings.templateConfigMaps) {
    const cm = configMaps.find(
      (o) =>
        o.kind === 'ConfigMap' &&
        o.apiVersion === 'v1' &&
        isJsonObject(o.metadata) &&
        o.metadata.name === name &&
        isJsonObject(o.metadata.annotations) &&
        o.metadata.annotations['config.kubernetes.io/local-config'] === 'true',
    );
    if (!cm) {
      throw new MeshInjectError(
        'BAD_CONFIG',
        `${settings.path}.templateConfigMaps: no ConfigMap "${name}" marked config.kubernetes.io/local-config: "true" in the input (templates are read from the input's local-config ConfigMaps)`,
        { field: `${settings.path}.templateConfigMaps` },
      );
    }
    const data = isJsonObject(cm.data) ? cm.data : {};
    for (const [key, source] of Object.entries(data)) {
      const tname = key.replace(/\.hbs$/, '');
      const from = `ConfigMap ${name} data.${key}`;
      if (!NAME.test(tname) || typeof source !== 'string') {
        throw new MeshInjectError(
          'BAD_CONFIG',
          `${from}: not a template (a key must be a template name, lower-case letters, digits and '-', optionally ending in .hbs, with a string value)`,
          { field: `${settings.path}.templateConfigMaps` },
        );
      }
      const other = templates.get(tname);
      if (other)
        throw new MeshInjectError('BAD_CONFIG', `template "${tname}" is defined twice: ${other.from} and ${from}`, {
          field: `${settings.path}.templateConfigMaps`,
        });
      templates.set(tname, { source, from });
    }
  }
  return { ...settings, templates };
}
