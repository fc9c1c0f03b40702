/**
 * Strategic merge patch (SMP) of plain JSON objects, as `k8s.io/apimachinery/pkg/util/strategicpatch` applies it
 * (`StrategicMergeMapPatchUsingLookupPatchMeta` with `MergeParallelList` and `IgnoreUnmatchedNulls`). Generic and
 * driver-independent: the caller passes a {@link PatchSchema} describing which lists merge by which key. The
 * schemas for `corev1.Pod` and `corev1.PodTemplateSpec` ship in `patch-schema.ts` (`POD_SCHEMA`); their merge keys come from the
 * one table `MERGE_KEYS` (`src/workloads/merge-keys.ts`: the `patchMergeKey` struct tags of `k8s.io/api`), which the
 * text editors use too.
 *
 * Rules (strategicpatch `mergeMap`, `mergeSlice`, `normalizeElementOrder`, `mergeSortedSlice`):
 * - maps merge key by key; a `null` patch value deletes the key; `{"$patch": "replace"}` replaces the whole map,
 *   `{"$patch": "delete"}` empties it; `$retainKeys` drops original keys not listed;
 * - lists with a merge key merge element-wise by that key (elements of the patch not in the original are appended,
 *   elements in both are merged as maps); `{"$patch": "delete", <key>: v}` removes an element, `{"$patch": "replace"}`
 *   in a list replaces the list by the other patch elements; `$deleteFromPrimitiveList/<field>` removes scalars;
 * - lists of scalars with the `merge` strategy are unioned (deduplicated, original first);
 * - every other list, and values of different types, are replaced by the patch value;
 * - the order of a merged list is k8s's: patch elements and original-only elements each keep their relative order,
 *   and an original-only element goes before a patch element only when both occur in the original in that order, so
 *   patch elements that are new to the original come first (e.g. an injected container before the app).
 * Null values inside values taken from the patch are dropped (Go drops them when it decodes into typed structs).
 * Inputs are not mutated. Errors: `MeshInjectError` with code `BAD_MERGE` (message worded as strategicpatch's) for a
 * merge-key element without its key or an unknown `$patch` value.
 */
import { cloneJson, isJsonObject, isShared, jsonEqual, setOwn, withoutNulls } from '../json.ts';
import { quoteData } from '../results/quote.ts';
import type { Json, JsonObject } from '../model.ts';
import { MeshInjectError } from '../results/errors.ts';
import { EMPTY_SCHEMA, fieldSchema, type PatchSchema } from './patch-schema.ts';
import { isPlain, plainWithoutNulls, sharedWithoutNulls, type TrustedPatch } from './trusted-patch.ts';

