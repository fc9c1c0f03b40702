/**
 * The Kuma driver's config section `spec.kuma` (schema fragment: `./config.schema.json`):
 * - `controlPlaneConfig`: the kuma-cp configuration document the cluster runs (the `config.yaml` of
 *   ConfigMap `kuma-control-plane-config`), an object or its YAML text pasted as is, read over kuma-cp's
 *   defaults the way `kuma-cp run` reads it (`kuma_cp.DefaultConfig()`, then `config.Load`: objects and maps
 *   merge key by key, lists and scalars replace). Read from it: `runtime.kubernetes.injector`,
 *   `bootstrapServer.params.{adminPort,readinessPort,envoyAdminUnixSocket}`,
 *   `store.kubernetes.systemNamespace`, and for the default control-plane URL
 *   `runtime.kubernetes.controlPlaneServiceName` and `dpServer.port`;
 * - `controlPlane` (`url`, `caCert`), `transparentProxyConfig`, `meshes`, `containerPatches`: what the
 *   webhook reads from the cluster (its own URL, the CA file, the transparent proxy ConfigMap, Mesh and
 *   ContainerPatch objects).
 */
import { parseDocument, type Tags } from 'yaml';
import { quoteData } from '../../results/quote.ts';
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { isJsonObject, setOwn } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import type { DriverConfigInput, DriverConfigResult } from '../../contract/driver.ts';
import { KUMA_CP_DEFAULTS, TPROXY_DEFAULTS } from './defaults.ts';
import { formatGoDuration, parseGoDuration } from './units.ts';
import { decodeJsonBool, decodeJsonInt, decodeJsonIntList, type GoIntType } from '../go-parse-decode.ts';

