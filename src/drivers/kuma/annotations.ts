/**
 * Kuma's pod and namespace metadata keys and the way Kuma reads their values (kumahq/kuma
 * pkg/plugins/runtime/k8s/metadata/annotations.go and labels.go at 348b6528): booleans accept
 * `true|yes|false|no` and, for "enabled" switches, `enabled|disabled`; numbers are unsigned 32-bit decimals;
 * lists are comma-separated with empty items dropped; maps are `k1=v1;k2=v2`. A value Kuma cannot read
 * fails the admission, so these readers throw `InjectError` naming the annotation.
 */
import { InjectError } from '../../results/errors.ts';
import { parseUint } from '../go-parse.ts';

/** The label (on a pod or its namespace) that turns injection on or off. */
export const SIDECAR_INJECTION = 'kuma.io/sidecar-injection';
/** The label (on a pod or its namespace) naming the pod's Mesh. */
export const MESH_LABEL = 'kuma.io/mesh';
/** The pod label marking a zone ingress/egress proxy (lets it through the mesh-existence precheck). */
export const ZONE_PROXY_TYPE_LABEL = 'k8s.kuma.io/zone-proxy-type';
/** A Service (or pod) annotation Kuma reads with `GetEnabled`: the Service is left out of Kuma's matching (`Ignored()`). */
export const IGNORE_ANNOTATION = 'kuma.io/ignore';

export const GATEWAY = 'kuma.io/gateway';
export const APP_PROBE_PROXY_PORT = 'kuma.io/application-probe-proxy-port';
export const SIDECAR_ENV_VARS = 'kuma.io/sidecar-env-vars';
export const SIDECAR_CONCURRENCY = 'kuma.io/sidecar-proxy-concurrency';
export const TP_CONFIG = 'traffic.kuma.io/transparent-proxy-config';
export const TP_CONFIGMAP_NAME = 'traffic.kuma.io/transparent-proxy-configmap-name';
export const EXCLUDE_INBOUND_PORTS = 'traffic.kuma.io/exclude-inbound-ports';
export const EXCLUDE_OUTBOUND_PORTS = 'traffic.kuma.io/exclude-outbound-ports';
export const EXCLUDE_OUTBOUND_PORTS_FOR_UIDS = 'traffic.kuma.io/exclude-outbound-ports-for-uids';
export const DROP_INVALID_PACKETS = 'traffic.kuma.io/drop-invalid-packets';
export const IPTABLES_LOGS = 'traffic.kuma.io/iptables-logs';
export const EXCLUDE_INBOUND_IPS = 'traffic.kuma.io/exclude-inbound-ips';
export const EXCLUDE_OUTBOUND_IPS = 'traffic.kuma.io/exclude-outbound-ips';
export const TOKEN_VOLUME = 'kuma.io/service-account-token-volume';
export const DRAIN_TIME = 'kuma.io/sidecar-drain-time';
export const CONTAINER_PATCHES = 'kuma.io/container-patches';
export const ENVOY_LOG_LEVEL = 'kuma.io/envoy-log-level';
export const ENVOY_COMPONENT_LOG_LEVEL = 'kuma.io/envoy-component-log-level';
export const INIT_FIRST = 'kuma.io/init-first';
export const WAIT_FOR_DATAPLANE_READY = 'kuma.io/wait-for-dataplane-ready';
export const SPIRE_SUPPORT = 'k8s.kuma.io/spire-support';
export const SIDECAR_INJECTED = 'kuma.io/sidecar-injected';
export const ENVOY_ADMIN_PORT = 'kuma.io/envoy-admin-port';
export const IP_FAMILY_MODE = 'kuma.io/transparent-proxying-ip-family-mode';
export const CNCF_NETWORKS = 'k8s.v1.cni.cncf.io/networks';
export const KUMA_CNI = 'kuma-cni';
export const DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container';

/** Names of what the injection adds. */
export const SIDECAR_CONTAINER = 'kuma-sidecar';
export const INIT_CONTAINER = 'kuma-init';
export const VALIDATION_CONTAINER = 'kuma-validation';
export const VOLUME_INIT_TMP = 'kuma-init-tmp';
export const VOLUME_SIDECAR_TMP = 'kuma-sidecar-tmp';
export const VOLUME_TP_BASE = 'transparent-proxy-base';
export const VOLUME_TP_CUSTOM = 'transparent-proxy-custom';
export const VOLUME_SPIRE = 'kuma-spire-agent-socket';

type Meta = Record<string, string> | null | undefined;

function bad(key: string, value: string, what: string): InjectError {
  return new InjectError(`annotation "${key}" has wrong value "${value}" (${what})`, {
    field: `metadata.annotations[${key}]`,
  });
}

/**
 * A boolean of `meta[key]`: `{value, exists}`; `def` when absent. `enabled|disabled` count only when
 * `enabledValues` (Kuma `GetEnabledWithDefault`; `GetBoolean` refuses them).
 * @throws InjectError for any other value
 */
export function readBool(
  meta: Meta,
  key: string,
  def: boolean,
  enabledValues = true,
): { value: boolean; exists: boolean } {
  const v = meta?.[key];
  if (v === undefined) return { value: def, exists: false };
  if (v === 'true' || v === 'yes' || (enabledValues && v === 'enabled')) return { value: true, exists: true };
  if (v === 'false' || v === 'no' || (enabledValues && v === 'disabled')) return { value: false, exists: true };
  throw bad(
    key,
    v,
    enabledValues ? 'expected enabled, disabled, true, false, yes or no' : 'expected true, false, yes or no',
  );
}

/**
 * An unsigned 32-bit number of `meta[key]` (Kuma `GetUint32`: Go `strconv.ParseUint(v, 10, 32)`, no sign, no
 * spaces), `def` when absent.
 * @throws InjectError with Kuma's message, `failed to parse annotation "<key>": strconv.ParseUint: parsing "+4": invalid syntax`
 */
export function readUint32(meta: Meta, key: string, def: number): { value: number; exists: boolean } {
  const v = meta?.[key];
  if (v === undefined) return { value: def, exists: false };
  const n = parseUint(v, 10, 32);
  if (!n.ok)
    throw new InjectError(`failed to parse annotation "${key}": ${n.error}`, { field: `metadata.annotations[${key}]` });
  return { value: Number(n.value), exists: true };
}

/** The comma-separated list of `meta[key]` without empty items, or undefined when absent (Kuma `GetList`). */
export function readList(meta: Meta, key: string): string[] | undefined {
  const v = meta?.[key];
  return v === undefined ? undefined : v.split(',').filter((x) => x !== '');
}

/**
 * The `k1=v1;k2=v2` map of `meta[key]` (Kuma `GetMap`), `{}` when absent.
 * @throws InjectError when a pair is not exactly `key=value`
 */
export function readMap(meta: Meta, key: string): Record<string, string> {
  const v = meta?.[key];
  if (v === undefined) return {};
  const out = new Map<string, string>();
  for (const pair of v.split(';')) {
    const kv = pair.split('=');
    if (kv.length !== 2)
      throw new InjectError(
        `invalid format. Map in "${key}" has to be provided in the following format: key1=value1;key2=value2`,
        { field: `metadata.annotations[${key}]` },
      );
    const [k = '', value = ''] = kv;
    out.set(k, value);
  }
  return Object.fromEntries(out);
}
