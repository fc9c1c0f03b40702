/**
 * Application probe rewrite: kubelet probes and lifecycle hooks of the app containers are redirected to the
 * agent's status port (`/app-health/<c>/<readyz|livez|startupz>`, `/app-lifecycle/<c>/<prestopz|poststartz>`),
 * and the original actions go to the proxy env `ISTIO_KUBE_APP_PROBERS`. Istio `applyRewrite`,
 * `DumpAppProbers`, `patchRewriteProbe`, `mergeOrAppendProbers` (pkg/kube/inject/app_probe.go, webhook.go;
 * istio-injection.md §6.7).
 */
import { cloneJson, isJsonObject, owned, setOwn } from '../../json.ts';
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { declaredPorts, type PortRule, resolveNamedPort } from '../kit/ports.ts';
import { decodeGo, encodeGo, GO, GoJsonError, type GoJsonType } from '../go-json.ts';
import { STATUS_ANNOTATION } from './status.ts';
import {
  annotationsOf,
  type ContainerList,
  envOf,
  findSidecar,
  ownedListed,
  ownedSidecar,
  parseGoBool,
  PROXY_CONTAINER,
} from './pod-fields.ts';
import { atoiIgnoringError, toInt32 } from '../go-parse.ts';

/** Proxy env carrying the original probes. */
export const APP_PROBERS_ENV = 'ISTIO_KUBE_APP_PROBERS';
/** Pod annotation switching the rewrite (Go bool). */
export const REWRITE_PROBES_ANNOTATION = 'sidecar.istio.io/rewriteAppHTTPProbers';
/** Pod annotation overriding the agent status port. */
export const STATUS_PORT_ANNOTATION = 'status.sidecar.istio.io/port';

/** Istio `status.FormatProberURL`: the agent URLs of a container's probes and hooks. */
export function proberUrls(
  container: string,
): Record<'readyz' | 'livez' | 'startupz' | 'prestopz' | 'poststartz', string> {
  return {
    readyz: `/app-health/${container}/readyz`,
    livez: `/app-health/${container}/livez`,
    startupz: `/app-health/${container}/startupz`,
    prestopz: `/app-lifecycle/${container}/prestopz`,
    poststartz: `/app-lifecycle/${container}/poststartz`,
  };
}

/** Istio `ShouldRewriteAppHTTPProbers`: the annotation when it parses as a Go bool, else the values setting. */
export function shouldRewriteProbes(annos: Record<string, string>, valuesSetting: boolean): boolean {
  const a = annos[REWRITE_PROBES_ANNOTATION];
  const b = a === undefined ? undefined : parseGoBool(a);
  return b ?? valuesSetting;
}

/**
 * App containers in Istio's order for probers (`allContainers`): init containers, then containers, minus the
 * proxy; each with its list and its index there (for the field a problem names).
 */
function appContainers(spec: JsonObject): Array<[ContainerList, number, JsonObject]> {
  const out: Array<[ContainerList, number, JsonObject]> = [];
  for (const list of ['initContainers', 'containers'] as const) {
    const entries = spec[list];
    if (!Array.isArray(entries)) continue;
    entries.forEach((c, i) => {
      if (isJsonObject(c) && c.name !== PROXY_CONTAINER) out.push([list, i, c]);
    });
  }
  return out;
}

/**
 * How Istio resolves a probe's port (`ISTIO_PROBE_PORTS`; pkg/kube/inject/app_probe.go `DumpAppProbers`): a
 * number as is; a string port is only a name, looked up in a map of the container's named ports (so the last
 * port of a name wins); a name that matches none drops the prober. Go never reads a string port as a number.
 */
export const ISTIO_PROBE_PORTS: PortRule = {
  order: 'name-first',
  number: 'json-only',
  name: 'non-empty-string',
  declared: 'last-number',
};