/** Probe timings of kuma-sidecar (Go type `SidecarReadinessProbe` etc.; 0 = unset, omitted from the probe). */
export interface ProbeTimings {
  initialDelaySeconds: number;
  timeoutSeconds: number;
  periodSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

/** CPU and memory quantities as kuma-cp's config holds them (strings; a YAML number is read as its text). */
export interface CpuMemory {
  cpu: string;
  memory: string;
}

/** The injector section `runtime.kubernetes.injector` of kuma-cp's config (Go type `Injector`), typed. */
export interface InjectorConfig {
  cniEnabled: boolean;
  applicationProbeProxyPort: number;
  containerPatches: string[];
  sidecarContainer: {
    image: string;
    uid: number;
    gid: number;
    /** `drainTime` in nanoseconds. */
    drainTime: number;
    envVars: Record<string, string>;
    readinessProbe: ProbeTimings;
    livenessProbe: ProbeTimings;
    startupProbe: ProbeTimings;
    resources: { requests: CpuMemory; limits: CpuMemory };
    redirectPortInbound: number;
    redirectPortOutbound: number;
    ipFamilyMode: string;
    waitForDataplaneReady: boolean;
  };
  initContainer: { image: string; resources: { requests: CpuMemory; limits: CpuMemory } };
  validationContainer: { resources: { requests: CpuMemory; limits: CpuMemory } };
  sidecarTraffic: {
    excludeInboundPorts: number[];
    excludeOutboundPorts: number[];
    excludeInboundIPs: string[];
    excludeOutboundIPs: string[];
  };
  exceptions: { labels: Record<string, string> };
  builtinDNS: { enabled: boolean; port: number };
  transparentProxyConfigMap: string;
  otelPipeEnabled: boolean;
  spire: { enabled: boolean; mountPath: string };
}

/** One ContainerPatch object's spec: JSON Patch operations whose `value` is JSON text. */
export interface ContainerPatchSpec {
  sidecarPatch: PatchOp[];
  initPatch: PatchOp[];
}

/** A JSON Patch operation of a ContainerPatch (`JsonPatchBlock`): `value` is JSON text (absent for remove). */
export interface PatchOp {
  op: string;
  path: string;
  from?: string;
  value?: string;
}

/** Kuma settings (`spec.kuma`), validated and defaulted. */
export interface KumaSettings {
  injector: InjectorConfig;
  /** `bootstrapServer.params.adminPort` (default 9901). */
  adminPort: number;
  /** `bootstrapServer.params.readinessPort` (default 9902). */
  readinessPort: number;
  /** `bootstrapServer.params.envoyAdminUnixSocket` (default true: probes go to the readiness port). */
  envoyAdminUnixSocket: boolean;
  /** `store.kubernetes.systemNamespace` (default kuma-system). */
  systemNamespace: string;
  /** `KUMA_CONTROL_PLANE_URL` of kuma-sidecar. */
  controlPlaneUrl: string;
  /** `KUMA_CONTROL_PLANE_CA_CERT` of kuma-sidecar (PEM; empty when not given). */
  caCert: string;
  /** The base transparent proxy config: Kuma's `DefaultConfig()` with `transparentProxyConfig` loaded over it (Go json names). */
  tproxyBase: JsonObject;
  /** Mesh objects by name; undefined when `meshes` is not configured (then the Pod's mesh is not checked). */
  meshes?: Record<string, JsonObject>;
  /** ContainerPatch objects (in the system namespace) by name. */
  containerPatches: Record<string, ContainerPatchSpec>;
  /** The section as loaded, for `fromInput` (./input.ts) to load again with a ConfigMap of the input. */
  source: DriverConfigInput;
}

/**
 * `source` loaded over `target` as Go's `json.Unmarshal` does into a filled struct: objects (structs and
 * maps) merge key by key, everything else (lists, scalars) replaces; `null` leaves the value. Returns a new value.
 */
export function loadOver(target: Json, source: Json): Json {
  if (source === null) return target;
  if (!isJsonObject(target) || !isJsonObject(source)) return structuredClone(source);
  const out: JsonObject = structuredClone(target);
  for (const [k, v] of Object.entries(source)) {
    const cur = Object.hasOwn(out, k) ? out[k] : undefined;
    setOwn(out, k, cur !== undefined ? loadOver(cur, v) : structuredClone(v));
  }
  return out;
}

/**
 * The YAML 1.1 scalars of go.yaml.in/yaml/v2, which `sigs.k8s.io/yaml` (v1.6, kuma-cp's `config.Load`) decodes with:
 * `yes`/`no`/`on`/`off`/`y`/`n` booleans, `0777` octal, `0b101`, `1_000`; not the 1.1 sexagesimal `1:30` or dates,
 * which it leaves as strings.
 */
const GO_YAML_V2 = {
  version: '1.1',
  customTags: (tags: Tags) =>
    tags.filter((t) => typeof t === 'string' || (t.format !== 'TIME' && t.tag !== 'tag:yaml.org,2002:timestamp')),
} as const;

/**
 * `value` as an object: itself, or the YAML (or JSON) text it holds (`goYaml`: read as kuma-cp reads its config and
 * the transparent proxy ConfigMap, `core_config.NewLoader`, see `GO_YAML_V2`). Pushes an issue and returns `{}` when
 * the text does not parse to an object; empty text is `{}`.
 */
export function objectOrYaml(value: unknown, path: string, issues: ConfigIssue[], goYaml = false): JsonObject {
  if (value === undefined || value === null) return {};
  if (isJsonObject<Json>(value)) return value;
  if (typeof value !== 'string') {
    issues.push({
      path,
      message: `${path} must be an object or YAML text; got ${Array.isArray(value) ? 'a list' : typeof value}`,
    });
    return {};
  }
  let parsed: unknown;
  try {
    const doc = parseDocument(value, { prettyErrors: false, ...(goYaml ? GO_YAML_V2 : {}) });
    const [error] = doc.errors;
    if (error) throw error;
    parsed = JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null));
  } catch (e) {
    issues.push({
      path,
      message: `${path} is text but not valid YAML: ${String((e as Error).message).split('\n')[0]}`,
    });
    return {};
  }
  if (parsed === null) return {};
  if (!isJsonObject<Json>(parsed)) {
    issues.push({
      path,
      message: `${path} must hold a YAML object; got ${Array.isArray(parsed) ? 'a list' : typeof parsed}`,
    });
    return {};
  }
  return parsed;
}

/** A reader of typed fields of a merged document, pushing an issue for a value of the wrong type. */
class Reader {
  constructor(
    private readonly root: JsonObject,
    private readonly base: string,
    private readonly issues: ConfigIssue[],
  ) {}

  private at(path: string): Json | undefined {
    let v: Json | undefined = this.root;
    for (const k of path.split('.')) v = isJsonObject(v) ? v[k] : undefined;
    return v;
  }

  private fail(path: string, what: string, v: Json | undefined): void {
    const p = `${this.base}.${path}`;
    this.issues.push({ path: p, message: `${p} must be ${what}; got ${quoteData(v)}` });
  }

