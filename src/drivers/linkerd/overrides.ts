/**
 * Per-pod configuration: the `config.linkerd.io/*` annotations of the namespace, the configured override
 * annotations and the pod template, applied onto the values (Linkerd `ApplyAnnotationOverrides` and
 * `MergeAdditionalEnv`, pkg/inject/inject.go). Linkerd ignores a value it cannot parse and logs a warning; so
 * does this module, returning the warning for the workload's results.
 */
import { isJsonObject, setOwn } from '../../json.ts';
import type { JsonObject } from '../../model.ts';
import {
  atoi,
  type GoQuantity,
  parseBool,
  parseDuration,
  goParseFloat,
  parseInt as goParseInt,
  parseQuantity,
  parseUint,
  scaledValue,
} from '../go-parse.ts';
import { A, INJECT_ANNOTATION } from './annotations.ts';
import type { LinkerdValues } from './values.ts';
import { defined } from '../../checked.ts';

/** Go `time.ParseDuration` (../go-parse.ts) in seconds, or undefined (e.g. `1m30s`, `100ms`, `2h`). */
export function parseGoDuration(s: string): number | undefined {
  const d = parseDuration(s);
  return d.ok ? Number(d.value) / 1e9 : undefined;
}

/** A Kubernetes quantity (`resource.ParseQuantity`, ../go-parse.ts), or undefined when Go refuses it. */
export function readQuantity(s: string): GoQuantity | undefined {
  const q = parseQuantity(s);
  return q.ok ? q.value : undefined;
}

/**
 * Linkerd `ToWholeCPUCores` (pkg/inject/inject.go): `q.RoundUp(0)` then `q.AsInt64()`, whole cores rounded away
 * from zero; a quantity Go holds as `inf.Dec` (more than 18 digits, finer than 10^-9) has no int64, and Linkerd
 * logs `Could not parse cores` and sets 0.
 */
function wholeCores(q: GoQuantity): { cores: number; error?: string } {
  const cores = scaledValue(q, 0);
  if (!q.int64 || cores > (1n << 63n) - 1n || cores < -(1n << 63n)) return { cores: 0, error: 'Could not parse cores' };
  return { cores: Number(scaledValue(q, 0)) };
}

/** Go `strconv.ParseBool` (../go-parse.ts), or undefined. */
function parseGoBool(s: string): boolean | undefined {
  const b = parseBool(s);
  return b.ok ? b.value : undefined;
}

/** Go `strconv.ParseInt(s, 10, 32)` (../go-parse.ts), or undefined. */
function parseInt32(s: string): number | undefined {
  const n = goParseInt(s, 10, 32);
  return n.ok ? Number(n.value) : undefined;
}

/** Linkerd `ParsePortRange`'s bound (pkg/util/portrange.go): `strconv.Atoi`, then 0..65535; or undefined. */
function portBound(s: string | undefined): number | undefined {
  const n = s === undefined ? undefined : atoi(s);
  return n?.ok && n.value >= 0n && n.value <= 65535n ? Number(n.value) : undefined;
}

const INBOUND_POLICIES = [
  'all-unauthenticated',
  'all-authenticated',
  'cluster-unauthenticated',
  'cluster-authenticated',
  'deny',
  'audit',
];

/**
 * Linkerd `ParseContainerOpaquePorts` + `PortRange.ToString`: a comma-separated list of ports, ranges
 * (`8000-8010`) and container port names (resolved with `namedPorts`), rewritten as numbers. Invalid entries
 * are dropped with a warning, as Linkerd does.
 */
export function resolveOpaquePorts(list: string, namedPorts: Map<string, number>, warnings: string[]): string {
  const out: string[] = [];
  for (const raw of list
    .replace(/,$/, '')
    .split(',')
    .map((p) => p.trim())) {
    const named = namedPorts.get(raw);
    if (named !== undefined) {
      out.push(String(named));
      continue;
    }
    const bounds = raw.split('-');
    const [lo, hi] = [portBound(bounds[0]), portBound(bounds.length === 2 ? bounds[1] : bounds[0])];
    if (bounds.length > 2 || lo === undefined || hi === undefined || hi < lo) {
      warnings.push(
        `${A.opaquePorts}: "${raw}" is neither a port, a port range nor a container port name; Linkerd ignores it`,
      );
      continue;
    }
    out.push(lo === hi ? String(lo) : `${lo}-${hi}`);
  }
  return out.join(',');
}

