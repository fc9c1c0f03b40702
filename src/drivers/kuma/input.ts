/**
 * The Kuma driver's `fromInput`: an input (a kpt package, a directory of exported cluster objects) may hold
 * the ConfigMaps the webhook reads in the cluster: `kuma-control-plane-config` (kuma-cp's configuration, key
 * `config.yaml`) and the transparent proxy ConfigMap (`injector.transparentProxyConfigMap`, default
 * `kuma-transparent-proxy-config`, key `config.yaml`), both in the system namespace. Each is used when the
 * matching `spec.kuma` field is not set; the run's notes say which was used, or why not.
 */
import { isJsonObject } from '../../json.ts';
import type { JsonObject } from '../../model.ts';
import { loadKumaConfig, type KumaSettings } from './config.ts';

const CP_CONFIGMAP = 'kuma-control-plane-config';

/** The `config.yaml` text of the ConfigMap `name` (in `namespace`, or without one) among `configMaps`, with its display name. */
function configYaml(
  configMaps: readonly JsonObject[],
  name: string,
  namespace: string,
): { where: string; text: string } | undefined {
  for (const r of configMaps) {
    if (
      r.kind !== 'ConfigMap' ||
      r.apiVersion !== 'v1' ||
      !isJsonObject(r.metadata) ||
      r.metadata.name !== name ||
      !isJsonObject(r.data)
    )
      continue;
    const ns = r.metadata.namespace;
    if (ns !== undefined && ns !== namespace) continue;
    const text = r.data['config.yaml'];
    if (typeof text === 'string') return { where: `ConfigMap ${typeof ns === 'string' ? `${ns}/` : ''}${name}`, text };
  }
  return undefined;
}

/** `settings` loaded again with `field` set to `text`; undefined (and a note) when that gives config issues. */
function reload(
  settings: KumaSettings,
  field: string,
  text: string,
  where: string,
  notes: string[],
): KumaSettings | undefined {
  const src = settings.source;
  const r = loadKumaConfig({ ...src, raw: { ...src.raw, [field]: text } });
  if (r.issues.length > 0) {
    notes.push(`${where} in the input is not used: ${r.issues.map((i) => i.message).join('; ')}`);
    return undefined;
  }
  notes.push(`${where} in the input is used as ${src.path}.${field}`);
  return r.settings;
}

/** Kuma driver `fromInput` (see the module comment). Pure. */
export function withKumaConfigMaps(
  settings: KumaSettings,
  configMaps: (names: readonly string[]) => readonly JsonObject[],
): { settings: KumaSettings; notes: string[] } {
  const notes: string[] = [];
  let s = settings;
  const steps: Array<[string, () => string]> = [
    ['controlPlaneConfig', () => CP_CONFIGMAP],
    ['transparentProxyConfig', () => s.injector.transparentProxyConfigMap],
  ];
  for (const [field, name] of steps) {
    const found = configYaml(configMaps([name()]), name(), s.systemNamespace);
    if (!found) continue;
    if (s.source.raw[field] !== undefined) {
      notes.push(`${found.where} in the input is not used: ${s.source.path}.${field} is set`);
      continue;
    }
    s = reload(s, field, found.text, found.where, notes) ?? s;
  }
  return { settings: s, notes };
}
