/**
 * Kuma's virtual probes (kumahq/kuma pkg/plugins/runtime/k8s/probes at 348b6528): with the application
 * probe proxy on, every HTTP, TCP and gRPC probe of the app's containers (and of native sidecars placed after
 * kuma-sidecar) is rewritten to an HTTP GET on the proxy port that kuma-dp forwards to the real target:
 * `/<port><path>` (HTTP), `/tcp/<port>`, `/grpc/<port>`, the rest carried in `X-Kuma-Probes-*` headers. The
 * reverse (for uninject) reads the original back from that encoding.
 */
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { atoi } from '../go-parse.ts';
import { SIDECAR_CONTAINER } from './annotations.ts';

const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;
const H_TIMEOUT = 'X-Kuma-Probes-Timeout';
const H_HOST = 'X-Kuma-Probes-Host';
const H_SCHEME = 'X-Kuma-Probes-Scheme';
const H_GRPC_SERVICE = 'X-Kuma-Probes-GRPC-Service';

function list(spec: JsonObject, field: string): JsonObject[] {
  const v = spec[field];
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

/**
 * The containers whose probes Kuma proxies (`containersNeedingProbes`): init containers with
 * `restartPolicy: Always` that come after kuma-sidecar, and every container but kuma-sidecar. Live objects of `spec`.
 */
export function containersNeedingProbes(spec: JsonObject): JsonObject[] {
  const out: JsonObject[] = [];
  let afterSidecar = false;
  for (const c of list(spec, 'initContainers')) {
    if (c.name === SIDECAR_CONTAINER) {
      afterSidecar = true;
      continue;
    }
    if (afterSidecar && c.restartPolicy === 'Always') out.push(c);
  }
  for (const c of list(spec, 'containers')) if (c.name !== SIDECAR_CONTAINER) out.push(c);
  return out;
}

/** Go `intstr.IntValue()`: a number, a string's `strconv.Atoi` value, else 0 (the error ignored). */
function intValue(v: Json | undefined): number {
  if (typeof v === 'number') return Math.trunc(v);
  const n = typeof v === 'string' ? atoi(v) : undefined;
  return n?.ok ? Number(n.value) : 0;
}

/** The port a probe handler targets, a named port resolved from `ports`; undefined when unknown. */
function probePort(probe: JsonObject, ports: JsonObject[]): number | undefined {
  const handler = isJsonObject(probe.httpGet)
    ? probe.httpGet
    : isJsonObject(probe.tcpSocket)
      ? probe.tcpSocket
      : undefined;
  if (!handler) return isJsonObject(probe.grpc) ? intValue(probe.grpc.port) : undefined;
  const n = intValue(handler.port);
  if (n !== 0) return n;
  const named = ports.find((p) => typeof p.name === 'string' && p.name !== '' && p.name === String(handler.port));
  return named ? intValue(named.containerPort) : undefined;
}

/** The sorted distinct ports the pod's own probes target (Kuma `RealProbePorts`), excluded from inbound redirection when the probe proxy is off. */
export function realProbePorts(spec: JsonObject): number[] {
  const seen = new Set<number>();
  for (const c of containersNeedingProbes(spec)) {
    for (const k of PROBES) {
      const p = c[k];
      if (!isJsonObject(p)) continue;
      const port = probePort(p, list(c, 'ports'));
      if (port !== undefined) seen.add(port);
    }
  }
  return [...seen].sort((a, b) => a - b);
}

function reserved(virtual: number): InjectError {
  return new InjectError(
    `cannot override Pod's probes. Port for probe cannot be set to ${virtual}. It is reserved for the dataplane that will serve pods without mTLS.`,
  );
}

/** The virtual HTTP GET for one probe handler (Kuma `ToVirtual`), or undefined for an exec probe. */
function toVirtual(probe: JsonObject, ports: JsonObject[], virtual: number): JsonObject | undefined {
  const headers: JsonObject[] = [];
  const timeout =
    typeof probe.timeoutSeconds === 'number' && probe.timeoutSeconds > 1
      ? { name: H_TIMEOUT, value: String(probe.timeoutSeconds) }
      : undefined;
  let path: string;
  let port: number;
  if (isJsonObject(probe.httpGet)) {
    const h = probe.httpGet;
    port = intValue(h.port) || (probePort(probe, ports) ?? 0);
    const p = typeof h.path === 'string' ? h.path : '';
    path = `/${port}${p.startsWith('/') ? p : `/${p}`}`;
    for (const x of Array.isArray(h.httpHeaders) ? h.httpHeaders.filter(isJsonObject) : [])
      headers.push(x.name === 'Host' ? { name: H_HOST, value: x.value ?? '' } : x);
    if (typeof h.scheme === 'string' && h.scheme !== '' && h.scheme !== 'HTTP')
      headers.push({ name: H_SCHEME, value: h.scheme });
    if (timeout) headers.push(timeout);
  } else if (isJsonObject(probe.tcpSocket)) {
    port = intValue(probe.tcpSocket.port) || (probePort(probe, ports) ?? 0);
    path = `/tcp/${port}`;
    if (timeout) headers.push(timeout);
  } else if (isJsonObject(probe.grpc)) {
    port = intValue(probe.grpc.port);
    path = `/grpc/${port}`;
    if (timeout) headers.push(timeout);
    if (typeof probe.grpc.service === 'string' && probe.grpc.service !== '')
      headers.push({ name: H_GRPC_SERVICE, value: probe.grpc.service });
  } else {
    return undefined;
  }
  if (port === virtual) throw reserved(virtual);
  return { path, port: virtual, ...(headers.length > 0 ? { httpHeaders: headers } : {}) };
}

/**
 * Rewrites the probes of `spec` to the probe proxy on `virtual` (Kuma `SetupAppProbeProxies`); 0 leaves them.
 * Mutates `spec`. Key order of a rewritten probe: the handler takes the old handler's place.
 * @throws InjectError when a probe targets the proxy port itself
 */
export function setupAppProbeProxies(spec: JsonObject, virtual: number): void {
  if (virtual === 0) return;
  for (const c of containersNeedingProbes(spec)) {
    for (const k of PROBES) {
      const p = c[k];
      if (!isJsonObject(p)) continue;
      const httpGet = toVirtual(p, list(c, 'ports'), virtual);
      if (!httpGet) continue;
      c[k] = Object.fromEntries(
        Object.entries(p).flatMap(([key, v]): Array<[string, Json]> => {
          if (key === 'httpGet' || key === 'tcpSocket' || key === 'grpc') return [['httpGet', httpGet]];
          return [[key, v]];
        }),
      );
    }
  }
}

/** The original handler encoded in a virtual HTTP GET on `virtual`: `[field, handler]`, or undefined when it is not one. */
function fromVirtual(
  h: JsonObject,
  timeoutSeconds: Json | undefined,
  virtual: number,
): [string, JsonObject] | undefined {
  if (intValue(h.port) !== virtual || typeof h.path !== 'string') return undefined;
  const all = Array.isArray(h.httpHeaders) ? h.httpHeaders.filter(isJsonObject) : [];
  const value = (name: string) => all.find((x) => x.name === name)?.value;
  const own = all.filter(
    (x) =>
      !(x.name === H_TIMEOUT && x.value === String(timeoutSeconds)) && x.name !== H_SCHEME && x.name !== H_GRPC_SERVICE,
  );
  const tcp = /^\/tcp\/([0-9]+)$/.exec(h.path);
  if (tcp) return ['tcpSocket', { port: Number(tcp[1]) }];
  const grpc = /^\/grpc\/([0-9]+)$/.exec(h.path);
  if (grpc) {
    const service = value(H_GRPC_SERVICE);
    return ['grpc', { port: Number(grpc[1]), ...(typeof service === 'string' ? { service } : {}) }];
  }
  const http = /^\/([0-9]+)(\/.*)$/s.exec(h.path);
  if (!http) return undefined;
  const scheme = value(H_SCHEME);
  const headers = own.map((x) => (x.name === H_HOST ? { name: 'Host', value: x.value ?? '' } : x));
  return [
    'httpGet',
    {
      path: http[2]!,
      port: Number(http[1]),
      ...(typeof scheme === 'string' ? { scheme } : {}),
      ...(headers.length > 0 ? { httpHeaders: headers } : {}),
    },
  ];
}

/**
 * Puts back the probes Kuma rewrote to the probe proxy on `virtual` (uninject). A named port comes back as
 * the number Kuma resolved it to, an HTTP path without a leading `/` with one, and an HTTP probe's `host`
 * field (which Kuma drops) stays lost. Only probes in Kuma's encoding on `virtual` are touched (Kuma refuses a
 * pod whose own probe targets that port). Mutates `spec`.
 */
export function restoreAppProbes(spec: JsonObject, virtual: number): void {
  if (virtual === 0) return;
  // kuma-sidecar is already gone: every native sidecar may have been after it
  const natives = list(spec, 'initContainers').filter((c) => c.restartPolicy === 'Always');
  for (const c of [...natives, ...containersNeedingProbes(spec)]) {
    for (const k of PROBES) {
      const p = c[k];
      if (!isJsonObject(p) || !isJsonObject(p.httpGet)) continue;
      const original = fromVirtual(p.httpGet, p.timeoutSeconds, virtual);
      if (!original) continue;
      c[k] = Object.fromEntries(
        Object.entries(p).map(([key, v]): [string, Json] => (key === 'httpGet' ? original : [key, v])),
      );
    }
  }
}