/**
 * The annotations that configure one pod, lowest precedence first: the namespace's `config.*linkerd.io/*`
 * annotations (and its `linkerd.io/inject`, `AppendNamespaceAnnotations`), the configured override
 * annotations, then the pod template's own annotations.
 */
export function effectiveAnnotations(
  ns: Record<string, string>,
  overrides: Record<string, string>,
  pod: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ns))
    if (k === INJECT_ANNOTATION || /^config\.(alpha\.|beta\.)?linkerd\.io\//.test(k)) setOwn(out, k, v);
  return { ...out, ...overrides, ...pod };
}

/**
 * Typed readers of the override annotations, one per kind of value Linkerd parses in
 * `ApplyAnnotationOverrides` (pkg/inject/inject.go). Each `set`s the parsed value when the annotation is
 * present; a value Linkerd cannot parse is left out and pushed to `warnings` instead.
 */
interface AnnotationReader {
  /** Whether the annotation `k` is set (an empty value counts). */
  has(k: string): boolean;
  /** The raw value of `k` (only after `has(k)`). */
  v(k: string): string;
  /** Records that Linkerd ignores the value of `k` because it `why` (e.g. "is not an integer"). */
  ignored(k: string, why: string): void;
  /** The value as is. */
  str(k: string, set: (s: string) => void): void;
  /** Go `strconv.ParseInt(s, 10, 32)`. */
  int(k: string, set: (n: number) => void): void;
  /** Go `strconv.ParseBool`. */
  bool(k: string, set: (b: boolean) => void): void;
  /** `enabled` / `disabled`. */
  enabled(k: string, set: (b: boolean) => void): void;
  /** Go `time.ParseDuration`, written back truncated as `<n>ms` or `<n>s`. */
  duration(k: string, unit: 'ms' | 's', set: (s: string) => void): void;
  /** `resource.ParseQuantity`: the raw value and its number of base units. */
  quantity(k: string, set: (s: string, q: GoQuantity) => void): void;
}

/** The `AnnotationReader` of the annotations `ann`, pushing its warnings to `warnings`. */
function annotationReader(ann: Record<string, string>, warnings: string[]): AnnotationReader {
  const has = (k: string) => Object.hasOwn(ann, k);
  const v = (k: string) => defined(ann[k], `annotation ${k}`);
  const ignored = (k: string, why: string) => {
    warnings.push(`annotation ${k}: "${v(k)}" ${why}; Linkerd ignores it`);
  };
  /** Reads `k` with `parse`; undefined is an ignored value (`why`). */
  const parsed = <T>(k: string, parse: (s: string) => T | undefined, why: string, set: (t: T) => void) => {
    if (!has(k)) return;
    const t = parse(v(k));
    if (t === undefined) ignored(k, why);
    else set(t);
  };
  return {
    has,
    v,
    ignored,
    str: (k, set) => {
      if (has(k)) set(v(k));
    },
    int: (k, set) => parsed(k, parseInt32, 'is not an integer', set),
    bool: (k, set) => parsed(k, parseGoBool, 'is not a boolean', set),
    enabled: (k, set) =>
      parsed(
        k,
        (s) => (s === 'enabled' || s === 'disabled' ? s === 'enabled' : undefined),
        'is neither enabled nor disabled',
        set,
      ),
    duration: (k, unit, set) =>
      parsed(k, parseGoDuration, 'is not a duration (e.g. 100ms, 2s)', (secs) =>
        set(unit === 'ms' ? `${Math.trunc(secs * 1000)}ms` : `${Math.trunc(secs)}s`),
      ),
    quantity: (k, set) => parsed(k, readQuantity, 'is not a Kubernetes quantity', (q) => set(v(k), q)),
  };
}

/**
 * Applies the override annotations to `values` in place (Linkerd `ApplyAnnotationOverrides`): images,
 * ports, log settings, timeouts (Go durations, rewritten as `<n>ms` / `<n>s` like Linkerd), resources (CPU
 * requests/limits also set the proxy's worker counts), uid/gid, skip/opaque ports, default inbound policy,
 * access log, native sidecar (GA key over beta over alpha), await, debug image, additional env (namespace
 * then pod, merged by name). Returns a warning for every value Linkerd would ignore.
 * @param nsAnnotations the namespace's annotations (for `proxy-additional-env`, merged before the pod's)
 * @param namedPorts container port names of the pod (for `opaque-ports`)
 */
