/**
 * Uninject, for every driver: removes exactly what a driver's injection added to a pod template, as its
 * `inventory` records it (containers, init containers, volumes, image pull secrets, annotation and label
 * keys), then lets the driver's optional `uninject` hook undo what the generic removal cannot (e.g. Istio's
 * probe rewrite). Mesh-neutral: it never names a mesh. The rule of `linkerd uninject` (pkg/inject/uninject.go)
 * and Istio's `stripPod`, generalised; what it does not remove is the user's.
 */
import type { Json, JsonObject, PodTemplate } from '../model.ts';
import type { ActiveMesh, Inventory, UninjectContext } from '../contract/driver.ts';
import { InjectError } from '../results/errors.ts';
import { copyUnshared, isJsonObject, setOwn } from '../json.ts';
import { restoreOriginal } from './status-record.ts';

function named(list: Json | undefined): JsonObject[] {
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

/**
 * `list` without the entries whose `name` is in `names`: `list` itself when none is (or it is no list), undefined
 * when removal empties it (the caller drops the field). `names` is an inventory's list (a few names: an array
 * search, not a `Set` built per workload; issue #40).
 */
function withoutNamed(list: Json | undefined, names: readonly string[]): Json | undefined {
  if (!Array.isArray(list) || names.length === 0) return list;
  // One loop, and no new list until an entry goes (most lists lose none: the app's volumes, its secrets).
  let kept: Json[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const e = list[i] as Json;
    const gone = isJsonObject(e) && typeof e.name === 'string' && names.includes(e.name);
    if (gone) kept ??= list.slice(0, i);
    else kept?.push(e);
  }
  if (kept === undefined) return list;
  return kept.length === 0 ? undefined : kept;
}

/**
 * `map` without `keys`: a copy (`map` itself when there is nothing to remove), undefined when removal emptied it
 * (the caller drops the field). Built without `delete`, which would turn the copy into a slow dictionary-mode
 * object for every reader after it (issue #40).
 */
function withoutKeys(
  map: Record<string, string> | null | undefined,
  keys: readonly string[] | undefined,
): Record<string, string> | null | undefined {
  if (!map || !keys || keys.length === 0) return map;
  const out: Record<string, string> = {};
  let removed = false;
  for (const k of Object.keys(map)) {
    if (keys.includes(k)) removed = true;
    else setOwn(out, k, map[k] as string);
  }
  return removed && Object.keys(out).length === 0 ? undefined : out;
}

/** A kind of item a driver's status record lists, as messages name it. */
export type RecordedKind = 'container' | 'init container' | 'volume' | 'label' | 'annotation';

/**
 * The first item a driver's status record lists that the driver would not have injected: for each kind, in
 * order, a recorded name not among `injectable` (the names the driver's templates give that kind). A record
 * naming the user's own container or volume is then refused instead of deleting it (issue #8: a status
 * annotation is not taken on trust). Mesh-neutral: each driver says what it can inject.
 * @param checks `[kind, recorded names, names the driver injects]` triples
 */
export function unexpectedRecordItem(
  checks: ReadonlyArray<readonly [RecordedKind, readonly string[], ReadonlySet<string> | readonly string[]]>,
): { kind: RecordedKind; name: string } | undefined {
  for (const [kind, recorded, injectable] of checks) {
    const known = injectable instanceof Set ? injectable : new Set(injectable as readonly string[]);
    for (const name of recorded) if (!known.has(name)) return { kind, name };
  }
  return undefined;
}

/**
 * The error refusing a status record (field `metadata.annotations[<annotation>]`) that lists `item` as
 * injected; `why` says why it cannot be (`no Istio injection template adds a container of that name`).
 */
export function untrustedRecordError(
  annotation: string,
  item: { kind: string; name: string },
  why: string,
): InjectError {
  return new InjectError(
    `${annotation} lists ${item.kind} "${item.name}" as injected, but ${why}: refusing to remove it (correct or remove the annotation)`,
    { field: `metadata.annotations[${annotation}]` },
  );
}

/**
 * The first container that stays (not in `injected`) and mounts `volume`, or undefined: a volume the injection
 * added is mounted only by what it injected, so a hit means the record names the user's volume.
 */
export function mountedBy(spec: JsonObject, volume: string, injected: ReadonlySet<string>): string | undefined {
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const c of named(spec[list])) {
      if (typeof c.name === 'string' && injected.has(c.name)) continue;
      const uses = [...named(c.volumeMounts), ...named(c.volumeDevices)].some((m) => m.name === volume);
      if (uses) return String(c.name);
    }
  }
  return undefined;
}

