import { parseDocument } from 'yaml';
import { quoteData } from '../../results/quote.ts';
import { describeShape } from '../../config/layering.ts';
import { describeObject } from '../../config/load.ts';
import type { JsonObject } from '../../model.ts';
import { isJsonObject } from '../../json.ts';
import type { DriverFlags, FlagValue, SectionOverride } from '../../contract/driver.ts';

/**
 * istioctl-compatible flags (`istioctl kube-inject`, istioctl/pkg/kubeinject/kubeinject.go): files a user
 * already has from a cluster, turned into overrides of `spec.istio`. Pure: the CLI reads the files and passes
 * their text. Each file may be the bare content (what `kubectl get cm ... -o jsonpath='{.data.KEY}'` prints) or
 * the whole ConfigMap (`kubectl get cm ... -o yaml`), whose `data.KEY` is then used:
 * - `--meshConfigFile`: mesh config YAML (ConfigMap `istio`, key `mesh`);
 * - `--valuesFile`: the injector's values JSON (ConfigMap `istio-sidecar-injector`, key `values`);
 * - `--injectConfigFile`: the injector config YAML (ConfigMap `istio-sidecar-injector`, key `config`),
 *   stored as text in `spec.istio.injectorConfig`;
 * - `--operatorFileName`: an `IstioOperator` (install.istio.io/v1alpha1); its `spec.values` and
 *   `spec.meshConfig` are used, and `spec.revision` when `--revision` is not given.
 */

/** The istioctl flags, in `--help` order. */
const OPTIONS: DriverFlags['options'] = [
  { name: 'revision', arg: 'REV', help: 'Istio control-plane revision (spec.istio.revision)' },
  {
    name: 'meshConfigFile',
    arg: 'FILE',
    file: true,
    help: "Istio mesh config: the istio ConfigMap's `mesh` (or the ConfigMap itself)",
  },
  {
    name: 'valuesFile',
    arg: 'FILE',
    file: true,
    help: "injector values JSON: the istio-sidecar-injector ConfigMap's `values` (or the ConfigMap)",
  },
  {
    name: 'injectConfigFile',
    arg: 'FILE',
    file: true,
    help: "injector config: the istio-sidecar-injector ConfigMap's `config` (or the ConfigMap)",
  },
  {
    name: 'operatorFileName',
    arg: 'FILE',
    file: true,
    help: 'an IstioOperator whose spec.values and spec.meshConfig are used',
  },
];

function readYaml(name: string, text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const err = doc.errors[0];
  if (err)
    throw new Error(
      `${name}: not YAML or JSON: ${(err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+.*$/, '')}`,
    );
  return JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null));
}

/**
 * The bare content of a ConfigMap key, when `value` is that ConfigMap; else undefined. Another Kubernetes
 * object (a map with a string `kind` and `apiVersion`, which Istio's values, mesh config and injector config
 * never have at the top) is refused by its kind and name only: its content is not shown (issue #19).
 */
function configMapData(value: unknown, key: string, name: string): string | undefined {
  if (
    isJsonObject(value) &&
    value.kind !== 'ConfigMap' &&
    typeof value.kind === 'string' &&
    typeof value.apiVersion === 'string'
  ) {
    throw new Error(
      `${name}: ${describeObject(value)} is neither the content nor the ConfigMap this flag takes; its content is not shown`,
    );
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

/** The overrides of an `IstioOperator` (`--operatorFileName`): its `spec.values`, `spec.meshConfig` and `spec.revision`. */
function operatorOverrides({ name, text }: FlagValue, o: Map<string, SectionOverride>): void {
  const iop = readYaml(name, text);
  if (!isJsonObject(iop) || iop.kind !== 'IstioOperator') {
    throw new Error(
      `${name}: expected an IstioOperator (kind: IstioOperator); got ${isJsonObject(iop) ? `kind ${quoteData(iop.kind)}` : describeShape(iop)}`,
    );
  }
  const spec = isJsonObject(iop.spec) ? iop.spec : {};
  if (spec.values !== undefined) {
    if (!isJsonObject(spec.values))
      throw new Error(`${name}: spec.values must be a map; got ${describeShape(spec.values)}`);
    o.set('values', { field: 'values', value: spec.values, from: name, configMap: 'json' });
  }
  if (spec.meshConfig !== undefined) {
    if (!isJsonObject(spec.meshConfig))
      throw new Error(`${name}: spec.meshConfig must be a map; got ${describeShape(spec.meshConfig)}`);
    o.set('meshConfig', { field: 'meshConfig', value: spec.meshConfig, from: name, configMap: 'json' });
  }
  if (typeof spec.revision === 'string' && spec.revision !== '')
    o.set('revision', { field: 'revision', value: spec.revision, from: `${name} spec.revision`, configMap: 'text' });
}

/**
 * Turns istioctl flag values into overrides of `spec.istio` (the flags win over the functionConfig):
 * `--operatorFileName` first, then `--valuesFile`, `--meshConfigFile` and `--revision` replace what it set;
 * `--injectConfigFile` is `spec.istio.injectorConfig` (a SidecarInjection only).
 *
 * @returns the overrides (revision, values, meshConfig, injectorConfig), or the message of the first file that
 *   cannot be used (names the flag and file)
 */
function istioFlagOverrides(
  f: Readonly<Record<string, FlagValue>>,
): { ok: true; overrides: SectionOverride[] } | { ok: false; message: string } {
  const o = new Map<string, SectionOverride>();
  try {
    if (f.operatorFileName) operatorOverrides(f.operatorFileName, o);
    if (f.valuesFile)
      o.set('values', {
        field: 'values',
        value: mapFrom(f.valuesFile.name, f.valuesFile.text, 'values'),
        from: f.valuesFile.name,
        configMap: 'json',
      });
    if (f.meshConfigFile)
      o.set('meshConfig', {
        field: 'meshConfig',
        value: mapFrom(f.meshConfigFile.name, f.meshConfigFile.text, 'mesh'),
        from: f.meshConfigFile.name,
        configMap: 'json',
      });
    if (f.injectConfigFile) {
      const { name, text } = f.injectConfigFile;
      const inner = configMapData(readYaml(name, text), 'config', name);
      o.set('injectorConfig', { field: 'injectorConfig', value: inner ?? text, from: name });
    }
    if (f.revision !== undefined)
      o.set('revision', { field: 'revision', value: f.revision.text, from: '--revision', configMap: 'text' });
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
  const order = ['revision', 'values', 'meshConfig', 'injectorConfig'];
  return { ok: true, overrides: order.flatMap((k) => o.get(k) ?? []) };
}

/** The Istio driver's command-line flags (`MeshDriver.flags`). */
export const ISTIO_FLAGS: DriverFlags = { options: OPTIONS, overrides: istioFlagOverrides };