export function applyOverrides(
  values: LinkerdValues,
  ann: Record<string, string>,
  nsAnnotations: Record<string, string>,
  podAnnotations: Record<string, string>,
  namedPorts: Map<string, number>,
): string[] {
  const warnings: string[] = [];
  const r = annotationReader(ann, warnings);
  if (ann[INJECT_ANNOTATION] === 'ingress') values.proxy.isIngress = true;
  applyProxyOverrides(r, values.proxy);
  applyResourceOverrides(r, values.proxy);
  applyPodOverrides(r, values, namedPorts, warnings);
  mergeAdditionalEnv(values.proxy, nsAnnotations, podAnnotations, warnings);
  return warnings;
}

/**
 * The proxy's images, ports, shutdown endpoint, logs, identity requirement, timeouts, gateway mode,
 * wait-before-exit and native sidecar (Linkerd `ApplyAnnotationOverrides`, first part).
 */
function applyProxyOverrides(r: AnnotationReader, p: LinkerdValues['proxy']): void {
  r.str(A.proxyImage, (s) => (p.image.name = s));
  r.str(A.proxyVersion, (s) => (p.image.version = s));
  r.str(A.imagePullPolicy, (s) => (p.image.pullPolicy = s));
  r.int(A.controlPort, (n) => (p.ports.control = n));
  r.int(A.inboundPort, (n) => (p.ports.inbound = n));
  r.int(A.adminPort, (n) => (p.ports.admin = n));
  r.int(A.outboundPort, (n) => (p.ports.outbound = n));
  r.str(A.podInboundPorts, (s) => (p.podInboundPorts = s));
  r.enabled(A.adminShutdown, (b) => (p.enableShutdownEndpoint = b));
  r.str(A.logLevel, (s) => (p.logLevel = s));
  r.str(A.logHttpHeaders, (s) => (p.logHTTPHeaders = s));
  r.str(A.logFormat, (s) => (p.logFormat = s));
  r.str(A.requireIdentity, (s) => (p.requireIdentityOnInboundPorts = s));
  r.bool(A.hostnameLabels, (b) => (p.hostnameLabels = b));
  r.duration(A.outboundConnectTimeout, 'ms', (s) => (p.outboundConnectTimeout = s));
  r.duration(A.inboundConnectTimeout, 'ms', (s) => (p.inboundConnectTimeout = s));
  r.duration(A.outboundDiscoveryTimeout, 's', (s) => (p.outboundDiscoveryCacheUnusedTimeout = s));
  r.duration(A.inboundDiscoveryTimeout, 's', (s) => (p.inboundDiscoveryCacheUnusedTimeout = s));
  r.bool(A.disableOutboundDetectTimeout, (b) => (p.disableOutboundProtocolDetectTimeout = b));
  r.bool(A.disableInboundDetectTimeout, (b) => (p.disableInboundProtocolDetectTimeout = b));
  r.duration(A.shutdownGracePeriod, 'ms', (s) => (p.shutdownGracePeriod = s));
  r.bool(A.enableGateway, (b) => (p.isGateway = b));
  if (r.has(A.waitBeforeExitSeconds)) {
    // Linkerd: strconv.ParseUint(override, 10, 64), else a warning that a uint64 is expected.
    const wait = parseUint(r.v(A.waitBeforeExitSeconds), 10, 64);
    if (wait.ok) p.waitBeforeExitSeconds = Number(wait.value);
    else r.ignored(A.waitBeforeExitSeconds, 'is not a uint64');
  }
  const nativeKey = [A.nativeSidecar, A.nativeSidecarBeta, A.nativeSidecarAlpha].find(r.has);
  if (nativeKey) r.bool(nativeKey, (b) => (p.nativeSidecar = b));
}

/**
 * The proxy's resources (Linkerd `ApplyAnnotationOverrides`): CPU request and limit also set the minimum and
 * maximum worker counts (`ToWholeCPUCores`); the CPU ratio limit must lie strictly between 0 and 1.
 */
