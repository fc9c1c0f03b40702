/**
 * ContainerPatch (kuma.io/v1alpha1, in the system namespace): JSON Patch operations applied to kuma-sidecar
 * (`sidecarPatch`) and kuma-init or kuma-validation (`initPatch`). The patches applied to a pod are the
 * injector's `containerPatches` list, then the names of the pod's `kuma.io/container-patches` annotation
 * (Kuma `loadContainerPatches`); they run on the container's JSON with evanphx/json-patch v5 and
 * `EnsurePathExistsOnAdd` (`applyCustomPatches`, injector.go at 348b6528).
 */
import jsonPatch from 'fast-json-patch';
import { quoteData } from '../../results/quote.ts';
import { isJsonObject, setOwn } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { CONTAINER_PATCHES, readList } from './annotations.ts';
import type { KumaSettings, PatchOp } from './config.ts';
import { defined } from '../../checked.ts';

/** The sidecar and init patches of a pod, with the names of the ContainerPatches they come from. */
export interface PodPatches {
  sidecar: { names: string[]; ops: PatchOp[] };
  init: { names: string[]; ops: PatchOp[] };
}

/**
 * The patches for a pod with `annotations` (Kuma `loadContainerPatches`).
 * @throws InjectError naming every ContainerPatch that `spec.kuma.containerPatches` lacks
 */
export function podPatches(annotations: Record<string, string>, s: KumaSettings): PodPatches {
  const names = [...s.injector.containerPatches, ...(readList(annotations, CONTAINER_PATCHES) ?? [])];
  const missing = names.filter((n) => !Object.hasOwn(s.containerPatches, n));
  if (missing.length > 0) {
    throw new InjectError(
      `it appears some expected container patches are missing: ${goQuoted(missing)} (give them in spec.kuma.containerPatches)`,
      { field: `metadata.annotations[${CONTAINER_PATCHES}]` },
    );
  }
  const out: PodPatches = { sidecar: { names: [], ops: [] }, init: { names: [], ops: [] } };
  for (const n of names) {
    const p = defined(s.containerPatches[n], `ContainerPatch ${n}`);
    if (p.sidecarPatch.length > 0) {
      out.sidecar.names.push(n);
      out.sidecar.ops.push(...p.sidecarPatch);
    }
    if (p.initPatch.length > 0) {
      out.init.names.push(n);
      out.init.ops.push(...p.initPatch);
    }
  }
  return out;
}

/** Go's `%q` of a string list: `["a" "b"]`. */
function goQuoted(list: string[]): string {
  return `[${list.map((x) => JSON.stringify(x)).join(' ')}]`;
}

const unescapePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

/** Creates the missing parents of `path` in `doc` (json-patch v5 `EnsurePathExistsOnAdd`): a list before an index or `-`, else an object. */
function ensureParents(doc: JsonObject, path: string): void {
  const parts = path.split('/').slice(1).map(unescapePointer);
  let node: Json = doc;
  for (const [i, key] of parts.slice(0, -1).entries()) {
    const next = defined(parts[i + 1], 'the next part of a JSON pointer');
    if (Array.isArray(node)) {
      node = node[Number(key)] ?? null;
      continue;
    }
    if (!isJsonObject(node)) return;
    // Own keys only: a path through `__proto__` or `constructor` names a key of the container, never its prototype.
    let child: Json | undefined = Object.hasOwn(node, key) ? node[key] : undefined;
    if (child === undefined || child === null) {
      child = /^[0-9]+$/.test(next) || next === '-' ? [] : {};
      setOwn(node, key, child);
    }
    node = child;
  }
}

/**
 * The most JSON (UTF-16 units, `JSON.stringify`) the `copy` operations of one container's patches may copy in
 * all: copying a few fields within a container stays far below it. A departure from Kuma, which has no bound:
 * each `copy` can double the container, so 40 of them in a few hundred bytes of config would build 2^40 values
 * and end the process out of memory (issue #36). What `add` and `replace` bring is their value text, bounded by
 * the config's size.
 */
export const COPY_BUDGET = 1 << 20;

/**
 * `container` with `patch.ops` applied (a new object; the input is not changed); the container itself when
 * there are none. The values the `copy` operations copy may add up to `COPY_BUDGET`.
 * @throws InjectError naming the ContainerPatches when an operation fails, or when they change the
 *   container's name (a departure from Kuma, which allows it: re-injection and uninject find Kuma's containers by name)
 */
export function applyPatches(container: JsonObject, patch: { names: string[]; ops: PatchOp[] }): JsonObject {
  if (patch.ops.length === 0) return container;
  const doc = structuredClone(container);
  let copied = 0;
  try {
    for (const op of patch.ops) {
      const value = op.value === undefined ? undefined : (JSON.parse(op.value) as Json);
      if (op.op === 'add') ensureParents(doc, op.path);
      const operation = {
        op: op.op,
        path: op.path,
        ...(op.from !== undefined ? { from: op.from } : {}),
        ...(value !== undefined ? { value } : {}),
      } as jsonPatch.Operation;
      if (op.op === 'copy' && op.from !== undefined) {
        // Measured before the copy is made: the value at `from` is what it adds (undefined: the copy fails below).
        copied += JSON.stringify(jsonPatch.getValueByPointer(doc, op.from) ?? null).length;
        if (copied > COPY_BUDGET) {
          throw new InjectError(
            `patches ${goQuoted(patch.names)} copy more than ${COPY_BUDGET} bytes of JSON within ${String(container.name)} (the copy from ${quoteData(op.from)} to ${quoteData(op.path)} passes it): each copy duplicates its value, so a few of them can build more than any heap holds`,
          );
        }
      }
      jsonPatch.applyOperation(doc, operation, true, true, true);
    }
  } catch (e) {
    if (e instanceof InjectError) throw e;
    throw new InjectError(
      `could not apply patches ${goQuoted(patch.names)}: ${String((e as Error).message).split('\n')[0]}`,
    );
  }
  if (doc.name !== container.name) {
    // Kuma lets a patch rename its container; the next run (and uninject) could then not find it again.
    throw new InjectError(
      `patches ${goQuoted(patch.names)} rename ${String(container.name)} to ${quoteData(doc.name)}: a renamed Kuma container cannot be found again by a later run or by uninject`,
    );
  }
  return doc;
}
