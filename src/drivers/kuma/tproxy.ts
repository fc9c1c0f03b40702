/**
 * The transparent proxy configuration Kuma writes into every injected pod (annotation
 * `traffic.kuma.io/transparent-proxy-config`, read back by kuma-init, kuma-validation and kuma-sidecar through
 * the `transparent-proxy-base` downward API volume): the base config (`spec.kuma.transparentProxyConfig` over
 * Kuma's defaults) with the injector settings and the pod's annotations applied, as Kuma's
 * `ConfigForKubernetes` does (pkg/transparentproxy/kubernetes/kubernetes_config.go at 348b6528), and written
 * the way `sigs.k8s.io/yaml` marshals Kuma's `Config` (keys sorted, Go's `omitempty` and custom `MarshalJSON`
 * rules of pkg/transparentproxy/config/config.go).
 */
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { parsePort } from '../go-parse.ts';
import {
  APP_PROBE_PROXY_PORT,
  DROP_INVALID_PACKETS,
  EXCLUDE_INBOUND_IPS,
  EXCLUDE_INBOUND_PORTS,
  EXCLUDE_OUTBOUND_IPS,
  EXCLUDE_OUTBOUND_PORTS,
  EXCLUDE_OUTBOUND_PORTS_FOR_UIDS,
  GATEWAY,
  IP_FAMILY_MODE,
  IPTABLES_LOGS,
  readBool,
  readList,
  readUint32,
} from './annotations.ts';
import type { InjectorConfig } from './config.ts';

type Annotations = Record<string, string>;

/**
 * A comma-separated port list as Kuma's `Ports.Set` reads it (spaces trimmed, empty items skipped), each item a
 * `Port` (`parsePort`, pkg/transparentproxy/config/utils.go: Go `strconv.ParseUint(s, 10, 16)`, and not 0).
 * @throws InjectError naming `source` (the annotation or config field), with Kuma's message
 *   `value '0' is not a valid port (uint16 in the range [1, 65535])`
 */
export function parsePorts(value: Json | undefined, source: string): number[] {
  const items = Array.isArray(value)
    ? value.map(String)
    : typeof value === 'string' || typeof value === 'number'
      ? String(value).split(',')
      : [];
  const out: number[] = [];
  for (const raw of items) {
    const s = raw.trim();
    if (s === '') continue;
    const port = parsePort(s, KUMA_PORTS);
    if (!port.ok)
      throw new InjectError(
        `${source}: value '${s}' is not a valid port (uint16 in the range [1, 65535])`,
        source.includes('/') ? { field: `metadata.annotations[${source}]` } : {},
      );
    out.push(port.value);
  }
  return out;
}

/** The ports Kuma's transparent proxy takes (`Port`: a `uint16` other than 0). */
const KUMA_PORTS = { min: 1, max: 65535 };

/**
 * The application probe proxy port of a pod (Kuma `GetApplicationProbeProxyPort`, probes/pod_probe_overrider.go):
 * the annotation, else the injector's `applicationProbeProxyPort`; 0 for a gateway.
 * @throws InjectError for an unreadable annotation, or a non-zero port on a gateway
 */
export function appProbeProxyPort(annotations: Annotations, def: number): number {
  const port = readUint32(annotations, APP_PROBE_PROXY_PORT, 0);
  let gateway = false;
  try {
    gateway = readBool(annotations, GATEWAY, false).value;
  } catch {
    gateway = false; // Kuma ignores the error here; the transparent proxy step reports it
  }
  if (gateway && port.value > 0)
    throw new InjectError(
      `application probe proxies probes can't be enabled in gateway mode (${APP_PROBE_PROXY_PORT}: "${port.value}" with ${GATEWAY})`,
      { field: `metadata.annotations[${APP_PROBE_PROXY_PORT}]` },
    );
  if (gateway) return 0;
  return port.exists ? port.value : def;
}

const flow = (cfg: JsonObject, kind: 'inbound' | 'outbound'): JsonObject =>
  (cfg.redirect as JsonObject)[kind] as JsonObject;

