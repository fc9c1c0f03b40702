/**
 * Small accessors over a pod template kept as JSON (`PodTemplate`): container lists, lookups by name, string
 * maps. Mirrors the helpers of Istio's pkg/kube/inject (`FindContainer`, `FindSidecar`, `modifyContainers`).
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { isJsonObject, owned } from '../../json.ts';
import { defined } from '../../checked.ts';

/** Name of the proxy container (Istio `ProxyContainerName`). */
export const PROXY_CONTAINER = 'istio-proxy';
/** Name of the iptables init container (Istio `InitContainerName`). */
export const INIT_CONTAINER = 'istio-init';
/** Name of the CNI validation init container (Istio `ValidationContainerName`). */
export const VALIDATION_CONTAINER = 'istio-validation';
/** Name of the core-dump init container (Istio `EnableCoreDumpName`). */
export const ENABLE_CORE_DUMP_CONTAINER = 'enable-core-dump';

/** Which container list of a pod spec. */
export type ContainerList = 'containers' | 'initContainers';

/** The objects of `spec[list]` (the live array when it exists, else a new empty one not attached). */
export function containersOf(spec: JsonObject, list: ContainerList): JsonObject[] {
  const v = spec[list];
  return Array.isArray(v) ? (v.filter(isJsonObject) as JsonObject[]) : [];
}

/** The first container named `name` in `list` (Istio `FindContainer`). */
export function findContainer(name: string, list: readonly JsonObject[]): JsonObject | undefined {
  return list.find((c) => c.name === name);
}

/** A container by name in `containers`, else in `initContainers` (Istio `FindContainerFromPod`). */
export function findContainerInSpec(name: string, spec: JsonObject): JsonObject | undefined {
  return (
    findContainer(name, containersOf(spec, 'containers')) ?? findContainer(name, containersOf(spec, 'initContainers'))
  );
}

/**
 * The first container named `name` in `spec[list]`, for a change in place: the list and the container are
 * the pod's own (`owned` of ../../json.ts: a planned render's shared parts are copied first). `spec` must be
 * writable.
 */
export function ownedContainer(spec: JsonObject, list: ContainerList, name: string): JsonObject | undefined {
  if (!Array.isArray(spec[list])) return undefined;
  const items = defined(owned<Json[]>(spec, list), 'the container list just seen');
  const i = items.findIndex((c) => isJsonObject(c) && c.name === name);
  return i >= 0 ? owned<JsonObject>(items, i) : undefined;
}

/** `findContainerInSpec`, for a change in place (`ownedContainer`). */
export function ownedContainerInSpec(name: string, spec: JsonObject): JsonObject | undefined {
  return ownedContainer(spec, 'containers', name) ?? ownedContainer(spec, 'initContainers', name);
}

/**
 * Makes the frame of `pod` its own (`owned`), for the steps that change a pod in place (Istio
 * `postProcessPod`): its metadata with labels and annotations, its spec, and the container and init container
 * lists. A container in them stays shared until a step that writes into it takes it (`ownedSidecar`,
 * `ownedListed`): most steps write into the proxy alone, and a shared `istio-init` is then never copied.
 */
export function ownPodFrame(pod: PodTemplate): void {
  // A pod template is JSON; its interface (PodMeta's optional fields) is not assignable to `JsonObject`.
  const p = pod as unknown as JsonObject;
  owned(p, 'metadata');
  owned(pod.metadata as JsonObject, 'labels');
  owned(pod.metadata as JsonObject, 'annotations');
  const spec = defined(owned<JsonObject>(p, 'spec'), 'the spec of a pod template');
  for (const list of ['containers', 'initContainers'] as const) if (Array.isArray(spec[list])) owned(spec, list);
}

/** `findSidecar`, for a change in place (`ownedContainerInSpec`: `spec` must be writable). */
export function ownedSidecar(spec: JsonObject): JsonObject | undefined {
  return ownedContainerInSpec(PROXY_CONTAINER, spec);
}

/**
 * Container `c` of `spec`'s containers or init containers (the object itself, e.g. from `containersOf`), for a
 * change in place: the pod's own copy when it was shared (`owned`), put in its place in the list, which must be
 * writable (`ownPodFrame`). `c` itself when no list holds it.
 */
export function ownedListed(spec: JsonObject, c: JsonObject): JsonObject {
  for (const list of ['containers', 'initContainers'] as const) {
    const items = spec[list];
    const i = Array.isArray(items) ? items.indexOf(c) : -1;
    if (Array.isArray(items) && i >= 0) return defined(owned<JsonObject>(items, i), 'the container just found');
  }
  return c;
}

/** The `istio-proxy` container of a pod spec, in containers or init containers (Istio `FindSidecar`). */
export function findSidecar(spec: JsonObject): JsonObject | undefined {
  return findContainerInSpec(PROXY_CONTAINER, spec);
}

/** Reorder operation of Istio `modifyContainers`. */
export type Reorder = 'first' | 'last' | 'remove';

/**
 * Istio `modifyContainers`: moves the container named `name` to the front or the back, or removes it; every
 * other container named `name` is dropped too (Istio keeps only the last match). Returns a new array; absent
 * name → the list without change of order.
 */
export function modifyContainers(list: readonly JsonObject[], name: string, op: Reorder): JsonObject[] {
  // One pass: the others in order, and the last match.
  const rest: JsonObject[] = [];
  let match: JsonObject | undefined;
  for (const c of list) {
    if (c.name === name) match = c;
    else rest.push(c);
  }
  if (!match || op === 'remove') return rest;
  if (op === 'first') rest.unshift(match);
  else rest.push(match);
  return rest;
}

/** Sets `spec[list]`, or deletes it when the list is empty and was absent before. */
export function setContainers(spec: JsonObject, list: ContainerList, value: JsonObject[]): void {
  if (value.length === 0 && spec[list] === undefined) return;
  spec[list] = value;
}

/** The pod's annotations, created when missing; writable (`owned`: `pod.metadata` must be). */
export function annotationsOf(pod: PodTemplate): Record<string, string> {
  const own = owned(pod.metadata as JsonObject, 'annotations') as Record<string, string> | undefined;
  if (own) return own;
  const created: Record<string, string> = {};
  pod.metadata.annotations = created;
  return created;
}

/** The pod's labels, created when missing; writable (`owned`: `pod.metadata` must be). */
export function labelsOf(pod: PodTemplate): Record<string, string> {
  const own = owned(pod.metadata as JsonObject, 'labels') as Record<string, string> | undefined;
  if (own) return own;
  const created: Record<string, string> = {};
  pod.metadata.labels = created;
  return created;
}

/** The `env` list of a container, created when missing; writable (`owned`: `container` must be). */
export function envOf(container: JsonObject): JsonObject[] {
  if (!Array.isArray(container.env)) container.env = [];
  return defined(owned<JsonObject[]>(container, 'env'), 'the env list just made');
}

/** Go `strconv.ParseBool`: `1 t T TRUE true True` / `0 f F FALSE false False`; undefined otherwise. */
export function parseGoBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}