/** A patch strategicpatch rejects (its wording), as the `BAD_MERGE` error. */
function mergeError(message: string): MeshInjectError {
  return new MeshInjectError('BAD_MERGE', message);
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

export { cloneJson } from '../json.ts';

/**
 * Drops a directive-only or directive-carrying patch down to plain data (for values new to the original).
 * Callers drop `null` map values (`withoutNulls`); a value with nothing to strip is returned as it is.
 */
function stripDirectives(v: Json, schema: PatchSchema | undefined): Json {
  if (isPlain(v, schema)) return v;
  if (Array.isArray(v)) {
    if (schema?.mergeKey && v.some(isJsonObject)) return mergeList([], v, schema);
    return v.map((x) => stripDirectives(x, schema?.items));
  }
  if (isJsonObject(v)) return mergeMap({}, v, schema);
  return v;
}

/**
 * {@link strategicMerge} of a checked patch (see {@link trustedPatch}): the same result, without the plain
 * check and null pruning per value. Values new to `original` are taken from the patch **without a copy**:
 * the result shares them with the patch, so the caller either owns the patch (and never uses it again) or
 * passes `copy: true`. `original` is not mutated.
 */
export function strategicMergeTrusted(
  original: JsonObject,
  patch: TrustedPatch,
  schema: PatchSchema = EMPTY_SCHEMA,
  copy = false,
): JsonObject {
  return mergeMap(cloneJson(original), copy ? cloneJson(patch.trusted) : patch.trusted, schema, true);
}

/**
 * {@link strategicMerge} of `patch` into `target` itself, or {@link strategicMergeTrusted} when `checked` (the
 * same patch, checked; `copy` as there): `target` is changed and returned, and nothing of it is copied but a
 * shared subtree (`share`) it holds, before a write into it. For a target the caller owns (no one else holds it
 * or a collection in it, e.g. a fresh `cloneJson`): it saves the copy of the whole original.
 */
export function strategicMergeInto(
  target: JsonObject,
  patch: JsonObject,
  schema: PatchSchema = EMPTY_SCHEMA,
  checked?: TrustedPatch,
  copy = false,
): JsonObject {
  if (checked === undefined) return mergeMap(target, patch, schema);
  return mergeMap(target, copy ? cloneJson(checked.trusted) : checked.trusted, schema, true);
}

/**
 * Applies `patch` to `original` with strategic-merge semantics (see the module comment).
 * @param original the current object (not mutated)
 * @param patch the patch object (not mutated)
 * @param schema merge keys of the object's type, e.g. `POD_SCHEMA` (patch-schema.ts)
 * @returns a new merged object
 */
export function strategicMerge(
  original: JsonObject,
  patch: JsonObject,
  schema: PatchSchema = EMPTY_SCHEMA,
): JsonObject {
  return mergeMap(cloneJson(original), patch, schema);
}

/**
 * `mergeMap`: merges `patch` into `original` (which it owns and may mutate). `trusted`: the patch is plain
 * data without nulls (see `trustedPatch`) that the caller gives away, so new values are taken as they are.
 */
function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  schema: PatchSchema | undefined,
  trusted = false,
): JsonObject {
  const directive = patch[DIRECTIVE];
  if (directive !== undefined) {
    if (directive === 'replace') {
      const rest: JsonObject = {};
      for (const [k, v] of Object.entries(patch)) if (k !== DIRECTIVE) setOwn(rest, k, v);
      return withoutNulls(rest) as JsonObject;
    }
    if (directive === 'delete') return {};
    throw mergeError(`unknown patch type: ${quoteData(directive)} in map: ${quoteData(patch)}`);
  }
  const retain = patch[RETAIN_KEYS];
  if (Array.isArray(retain)) {
    const keep = new Set(retain.map(String));
    for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
  }
  // `for...in`, not `Object.entries`: no pair per key (a JSON object inherits no enumerable key). A key holding
  // undefined (not JSON, but a typed pod may carry one) goes through as `Object.entries` gave it.
  for (const k in patch) {
    const patchV = patch[k] as Json;
    if (k.charCodeAt(0) === 36 /* $ */) {
      if (k === RETAIN_KEYS || k.startsWith(SET_ELEMENT_ORDER)) continue;
      if (k.startsWith(DELETE_FROM_PRIMITIVE)) {
        const field = k.slice(DELETE_FROM_PRIMITIVE.length);
        const cur = Object.hasOwn(original, field) ? original[field] : undefined;
        if (Array.isArray(cur) && Array.isArray(patchV)) {
          setOwn(
            original,
            field,
            cur.filter((x) => !patchV.some((d) => jsonEqual(d, x))),
          );
        }
        continue;
      }
    }
    const sub = fieldSchema(schema, k);
    if (patchV === null) {
      delete original[k];
      continue;
    }
    // Own keys only: a data key `__proto__` read by `original[k]` would give `Object.prototype`, and the merge would
    // then write the patch's keys into it (every object of the process would inherit them).
    const origV = Object.hasOwn(original, k) ? original[k] : undefined;
    if (origV === undefined) {
      setOwn(original, k, taken(patchV, sub, trusted));
    } else if (isJsonObject(origV) && isJsonObject(patchV)) {
      setOwn(
        original,
        k,
        sub?.replace ? (taken(patchV, sub, trusted) as JsonObject) : mergeMap(writable(origV), patchV, sub, trusted),
      );
    } else if (Array.isArray(origV) && Array.isArray(patchV)) {
      setOwn(
        original,
        k,
        sub?.mergeKey || sub?.mergeScalars ? mergeList(origV, patchV, sub, trusted) : taken(patchV, sub, trusted),
      );
    } else {
      setOwn(original, k, taken(patchV, sub, trusted));
    }
  }
  return original;
}

/**
 * A patch value new to the original (or replacing it), as the merge stores it: the value itself for a `trusted`
 * patch (plain, null-free, given away), else its plain null-free copy (`plainWithoutNulls`; directives stripped
 * first where it has any).
 */
function taken(patchV: Json, sub: PatchSchema | undefined, trusted: boolean): Json {
  return trusted ? patchV : (plainWithoutNulls(patchV, sub) ?? withoutNulls(stripDirectives(patchV, sub)));
}

/**
 * `v`, or a shallow copy of it when it is shared (`share`: deep-frozen). A map merged into is written to; a value
 * taken from the patch earlier in the same merge (a list entry whose merge key repeats) may be a shared subtree
 * of the patch, which must stay as it is.
 */
