/**
 * Strategic merge patch (SMP) of plain JSON objects, as `k8s.io/apimachinery/pkg/util/strategicpatch` applies it
 * (`StrategicMergeMapPatchUsingLookupPatchMeta` with `MergeParallelList` and `IgnoreUnmatchedNulls`). Generic and
 * driver-independent: the caller passes a {@link PatchSchema} describing which lists merge by which key. The
 * schemas for `corev1.Pod` and `corev1.PodTemplateSpec` ship here ({@link POD_SCHEMA}); their merge keys come from the
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
import {
  cloneJson,
  getOrMake,
  hasNullEntry,
  isJsonObject,
  isShared,
  jsonEqual,
  setOwn,
  withoutNulls,
} from '../json.ts';
import { quoteData } from '../results/quote.ts';
import type { Json, JsonObject } from '../model.ts';
import { MeshInjectError } from '../results/errors.ts';
import { MERGE_KEYS } from '../workloads/merge-keys.ts';

/** A patch strategicpatch rejects (its wording), as the `BAD_MERGE` error. */
function mergeError(message: string): MeshInjectError {
  return new MeshInjectError('BAD_MERGE', message);
}

/** What the strategic merge knows about one field: a struct (fields), or a list (merge key, item schema). */
export interface PatchSchema {
  /** Sub-schemas of an object's fields. */
  fields?: Readonly<Record<string, PatchSchema>>;
  /** For a list: merge its elements by this key (patchStrategy `merge` + patchMergeKey). */
  mergeKey?: string;
  /** For a list of scalars: patchStrategy `merge` (union). */
  mergeScalars?: boolean;
  /** For a map field: patchStrategy `replace` (the patch map replaces the original). */
  replace?: boolean;
  /** Schema of a list's elements. */
  items?: PatchSchema;
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

const CONTAINER: PatchSchema = {
  fields: {
    ports: { mergeKey: MERGE_KEYS.ports },
    env: { mergeKey: MERGE_KEYS.env },
    volumeMounts: { mergeKey: MERGE_KEYS.volumeMounts },
    volumeDevices: { mergeKey: MERGE_KEYS.volumeDevices },
  },
};

/** `corev1.PodSpec` merge keys. */
export const POD_SPEC_SCHEMA: PatchSchema = {
  fields: {
    volumes: { mergeKey: MERGE_KEYS.volumes },
    initContainers: { mergeKey: MERGE_KEYS.initContainers, items: CONTAINER },
    containers: { mergeKey: MERGE_KEYS.containers, items: CONTAINER },
    ephemeralContainers: { mergeKey: MERGE_KEYS.ephemeralContainers, items: CONTAINER },
    imagePullSecrets: { mergeKey: MERGE_KEYS.imagePullSecrets },
    hostAliases: { mergeKey: MERGE_KEYS.hostAliases },
    topologySpreadConstraints: { mergeKey: MERGE_KEYS.topologySpreadConstraints },
    schedulingGates: { mergeKey: MERGE_KEYS.schedulingGates },
    resourceClaims: { mergeKey: MERGE_KEYS.resourceClaims },
  },
};

/** `metav1.ObjectMeta` merge keys. */
export const OBJECT_META_SCHEMA: PatchSchema = {
  fields: {
    ownerReferences: { mergeKey: MERGE_KEYS.ownerReferences },
    finalizers: { mergeScalars: true },
  },
};

/** Schema of a `corev1.Pod` or a `corev1.PodTemplateSpec` (`metadata` + `spec`). */
export const POD_SCHEMA: PatchSchema = {
  fields: { metadata: OBJECT_META_SCHEMA, spec: POD_SPEC_SCHEMA },
};

/** Schema that knows no field: every list is replaced, every map merged (JSON-merge-like with directives). */
export const EMPTY_SCHEMA: PatchSchema = {};

export { cloneJson } from '../json.ts';

/**
 * Whether stripping directives would return `v` unchanged but for `null` map values: no `$` key anywhere,
 * and every merge-keyed list holds objects with distinct merge keys (so no element merges into another).
 */
function isPlain(v: Json, schema: PatchSchema | undefined): boolean {
  if (typeof v !== 'object' || v === null) return true; // (most calls: the scalars of a fragment)
  if (!isShared(v)) return checkPlain(v, schema);
  // A shared subtree (a sidecar plan's token-free part) cannot change: checked once per schema.
  const bySchema = getOrMake(PLAIN_SHARED, v, () => new Map());
  return getOrMake(bySchema, schema, () => checkPlain(v, schema));
}

/**
 * `isPlain` of shared subtrees (`isShared` of ../json.ts), by subtree and schema.
 * Module state by design: a memo keyed by deep-frozen subtrees and immutable schemas.
 */
const PLAIN_SHARED = new WeakMap<object, Map<PatchSchema | undefined, boolean>>();

function checkPlain(v: Json, schema: PatchSchema | undefined): boolean {
  if (Array.isArray(v)) {
    if (!distinctMergeKeys(v, schema)) return false;
    for (const x of v) if (!isPlain(x, schema?.items)) return false;
    return true;
  }
  if (isJsonObject(v)) {
    for (const k in v) {
      if (k.charCodeAt(0) === 36 /* $ */ || !isPlain(v[k]!, schema?.fields?.[k])) return false;
    }
  }
  return true;
}

/**
 * For a list whose schema has a merge key and that holds a map: whether every entry is a map with that key
 * and no two keys are the same (true for any other list).
 */
function distinctMergeKeys(v: Json[], schema: PatchSchema | undefined): boolean {
  const key = schema?.mergeKey;
  if (!key || !v.some(isJsonObject)) return true;
  // Scalars are their own identity (1 and '1' stay apart); collections by their JSON. Lists are short:
  // ids are compared pairwise up to 8 entries, through a Set beyond.
  const ids: Array<Json | undefined> = [];
  const seen = v.length > 8 ? new Set<Json | undefined>() : undefined;
  for (const x of v) {
    if (!isJsonObject(x) || !(key in x)) return false;
    const k = x[key];
    const id = typeof k === 'object' && k !== null ? `\u0000${JSON.stringify(k)}` : k;
    if (seen ? seen.has(id) : ids.includes(id)) return false;
    if (seen) seen.add(id);
    else ids.push(id);
  }
  return true;
}

/**
 * `withoutNulls(v)` when `v` is plain (`isPlain`: nothing for `stripDirectives` to do), in one walk instead of
 * two; undefined when it is not (the caller strips directives first).
 */
function plainWithoutNulls(v: Json, schema: PatchSchema | undefined): Json | undefined {
  if (typeof v !== 'object' || v === null) return v;
  if (isShared(v)) return isPlain(v, schema) ? withoutNulls(v) : undefined;
  if (Array.isArray(v)) {
    if (!distinctMergeKeys(v, schema)) return undefined;
    const out: Json[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = plainWithoutNulls(v[i]!, schema?.items);
      if (x === undefined) return undefined;
      out[i] = x;
    }
    return out;
  }
  const out: JsonObject = {};
  for (const k in v) {
    if (k.charCodeAt(0) === 36 /* $ */) return undefined;
    const x = v[k]!;
    if (x === null) continue;
    const y = plainWithoutNulls(x, schema?.fields?.[k]);
    if (y === undefined) return undefined;
    setOwn(out, k, y);
  }
  return out;
}

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

/** A patch that {@link trustedPatch} checked: plain data, applied without further checks or copies. */
export interface TrustedPatch {
  readonly trusted: JsonObject;
}

/**
 * `patch` as a {@link TrustedPatch} when merging it needs neither directive handling nor null pruning: no `$`
 * key, no `null` anywhere (a null in a patch deletes a key, inside a new value it is dropped: both need the
 * checked path), and every merge-keyed list holds objects with distinct merge keys. Otherwise undefined, and
 * the caller uses {@link strategicMerge}. Used for data meshinject built (a parsed template fragment), which
 * is then merged twice with one check instead of two.
 */
export function trustedPatch(patch: JsonObject, schema: PatchSchema = EMPTY_SCHEMA): TrustedPatch | undefined {
  // The null check first: it stops at the first null, and template output often has one (Istio's `emptyDir:`).
  return !hasNullEntry(patch) && isPlain(patch, schema) ? { trusted: patch } : undefined;
}

/**
 * `fillsTrust` answers, by template and schema.
 * Module state by design: a memo keyed by a plan's output (never changed) and immutable schemas.
 */
const FILLS_TRUST = new WeakMap<object, Map<PatchSchema, FillsTrust>>();

/**
 * What {@link trustedPatch} says of the fills of `template`: `all` pass, `none` passes, or `each` must be
 * checked. A fill writes a string or number into each place `holdsSlot` names (a sidecar plan's output and
 * its tokens, `fill` of ../render/plan-values.ts) and keeps everything else, so:
 * - `none` when `template` itself fails: a fill keeps every null, every `$` key (a slot never starts a key
 *   with `$`), and gives equal merge keys equal values, so it fails the same way;
 * - `all` when `template` passes and no slot stands in a map key (a filled key could start with `$`, a
 *   directive) or in the merge-key value of a merge-keyed list's entry (filled values could repeat): a fill
 *   then changes only values that neither check reads, and it writes no null;
 * - `each` otherwise.
 * Remembered per template (a plan's output never changes).
 */
export function fillsTrust(template: JsonObject, schema: PatchSchema, holdsSlot: (v: Json) => boolean): FillsTrust {
  const bySchema = getOrMake(FILLS_TRUST, template, () => new Map());
  let trust = bySchema.get(schema);
  if (trust === undefined) {
    trust =
      trustedPatch(template, schema) === undefined
        ? 'none'
        : slotsOnlyInValues(template, schema, holdsSlot)
          ? 'all'
          : 'each';
    bySchema.set(schema, trust);
  }
  return trust;
}

/** See {@link fillsTrust}. */
export type FillsTrust = 'all' | 'none' | 'each';

/** No slot in a map key or a merge-key value of `v` (see `fillsTrust`). */
function slotsOnlyInValues(v: Json, schema: PatchSchema | undefined, holdsSlot: (v: Json) => boolean): boolean {
  if (typeof v !== 'object' || v === null || !holdsSlot(v)) return true;
  if (Array.isArray(v)) {
    const key = schema?.mergeKey;
    for (const x of v) {
      if (key && isJsonObject(x) && Object.hasOwn(x, key) && holdsSlot(x[key]!)) return false;
      if (!slotsOnlyInValues(x, schema?.items, holdsSlot)) return false;
    }
    return true;
  }
  for (const k in v) {
    if (holdsSlot(k) || !slotsOnlyInValues(v[k]!, schema?.fields?.[k], holdsSlot)) return false;
  }
  return true;
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
 * Applies `patch` to `original` with strategic-merge semantics (see the module comment).
 * @param original the current object (not mutated)
 * @param patch the patch object (not mutated)
 * @param schema merge keys of the object's type, e.g. {@link POD_SCHEMA}
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
  for (const [rawKey, patchV] of Object.entries(patch)) {
    if (rawKey === RETAIN_KEYS || rawKey.startsWith(SET_ELEMENT_ORDER)) continue;
    if (rawKey.startsWith(DELETE_FROM_PRIMITIVE)) {
      const k = rawKey.slice(DELETE_FROM_PRIMITIVE.length);
      const cur = original[k];
      if (Array.isArray(cur) && Array.isArray(patchV)) {
        original[k] = cur.filter((x) => !patchV.some((d) => jsonEqual(d, x)));
      }
      continue;
    }
    const k = rawKey;
    const sub = schema?.fields?.[k];
    if (patchV === null) {
      delete original[k];
      continue;
    }
    const origV = original[k];
    const taken = (): Json =>
      trusted ? patchV : (plainWithoutNulls(patchV, sub) ?? withoutNulls(stripDirectives(patchV, sub)));
    if (origV === undefined) {
      original[k] = taken();
      continue;
    }
    if (isJsonObject(origV) && isJsonObject(patchV)) {
      original[k] = sub?.replace ? (taken() as JsonObject) : mergeMap(origV, patchV, sub, trusted);
    } else if (Array.isArray(origV) && Array.isArray(patchV)) {
      original[k] = sub?.mergeKey || sub?.mergeScalars ? mergeList(origV, patchV, sub, trusted) : taken();
    } else {
      original[k] = taken();
    }
  }
  return original;
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
    if (idx >= 0) merged[idx] = mergeMap(merged[idx] as JsonObject, pv, schema?.items, trusted);
    else {
      if (pv[mergeKey] !== undefined) at.set(keyId(pv), merged.length);
      merged.push(trusted ? pv : mergeMap({}, pv, schema?.items));
    }
  }
  const inPatch = new Set(plain.map(keyId));
  const [patchItems, serverOnly] = partition(merged, (x) => inPatch.has(keyId(x)));
  return normalizeOrder(patchItems, serverOnly, plain, orig, keyId);
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
  const index = (list: Json[], x: Json): number => firstIndex.get(list)!.get(id(x)) ?? -1;
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
    if (i >= left.length) out.push(right[j++]!);
    else if (j >= right.length) out.push(left[i++]!);
    else {
      const li = index(serverOrder, left[i]!);
      const ri = index(serverOrder, right[j]!);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]!);
      else out.push(right[j++]!);
    }
  }
  return out;
}
