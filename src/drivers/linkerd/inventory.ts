/**
 * What a Linkerd injection left in a pod template, read from Linkerd's own markers (Linkerd keeps no status
 * annotation): the containers, init containers and volumes `linkerd inject --manual` adds, and the
 * `linkerd.io/*` annotations and labels. This is what `linkerd uninject` removes (pkg/inject/uninject.go),
 * plus `linkerd-network-validator` and `linkerd-debug`, which Linkerd's uninject leaves behind but its
 * injection adds (removing them keeps re-injection idempotent).
 */
import type { JsonObject, PodTemplate } from '../../model.ts';
import { cloneJson } from '../../json.ts';
import type { Inventory } from '../../contract/driver.ts';
import {
  CONTROL_PLANE_COMPONENT_LABEL,
  DEBUG_CONTAINER,
  END_ENTITY_VOLUME,
  INIT_CONTAINER,
  INJECT_ANNOTATION,
  LINKERD_PREFIX,
  PROXY_CONTAINER,
  PROXY_VERSION_ANNOTATION,
  TOKEN_VOLUME,
  VALIDATOR_CONTAINER,
  XTABLES_VOLUME,
} from './annotations.ts';

const CONTAINERS = [PROXY_CONTAINER, DEBUG_CONTAINER];
const INIT_CONTAINERS = [INIT_CONTAINER, VALIDATOR_CONTAINER, PROXY_CONTAINER];
const VOLUMES = [XTABLES_VOLUME, END_ENTITY_VOLUME, TOKEN_VOLUME];

const names = (list: unknown): string[] =>
  (Array.isArray(list) ? list : [])
    .map((c) => (c !== null && typeof c === 'object' ? (c as JsonObject).name : undefined))
    .filter((n): n is string => typeof n === 'string');

/**
 * The `linkerd.io/*` annotation keys `linkerd uninject` removes from a metadata object: all of them except
 * `linkerd.io/inject: disabled`; none on a control-plane component (its metadata is Linkerd's own).
 */
export function linkerdAnnotationKeys(meta: PodTemplate['metadata']): string[] {
  if (Object.hasOwn(meta.labels ?? {}, CONTROL_PLANE_COMPONENT_LABEL)) return [];
  return Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith(LINKERD_PREFIX) && !(k === INJECT_ANNOTATION && v === 'disabled'))
    .map(([k]) => k);
}

/** The `linkerd.io/*` label keys `linkerd uninject` removes (none on a control-plane component). */
export function linkerdLabelKeys(meta: PodTemplate['metadata']): string[] {
  if (Object.hasOwn(meta.labels ?? {}, CONTROL_PLANE_COMPONENT_LABEL)) return [];
  return Object.keys(meta.labels ?? {}).filter((k) => k.startsWith(LINKERD_PREFIX));
}

/**
 * The Linkerd driver's `inventory`: what Linkerd put into `pod`, or undefined when it carries none of
 * Linkerd's containers, volumes, annotations or labels. `statusAnnotation` is `linkerd.io/proxy-version`
 * (the annotation `--manual` writes; Linkerd has no status annotation listing what it added), or
 * `linkerd.io/inject` for a pod template that only carries the annotation-only opt-in.
 */
export function linkerdInventory(pod: PodTemplate): Inventory | undefined {
  const spec = pod.spec;
  const annotations = pod.metadata.annotations ?? {};
  const inv: Inventory = {
    statusAnnotation:
      !Object.hasOwn(annotations, PROXY_VERSION_ANNOTATION) && annotations[INJECT_ANNOTATION]
        ? INJECT_ANNOTATION
        : PROXY_VERSION_ANNOTATION,
    containers: names(spec.containers).filter((n) => CONTAINERS.includes(n)),
    initContainers: names(spec.initContainers).filter((n) => INIT_CONTAINERS.includes(n)),
    volumes: names(spec.volumes).filter((n) => VOLUMES.includes(n)),
    imagePullSecrets: [],
    annotations: linkerdAnnotationKeys(pod.metadata),
    labels: linkerdLabelKeys(pod.metadata),
  };
  const empty =
    inv.containers.length +
      inv.initContainers.length +
      inv.volumes.length +
      (inv.annotations?.length ?? 0) +
      (inv.labels?.length ?? 0) ===
    0;
  return empty ? undefined : inv;
}

/**
 * Removes everything `inv` names from a copy of `pod` (containers, init containers, volumes, annotations,
 * labels; an emptied list or map is removed). The generic removal an engine-level uninject performs, here
 * for the driver's own re-injection (the silent `uninject` pass of `linkerd inject`).
 */
export function removeInventory(pod: PodTemplate, inv: Inventory): PodTemplate {
  const out = cloneJson(pod);
  const drop = (key: string, remove: string[]): void => {
    const list = out.spec[key];
    if (!Array.isArray(list)) return;
    const kept = list.filter(
      (c) => !(c !== null && typeof c === 'object' && !Array.isArray(c) && remove.includes(c.name as string)),
    );
    if (kept.length === list.length) return;
    if (kept.length === 0 && key !== 'containers') delete out.spec[key];
    else out.spec[key] = kept;
  };
  drop('containers', inv.containers);
  drop('initContainers', inv.initContainers);
  drop('volumes', inv.volumes);
  for (const [field, keys] of [
    ['annotations', inv.annotations ?? []],
    ['labels', inv.labels ?? []],
  ] as const) {
    const map = out.metadata[field];
    if (!map || keys.length === 0) continue;
    for (const k of keys) delete map[k];
    if (Object.keys(map).length === 0) delete out.metadata[field];
  }
  return out;
}