const HTTP_HEADER = GO.struct('v1.HTTPHeader', [
  { json: 'name', type: GO.string },
  { json: 'value', type: GO.string },
]);
/** Kubernetes' probe actions as Go's structs declare them (k8s.io/api/core/v1 types.go): field order, `omitempty`. */
const ACTIONS = {
  httpGet: GO.struct('v1.HTTPGetAction', [
    { json: 'path', type: GO.string, omitEmpty: true },
    { json: 'port', type: GO.intOrString },
    { json: 'host', type: GO.string, omitEmpty: true },
    { json: 'scheme', type: GO.string, omitEmpty: true },
    { json: 'httpHeaders', type: GO.slice(HTTP_HEADER), omitEmpty: true },
  ]),
  tcpSocket: GO.struct('v1.TCPSocketAction', [
    { json: 'port', type: GO.intOrString },
    { json: 'host', type: GO.string, omitEmpty: true },
  ]),
  // `service` is a *string without omitempty: a probe that names no service is written `"service":null`
  grpc: GO.struct('v1.GRPCAction', [
    { json: 'port', type: GO.int32 },
    { json: 'service', type: GO.pointer(GO.string) },
  ]),
} as const;

/** Istio's `Prober` (pkg/kube/inject/app_probe.go), and `KubeAppProbers`, the map `ISTIO_KUBE_APP_PROBERS` holds. */
const PROBER = GO.struct('inject.Prober', [
  { json: 'httpGet', type: GO.pointer(ACTIONS.httpGet), omitEmpty: true },
  { json: 'tcpSocket', type: GO.pointer(ACTIONS.tcpSocket), omitEmpty: true },
  { json: 'grpc', type: GO.pointer(ACTIONS.grpc), omitEmpty: true },
  { json: 'timeoutSeconds', type: GO.int32, omitEmpty: true },
]);
const KUBE_APP_PROBERS = GO.map(GO.pointer(PROBER));

/**
 * `v`, the field at `at` (`spec.containers[0].readinessProbe.httpGet`), as Go's decoder reads it into type `t`: a
 * struct's fields in Go's order, unknown fields left out, absent ones zero.
 * @throws InjectError naming the field where Go's decoder refuses the value (`path: 5`): the webhook never sees such a pod
 */
function goDecoded(v: Json, t: GoJsonType, at: string): Json {
  try {
    return decodeGo(v, t);
  } catch (e) {
    if (!(e instanceof GoJsonError)) throw e;
    let field = at;
    for (const p of e.path) field += typeof p === 'number' ? `[${p}]` : `.${p}`;
    throw new InjectError(`${field}: ${e.message} (Istio's injector reads the pod with Go's decoder)`, { field });
  }
}

/**
 * The prober entry of a probe or hook at `at` (Istio `kubeProbeToInternalProber`, `updateNamedPort`): its first
 * action of `httpGet`, `tcpSocket`, `grpc` (probes only) in Go's form, the port of an `httpGet` or `tcpSocket`
 * resolved, and a probe's non-zero `timeoutSeconds`; undefined for none, for a port name no container port
 * declares, or for an action already pointing at the status port.
 * @throws InjectError where Go's decoder refuses an action's field
 */
function proberOf(
  handler: Json | undefined,
  container: JsonObject,
  statusPort: number,
  isProbe: boolean,
  at: string,
): JsonObject | undefined {
  if (!isJsonObject(handler)) return undefined;
  const seconds = isProbe ? goDecoded(handler.timeoutSeconds ?? null, GO.int32, `${at}.timeoutSeconds`) : 0;
  const withTimeout = (o: JsonObject): JsonObject => (seconds === 0 ? o : { ...o, timeoutSeconds: seconds });
  const kind = isJsonObject(handler.httpGet)
    ? 'httpGet'
    : isJsonObject(handler.tcpSocket)
      ? 'tcpSocket'
      : isProbe && isJsonObject(handler.grpc)
        ? 'grpc'
        : undefined;
  if (!kind) return undefined;
  const action = goDecoded(handler[kind] as JsonObject, ACTIONS[kind], `${at}.${kind}`) as JsonObject;
  if (kind === 'grpc') return withTimeout({ grpc: action }); // Istio leaves a gRPC port as it is
  const port = resolveNamedPort(action.port, declaredPorts(container), ISTIO_PROBE_PORTS);
  if (port === undefined) return undefined;
  if (typeof action.port === 'number' && port === statusPort) return undefined; // already rewritten
  action.port = port;
  return withTimeout({ [kind]: action });
}