  str(path: string): string {
    const v = this.at(path);
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v); // Kuma's loader reads a YAML number into a string field as its text
    if (v !== undefined && v !== null) this.fail(path, 'a string', v);
    return '';
  }

  /** Pushes Go's decoding error for the field at `path`. */
  private refuse(path: string, error: string): void {
    const p = `${this.base}.${path}`;
    this.issues.push({ path: p, message: `${p}: ${error}` });
  }

  /**
   * An integer field of Go type `type`, decoded as `config.Load` decodes it (sigs.k8s.io/yaml, then encoding/json:
   * a JSON number that is an integer in the type's range; a string is refused), then checked against `max` (Kuma's
   * `Validate` where `rule` gives its words, else what a pod can hold). Negative values are refused too. 0 when unset.
   */
  num(path: string, type: GoIntType, max: number, rule?: string): number {
    const v = this.at(path);
    const d = v === undefined ? undefined : decodeJsonInt(v, type, path);
    if (d === undefined) return 0;
    if (!d.ok) this.refuse(path, d.error);
    else if (d.value > max && rule !== undefined) this.refuse(path, rule);
    else if (d.value >= 0 && d.value <= max) return d.value;
    else this.fail(path, `a whole number from 0 to ${max}`, v ?? null);
    return 0;
  }

  /** A `bool` field, decoded as `config.Load` decodes it: only `true` and `false` (YAML 1.1 also `yes`, `on`...). */
  bool(path: string): boolean {
    const v = this.at(path);
    const d = v === undefined ? undefined : decodeJsonBool(v, path);
    if (d !== undefined && !d.ok) this.refuse(path, d.error);
    return d?.ok === true && d.value;
  }

  strings(path: string): string[] {
    const v = this.at(path);
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
    if (typeof v === 'string') return v.split(',').filter((x) => x !== '');
    if (v !== undefined && v !== null) this.fail(path, 'a list of strings', v);
    return [];
  }

  /** A `[]uint32` list of ports, decoded as `config.Load` decodes it (a list of numbers; each port at most 65535). */
  ports(path: string): number[] {
    const v = this.at(path);
    const d = v === undefined ? undefined : decodeJsonIntList(v, 'uint32', path);
    if (d === undefined) return [];
    if (!d.ok) this.refuse(path, d.error);
    else if (d.value.every((x) => x <= 65535)) return d.value;
    else this.fail(path, 'a list of port numbers', v ?? null);
    return [];
  }

  map(path: string): Record<string, string> {
    const v = this.at(path);
    if (isJsonObject(v))
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)]));
    if (v !== undefined && v !== null) this.fail(path, 'a map of strings', v);
    return {};
  }

  duration(path: string): number {
    const v = this.at(path);
    const ns = typeof v === 'string' ? parseGoDuration(v) : typeof v === 'number' ? v : undefined;
    if (ns !== undefined) return ns;
    this.fail(path, 'a Go duration such as 30s', v);
    return 0;
  }
}

function probe(r: Reader, p: string): ProbeTimings {
  return {
    initialDelaySeconds: r.num(`${p}.initialDelaySeconds`, 'int32', 0x7fffffff),
    timeoutSeconds: r.num(`${p}.timeoutSeconds`, 'int32', 0x7fffffff),
    periodSeconds: r.num(`${p}.periodSeconds`, 'int32', 0x7fffffff),
    successThreshold: r.num(`${p}.successThreshold`, 'int32', 0x7fffffff),
    failureThreshold: r.num(`${p}.failureThreshold`, 'int32', 0x7fffffff),
  };
}

function cpuMemory(r: Reader, p: string): { requests: CpuMemory; limits: CpuMemory } {
  return {
    requests: { cpu: r.str(`${p}.requests.cpu`), memory: r.str(`${p}.requests.memory`) },
    limits: { cpu: r.str(`${p}.limits.cpu`), memory: r.str(`${p}.limits.memory`) },
  };
}

