/**
 * Istio's probe rewrite undone (the `uninject` hook's probes step, ./uninject.ts): each app probe and lifecycle
 * hook that points at the Istio agent gets its original action back from the removed proxy's
 * `ISTIO_KUBE_APP_PROBERS` record (Istio `patchRewriteProbe`, pkg/kube/inject/app_probe.go). Copy on write: the
 * pod's containers may be read-only.
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { isJsonObject, setOwn } from '../../json.ts';
import { APP_PROBERS_ENV, proberUrls } from './probes.ts';

function fail(message: string, field: string): never {
  throw new InjectError(`cannot uninject faithfully: ${message}`, { field });
}

/** What Istio's rewrite changes in an `httpGet` it keeps (`rewriteHTTPGetAction`): every other field is the user's. */
const REWRITTEN = new Set(['path', 'port', 'scheme']);

/**
 * A probe or hook rewritten to the agent (`httpGet` on `url`) with its original action put back from the saved
 * prober. An `httpGet` keeps its keys in place: `path`, `port` and `scheme` (what the rewrite changed) come from
 * the saved action (left out where Go's `omitempty` left them out), every other field is still the user's own. A
 * saved `tcpSocket` or `grpc` takes the place of the `httpGet` that replaced it (where the injected text has it,
 * so only that entry's lines change), in Go's field order; a gRPC probe that named no service (Go writes
 * `"service":null`) gets none. The saved port is the number Istio resolved a named port to, which the kubelet
 * reads the same. Other fields (delays, thresholds, `timeoutSeconds`) were never changed.
 */
function restoreHandler(handler: JsonObject, saved: JsonObject): JsonObject {
  if (isJsonObject(saved.httpGet)) {
    const now = handler.httpGet as JsonObject;
    const httpGet: JsonObject = {};
    for (const k of Object.keys(now)) {
      if (!REWRITTEN.has(k)) setOwn(httpGet, k, now[k] as Json);
      else if (Object.hasOwn(saved.httpGet, k)) setOwn(httpGet, k, saved.httpGet[k] as Json);
    }
    for (const k of REWRITTEN)
      if (!Object.hasOwn(httpGet, k) && Object.hasOwn(saved.httpGet, k)) setOwn(httpGet, k, saved.httpGet[k] as Json);
    return { ...handler, httpGet };
  }
  const kind = isJsonObject(saved.tcpSocket) ? 'tcpSocket' : isJsonObject(saved.grpc) ? 'grpc' : undefined;
  let restored = kind && saved[kind];
  if (!kind || restored === undefined) return handler;
  if (kind === 'grpc' && isJsonObject(restored) && restored.service === null) {
    const { service: _nil, ...rest } = restored;
    restored = rest;
  }
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(handler)) setOwn(out, k === 'httpGet' ? kind : k, k === 'httpGet' ? restored : v);
  return out;
}

/**
 * Istio `patchRewriteProbe` undone: every app probe and lifecycle hook that points at its agent URL
 * (`/app-health/<c>/readyz`, ...) gets its original action back from `ISTIO_KUBE_APP_PROBERS`. Sets each list it
 * changes on `pod.spec` (owned) anew; a container it changes is a new object, the others are the pod's own: copy
 * on write, so `pod`'s lists and containers may be read-only (issue #40: the hook no longer deep-copies the pod).
 * @throws InjectError when a rewritten probe has no saved original
 */
export function restoreProbes(pod: PodTemplate, probers: Record<string, Json>): void {
  for (const list of ['initContainers', 'containers'] as const) {
    const entries = pod.spec[list];
    if (!Array.isArray(entries)) continue;
    let copied: Json[] | undefined;
    let i = 0;
    for (const [j, c] of entries.entries()) {
      if (!isJsonObject(c)) continue;
      const restored = restoredContainer(c, probers, `spec.${list}[${i}]`);
      i++;
      if (restored === c) continue;
      copied ??= [...entries];
      copied[j] = restored;
    }
    if (copied) pod.spec[list] = copied;
  }
}

/**
 * Container `c` (at `at`) with its probes and hooks restored ({@link restoreProbes}): `c` itself when none points
 * at the agent, else a new container (and a new `lifecycle`), keys in place.
 * @throws InjectError when a rewritten probe has no saved original
 */
function restoredContainer(c: JsonObject, probers: Record<string, Json>, at: string): JsonObject {
  // Nothing to restore in a container without probes or hooks (every `restore` below would give it back).
  if (!hasHandlers(c)) return c;
  const urls = proberUrls(typeof c.name === 'string' ? c.name : '');
  const restore = (holder: JsonObject, field: string, url: string, path: string): JsonObject => {
    const h = holder[field];
    if (!isJsonObject(h) || !isJsonObject(h.httpGet) || h.httpGet.path !== url) return holder;
    const saved = probers[url];
    if (!isJsonObject(saved))
      fail(`${path} points at the Istio agent (${url}) and ${APP_PROBERS_ENV} has no original for it`, path);
    return setOwn({ ...holder }, field, restoreHandler(h, saved));
  };
  let out = restore(c, 'readinessProbe', urls.readyz, `${at}.readinessProbe`);
  out = restore(out, 'livenessProbe', urls.livez, `${at}.livenessProbe`);
  out = restore(out, 'startupProbe', urls.startupz, `${at}.startupProbe`);
  const lifecycle = c.lifecycle;
  if (isJsonObject(lifecycle)) {
    let hooks = restore(lifecycle, 'preStop', urls.prestopz, `${at}.lifecycle.preStop`);
    hooks = restore(hooks, 'postStart', urls.poststartz, `${at}.lifecycle.postStart`);
    if (hooks !== lifecycle) out = setOwn(out === c ? { ...c } : out, 'lifecycle', hooks);
  }
  return out;
}

/**
 * Whether container `c` holds a probe or a `lifecycle` map: {@link restoredContainer} changes nothing else, so one
 * without gives `c` itself, its agent URLs never built (issue #40: most sidecars and many app containers have none).
 */
function hasHandlers(c: JsonObject): boolean {
  return (
    isJsonObject(c.readinessProbe) ||
    isJsonObject(c.livenessProbe) ||
    isJsonObject(c.startupProbe) ||
    isJsonObject(c.lifecycle)
  );
}