/** The probes of a container with their agent URL's last segment (Istio `status.FormatProberURL`). */
const PROBES = [
  ['readinessProbe', 'readyz'],
  ['livenessProbe', 'livez'],
  ['startupProbe', 'startupz'],
] as const;

/**
 * Istio `DumpAppProbers`: the JSON map (sorted keys) of every app container's readiness/liveness/startup probe
 * (httpGet, tcpSocket, grpc) and preStop/postStart hook (httpGet, tcpSocket), keyed by agent URL (`proberUrls`; a
 * later container of the same name wins); `''` when there are none. Written as `JSON.stringify` writes a map of
 * those keys in sorted order (no URL is an array index, which a map would list first), without building the map.
 */
export function dumpAppProbers(spec: JsonObject, statusPort: number): string {
  const out = new Map<string, JsonObject>();
  const add = (url: string, v: JsonObject | undefined): void => {
    if (v) out.set(url, v);
  };
  for (const [list, i, c] of appContainers(spec)) {
    const name = typeof c.name === 'string' ? c.name : '';
    const at = `spec.${list}[${i}]`;
    for (const [field, segment] of PROBES) {
      // (proberOf answers undefined for a handler that is not a map: no URL is made for it)
      if (isJsonObject(c[field]))
        add(`/app-health/${name}/${segment}`, proberOf(c[field], c, statusPort, true, `${at}.${field}`));
    }
    if (isJsonObject(c.lifecycle)) {
      const { preStop, postStart } = c.lifecycle;
      const hook = (h: Json | undefined, which: string): JsonObject | undefined =>
        proberOf(h, c, statusPort, false, `${at}.lifecycle.${which}`);
      if (isJsonObject(preStop)) add(`/app-lifecycle/${name}/prestopz`, hook(preStop, 'preStop'));
      if (isJsonObject(postStart)) add(`/app-lifecycle/${name}/poststartz`, hook(postStart, 'postStart'));
    }
  }
  if (out.size === 0) return '';
  return encodeGo(Object.fromEntries(out), KUBE_APP_PROBERS);
}

/** `rewriteHTTPGetAction` on a probe or hook: httpGet/tcpSocket/grpc → httpGet {path: url, port}, HTTPS → HTTP. */
function convertHandler(
  handler: Json | undefined,
  url: string,
  port: number,
  isProbe: boolean,
): JsonObject | undefined {
  if (!isJsonObject(handler)) return undefined;
  const h = cloneJson(handler);
  if (isJsonObject(h.httpGet)) {
    h.httpGet.port = port;
    h.httpGet.path = url;
    if (h.httpGet.scheme === 'HTTPS') h.httpGet.scheme = 'HTTP';
    return h;
  }
  const other = isJsonObject(h.tcpSocket) ? 'tcpSocket' : isProbe && isJsonObject(h.grpc) ? 'grpc' : undefined;
  if (!other) return undefined;
  delete h[other];
  h.httpGet = { path: url, port };
  return h;
}

/**
 * Istio `patchRewriteProbe`: rewrites the probes and hooks of every non-proxy container and init container. A
 * container is written into only where it has something to rewrite (taken with `ownedListed` first: `spec`'s
 * container lists must be writable, `ownPodFrame`).
 */