/** The typed injector section of a merged kuma-cp config (`r` reads `runtime.kubernetes.injector.*`). */
function readInjector(r: Reader): InjectorConfig {
  const sc = 'sidecarContainer';
  return {
    cniEnabled: r.bool('cniEnabled'),
    applicationProbeProxyPort: r.num('applicationProbeProxyPort', 'uint32', 65535),
    containerPatches: r.strings('containerPatches'),
    sidecarContainer: {
      image: r.str(`${sc}.image`),
      uid: r.num(`${sc}.uid`, 'int64', Number.MAX_SAFE_INTEGER),
      gid: r.num(`${sc}.gid`, 'int64', Number.MAX_SAFE_INTEGER),
      drainTime: r.duration(`${sc}.drainTime`),
      envVars: r.map(`${sc}.envVars`),
      readinessProbe: probe(r, `${sc}.readinessProbe`),
      livenessProbe: probe(r, `${sc}.livenessProbe`),
      startupProbe: probe(r, `${sc}.startupProbe`),
      resources: cpuMemory(r, `${sc}.resources`),
      redirectPortInbound: r.num(
        `${sc}.redirectPortInbound`,
        'uint32',
        65535,
        '.RedirectPortInbound must be in the range [0, 65535]',
      ),
      redirectPortOutbound: r.num(
        `${sc}.redirectPortOutbound`,
        'uint32',
        65535,
        '.RedirectPortOutbound must be in the range [0, 65535]',
      ),
      ipFamilyMode: r.str(`${sc}.ipFamilyMode`),
      waitForDataplaneReady: r.bool(`${sc}.waitForDataplaneReady`),
    },
    initContainer: { image: r.str('initContainer.image'), resources: cpuMemory(r, 'initContainer.resources') },
    validationContainer: { resources: cpuMemory(r, 'validationContainer.resources') },
    sidecarTraffic: {
      excludeInboundPorts: r.ports('sidecarTraffic.excludeInboundPorts'),
      excludeOutboundPorts: r.ports('sidecarTraffic.excludeOutboundPorts'),
      excludeInboundIPs: r.strings('sidecarTraffic.excludeInboundIPs'),
      excludeOutboundIPs: r.strings('sidecarTraffic.excludeOutboundIPs'),
    },
    exceptions: { labels: r.map('exceptions.labels') },
    builtinDNS: { enabled: r.bool('builtinDNS.enabled'), port: r.num('builtinDNS.port', 'uint32', 65535) },
    transparentProxyConfigMap: r.str('transparentProxyConfigMap'),
    otelPipeEnabled: r.bool('otelPipeEnabled'),
    spire: { enabled: r.bool('spire.enabled'), mountPath: r.str('spire.mountPath') },
  };
}

/** `spec.kuma.containerPatches`: name → spec, each operation checked (op and path strings, value JSON text). */
function readPatches(raw: JsonObject, path: string, issues: ConfigIssue[]): Record<string, ContainerPatchSpec> {
  const out: Record<string, ContainerPatchSpec> = {};
  for (const [name, spec] of Object.entries(raw)) {
    const s = isJsonObject(spec) ? spec : {};
    const ops = (key: 'sidecarPatch' | 'initPatch'): PatchOp[] => {
      const list = s[key] ?? [];
      const p = `${path}.${name}.${key}`;
      if (!Array.isArray(list)) {
        issues.push({ path: p, message: `${p} must be a list of JSON Patch operations` });
        return [];
      }
      return list.flatMap((op, i) => {
        if (
          !isJsonObject(op) ||
          typeof op.op !== 'string' ||
          typeof op.path !== 'string' ||
          (op.value !== undefined && typeof op.value !== 'string')
        ) {
          issues.push({
            path: `${p}[${i}]`,
            message: `${p}[${i}] must have a string op and path, and value as JSON text (a string)`,
          });
          return [];
        }
        if (typeof op.value === 'string') {
          try {
            JSON.parse(op.value);
          } catch {
            issues.push({
              path: `${p}[${i}].value`,
              message: `${p}[${i}].value must be JSON text; got ${quoteData(op.value)}`,
            });
            return [];
          }
        }
        return [
          {
            op: op.op,
            path: op.path,
            ...(typeof op.from === 'string' ? { from: op.from } : {}),
            ...(typeof op.value === 'string' ? { value: op.value } : {}),
          },
        ];
      });
    };
    setOwn(out, name, { sidecarPatch: ops('sidecarPatch'), initPatch: ops('initPatch') });
  }
  return out;
}

/**
 * Loads `spec.kuma` (Kuma driver `loadConfig`). Kuma injects nothing without a `kuma.io/sidecar-injection`
 * label, so `policy` resolves to `disabled` unless the user set it. Checks: every YAML text parses to an
 * object, the injector's fields have their Go types, `sidecarContainer.ipFamilyMode` is dualstack or ipv4,
 * `transparentProxyConfig.ipFamilyMode` too, ContainerPatch operations are well-formed.
 */
