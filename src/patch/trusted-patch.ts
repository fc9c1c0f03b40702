/**
 * Which patches the strategic merge (`strategic-merge.ts`) may apply without directive handling or null pruning:
 * plain data (no `$` key, no `null`, distinct merge keys in every merge-keyed list), checked once per patch and,
 * for a sidecar plan's output, once per template (`fillsTrust`).
 */
import { getOrMake, hasNullEntry, isJsonObject, isShared, setOwn, share, withoutNulls } from '../json.ts';
import type { Json, JsonObject } from '../model.ts';
import { EMPTY_SCHEMA, fieldSchema, type PatchSchema } from './patch-schema.ts';

/**
 * Whether stripping directives would return `v` unchanged but for `null` map values: no `$` key anywhere,
 * and every merge-keyed list holds objects with distinct merge keys (so no element merges into another).
 */
export function isPlain(v: Json, schema: PatchSchema | undefined): boolean {
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
      const x = v[k];
      if (k.charCodeAt(0) === 36 /* $ */ || (x !== undefined && !isPlain(x, fieldSchema(schema, k)))) return false;
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
 * two; undefined when it is not (the caller strips directives first). For a shared subtree (`share`) the answer
 * is worked out once and is shared itself (see `sharedPlainWithoutNulls`). Every other collection is a new copy.
 */
export function plainWithoutNulls(v: Json, schema: PatchSchema | undefined): Json | undefined {
  return plainDropping(v, schema, false);
}

/**
 * {@link plainWithoutNulls} that copies only what it changes: a collection with no null or undefined map value
 * anywhere in it is returned as it is, and a copy is made only of the collections on the way to a value it
 * drops (their other entries are the same objects as in `v`). The result may hold parts of `v`: for a value the
 * caller gives away (nobody changes `v` through another holder afterwards). Undefined when `v` is not plain.
 */
export function plainDroppingNulls(v: Json, schema: PatchSchema | undefined): Json | undefined {
  return plainDropping(v, schema, true);
}

/** {@link plainWithoutNulls} (`reuse` false: every unshared collection copied) or {@link plainDroppingNulls}. */
function plainDropping(v: Json, schema: PatchSchema | undefined, reuse: boolean): Json | undefined {
  if (typeof v !== 'object' || v === null) return v;
  if (Object.isFrozen(v)) {
    // One lookup for a subtree seen before (only shared subtrees are remembered).
    const memo = SHARED_TAKEN.get(v);
    if (memo !== undefined && memo.schema === schema) return memo.taken ?? undefined;
    if (isShared(v)) return sharedPlainWithoutNulls(v, schema, memo);
  }
  if (Array.isArray(v)) {
    if (!distinctMergeKeys(v, schema)) return undefined;
    let out: Json[] | undefined = reuse ? undefined : new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const vi = v[i];
      const x = vi === undefined ? undefined : plainDropping(vi, schema?.items, reuse);
      if (x === undefined) return undefined;
      if (out === undefined && x !== vi) out = v.slice();
      if (out !== undefined) out[i] = x;
    }
    return out ?? v;
  }
  // With `reuse`, `out` stays undefined while every value so far is kept as it is (`v` itself is the answer).
  let out: JsonObject | undefined = reuse ? undefined : {};
  for (const k in v) {
    if (k.charCodeAt(0) === 36 /* $ */) return undefined;
    const x = v[k];
    const y = x === null || x === undefined ? undefined : plainDropping(x, fieldSchema(schema, k), reuse);
    if (y === undefined && x !== null && x !== undefined) return undefined;
    if (out === undefined && y !== x) out = keysBefore(v, k);
    if (out !== undefined && y !== undefined) setOwn(out, k, y);
  }
  return out ?? v;
}

/** A new map holding the entries of `v` before the key `stop`, in order. */
function keysBefore(v: JsonObject, stop: string): JsonObject {
  const out: JsonObject = {};
  for (const k in v) {
    if (k === stop) break;
    setOwn(out, k, v[k] as Json);
  }
  return out;
}