/**
 * {@link mountedBy} of the volumes `inv` names at once: volume name → the first container that stays (not named by
 * `inv`'s containers or init containers) and mounts it, in the order `mountedBy` looks (init containers, containers,
 * ephemeral containers; mounts, then devices). One walk of the containers instead of one per volume the inventory
 * names, keeping only those volumes (the app's own mounts, most of them, are passed over; issue #40). For each
 * volume of `inv` it gives what `mountedBy(spec, volume, injected)` gives.
 */
function mountedVolumes(spec: JsonObject, inv: Inventory): Map<string, string> {
  const users = new Map<string, string>();
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    const entries = spec[list];
    if (!Array.isArray(entries)) continue;
    for (const c of entries) {
      if (!isJsonObject(c)) continue;
      if (typeof c.name === 'string' && (inv.containers.includes(c.name) || inv.initContainers.includes(c.name)))
        continue;
      for (const field of ['volumeMounts', 'volumeDevices']) {
        const mounts = c[field];
        if (!Array.isArray(mounts)) continue;
        for (const m of mounts) {
          if (!isJsonObject(m) || typeof m.name !== 'string') continue;
          if (inv.volumes.includes(m.name) && !users.has(m.name)) users.set(m.name, String(c.name));
        }
      }
    }
  }
  return users;
}

/**
 * Removes the inventory's items from a copy of `pod`: containers and init containers by name (each from its
 * own list), volumes and image pull secrets by name, annotation and label keys. A list or map that the
 * removal empties is dropped (the injection created it). Items the inventory names but the pod lacks are
 * ignored. The input is not mutated; the result is a copy, writable but for the parts shared between workloads
 * (src/json.ts `share`, taken with `owned` before a change), which it holds as `pod` does.
 * @throws InjectError (field `metadata.annotations[<status annotation>]`) when the inventory names a volume
 *   that a container it does not name mounts: that volume is the user's, and the record is not trusted.
 */
export function removeInventory(pod: PodTemplate, inv: Inventory): PodTemplate {
  // Copied last, without what is removed (the proxy container is most of an injected pod template).
  // Writable where it is not shared; shared parts stay shared (copy on write, `owned`).
  return copyUnshared(withoutInventory(pod, inv));
}

/**
 * {@link removeInventory} without its copy: the pod template, its metadata and spec are new, and the lists and
 * maps the removal changes; everything else (each container, volume and entry kept) is `pod`'s own object. For
 * a caller that writes none of it: uninject's, whose `pod` is the deep-frozen view (issue #40: the copy was a
 * quarter of the removal's cost, and the driver hooks copy what they change anyway).
 * @throws InjectError as {@link removeInventory}
 */