function writable(v: JsonObject): JsonObject {
  if (!Object.isFrozen(v) || !isShared(v)) return v;
  const copy: JsonObject = {};
  for (const k in v) setOwn(copy, k, v[k] as Json);
  return copy;
}

/** `mergeSlice` for a list with a merge strategy; `original` is owned. */
function mergeList(original: Json[], patch: Json[], schema: PatchSchema | undefined, trusted = false): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const mergeKey = schema?.mergeKey;
  const isMaps = original.some(isJsonObject) || patch.some(isJsonObject);
  if (!isMaps) return mergeScalarList(original, patch);
  if (!mergeKey) throw mergeError('cannot merge lists without merge key');
  const { orig, plain } = applySpecialElements(original, patch, mergeKey, schema);
  return mergeByKey(orig, plain, mergeKey, schema, trusted);
}

/** `mergeSlice` for a list of scalars: the union without duplicates, in the order `normalizeOrder` gives. */
function mergeScalarList(original: Json[], patch: Json[]): Json[] {
  const merged: Json[] = [];
  const seen = new Set<string>();
  for (const x of [...original, ...patch]) {
    const id = canonical(x);
    if (!seen.has(id)) merged.push(x);
    seen.add(id);
  }
  const inPatch = new Set(patch.map(canonical));
  const [patchItems, serverOnly] = partition(merged, (x) => inPatch.has(canonical(x)));
  return normalizeOrder(patchItems, serverOnly, patch, original, canonical);
}

/**
 * `mergeSliceWithSpecialElements`: applies the `$patch` directives of a list of maps. `delete` drops the
 * original elements with the same merge key, `replace` makes the plain patch elements the whole list.
 * Returns the original list after those and the patch elements left to merge. Throws a merge error on a
 * non-object element, a missing merge key, `$patch: merge` or an unknown directive.
 */
function applySpecialElements(
  original: Json[],
  patch: Json[],
  mergeKey: string,
  schema: PatchSchema | undefined,
): { orig: Json[]; plain: Json[] } {
  let orig = original;
  const plain: Json[] = [];
  let replace = false;
  for (const v of patch) {
    if (!isJsonObject(v)) throw mergeError(`list element is not an object: ${quoteData(v)}`);
    const d = v[DIRECTIVE];
    if (d === undefined) {
      plain.push(v);
    } else if (d === 'delete') {
      if (!(mergeKey in v)) throw mergeError(`map: ${quoteData(v)} does not contain declared merge key: ${mergeKey}`);
      orig = orig.filter((o) => !(isJsonObject(o) && jsonEqual(o[mergeKey], v[mergeKey])));
    } else if (d === 'replace') {
      replace = true;
    } else if (d === 'merge') {
      throw mergeError('merging lists cannot yet be specified in the patch');
    } else {
      throw mergeError(`unknown patch type: ${quoteData(d)} in map: ${quoteData(v)}`);
    }
  }
  if (replace) return { orig: plain.map((x) => withoutNulls(stripDirectives(x, schema?.items))), plain: [] };
  return { orig, plain };
}

/**
 * `mergeSliceWithoutSpecialElements`: merges each patch map into the original element with the same merge
 * key (the first one), appends the others, then orders the result with `normalizeOrder`. `orig` is owned.
 * Throws a merge error when a patch element lacks the merge key.
 */
function mergeByKey(
  orig: Json[],
  plain: Json[],
  mergeKey: string,
  schema: PatchSchema | undefined,
  trusted: boolean,
): Json[] {
  if (disjointStringKeys(orig, plain, mergeKey)) {
    // What the general path below gives for such lists: no element merges into another, `normalizeOrder` keeps
    // each list's order and puts the patch elements (all new) first.
    const out: Json[] = new Array(plain.length + orig.length);
    for (let i = 0; i < plain.length; i++) {
      const pv = plain[i] as JsonObject;
      out[i] = trusted ? pv : newEntry(pv, schema?.items);
    }
    for (let i = 0; i < orig.length; i++) out[plain.length + i] = orig[i] as Json;
    return out;
  }
  const keyId = (x: Json): string => (isJsonObject(x) && x[mergeKey] !== undefined ? canonical(x[mergeKey]) : 'none');
  const merged = [...orig];
  const at = new Map<string, number>();
  merged.forEach((o, i) => {
    if (isJsonObject(o) && o[mergeKey] !== undefined && !at.has(keyId(o))) at.set(keyId(o), i);
  });
  for (const v of plain) {
    const pv = v as JsonObject;
    if (!(mergeKey in pv)) throw mergeError(`map: ${quoteData(pv)} does not contain declared merge key: ${mergeKey}`);
    const idx = pv[mergeKey] === undefined ? -1 : (at.get(keyId(pv)) ?? -1);
    if (idx >= 0) merged[idx] = mergeMap(writable(merged[idx] as JsonObject), pv, schema?.items, trusted);
    else {
      if (pv[mergeKey] !== undefined) at.set(keyId(pv), merged.length);
      merged.push(trusted ? pv : newEntry(pv, schema?.items));
    }
  }
  const inPatch = new Set(plain.map(keyId));
  const [patchItems, serverOnly] = partition(merged, (x) => inPatch.has(keyId(x)));
  // The original's entries as merged (strategicpatch orders by the merged maps): the same objects, but for a
  // shared one, which was merged into as a copy (`writable`).
  return normalizeOrder(patchItems, serverOnly, plain, merged.slice(0, orig.length), keyId);
}