function applyResourceOverrides(r: AnnotationReader, p: LinkerdValues['proxy']): void {
  r.quantity(A.cpuRequest, (s, q) => {
    p.resources.cpu.request = s;
    const n = wholeCores(q);
    if (n.error) r.ignored(A.cpuRequest, `gives no whole number of cores (${n.error}): the minimum worker count is 0`);
    p.workers.minimum = n.cores;
  });
  r.quantity(A.cpuLimit, (s, q) => {
    p.resources.cpu.limit = s;
    const n = wholeCores(q);
    if (n.error) r.ignored(A.cpuLimit, `gives no whole number of cores (${n.error}): the maximum worker count is 0`);
    p.workers.maximum = n.cores;
  });
  if (r.has(A.cpuRatioLimit)) {
    // Linkerd: strconv.ParseFloat(override, 64), then 0.0 < ratio < 1.0 (NaN passes Linkerd's two comparisons; it
    // cannot be written into the proxy's values, so it is refused here with the same warning).
    const ratio = goParseFloat(r.v(A.cpuRatioLimit), 64);
    if (!ratio.ok) r.ignored(A.cpuRatioLimit, 'is not a number');
    else if (!(ratio.value > 0 && ratio.value < 1)) r.ignored(A.cpuRatioLimit, 'is not between 0.0 and 1.0');
    else p.workers.maximumCPURatio = ratio.value;
  }
  r.quantity(A.memoryRequest, (s) => (p.resources.memory.request = s));
  r.quantity(A.memoryLimit, (s) => (p.resources.memory.limit = s));
  r.quantity(A.ephemeralRequest, (s) => (p.resources['ephemeral-storage'].request = s));
  r.quantity(A.ephemeralLimit, (s) => (p.resources['ephemeral-storage'].limit = s));
}

/**
 * uid/gid, external profiles, the proxy-init skip ports and subnets, opaque ports (named ports resolved with
 * `namedPorts`), the debug image, await, the default inbound policy and the access log (Linkerd
 * `ApplyAnnotationOverrides`, last part).
 */
function applyPodOverrides(
  r: AnnotationReader,
  values: LinkerdValues,
  namedPorts: Map<string, number>,
  warnings: string[],
): void {
  const p = values.proxy;
  r.int(A.uid, (n) => (p.uid = n));
  r.int(A.gid, (n) => (p.gid = n));
  r.bool(A.externalProfiles, (b) => (p.enableExternalProfiles = b));
  r.str(A.skipInboundPorts, (s) => (values.proxyInit.ignoreInboundPorts = s));
  r.str(A.skipOutboundPorts, (s) => (values.proxyInit.ignoreOutboundPorts = s));
  r.str(A.opaquePorts, (s) => (p.opaquePorts = resolveOpaquePorts(s, namedPorts, warnings)));
  r.str(A.debugImage, (s) => (values.debugImage.name = s));
  r.str(A.debugImageVersion, (s) => (values.debugImage.version = s));
  r.str(A.debugImagePullPolicy, (s) => (values.debugImage.pullPolicy = s));
  r.enabled(A.await, (b) => (p.await = b));
  if (r.has(A.defaultInboundPolicy)) {
    if (INBOUND_POLICIES.includes(r.v(A.defaultInboundPolicy))) p.defaultInboundPolicy = r.v(A.defaultInboundPolicy);
    else r.ignored(A.defaultInboundPolicy, `is not one of ${INBOUND_POLICIES.join(', ')}`);
  }
  r.str(A.skipSubnets, (s) => (values.proxyInit.skipSubnets = s));
  r.str(A.accessLog, (s) => (p.accessLog = s));
}

/**
 * Linkerd `MergeAdditionalEnv`: the `proxy-additional-env` JSON lists of the namespace, then of the pod,
 * merged into `p.additionalEnv` by name (a later entry replaces an earlier one in place). A value that is
 * not a JSON list of EnvVar objects is ignored with a warning.
 */
function mergeAdditionalEnv(
  p: LinkerdValues['proxy'],
  nsAnnotations: Record<string, string>,
  podAnnotations: Record<string, string>,
  warnings: string[],
): void {
  for (const [source, where] of [
    [nsAnnotations, 'namespace'],
    [podAnnotations, 'pod'],
  ] as const) {
    const raw = source[A.additionalEnv];
    if (raw === undefined || raw === '') continue;
    const env = parseEnvList(raw);
    if (!env) {
      warnings.push(`${where} annotation ${A.additionalEnv} is not a JSON list of EnvVar objects; Linkerd ignores it`);
      continue;
    }
    for (const e of env) {
      const i = p.additionalEnv.findIndex((x) => x.name === e.name);
      if (i >= 0) p.additionalEnv[i] = e;
      else p.additionalEnv.push(e);
    }
  }
}

/** A JSON list of EnvVar objects (each with a string `name`), or undefined. */
function parseEnvList(raw: string): JsonObject[] | undefined {
  try {
    const v = JSON.parse(raw) as unknown;
    if (Array.isArray(v) && v.every((e) => isJsonObject(e) && typeof e.name === 'string')) return v as JsonObject[];
  } catch {
    // not JSON: reported by the caller
  }
  return undefined;
}