/** First non-empty of annotation, ConfigMap, runtime; else the default (empty): Kuma's precedence for exclusions. */
function firstNonEmpty<T>(...lists: T[][]): T[] {
  return lists.find((l) => l.length > 0) ?? [];
}

function ipFamilyMode(base: JsonObject, injector: InjectorConfig, annotations: Annotations): string {
  const v = annotations[IP_FAMILY_MODE];
  if (v !== undefined) {
    if (v === '') return 'dualstack';
    if (!['dualstack', 'ipv4'].includes(v.toLowerCase()))
      throw new InjectError(
        `invalid IP Family Mode in annotation '${IP_FAMILY_MODE}': ${v}: must be one of 'dualstack' or 'ipv4'`,
        { field: `metadata.annotations[${IP_FAMILY_MODE}]` },
      );
    return v;
  }
  const current = typeof base.ipFamilyMode === 'string' ? base.ipFamilyMode : '';
  if (current !== '') return current;
  const runtime = injector.sidecarContainer.ipFamilyMode;
  return runtime !== '' && runtime !== 'dualstack' ? runtime : 'dualstack';
}

/**
 * The pod's transparent proxy config (Kuma `ConfigForKubernetes`), as a JSON object with Go's json names.
 * `base` is the settings' `tproxyBase` (not mutated).
 * @throws InjectError for an annotation Kuma cannot read
 */
export function configForKubernetes(base: JsonObject, injector: InjectorConfig, annotations: Annotations): JsonObject {
  const cfg = structuredClone(base);
  const sc = injector.sidecarContainer;
  const traffic = injector.sidecarTraffic;
  cfg.kumaDPUser = String(sc.uid);
  cfg.cniMode = injector.cniEnabled;
  cfg.ipFamilyMode = ipFamilyMode(base, injector, annotations);
  const drop = readBool(annotations, DROP_INVALID_PACKETS, false, false);
  if (drop.exists) cfg.dropInvalidPackets = drop.value;
  const logs = readBool(annotations, IPTABLES_LOGS, false, false);
  if (logs.exists) cfg.log = { ...(isJsonObject(cfg.log) ? cfg.log : {}), enabled: logs.value };
  const dns = (cfg.redirect as JsonObject).dns as JsonObject;
  dns.port = injector.builtinDNS.port;
  const outbound = flow(cfg, 'outbound');
  outbound.port = sc.redirectPortOutbound;
  outbound.excludePorts = firstNonEmpty(
    parsePorts(annotations[EXCLUDE_OUTBOUND_PORTS], EXCLUDE_OUTBOUND_PORTS),
    parsePorts(outbound.excludePorts, 'transparentProxyConfig.redirect.outbound.excludePorts'),
    traffic.excludeOutboundPorts,
  );
  const uids = annotations[EXCLUDE_OUTBOUND_PORTS_FOR_UIDS];
  if (uids !== undefined) outbound.excludePortsForUIDs = uids.split(';');
  outbound.excludePortsForIPs = firstNonEmpty(
    readList(annotations, EXCLUDE_OUTBOUND_IPS) ?? [],
    strings(outbound.excludePortsForIPs),
    traffic.excludeOutboundIPs,
  );
  const inbound = flow(cfg, 'inbound');
  const gateway = readBool(annotations, GATEWAY, false);
  if (gateway.exists && gateway.value) inbound.enabled = false;
  if (inbound.enabled === true) {
    inbound.port = sc.redirectPortInbound;
    inbound.excludePortsForIPs = firstNonEmpty(
      readList(annotations, EXCLUDE_INBOUND_IPS) ?? [],
      strings(inbound.excludePortsForIPs),
      traffic.excludeInboundIPs,
    );
    const ports = firstNonEmpty(
      parsePorts(annotations[EXCLUDE_INBOUND_PORTS], EXCLUDE_INBOUND_PORTS),
      parsePorts(inbound.excludePorts, 'transparentProxyConfig.redirect.inbound.excludePorts'),
      traffic.excludeInboundPorts,
    );
    const probePort = appProbeProxyPort(annotations, injector.applicationProbeProxyPort);
    inbound.excludePorts = probePort !== 0 ? [...ports, probePort] : ports;
  } else {
    inbound.excludePorts = parsePorts(inbound.excludePorts, 'transparentProxyConfig.redirect.inbound.excludePorts');
  }
  return cfg;
}

