import { parse } from 'yaml';
import type { Json, JsonObject } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { ISTIO_DEFAULT_PROXY_CONFIG } from './defaults.ts';
import { isJsonObject, setOwn } from '../../json.ts';

/** The pod annotation carrying a per-workload ProxyConfig (YAML or JSON). */
export const PROXY_CONFIG_ANNOTATION = 'proxy.istio.io/config';

/**
 * `ProxyConfig` fields in `.proto` declaration order (istio/api mesh/v1alpha1/proxy.proto), which is
 * the order Go's protojson writes them in. Fields not listed here are written after these.
 */
const FIELD_ORDER = [
  'configPath',
  'binaryPath',
  'serviceCluster',
  'tracingServiceName',
  'drainDuration',
  'parentShutdownDuration',
  'discoveryAddress',
  'discoveryRefreshDelay',
  'zipkinAddress',
  'statsdUdpAddress',
  'envoyMetricsServiceAddress',
  'proxyAdminPort',
  'availabilityZone',
  'controlPlaneAuthPolicy',
  'customConfigFile',
  'statNameLength',
  'concurrency',
  'proxyBootstrapTemplatePath',
  'interceptionMode',
  'tracing',
  'sds',
  'envoyAccessLogService',
  'envoyMetricsService',
  'proxyMetadata',
  'runtimeValues',
  'statusPort',
  'extraStatTags',
  'gatewayTopology',
  'terminationDrainDuration',
  'meshId',
  'readinessProbe',
  'proxyStatsMatcher',
  'holdApplicationUntilProxyStarts',
  'caCertificatesPem',
  'image',
  'privateKeyProvider',
  'proxyHeaders',
  'fileFlushInterval',
  'fileFlushMinSizeKb',
];

/** Plain proto3 scalars (no presence): protojson omits them at their zero value. */
const ZERO_OMITTED: Record<string, Json> = {
  configPath: '',
  binaryPath: '',
  discoveryAddress: '',
  zipkinAddress: '',
  statsdUdpAddress: '',
  envoyMetricsServiceAddress: '',
  proxyAdminPort: 0,
  availabilityZone: '',
  controlPlaneAuthPolicy: 'NONE',
  customConfigFile: '',
  statNameLength: 0,
  proxyBootstrapTemplatePath: '',
  interceptionMode: 'REDIRECT',
  statusPort: 0,
  meshId: '',
  fileFlushMinSizeKb: 0,
};

const ENUM_NUMBERS: Record<string, Record<number, string>> = {
  interceptionMode: { 0: 'REDIRECT', 1: 'TPROXY', 2: 'NONE' },
  controlPlaneAuthPolicy: { 0: 'NONE', 1: 'MUTUAL_TLS', 1000: 'INHERIT' },
};

function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Accepts proto field names (`discovery_address`) as protojson does, and enum numbers. */
function normalizeProxyConfig(raw: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(raw)) {
    const key = camelCase(k);
    const enums = ENUM_NUMBERS[key];
    out[key] = enums && typeof v === 'number' && enums[v] !== undefined ? enums[v] : v;
  }
  return out;
}

/**
 * Merges a ProxyConfig overlay onto `base` the way Istio's `protomarshal.ApplyYAML` + `mergeMap` do:
 * fields present in the overlay replace (messages are merged field by field), and `proxyMetadata`
 * maps are merged key by key. Returns a new object.
 */
function applyProxyConfig(base: JsonObject, overlay: JsonObject): JsonObject {
  const out: JsonObject = structuredClone(base);
  for (const [key, value] of Object.entries(overlay)) {
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    if (key === 'proxyMetadata' || key === 'runtimeValues') {
      setOwn(out, key, { ...(isJsonObject(current) ? current : {}), ...(isJsonObject(value) ? value : {}) });
    } else if (isJsonObject(value) && isJsonObject(current) && Object.keys(value).length > 0) {
      setOwn(out, key, applyProxyConfig(current, value));
    } else {
      setOwn(out, key, structuredClone(value));
    }
  }
  return out;
}

/**
 * The effective ProxyConfig of a pod as protobuf JSON: `meshConfig.defaultConfig` (or Istio's
 * `DefaultProxyConfig()` when the mesh has none) with the pod's `proxy.istio.io/config` annotation
 * (YAML or JSON, parsed with YAML 1.1 rules like Go's sigs.k8s.io/yaml) merged on top, proxyMetadata
 * maps merged key by key (Istio `mesh.ApplyProxyConfig`, pkg/config/mesh/mesh.go). ProxyConfig
 * custom resources are webhook-only and not applied. Semantic validation of the result is not done here.
 * @throws InjectError (code BAD_ANNOTATION) when the annotation is not a YAML mapping.
 */
