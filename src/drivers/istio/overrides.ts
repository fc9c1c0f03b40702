/**
 * User containers named like injected ones (`istio-proxy`, `istio-init`, ...) are customisations: they are
 * merged on top of the injected result and remembered in `proxy.istio.io/overrides` for re-injection.
 * Istio `reapplyOverwrittenContainers`, `reinsertOverrides`, `adjustInitContainerUser`
 * (pkg/kube/inject/webhook.go; istio-injection.md §7).
 */
import { cloneJson, isJsonObject, owned, setOwn, withoutNulls } from '../../json.ts';
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { strategicMerge } from '../../patch/strategic-merge.ts';
import { POD_SCHEMA } from '../../patch/patch-schema.ts';
import { canonicalQuantity } from './quantity.ts';
import { goJSON } from '../go-json.ts';
import { parseInjectionStatus, STATUS_ANNOTATION } from './status.ts';
import {
  containersOf,
  findContainer,
  findContainerInSpec,
  ownedContainer,
  ownedContainerInSpec,
  findSidecar,
  INIT_CONTAINER,
  PROXY_CONTAINER,
  VALIDATION_CONTAINER,
  type ContainerList,
} from './pod-fields.ts';
import { defined } from '../../checked.ts';

/** Annotation holding the user's container customisations (JSON `{"containers":[…],"initContainers":[…]}`). */
export const OVERRIDES_ANNOTATION = 'proxy.istio.io/overrides';
/** Image value meaning "keep the injected image". */
export const AUTO_IMAGE = 'auto';

/** `corev1.Container` JSON field order (Go struct order). */
const CONTAINER_FIELDS = [
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'restartPolicyRules',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
];

/**
 * A container as Go's `json.Marshal(corev1.Container)` writes it: fields in struct order, `resources` always
 * present (`{}` when unset), empty strings/lists and false booleans of `omitempty` fields dropped.
 */
export function goContainerJSON(c: JsonObject): JsonObject {
  const out: JsonObject = {};
  const keys = [...CONTAINER_FIELDS, ...Object.keys(c).filter((k) => !CONTAINER_FIELDS.includes(k))];
  for (const k of keys) {
    const v = c[k]; // own key: a field name of CONTAINER_FIELDS (none names a prototype member) or of Object.keys(c)
    if (k === 'resources') {
      setOwn(out, k, isJsonObject(v) ? canonicalResources(v) : {});
      continue;
    }
    if (k === 'name') {
      setOwn(out, k, typeof v === 'string' ? v : '');
      continue;
    }
    if (v === undefined || v === null || v === '' || v === false) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    setOwn(out, k, v);
  }
  return out;
}

/** `requests`/`limits` quantities in canonical form (Go's typed round-trip). */
function canonicalResources(r: JsonObject): JsonObject {
  const out: JsonObject = { ...r };
  for (const key of ['limits', 'requests']) {
    const m = r[key];
    if (!isJsonObject(m)) continue;
    const c: JsonObject = {};
    for (const [name, q] of Object.entries(m)) {
      setOwn(c, name, typeof q === 'string' || typeof q === 'number' ? (canonicalQuantity(q) ?? q) : q);
    }
    out[key] = c;
  }
  return out;
}

/** The containers a `proxy.istio.io/overrides` annotation records, per list. */
export interface ParsedContainers {
  containers: JsonObject[];
  initContainers: JsonObject[];
}

/**
 * Parses `proxy.istio.io/overrides` (absent: empty lists).
 * @throws InjectError (BAD_ANNOTATION) when it is not JSON
 */
export function parseOverrides(value: string | undefined): ParsedContainers {
  if (value === undefined) return { containers: [], initContainers: [] };
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch (e) {
    throw new InjectError(`invalid value for annotation '${OVERRIDES_ANNOTATION}': ${(e as Error).message}`, {
      field: `metadata.annotations[${OVERRIDES_ANNOTATION}]`,
      code: 'BAD_ANNOTATION',
    });
  }
  const o = isJsonObject(v as Json) ? (v as JsonObject) : {};
  const list = (x: Json | undefined): JsonObject[] =>
    Array.isArray(x) ? (x.filter(isJsonObject) as JsonObject[]) : [];
  return { containers: list(o.containers), initContainers: list(o.initContainers) };
}

/**
 * Istio `reinsertOverrides`: re-adds the containers saved in `proxy.istio.io/overrides` that the pod no longer
 * has (they were stripped with the previous injection), so the template sees the user's customisations.
 * Returns a new pod. @throws InjectError when the annotation is not JSON.
 */