/**
 * {@link plainWithoutNulls} of `v` when it is a shared subtree (`share`): worked out once per subtree and schema, and
 * shared itself; undefined when `v` is not shared or not plain. One lookup for a subtree seen before.
 */
export function sharedWithoutNulls(v: Json[] | JsonObject, schema: PatchSchema | undefined): Json | undefined {
  if (!Object.isFrozen(v)) return undefined;
  const memo = SHARED_TAKEN.get(v);
  if (memo !== undefined && memo.schema === schema) return memo.taken ?? undefined;
  return isShared(v) ? sharedPlainWithoutNulls(v, schema, memo) : undefined;
}

/** `plainWithoutNulls` of a shared subtree under one schema: the value, or `null` when the subtree is not plain. */
interface SharedTaken {
  readonly schema: PatchSchema | undefined;
  readonly taken: Json | null;
  /** Answers under further schemas (a subtree met at two places of a pod). */
  readonly others: Map<PatchSchema | undefined, Json | null>;
}

/**
 * `plainWithoutNulls` of shared subtrees, by subtree (the first schema asked in the entry, others beside it).
 * Module state by design: a memo keyed by deep-frozen subtrees (`share`) and immutable schemas.
 */
const SHARED_TAKEN = new WeakMap<object, SharedTaken>();

/**
 * `plainWithoutNulls` of a shared subtree, worked out once per subtree and schema: the subtree itself when it holds
 * no null map value, else its `withoutNulls` copy, shared (`share`: deep-frozen, so every workload a sidecar plan
 * serves holds the same object and code that writes into it throws, as it would for the subtree itself).
 */