function withoutInventory(pod: PodTemplate, inv: Inventory): PodTemplate {
  if (inv.volumes.length > 0) {
    const users = mountedVolumes(pod.spec, inv);
    for (const v of inv.volumes) {
      const user = users.get(v);
      if (user !== undefined)
        throw untrustedRecordError(
          inv.statusAnnotation,
          { kind: 'volume', name: v },
          `container "${user}", which it does not list, mounts it`,
        );
    }
  }
  // Built key by key in the spec's order, a list the removal empties left out (no `delete`: see `withoutKeys`).
  const spec: JsonObject = {};
  for (const k of Object.keys(pod.spec)) {
    const v = pod.spec[k];
    const names = inventoryNames(inv, k);
    const kept = names === undefined ? v : withoutNamed(v, names);
    if (kept !== undefined || v === undefined) setOwn(spec, k, kept as Json);
  }
  const metadata: PodTemplate['metadata'] = {};
  const annotations = withoutKeys(pod.metadata.annotations, [inv.statusAnnotation, ...(inv.annotations ?? [])]);
  const labels = withoutKeys(pod.metadata.labels, inv.labels);
  for (const k of Object.keys(pod.metadata)) {
    if (k === 'annotations') {
      if (annotations !== undefined) metadata.annotations = annotations;
    } else if (k === 'labels') {
      if (labels !== undefined) metadata.labels = labels;
    } else setOwn(metadata as JsonObject, k, pod.metadata[k] as Json);
  }
  return { ...pod, metadata, spec };
}

/** The names `inv` lists for pod-spec field `field`, or undefined for a field uninject does not remove from. */
function inventoryNames(inv: Inventory, field: string): readonly string[] | undefined {
  switch (field) {
    case 'containers':
      return inv.containers;
    case 'initContainers':
      return inv.initContainers;
    case 'volumes':
      return inv.volumes;
    case 'imagePullSecrets':
      return inv.imagePullSecrets;
    default:
      return undefined;
  }
}

/** What {@link uninjectPod} did: the pod without the injection and the inventory it removed. */
export interface Uninjected {
  pod: PodTemplate;
  inventory: Inventory;
}

/**
 * A deep-frozen copy of `pod`: what the driver's `inventory` and `uninject` hooks read as `context.injected`
 * (read-only by the contract, src/contract/driver-io.ts `UninjectContext`). A hook that writes into it throws a
 * TypeError (all of `src/` is strict code) instead of changing the pod the caller keeps and writes (the Istio hook
 * once added `env: []` to a user's istio-proxy). One copy per uninject, the one the caller took before (issue #37).
 * The parts shared between workloads (src/json.ts `share`: a sidecar plan's token-free parts, deep-frozen for good)
 * are not copied but held as they are: a write into them throws all the same (issue #40: copying and freezing the
 * whole injected pod was a sixth of the record's cost).
 */
function readOnlyCopy(pod: PodTemplate): PodTemplate {
  return copyUnshared(pod, true);
}

/**
 * Uninjects one pod template: the driver's `inventory`, the generic {@link removeInventory}, then the driver's
 * `uninject` hook (when it has one) with the pod as injected in `context.injected`, then the shared status
 * record's values put back (`restoreOriginal`, src/patch/status-record.ts). The inventory and the hook read a
 * deep-frozen copy of `pod` ({@link readOnlyCopy}): `pod` itself is never written. The hook's `pod` is that
 * copy with the inventory removed, whose kept parts are the copy's own, frozen: a hook copies what it changes
 * (every driver's does; a write into it throws). Returns undefined when the driver finds nothing it injected.
 * The result's pod is writable but for the parts shared between workloads (src/json.ts `share`), as
 * `removeInventory`'s; with `readOnly` (a caller that only reads it: the companion record's inject-time check)
 * it may hold parts of the frozen copy, and is not copied again (issue #40). Pure.
 * @throws InjectError from the inventory (an untrustworthy record), the removal or the hook: an error result;
 *   TypeError when a driver hook writes into what it may only read
 */
export function uninjectPod(
  mesh: ActiveMesh,
  pod: PodTemplate,
  context: Omit<UninjectContext, 'injected'>,
  readOnly = false,
): Uninjected | undefined {
  const view = readOnlyCopy(pod);
  const inventory = mesh.inventory(view);
  if (!inventory) return undefined;
  const removed = withoutInventory(view, inventory);
  const result = mesh.uninject ? mesh.uninject(removed, inventory, { ...context, injected: view }) : removed;
  const restored = restoreOriginal(result, view, mesh.recordKeys?.bind(mesh));
  return { pod: readOnly ? restored : copyUnshared(restored), inventory };
}