export function effectiveProxyConfig(
  meshConfig: JsonObject,
  annotations: Record<string, string> | null | undefined,
): JsonObject {
  const fromMesh = isJsonObject(meshConfig.defaultConfig)
    ? normalizeProxyConfig(meshConfig.defaultConfig)
    : structuredClone(ISTIO_DEFAULT_PROXY_CONFIG);
  const text = annotations?.[PROXY_CONFIG_ANNOTATION];
  if (text === undefined) return fromMesh;
  const read = readProxyConfigAnnotation(text);
  if (!read.ok) throw proxyConfigError(text, read.reason);
  return read.value === null ? fromMesh : applyProxyConfig(fromMesh, normalizeProxyConfig(read.value));
}

/**
 * The `proxy.istio.io/config` annotation read as YAML 1.1: a mapping, `null` when empty, or why it is not
 * a ProxyConfig (`could not parse proxy config: <reason>`, Istio's wording).
 */
export function readProxyConfigAnnotation(
  text: string,
): { ok: true; value: JsonObject | null } | { ok: false; reason: string } {
  let parsed: unknown;
  try {
    parsed = parse(text, { version: '1.1' });
  } catch (err) {
    return { ok: false, reason: `could not parse proxy config: ${(err as Error).message}` };
  }
  if (parsed === null || parsed === undefined) return { ok: true, value: null };
  if (!isJsonObject(parsed)) return { ok: false, reason: 'could not parse proxy config: not a mapping' };
  return { ok: true, value: parsed };
}

function proxyConfigError(value: string, reason: string): InjectError {
  return new InjectError(`invalid value '${value}' for annotation '${PROXY_CONFIG_ANNOTATION}': ${reason}`, {
    field: `metadata.annotations[${PROXY_CONFIG_ANNOTATION}]`,
    code: 'BAD_ANNOTATION',
  });
}

function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether a field is dropped by Istio's `cleanProxyConfig` (equal to `DefaultProxyConfig()`). */
function isStrippedDefault(key: string, value: Json | undefined): boolean {
  switch (key) {
    case 'configPath':
    case 'binaryPath':
    case 'serviceCluster':
    case 'discoveryAddress':
    case 'proxyAdminPort':
    case 'statNameLength':
    case 'statusPort':
    case 'drainDuration':
    case 'terminationDrainDuration':
      return jsonEqual(value, ISTIO_DEFAULT_PROXY_CONFIG[key]);
    case 'controlPlaneAuthPolicy':
      return value === 'MUTUAL_TLS';
    case 'proxyMetadata':
      return !isJsonObject(value) || Object.keys(value).length === 0;
    default:
      return false;
  }
}

/** protojson omission of unset/zero values: null, proto3 scalar zero values, empty lists and maps. */
function isOmittedByProtojson(key: string, value: Json | undefined): boolean {
  if (value === null || value === undefined) return true;
  if (Object.hasOwn(ZERO_OMITTED, key) && value === ZERO_OMITTED[key]) return true;
  if (Array.isArray(value)) return value.length === 0;
  if ((key === 'proxyMetadata' || key === 'runtimeValues') && isJsonObject(value))
    return Object.keys(value).length === 0;
  return false;
}

/**
 * Istio `protoToJSON` for a ProxyConfig (pkg/kube/inject/template.go): drops the fields equal to
 * `mesh.DefaultProxyConfig()` (`cleanProxyConfig`), then writes compact protobuf JSON in `.proto`
 * declaration order with camelCase names, omitting zero-valued scalars, and `{}` when nothing is left.
 * Example: a TPROXY mesh gives `{"interceptionMode":"TPROXY"}`.
 */
export function proxyConfigToJSON(pc: JsonObject | null | undefined): string {
  if (!pc) return '{}';
  const out: JsonObject = {};
  const known = new Set(FIELD_ORDER);
  const keys = [...FIELD_ORDER.filter((k) => k in pc), ...Object.keys(pc).filter((k) => !known.has(k))];
  for (const key of keys) {
    const value = pc[key]; // own key: a name of FIELD_ORDER found in pc (none names a prototype member) or of Object.keys(pc)
    if (isStrippedDefault(key, value) || isOmittedByProtojson(key, value)) continue;
    setOwn(
      out,
      key,
      isJsonObject(value) && (key === 'proxyMetadata' || key === 'runtimeValues') ? sortKeys(value) : (value as Json),
    );
  }
  return JSON.stringify(out);
}

function sortKeys(o: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(o).sort()) setOwn(out, k, o[k] as Json);
  return out;
}

/** The interception mode of a ProxyConfig (`REDIRECT` when unset, the proto enum zero value). */
export function interceptionModeOf(pc: JsonObject): string {
  const mode = pc.interceptionMode;
  if (typeof mode === 'string' && mode !== '') return mode;
  if (typeof mode === 'number') return ENUM_NUMBERS.interceptionMode?.[mode] ?? 'REDIRECT';
  return 'REDIRECT';
}