export function reinsertOverrides(pod: PodTemplate): PodTemplate {
  const saved = parseOverrides(pod.metadata.annotations?.[OVERRIDES_ANNOTATION]);
  const out = cloneJson(pod);
  for (const list of ['containers', 'initContainers'] as const) {
    const cur = containersOf(out.spec, list);
    let changed = false;
    for (const c of saved[list]) {
      if (typeof c.name === 'string' && !findContainer(c.name, cur)) {
        cur.push(c);
        changed = true;
      }
    }
    if (changed) out.spec[list] = cur;
  }
  return out;
}

/** Image of the `istio-proxy` container in either list, if any. */
function proxyImage(spec: JsonObject): Json | undefined {
  return findContainerInSpec(PROXY_CONTAINER, spec)?.image;
}

/**
 * Istio `reapplyOverwrittenContainers`: for each container (then init container) of the rendered template pod
 * that the user also defines (in a previous `proxy.istio.io/overrides`, else in the original pod) and that the
 * previous injection did not add, strategic-merges the user's container (image `auto` → kept from the template)
 * on top of `finalPod`. On a first injection the user copies are recorded in `proxy.istio.io/overrides`.
 * Then applies {@link adjustInitContainerUser}. Returns the new final pod.
 */
export function reapplyOverwrittenContainers(
  finalPod: PodTemplate,
  originalPod: PodTemplate,
  templateSpec: JsonObject,
  tproxyMesh: boolean,
  revision = '',
): PodTemplate {
  const origAnnos = originalPod.metadata.annotations ?? {};
  const existing = parseOverrides(origAnnos[OVERRIDES_ANNOTATION]);
  const statusValue = origAnnos[STATUS_ANNOTATION];
  const alreadyInjected = statusValue !== undefined;
  const injected = previouslyInjected(parseInjectionStatus(statusValue), originalPod, templateSpec, revision);
  const overrides: ParsedContainers = { containers: [], initContainers: [] };
  let pod = finalPod;
  for (const list of ['containers', 'initContainers'] as const) {
    for (const c of containersOf(templateSpec, list)) {
      const name = typeof c.name === 'string' ? c.name : '';
      // A container the previous injection added is not the user's, unless the overrides record says the
      // user customised it (meshinject re-injects: without this a second run would drop the customisation).
      const recorded = findContainer(name, existing[list]);
      if (injected[list].includes(name) && !recorded) continue;
      const match =
        recorded ??
        (list === 'containers'
          ? findContainer(name, containersOf(originalPod.spec, 'containers'))
          : findContainerInSpec(name, originalPod.spec));
      if (!match) continue;
      // Go's json.Marshal of the user's container (applyContainer) leaves out what is nil: a `null` field, at any
      // depth, overrides nothing (`env:` with no value must not take away the template's env)
      const overlay = withoutNulls(cloneJson(match)) as JsonObject;
      if (overlay.image === AUTO_IMAGE) delete overlay.image;
      overrides[list].push(goContainerJSON(overlay));
      if (recorded && alreadyInjected) {
        // Go writes struct fields it cannot omit as `{}` (`"resources":{}`): they add nothing to merge.
        for (const [k, v] of Object.entries(overlay))
          if (isJsonObject(v) && Object.keys(v).length === 0) delete overlay[k];
        keepQuantitySpelling(overlay, findContainerInSpec(name, originalPod.spec));
      }
      const merged = strategicMerge(
        { metadata: pod.metadata as JsonObject, spec: pod.spec },
        { spec: { [list]: [overlay] } },
        POD_SCHEMA,
      );
      pod = { metadata: merged.metadata as PodTemplate['metadata'], spec: merged.spec as JsonObject };
    }
  }
  if (!alreadyInjected) recordOverrides(pod, overrides);
  // The user's istio-proxy: on re-injection the recorded one (the pod's own was changed by the injection,
  // e.g. runAsUser forced to 0 under TPROXY), else the pod's.
  const userProxy =
    findContainer(PROXY_CONTAINER, existing.containers) ??
    findContainer(PROXY_CONTAINER, existing.initContainers) ??
    findSidecar(originalPod.spec);
  adjustInitContainerUser(pod, userProxy, tproxyMesh);
  return pod;
}

/**
 * Names of the containers / init containers the previous injection added, from its status annotation
 * (`status`; empty lists on a first injection).
 *
 * Istio checks each list on its own, so an old classic proxy becomes a "user override" of a new native
 * one (golden merge-probers). meshinject keeps that within one injection (same revision, same proxy
 * image) and re-injects cleanly across an upgrade (another revision or proxy image): then a name the
 * previous injection added to either list is never a user override.
 */