export function rewriteProbes(spec: JsonObject, statusPort: number): void {
  for (const [, , listed] of appContainers(spec)) {
    let c = listed;
    const name = typeof c.name === 'string' ? c.name : '';
    for (const [field, segment] of PROBES) {
      // (convertHandler answers undefined for a handler that is not a map: no URL is made for it)
      const p = isJsonObject(c[field])
        ? convertHandler(c[field], `/app-health/${name}/${segment}`, statusPort, true)
        : undefined;
      if (p) {
        c = ownedListed(spec, c);
        c[field] = p;
      }
    }
    if (isJsonObject(c.lifecycle)) {
      const pre = convertHandler(c.lifecycle.preStop, `/app-lifecycle/${name}/prestopz`, statusPort, false);
      const post = convertHandler(c.lifecycle.postStart, `/app-lifecycle/${name}/poststartz`, statusPort, false);
      if (pre || post) c = ownedListed(spec, c);
      const lifecycle = pre || post ? owned<JsonObject>(c, 'lifecycle') : undefined;
      if (lifecycle && pre) lifecycle.preStop = pre;
      if (lifecycle && post) lifecycle.postStart = post;
    }
  }
}

/**
 * Istio `mergeOrAppendProbers` (pkg/kube/inject/webhook.go): appends `ISTIO_KUBE_APP_PROBERS`, or, when the pod
 * was injected before and the proxy already has it, decodes both maps with Go's `json.Unmarshal` into
 * `KubeAppProbers` (keys matched as Go matches them, unknown fields dropped), merges them (previous entries win)
 * and writes the result in place with `json.Marshal`. Where either fails to decode, Istio logs it and leaves the
 * env as it was; so does this.
 */
export function mergeOrAppendProbers(previouslyInjected: boolean, env: JsonObject[], probers: string): void {
  if (previouslyInjected) {
    const i = env.findIndex((e) => e.name === APP_PROBERS_ENV);
    const found = env[i];
    if (found) {
      const decode = (text: string): JsonObject | null =>
        decodeGo(JSON.parse(text) as Json, KUBE_APP_PROBERS, { caseInsensitive: true }) as JsonObject | null;
      let old: JsonObject | null;
      let next: JsonObject | null;
      try {
        old = decode(typeof found.value === 'string' ? found.value : '');
        next = decode(probers);
      } catch {
        return;
      }
      const merged: JsonObject = { ...next };
      // (a JSON null decodes to a nil map, which Go ranges over as empty)
      for (const [k, v] of Object.entries(old ?? {})) setOwn(merged, k, v);
      env[i] = { name: APP_PROBERS_ENV, value: encodeGo(merged, KUBE_APP_PROBERS) };
      return;
    }
  }
  env.push({ name: APP_PROBERS_ENV, value: probers });
}

/**
 * Istio `applyRewrite`: when the pod has an `istio-proxy` container and rewriting is on
 * ({@link shouldRewriteProbes}), adds/merges `ISTIO_KUBE_APP_PROBERS` (probers dumped against the mesh status
 * port) and rewrites the app probes to the status port (annotation `status.sidecar.istio.io/port`, else the
 * mesh status port).
 */
export function applyRewrite(pod: PodTemplate, meshStatusPort: number, valuesRewrite: boolean): void {
  const sidecar = findSidecar(pod.spec);
  if (!sidecar) return;
  const annos = annotationsOf(pod);
  if (!shouldRewriteProbes(annos, valuesRewrite)) return;
  const probers = dumpAppProbers(pod.spec, meshStatusPort);
  const writable = probers === '' ? undefined : ownedSidecar(pod.spec);
  if (writable) mergeOrAppendProbers(annos[STATUS_ANNOTATION] !== undefined, envOf(writable), probers);
  const a = annos[STATUS_PORT_ANNOTATION];
  // Istio patchRewriteProbe: strconv.Atoi, its value kept even when it fails (0, or the int64 bound on overflow).
  const port = a === undefined ? meshStatusPort : toInt32(atoiIgnoringError(a));
  rewriteProbes(pod.spec, port);
}
