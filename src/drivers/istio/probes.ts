/**
 * Application probe rewrite: kubelet probes and lifecycle hooks of the app containers are redirected to the
 * agent's status port (`/app-health/<c>/<readyz|livez|startupz>`, `/app-lifecycle/<c>/<prestopz|poststartz>`),
 * and the original actions go to the proxy env `ISTIO_KUBE_APP_PROBERS`. Istio `applyRewrite`,
 * `DumpAppProbers`, `patchRewriteProbe`, `mergeOrAppendProbers` (pkg/kube/inject/app_probe.go, webhook.go;
 * istio-injection.md §6.7).
 */
import { cloneJson, isJsonObject, owned, setOwn } from '../../json.ts';
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { declaredPorts, type PortRule, resolveNamedPort } from '../kit/ports.ts';
import { STATUS_ANNOTATION } from './status.ts';
import {
  annotationsOf,
  containersOf,
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

/** App containers in Istio's order for probers: init containers, then containers, minus the proxy. */
function appContainers(spec: JsonObject): JsonObject[] {
  return [...containersOf(spec, 'initContainers'), ...containersOf(spec, 'containers')].filter(
    (c) => c.name !== PROXY_CONTAINER,
  );
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

/** The prober entry of a probe or hook: `{httpGet|tcpSocket|grpc, timeoutSeconds?}` with the port resolved. */
function proberOf(
  handler: Json | undefined,
  container: JsonObject,
  statusPort: number,
  isProbe: boolean,
): JsonObject | undefined {
  if (!isJsonObject(handler)) return undefined;
  const timeout =
    isProbe && typeof handler.timeoutSeconds === 'number' && handler.timeoutSeconds !== 0
      ? handler.timeoutSeconds
      : undefined;
  const withTimeout = (o: JsonObject): JsonObject => (timeout === undefined ? o : { ...o, timeoutSeconds: timeout });
  if (isProbe && isJsonObject(handler.grpc)) return withTimeout({ grpc: cloneJson(handler.grpc) });
  const kind = isJsonObject(handler.httpGet) ? 'httpGet' : isJsonObject(handler.tcpSocket) ? 'tcpSocket' : undefined;
  if (!kind) return undefined;
  const action = cloneJson(handler[kind] as JsonObject);
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
  for (const c of appContainers(spec)) {
    const name = typeof c.name === 'string' ? c.name : '';
    for (const [field, segment] of PROBES) {
      // (proberOf answers undefined for a handler that is not a map: no URL is made for it)
      if (isJsonObject(c[field])) add(`/app-health/${name}/${segment}`, proberOf(c[field], c, statusPort, true));
    }
    if (isJsonObject(c.lifecycle)) {
      const { preStop, postStart } = c.lifecycle;
      if (isJsonObject(preStop)) add(`/app-lifecycle/${name}/prestopz`, proberOf(preStop, c, statusPort, false));
      if (isJsonObject(postStart)) add(`/app-lifecycle/${name}/poststartz`, proberOf(postStart, c, statusPort, false));
    }
  }
  if (out.size === 0) return '';
  let text = '';
  for (const k of [...out.keys()].sort())
    text += `${text === '' ? '{' : ','}${JSON.stringify(k)}:${JSON.stringify(out.get(k))}`;
  return `${text}}`;
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
  for (const listed of appContainers(spec)) {
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
 * Istio `mergeOrAppendProbers`: appends `ISTIO_KUBE_APP_PROBERS`, or, when the pod was injected before and the
 * proxy already has it, merges the maps (previous entries win) and replaces the value in place.
 */
export function mergeOrAppendProbers(previouslyInjected: boolean, env: JsonObject[], probers: string): void {
  if (previouslyInjected) {
    const i = env.findIndex((e) => e.name === APP_PROBERS_ENV);
    const found = env[i];
    if (found) {
      let merged: Record<string, Json>;
      try {
        const old = JSON.parse(String(found.value ?? '')) as Record<string, Json>;
        const next = JSON.parse(probers) as Record<string, Json>;
        merged = { ...next, ...old };
      } catch {
        return;
      }
      const sorted: JsonObject = {};
      for (const k of Object.keys(merged).sort()) {
        const v = merged[k];
        if (v !== undefined) setOwn(sorted, k, v);
      }
      env[i] = { name: APP_PROBERS_ENV, value: JSON.stringify(sorted) };
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