function previouslyInjected(
  status: ReturnType<typeof parseInjectionStatus>,
  originalPod: PodTemplate,
  templateSpec: JsonObject,
  revision: string,
): Record<ContainerList, string[]> {
  const upgrade =
    status !== undefined &&
    status !== null &&
    (status.revision !== (revision === '' ? 'default' : revision) ||
      proxyImage(originalPod.spec) !== proxyImage(templateSpec));
  const both = [...(status?.containers ?? []), ...(status?.initContainers ?? [])];
  return {
    containers: upgrade ? both : (status?.containers ?? []),
    initContainers: upgrade ? both : (status?.initContainers ?? []),
  };
}

/** On a first injection: records the user's containers in `proxy.istio.io/overrides` of `pod` (in place), when there are any. */
function recordOverrides(pod: PodTemplate, overrides: ParsedContainers): void {
  if (overrides.containers.length === 0 && overrides.initContainers.length === 0) return;
  const js: JsonObject = {};
  if (overrides.containers.length > 0) js.containers = overrides.containers;
  if (overrides.initContainers.length > 0) js.initContainers = overrides.initContainers;
  pod.metadata.annotations ??= {};
  pod.metadata.annotations[OVERRIDES_ANNOTATION] = goJSON(js); // Go's json.Marshal: `&&` in a command is `\u0026\u0026`
}

/**
 * In place: each resource quantity of `overlay` (a recorded override, which Istio stores in Go's canonical
 * form: `3000m` is recorded as `"3"`) takes the spelling `current` (the pod's container of the same name)
 * already has for the same quantity, so re-injecting an unchanged pod leaves its text as it is.
 */
function keepQuantitySpelling(overlay: JsonObject, current: JsonObject | undefined): void {
  const have = current && isJsonObject(current.resources) ? current.resources : undefined;
  if (!have || !isJsonObject(overlay.resources)) return;
  for (const kind of ['limits', 'requests', 'claims'] as const) {
    const want = overlay.resources[kind];
    const got = have[kind];
    if (!isJsonObject(want) || !isJsonObject(got)) continue;
    for (const [k, v] of Object.entries(want)) {
      const g = Object.hasOwn(got, k) ? got[k] : undefined;
      if (
        (typeof v === 'string' || typeof v === 'number') &&
        (typeof g === 'string' || typeof g === 'number') &&
        v !== g &&
        canonicalQuantity(v) !== undefined &&
        canonicalQuantity(v) === canonicalQuantity(g)
      )
        setOwn(want, k, g);
    }
  }
}

/**
 * Istio `adjustInitContainerUser`, in place: when the user's `istio-proxy` sets runAsUser/runAsGroup — with
 * TPROXY (mesh or `sidecar.istio.io/interceptionMode`) the proxy's runAsUser is forced to 0; otherwise an
 * `istio-validation` container takes the same uid/gid; and the `-u <uid>` argument of the init/validation
 * container becomes the user's runAsUser (unless it is 0).
 */
export function adjustInitContainerUser(
  finalPod: PodTemplate,
  user: JsonObject | undefined,
  tproxyMesh: boolean,
): void {
  const sc = user && isJsonObject(user.securityContext) ? user.securityContext : undefined;
  if (!sc || (sc.runAsUser == null && sc.runAsGroup == null)) return;
  const init = containersOf(finalPod.spec, 'initContainers');
  const found = findContainer(INIT_CONTAINER, init) ?? findContainer(VALIDATION_CONTAINER, init);
  if (!found) return;
  // The init container and the proxy may be shared parts of a planned render: changed as the pod's own copies.
  const initContainer = defined(
    ownedContainer(finalPod.spec, 'initContainers', String(found.name)),
    'the init container just found',
  );
  const tproxy = tproxyMesh || finalPod.metadata.annotations?.['sidecar.istio.io/interceptionMode'] === 'TPROXY';
  if (tproxy && sc.runAsUser != null) {
    const sidecar = ownedContainerInSpec(PROXY_CONTAINER, finalPod.spec);
    if (!sidecar) return;
    const psc = owned(sidecar, 'securityContext');
    if (isJsonObject(psc)) psc.runAsUser = 0;
    else sidecar.securityContext = { runAsUser: 0 };
  }
  if (!tproxy && initContainer.name === VALIDATION_CONTAINER) {
    const current = owned(initContainer, 'securityContext');
    const isc: JsonObject = isJsonObject(current) ? current : {};
    if (isc !== current) initContainer.securityContext = isc;
    if (sc.runAsUser != null) isc.runAsUser = sc.runAsUser;
    if (sc.runAsGroup != null) isc.runAsGroup = sc.runAsGroup;
  }
  if (sc.runAsUser == null || sc.runAsUser === 0) return;
  const args = Array.isArray(initContainer.args)
    ? defined(owned<Json[]>(initContainer, 'args'), 'the args just seen')
    : [];
  const i = args.indexOf('-u');
  if (i >= 0 && i + 1 < args.length) args[i + 1] = String(sc.runAsUser);
}