/**
 * `mergeMap({}, pv, schema)`: a patch list entry new to the original, as the merge stores it. A shared entry
 * (`share`: a sidecar plan's token-free part, met by every workload it serves) that is plain is answered once,
 * shared (`plainWithoutNulls`, memoised per subtree): merged into an empty map, a plain map's keys are each taken
 * as `plainWithoutNulls` takes them, in order, its nulls left out. An entry with a key `__proto__` takes the general
 * path, whose reads and writes are of own keys only.
 */
function newEntry(pv: JsonObject, schema: PatchSchema | undefined): Json {
  const shared = Object.hasOwn(pv, '__proto__') ? undefined : sharedWithoutNulls(pv, schema);
  return shared ?? mergeMap({}, pv, schema);
}

/**
 * Whether every element of both lists is a map whose merge key holds a string, and no string occurs twice (within a
 * list or across both): the lists an injection merges most (the app's containers and the injected ones, volumes).
 */
function disjointStringKeys(orig: Json[], plain: Json[], mergeKey: string): boolean {
  const seen = new Set<string>();
  for (const list of [orig, plain]) {
    for (const x of list) {
      const k = isJsonObject(x) ? x[mergeKey] : undefined;
      if (typeof k !== 'string' || seen.has(k)) return false;
      seen.add(k);
    }
  }
  return true;
}

/**
 * A string that is equal for two values exactly when `jsonEqual` holds (object key order ignored), so
 * list elements can be found by hashing instead of by pairwise comparison.
 */
function canonical(v: Json | undefined): string {
  if (v === undefined) return 'undefined';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
    .join(',')}}`;
}

function partition(list: Json[], inPatch: (x: Json) => boolean): [Json[], Json[]] {
  const a: Json[] = [];
  const b: Json[] = [];
  for (const x of list) (inPatch(x) ? a : b).push(x);
  return [a, b];
}

/** `normalizeElementOrder` + `mergeSortedSlice`; `id` identifies an element (equal ids: the same element). */
function normalizeOrder(
  patchItems: Json[],
  serverOnly: Json[],
  patchOrder: Json[],
  serverOrder: Json[],
  id: (x: Json) => string,
): Json[] {
  const firstIndex = new Map<Json[], Map<string, number>>();
  for (const list of [patchOrder, serverOrder]) {
    const m = new Map<string, number>();
    list.forEach((y, i) => {
      const k = id(y);
      if (!m.has(k)) m.set(k, i);
    });
    firstIndex.set(list, m);
  }
  const index = (list: Json[], x: Json): number => firstIndex.get(list)?.get(id(x)) ?? -1;
  const sortBy = (items: Json[], order: Json[]): Json[] =>
    items
      .map((x, i) => ({ x, i, k: index(order, x) }))
      .sort((a, b) => (a.k >= 0 && b.k >= 0 && a.k !== b.k ? a.k - b.k : a.i - b.i))
      .map((e) => e.x);
  const right = sortBy(patchItems, patchOrder);
  const left = sortBy(serverOnly, serverOrder);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    // Json values are never undefined: an undefined entry is the end of its list.
    const l = left[i];
    const r = right[j];
    if (l !== undefined && (r === undefined || precedes(index(serverOrder, l), index(serverOrder, r)))) {
      out.push(l);
      i++;
    } else {
      if (r !== undefined) out.push(r);
      j++;
    }
  }
  return out;
}

/**
 * `mergeSortedSlice`'s test: an original-only element (at `li` in the server order) goes before a patch element (at
 * `ri`) only when both occur in the original, in that order.
 */
function precedes(li: number, ri: number): boolean {
  return li >= 0 && ri >= 0 && li < ri;
}
