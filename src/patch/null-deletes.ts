/**
 * Where a patch's nulls would delete something in a strategic merge (`strategic-merge.ts`). A `null` map value of a
 * patch deletes the original's key where the merge meets both (strategicpatch `mergeMap`); everywhere else, inside
 * a value the merge takes from the patch, it is dropped. A plain patch (`isPlain` of trusted-patch.ts) whose nulls
 * delete nothing therefore merges as the same patch without its nulls, which needs no null pruning per value.
 */
import { isJsonObject } from '../json.ts';
import type { Json, JsonObject } from '../model.ts';
import { fieldSchema, type PatchSchema } from './patch-schema.ts';

/**
 * Whether `strategicMerge(original, patch, schema)` (or `strategicMergeInto`) deletes no key of `original` for a
 * `null` of `patch`, and takes every new entry of a merge-keyed list as a plain copy would: so that merging the
 * null-free copy of a plain `patch` as trusted (`strategicMergeTrusted`) gives the same result. Walks only where the
 * merge meets both sides, as `mergeMap` does: a map into a map (not a `replace` field), a merge-keyed list entry into
 * the original entry with the same merge key. Conservative: false for anything it does not follow exactly (a `$`
 * key, a `__proto__` key, a list entry that is not a map or whose merge key is not a string, a finite number or a
 * boolean, a new list entry holding an own `__proto__`, left to the general merge's own-key writes), and the caller
 * then merges the patch as it is. `original` and `patch` are only read. Cost: the part of `patch` the merge meets in
 * `original` (for an injection, the pod's metadata maps and the container lists' merge keys).
 */
export function nullsDeleteNothing(original: JsonObject, patch: JsonObject, schema: PatchSchema | undefined): boolean {
  for (const k in patch) {
    const p = patch[k];
    if (k.charCodeAt(0) === 36 /* $ */ || k === '__proto__' || p === undefined) return false;
    if (p === null) {
      if (Object.hasOwn(original, k)) return false;
      continue;
    }
    const o = Object.hasOwn(original, k) ? original[k] : undefined;
    if (typeof p !== 'object' || o === undefined) continue;
    const sub = fieldSchema(schema, k);
    if (isJsonObject(o) && isJsonObject(p)) {
      if (!sub?.replace && !nullsDeleteNothing(o, p, sub)) return false;
    } else if (Array.isArray(o) && Array.isArray(p) && (sub?.mergeKey || sub?.mergeScalars)) {
      if (!listDeletesNothing(o, p, sub)) return false;
    }
  }
  return true;
}

/**
 * {@link nullsDeleteNothing} for two lists the merge merges (`mergeList`): lists of scalars are unioned (no map,
 * no null map value); a patch map entry merges into the first original map entry with an equal merge key (`mergeByKey`,
 * whose canonical ids equal exactly when a string, finite number or boolean key is the same value of the same type)
 * and is otherwise new.
 */
function listDeletesNothing(original: Json[], patch: Json[], schema: PatchSchema): boolean {
  const key = schema.mergeKey;
  if (!patch.some(isJsonObject) && !original.some(isJsonObject)) return true;
  if (!key) return false;
  for (const pv of patch) {
    if (!isJsonObject(pv) || !simpleKey(pv[key])) return false;
    const into = original.find((o) => isJsonObject(o) && sameKey(o[key], pv[key]));
    if (isJsonObject(into)) {
      if (!nullsDeleteNothing(into, pv, schema.items)) return false;
    } else if (Object.hasOwn(pv, '__proto__')) return false;
  }
  return true;
}

function simpleKey(v: Json | undefined): boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

/** `canonical(a) === canonical(b)` of strategic-merge.ts for a `simpleKey` `b`. */
function sameKey(a: Json | undefined, b: Json | undefined): boolean {
  return typeof a === typeof b && a === b;
}