function strings(v: Json | undefined): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/** Appends ports to the inbound exclusions of `cfg` (Kuma `ExcludePorts.Append`). */
export function excludeInbound(cfg: JsonObject, ports: readonly number[]): void {
  const inbound = flow(cfg, 'inbound');
  inbound.excludePorts = [...(Array.isArray(inbound.excludePorts) ? inbound.excludePorts : []), ...ports];
}

const emptyList = (v: Json | undefined) => !Array.isArray(v) || v.length === 0;

/** `cfg` as Go's `json.Marshal` of Kuma's `Config` writes it: `omitempty` fields and the custom `MarshalJSON` drops. */
function marshalShape(cfg: JsonObject): JsonObject {
  const out = structuredClone(cfg);
  for (const k of ['dropInvalidPackets', 'verbose', 'dryRun', 'storeFirewalld', 'cniMode'])
    if (out[k] !== true) delete out[k];
  if (!isJsonObject(out.log) || out.log.enabled !== true) delete out.log;
  if (!isJsonObject(out.comments) || out.comments.disabled !== true) delete out.comments;
  if (
    !isJsonObject(out.iptablesExecutables) ||
    !Object.values(out.iptablesExecutables).some((v) => typeof v === 'string' && v !== '')
  )
    delete out.iptablesExecutables;
  const redirect = out.redirect as JsonObject;
  if (!isJsonObject(redirect.vnet) || emptyList(redirect.vnet.networks)) delete redirect.vnet;
  for (const kind of ['inbound', 'outbound']) {
    const f = redirect[kind] as JsonObject;
    for (const k of ['includePorts', 'excludePorts', 'excludePortsForUIDs', 'excludePortsForIPs'])
      if (emptyList(f[k])) delete f[k];
    if (f.insertRedirectInsteadOfAppend !== true) delete f.insertRedirectInsteadOfAppend;
  }
  return out;
}

/** Whether go-yaml v2 writes `s` quoted: it would read back as another type, or plain style cannot hold it. */
function needsQuotes(s: string): boolean {
  if (
    s === '' ||
    /^(?:~|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/.test(s)
  )
    return true;
  if (
    /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$/.test(s) ||
    /^[-+]?0x[0-9a-fA-F_]+$/.test(s) ||
    /^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$/.test(s)
  )
    return true;
  if (/^[\s\-?:,[\]{}#&*!|>'"%@`]/.test(s) && !/^-[^\s]/.test(s)) return true;
  return /\s$|: |\s#|[\n\t]|:$/.test(s);
}

function scalar(v: Json): string {
  if (typeof v === 'string') return needsQuotes(v) ? JSON.stringify(v) : v;
  return String(v);
}

/** go-yaml v2 block style: keys sorted, sequences at their key's indentation, `{}`/`[]` for empty collections. */
function emit(v: Json, indent: string, lines: string[]): void {
  if (!isJsonObject(v)) throw new Error('emit: a mapping is expected');
  for (const [k, x] of Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (isJsonObject(x) && Object.keys(x).length > 0) {
      lines.push(`${indent}${k}:`);
      emit(x, `${indent}  `, lines);
    } else if (Array.isArray(x) && x.length > 0) {
      lines.push(`${indent}${k}:`);
      for (const item of x) lines.push(`${indent}- ${scalar(item)}`);
    } else {
      lines.push(`${indent}${k}: ${isJsonObject(x) ? '{}' : Array.isArray(x) ? '[]' : scalar(x)}`);
    }
  }
}

/** The annotation value: `sigs.k8s.io/yaml.Marshal` of the config (ends with a newline). */
export function marshalTproxyConfig(cfg: JsonObject): string {
  const lines: string[] = [];
  emit(marshalShape(cfg), '', lines);
  return `${lines.join('\n')}\n`;
}
