import { parseDocument } from 'yaml';
import type { ConfigOverrides } from '../config/layering.ts';
import { describeShape } from '../config/layering.ts';
import { describeObject } from '../config/load.ts';
import type { JsonObject } from '../model.ts';
import { isJsonObject } from '../json.ts';

/**
 * istioctl-compatible flags (`istioctl kube-inject`, istioctl/pkg/kubeinject/kubeinject.go): files a user
 * already has from a cluster, turned into config overrides. Pure: the CLI reads the files and passes their
 * text. Each file may be the bare content (what `kubectl get cm ... -o jsonpath='{.data.KEY}'` prints) or
 * the whole ConfigMap (`kubectl get cm ... -o yaml`), whose `data.KEY` is then used:
 * - `--meshConfigFile`: mesh config YAML (ConfigMap `istio`, key `mesh`);
 * - `--valuesFile`: the injector's values JSON (ConfigMap `istio-sidecar-injector`, key `values`);
 * - `--injectConfigFile`: the injector config YAML (ConfigMap `istio-sidecar-injector`, key `config`),
 *   stored as text in `spec.istio.injectorConfig`;
 * - `--operatorFileName`: an `IstioOperator` (install.istio.io/v1alpha1); its `spec.values` and
 *   `spec.meshConfig` are used, and `spec.revision` when `--revision` is not given.
 */

/** The istioctl flags' file contents (name = the flag and path, for messages). */
export interface IstioFlagFiles {
  revision?: string;
  meshConfigFile?: { name: string; text: string };
  valuesFile?: { name: string; text: string };
  injectConfigFile?: { name: string; text: string };
  operatorFileName?: { name: string; text: string };
}

function readYaml(name: string, text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const err = doc.errors[0];
  if (err) throw new Error(`${name}: not YAML or JSON: ${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+.*$/, '')}`);
  return JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null));
}

/**
 * The bare content of a ConfigMap key, when `value` is that ConfigMap; else undefined. Another Kubernetes
 * object (a map with a string `kind` and `apiVersion`, which Istio's values, mesh config and injector config
 * never have at the top) is refused by its kind and name only: its content is not shown (issue #19).
 */
function configMapData(value: unknown, key: string, name: string): string | undefined {
  if (isJsonObject(value) && value.kind !== 'ConfigMap' && typeof value.kind === 'string' && typeof value.apiVersion === 'string') {
    throw new Error(`${name}: ${describeObject(value)} is neither the content nor the ConfigMap this flag takes; its content is not shown`);
  }
  if (!isJsonObject(value) || value.kind !== 'ConfigMap') return undefined;
  const data = value.data;
  const v = isJsonObject(data) ? data[key] : undefined;
  if (typeof v !== 'string') throw new Error(`${name}: a ConfigMap without data.${key}`);
  return v;
}

function mapFrom(name: string, text: string, key: string): JsonObject {
  let value = readYaml(name, text);
  const inner = configMapData(value, key, name);
  if (inner !== undefined) value = readYaml(`${name} data.${key}`, inner);
  if (value === null) return {};
  if (!isJsonObject(value)) throw new Error(`${name}: expected a map; got ${describeShape(value)}`);
  return value;
}

/**
 * Turns istioctl flag files into config overrides (the flags win over the functionConfig).
 *
 * @returns the overrides, or the message of the first file that cannot be used (names the flag and file)
 */
export function istioFlagOverrides(f: IstioFlagFiles): { ok: true; overrides: ConfigOverrides } | { ok: false; message: string } {
  const o: ConfigOverrides = {};
  try {
    if (f.operatorFileName) {
      const { name, text } = f.operatorFileName;
      const iop = readYaml(name, text);
      if (!isJsonObject(iop) || iop.kind !== 'IstioOperator') {
        throw new Error(`${name}: expected an IstioOperator (kind: IstioOperator); got ${isJsonObject(iop) ? `kind ${JSON.stringify(iop.kind)}` : describeShape(iop)}`);
      }
      const spec = isJsonObject(iop.spec) ? iop.spec : {};
      if (spec.values !== undefined) {
        if (!isJsonObject(spec.values)) throw new Error(`${name}: spec.values must be a map; got ${describeShape(spec.values)}`);
        o.values = { value: spec.values, from: name };
      }
      if (spec.meshConfig !== undefined) {
        if (!isJsonObject(spec.meshConfig)) throw new Error(`${name}: spec.meshConfig must be a map; got ${describeShape(spec.meshConfig)}`);
        o.meshConfig = { value: spec.meshConfig, from: name };
      }
      if (typeof spec.revision === 'string' && spec.revision !== '') o.revision = { value: spec.revision, from: `${name} spec.revision` };
    }
    if (f.valuesFile) o.values = { value: mapFrom(f.valuesFile.name, f.valuesFile.text, 'values'), from: f.valuesFile.name };
    if (f.meshConfigFile) o.meshConfig = { value: mapFrom(f.meshConfigFile.name, f.meshConfigFile.text, 'mesh'), from: f.meshConfigFile.name };
    if (f.injectConfigFile) {
      const { name, text } = f.injectConfigFile;
      const inner = configMapData(readYaml(name, text), 'config', name);
      o.injectorConfig = { value: inner ?? text, from: name };
    }
    if (f.revision !== undefined) o.revision = { value: f.revision, from: '--revision' };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
  return { ok: true, overrides: o };
}