function sharedPlainWithoutNulls(
  v: Json[] | JsonObject,
  schema: PatchSchema | undefined,
  memo: SharedTaken | undefined,
): Json | undefined {
  const take = (): Json | null => (isPlain(v, schema) ? share(withoutNulls(v)) : null);
  if (memo === undefined) {
    const taken = take();
    SHARED_TAKEN.set(v, { schema, taken, others: new Map() });
    return taken ?? undefined;
  }
  return getOrMake(memo.others, schema, take) ?? undefined;
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
 * `patch` as a {@link TrustedPatch} for a merge into `target`, where `target` is a map of empty maps (the empty
 * pod `{metadata: {}, spec: {}}`) and `patch` sets none of `target`'s keys to null: no map the merge reaches then
 * holds a key a `null` could delete, so a null map value is dropped from the values taken, and merging `patch` and
 * merging it without its nulls give the same result (strategicpatch `mergeMap` with `IgnoreUnmatchedNulls`). The
 * trusted patch is {@link plainDroppingNulls} of `patch`: it holds the parts of `patch` that had no null, not
 * copies, so the caller must not change `patch` afterwards through another holder. Undefined when `target` is not
 * such a map, when `patch` nulls one of its keys (the general merge deletes it), or when `patch` is not plain (a
 * `$` key, repeated or missing merge keys). `dropNulls` gives `plainDroppingNulls(patch, schema)` another way (a
 * sidecar plan's, {@link fillsDroppingNulls}); it must answer as that does.
 */
export function trustedIntoEmpty(
  target: object,
  patch: JsonObject,
  schema: PatchSchema = EMPTY_SCHEMA,
  dropNulls: (patch: JsonObject) => Json | undefined = (p) => plainDroppingNulls(p, schema),
): TrustedPatch | undefined {
  for (const [k, v] of Object.entries(target)) {
    if (!isJsonObject(v) || Object.keys(v).length > 0 || (Object.hasOwn(patch, k) && patch[k] === null))
      return undefined;
  }
  const clean = dropNulls(patch);
  return isJsonObject(clean) ? { trusted: clean } : undefined;
}

/**
 * What {@link plainDroppingNulls} changes in every fill of one template (see {@link fillsDroppingNulls}): a map
 * value left out (`drop`: a null), a shared subtree replaced by its shared null-free copy (`value`), or the edits
 * inside a map's values or a list's entries (a fresh collection in every fill: copied, with those edits).
 */
type NullEdit =
  | { readonly kind: 'drop' }
  | { readonly kind: 'value'; readonly value: Json }
  | { readonly kind: 'map'; readonly at: ReadonlyMap<string, NullEdit> }
  | { readonly kind: 'list'; readonly at: ReadonlyMap<number, NullEdit> };

const DROP: NullEdit = { kind: 'drop' };

/** A template whose fills {@link fillsDroppingNulls} cannot answer by its edits (some fill may not be plain). */
const NOT_COMPILED = Symbol('not compiled');
/** A template asked for once: its edits are worked out when it is asked for again. */
const SEEN_ONCE = Symbol('seen once');

/** {@link fillsDroppingNulls}' answer for one template: its fills' `plainDroppingNulls`. */
type FillDropper = (fill: JsonObject) => JsonObject;

/**
 * `fillsDroppingNulls` answers, by template and schema.
 * Module state by design: a memo keyed by a plan's output (never changed) and immutable schemas.
 */
const FILLS_DROPPING = new WeakMap<object, Map<PatchSchema, FillDropper | typeof NOT_COMPILED | typeof SEEN_ONCE>>();

/**
 * {@link plainDroppingNulls} of every fill of `template` (a sidecar plan's output; `holdsSlot` names the parts
 * holding a slot, as in {@link fillsTrust}), worked out once per template, the second time it is asked for (a plan
 * serving one workload is not worth it: the first answer is undefined). Undefined unless every fill is plain, which
 * holds when `template` is plain (no `$` key, distinct merge keys; nulls aside) and no slot stands in a map key or a
 * merge-key value (a fill then has the template's keys and merge keys). A fill (`compileFill` of
 * ../render/plan-values.ts) is the template with each slot written (a string or a number, never a null): a
 * token-free collection is the template's own shared (`share`) object, every other collection a fresh one with
 * the template's keys or length, and a null stays a null. So `plainDroppingNulls` drops the same map keys in every
 * fill, replaces the same shared subtrees by the same shared copies, and copies the same collections on the way:
 * the function returned makes only those changes, walking nothing else (what `plainDroppingNulls` would find
 * unchanged is returned as it is, as there). It takes a fill or a map holding some of a fill's root entries under
 * their keys (`{metadata, spec}` of a rendered pod), and returns a new map, or the map itself when nothing drops.
 * A fill of another template gives a wrong answer: with plan verification on, the caller checks it.
 */
export function fillsDroppingNulls(
  template: JsonObject,
  schema: PatchSchema,
  holdsSlot: (v: Json) => boolean,
): FillDropper | undefined {
  const bySchema = getOrMake(FILLS_DROPPING, template, () => new Map());
  let known = bySchema.get(schema);
  if (known === undefined) {
    bySchema.set(schema, SEEN_ONCE);
    return undefined;
  }
  if (known === SEEN_ONCE) {
    known = compileDropper(template, schema, holdsSlot);
    bySchema.set(schema, known);
  }
  return known === NOT_COMPILED ? undefined : known;
}

/** See {@link fillsDroppingNulls}: the function, or `NOT_COMPILED`. */
function compileDropper(
  template: JsonObject,
  schema: PatchSchema,
  holdsSlot: (v: Json) => boolean,
): FillDropper | typeof NOT_COMPILED {
  if (!slotsOnlyInValues(template, schema, holdsSlot)) return NOT_COMPILED;
  const edits = nullEdits(template, schema, holdsSlot);
  if (edits === NOT_COMPILED) return edits;
  if (edits === undefined) return (fill) => fill;
  if (edits.kind !== 'map') return NOT_COMPILED;
  return (fill) => applyNullEdits(edits, fill) as JsonObject;
}

/**
 * The edits `plainDroppingNulls` makes in every fill at `v`, a part of a template: undefined where it makes none,
 * `NOT_COMPILED` where `v` is not plain (`isPlain`, checked on the way: a `$` key, repeated or missing merge keys)
 * or a fill's part is not known to be the template's (a token-free collection not shared, an undefined value).
 */
function nullEdits(
  v: Json,
  schema: PatchSchema | undefined,
  holdsSlot: (v: Json) => boolean,
): NullEdit | undefined | typeof NOT_COMPILED {
  if (typeof v !== 'object' || v === null) return undefined;
  if (!holdsSlot(v)) {
    // Every fill holds this very object (`share`d by `compileFill`): its answer is the same in every fill.
    if (!isShared(v)) return NOT_COMPILED;
    const taken = plainDroppingNulls(v, schema);
    if (taken === undefined) return NOT_COMPILED;
    return taken === v ? undefined : { kind: 'value', value: taken };
  }
  if (Array.isArray(v)) {
    if (!distinctMergeKeys(v, schema)) return NOT_COMPILED;
    const at = new Map<number, NullEdit>();
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x === undefined) return NOT_COMPILED;
      const e = nullEdits(x, schema?.items, holdsSlot);
      if (e === NOT_COMPILED) return e;
      if (e !== undefined) at.set(i, e);
    }
    return at.size === 0 ? undefined : { kind: 'list', at };
  }
  const at = new Map<string, NullEdit>();
  for (const k in v) {
    const x = v[k];
    if (x === undefined || k.charCodeAt(0) === 36 /* $ */) return NOT_COMPILED;
    const e = x === null ? DROP : nullEdits(x, fieldSchema(schema, k), holdsSlot);
    if (e === NOT_COMPILED) return e;
    if (e !== undefined) at.set(k, e);
  }
  return at.size === 0 ? undefined : { kind: 'map', at };
}