export function loadKumaConfig(input: DriverConfigInput): DriverConfigResult<KumaSettings> {
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const at = (k: string) => `${input.path}.${k}`;
  const cp = loadOver(
    KUMA_CP_DEFAULTS,
    objectOrYaml(input.raw.controlPlaneConfig, at('controlPlaneConfig'), issues, true),
  ) as JsonObject;
  const r = new Reader(cp, at('controlPlaneConfig'), issues);
  const injector = readInjector(
    new Reader(
      (((cp.runtime as JsonObject).kubernetes as JsonObject).injector as JsonObject) ?? {},
      at('controlPlaneConfig.runtime.kubernetes.injector'),
      issues,
    ),
  );
  for (const [p, v] of [
    [
      'controlPlaneConfig.runtime.kubernetes.injector.sidecarContainer.ipFamilyMode',
      injector.sidecarContainer.ipFamilyMode,
    ],
  ] as const) {
    if (!['', 'dualstack', 'ipv4'].includes(v.toLowerCase()))
      issues.push({ path: at(p), message: `${at(p)} must be 'dualstack' or 'ipv4'; got ${quoteData(v)}` });
  }
  const systemNamespace = r.str('store.kubernetes.systemNamespace');
  const controlPlane = objectOrYaml(input.raw.controlPlane, at('controlPlane'), issues);
  const defaultUrl = `https://${r.str('runtime.kubernetes.controlPlaneServiceName')}.${systemNamespace}:${r.num('dpServer.port', 'int', 65535)}`;
  const tproxyBase = loadOver(
    TPROXY_DEFAULTS,
    objectOrYaml(input.raw.transparentProxyConfig, at('transparentProxyConfig'), issues, true),
  ) as JsonObject;
  const ipMode = tproxyBase.ipFamilyMode;
  if (typeof ipMode !== 'string' || !['', 'dualstack', 'ipv4'].includes(ipMode.toLowerCase())) {
    issues.push({
      path: at('transparentProxyConfig.ipFamilyMode'),
      message: `${at('transparentProxyConfig.ipFamilyMode')} must be 'dualstack' or 'ipv4'; got ${quoteData(ipMode)}`,
    });
  } else if (ipMode === '') tproxyBase.ipFamilyMode = 'dualstack';
  const retry = isJsonObject(tproxyBase.retry) ? tproxyBase.retry : {};
  const sleep = typeof retry.sleepBetweenRetries === 'string' ? parseGoDuration(retry.sleepBetweenRetries) : undefined;
  if (sleep === undefined)
    issues.push({
      path: at('transparentProxyConfig.retry.sleepBetweenRetries'),
      message: `${at('transparentProxyConfig.retry.sleepBetweenRetries')} must be a Go duration such as 2s`,
    });
  else retry.sleepBetweenRetries = formatGoDuration(sleep);
  const meshesRaw = input.raw.meshes === undefined ? undefined : objectOrYaml(input.raw.meshes, at('meshes'), issues);
  const settings: KumaSettings = {
    injector,
    adminPort: r.num('bootstrapServer.params.adminPort', 'uint32', 65535, 'AdminPort must be in the range [0, 65535]'),
    readinessPort: r.num(
      'bootstrapServer.params.readinessPort',
      'uint32',
      65535,
      'ReadinessPort must be in the range [0, 65535]',
    ),
    envoyAdminUnixSocket: r.bool('bootstrapServer.params.envoyAdminUnixSocket'),
    systemNamespace,
    controlPlaneUrl: typeof controlPlane.url === 'string' && controlPlane.url !== '' ? controlPlane.url : defaultUrl,
    caCert: typeof controlPlane.caCert === 'string' ? controlPlane.caCert : '',
    tproxyBase,
    ...(meshesRaw
      ? { meshes: Object.fromEntries(Object.entries(meshesRaw).map(([k, v]) => [k, isJsonObject(v) ? v : {}])) }
      : {}),
    containerPatches: readPatches(
      objectOrYaml(input.raw.containerPatches, at('containerPatches'), issues),
      at('containerPatches'),
      issues,
    ),
    source: input,
  };
  if (settings.caCert === '')
    warnings.push(
      `${at('controlPlane.caCert')} is not set: kuma-sidecar gets an empty KUMA_CONTROL_PLANE_CA_CERT (kuma-cp reads runtime.kubernetes.injector.caCertFile; give its PEM here)`,
    );
  return { settings, issues, warnings };
}
