/**
 * The functionConfig of a run: the `--config` layers (or the ResourceList's functionConfig), the platform's layers first, then the flag and environment overrides, merged and loaded (src/config/).
 */
import { foreignConfigMessage, loadConfig, type LoadResult } from '../config/load.ts';
import {
  describeShape,
  mergeConfigLayers,
  overrideLayers,
  parseConfigLayer,
  type ConfigLayer,
} from '../config/layering.ts';
import { DRIVERS } from '../drivers/registry.ts';
import type { ParsedSource } from '../krm/source.ts';
import type { JsonObject } from '../model.ts';
import { DEFAULT_TEMPLATE_BUDGETS } from '../render/budget.ts';
import { checkPlatformWord } from '../config/platform-word.ts';

import type { RunOptions } from '../run.ts';

/** The functionConfig of the run: the `--config` layers (or the ResourceList's), then the overrides. */
export function resolveConfig(
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
  const only = layers.length === 1 ? layers[0] : undefined;
  const merged = only ? { ok: true as const, value: only.value } : mergeConfigLayers(layers);
  if (!merged.ok) return { problem: merged.message };
  const loaded = loadConfig(merged.value, DRIVERS, options);
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