/** `v` (a fill's part) with `edit` made: a copy of each collection on the way, the rest as it is. */
function applyNullEdits(edit: NullEdit, v: Json): Json {
  if (edit.kind === 'value') return edit.value;
  if (edit.kind === 'list') {
    if (!Array.isArray(v)) return v;
    const out = v.slice();
    for (const [i, e] of edit.at) {
      const x = out[i];
      if (x !== undefined) out[i] = applyNullEdits(e, x);
    }
    return out;
  }
  if (edit.kind === 'drop' || !isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const k in v) {
    const e = edit.at.get(k);
    const x = v[k] as Json;
    if (e === undefined) setOwn(out, k, x);
    else if (e.kind !== 'drop') setOwn(out, k, applyNullEdits(e, x));
  }
  return out;
}

/**
 * `fillsTrust` answers, by template and schema.
 * Module state by design: a memo keyed by a plan's output (never changed) and immutable schemas.
 */
const FILLS_TRUST = new WeakMap<object, Map<PatchSchema, FillsTrust>>();

/**
 * What {@link trustedPatch} says of the fills of `template`: `all` pass, `none` passes, or `each` must be
 * checked. A fill writes a string or number into each place `holdsSlot` names (a sidecar plan's output and
 * its tokens, `compileFill` of ../render/plan-values.ts) and keeps everything else, so:
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
      const keyValue = key && isJsonObject(x) && Object.hasOwn(x, key) ? x[key] : undefined;
      if (keyValue !== undefined && holdsSlot(keyValue)) return false;
      if (!slotsOnlyInValues(x, schema?.items, holdsSlot)) return false;
    }
    return true;
  }
  for (const k in v) {
    const x = v[k];
    if (holdsSlot(k) || (x !== undefined && !slotsOnlyInValues(x, fieldSchema(schema, k), holdsSlot))) return false;
  }
  return true;
}
