/**
 * Template source 3: an `istio-sidecar-injector` ConfigMap among the input resources (the istiod chart's
 * rendering: `istio-sidecar-injector[-<revision>]`, `data.config` and `data.values`). Used when
 * `spec.istio.injectorConfig` is absent; `spec.istio.values` still applies on top of the ConfigMap's values
 * and its templates still win by name.
 */
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import type { IstioSettings } from './config.ts';
import { mergeValues } from './defaults.ts';
import { istioMinor, parseInjectorConfig, resolveTemplates } from './template-sources.ts';

/** The ConfigMap's Istio version: label `app.kubernetes.io/version`, else the `helm.sh/chart: istiod-<v>` suffix. */
export function configMapVersion(labels: Record<string, unknown>): string {
  const v = labels['app.kubernetes.io/version'];
  if (typeof v === 'string' && istioMinor(v) !== undefined) return v;
  const chart = labels['helm.sh/chart'];
  if (typeof chart !== 'string') return '';
  // `-(v?1\.\d+\.\d+\S*)$` in linear time: the match lies in the text after the last space.
  let from = chart.length;
  while (from > 0 && !/\s/.test(chart.charAt(from - 1))) from--;
  const tail = chart.slice(from);
  const m = /-(v?1\.\d+\.\d+)/.exec(tail);
  return m ? tail.slice(m.index + 1) : '';
}

/**
 * Istio driver `fromInput`: when no injector config is configured and the input holds the injector
 * ConfigMap of the configured revision, the run's templates and values come from it. Returns the settings
 * unchanged otherwise. Notes say which ConfigMap was used, or why one was not.
 */
export function withInjectorConfigMap(
  settings: IstioSettings,
  configMaps: (names: readonly string[]) => readonly JsonObject[],
): { settings: IstioSettings; notes: string[] } {
  const want = settings.revision === '' ? 'istio-sidecar-injector' : `istio-sidecar-injector-${settings.revision}`;
  const found = configMaps([want]).filter(
    (r) =>
      r.kind === 'ConfigMap' &&
      r.apiVersion === 'v1' &&
      isJsonObject(r.metadata) &&
      r.metadata.name === want &&
      isJsonObject(r.data),
  );
  if (found.length === 0) return { settings, notes: [] };
  const cm = found[0] as JsonObject;
  const meta = cm.metadata as JsonObject;
  const where = `ConfigMap ${typeof meta.namespace === 'string' ? `${meta.namespace}/` : ''}${want}`;
  if (settings.sourceInputs.hasInjectorConfig) {
    return { settings, notes: [`${where} in the input is not used: spec.istio.injectorConfig is set`] };
  }
  const data = cm.data as JsonObject;
  const issues: ConfigIssue[] = [];
  const config = parseInjectorConfig(data.config, `${where} data.config`, issues);
  let cmValues: JsonObject = {};
  if (typeof data.values === 'string') {
    try {
      const parsed = JSON.parse(data.values) as Json;
      if (isJsonObject(parsed)) cmValues = parsed;
      else issues.push({ path: `${where} data.values`, message: `${where} data.values is not a JSON object` });
    } catch (e) {
      issues.push({
        path: `${where} data.values`,
        message: `${where} data.values is not JSON: ${(e as Error).message}`,
      });
    }
  }
  if (!config || issues.length > 0) {
    return {
      settings,
      notes: [`${where} in the input is not used: ${issues.map((i) => i.message).join('; ') || 'no config'}`],
    };
  }
  const labels = isJsonObject(meta.labels) ? meta.labels : {};
  const version = configMapVersion(labels);
  const swi = settings.sourceInputs.userValues.sidecarInjectorWebhook;
  const templates = resolveTemplates(
    {
      valuesTemplates: isJsonObject(swi) ? swi.templates : undefined,
      injectorConfig: undefined,
      configMap: { config, version },
      version: settings.sourceInputs.version,
      env: settings.env,
    },
    'spec.istio',
    issues,
  );
  if (issues.length > 0) {
    return { settings, notes: [`${where} in the input is not used: ${issues.map((i) => i.message).join('; ')}`] };
  }
  const values = mergeValues(cmValues, settings.sourceInputs.userValues);
  const more = found.length > 1 ? ` (${found.length} such ConfigMaps in the input; the first is used)` : '';
  return {
    settings: { ...settings, values, templates },
    notes: [
      `Istio templates and values from ${where} in the input (Istio ${templates.version || 'version unknown'})${more}`,
    ],
  };
}
