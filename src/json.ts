import type { Json, JsonObject } from './model.ts';

/**
 * Whether a value is a map: an object, not null, not an array. The one such guard of the code base; `V` is
 * the value type the caller reads (`Json` by default; `unknown` for raw input).
 */
export function isJsonObject<V = Json>(v: unknown): v is { [key: string]: V } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether a map has a key (`Object.keys(o).length > 0` without the array of keys; issue #40). */
export function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/** Deep equality of JSON values; object key order is ignored, array order is not. */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  return true;
}

/**
 * Shared subtrees: deep-frozen JSON that several results hold at once. A sidecar plan's token-free parts
 * (render/plan-values.ts `compileFill`: most of the proxy container, the init container, the volumes) are the same
 * objects in every workload the plan serves, not copies. Nothing changes them (a write throws: all of `src/`
 * is strict code), so text written for one (`src/yaml/emit/emit-block.ts`) or proven to read as one (`src/yaml/read/fragment-reader.ts`)
 * is reused, keyed by the object. Every object inside a shared subtree is shared too.
 *
 * Code that changes a pod in place takes its own copy of each shared level it writes to first (`owned`);
 * `cloneJson` of a shared subtree is an ordinary, writable deep copy. A driver that writes into a shared
 * part anyway fails, and the pipeline injects that workload again without plans (pipeline.ts
 * `injectWorkload`).
 * Module state by design: a mark on deep-frozen objects: an object once shared never changes, so the mark is a fact about it.
 */
const SHARED = new WeakSet<object>();

/**
 * Freezes `v` deeply and marks it and everything in it shared (see `isShared`); returns `v`. Scalars are
 * returned as they are. One walk the first time, nothing after.
 */
export function share<T extends Json>(v: T): T {
  if (typeof v !== 'object' || v === null || SHARED.has(v)) return v;
  if (Array.isArray(v)) for (const x of v) share(x);
  else
    for (const k in v) {
      const x = v[k];
      if (x !== undefined) share(x);
    }
  Object.freeze(v);
  SHARED.add(v);
  return v;
}

/**
 * `v` with every object and array in it frozen (not marked shared, unlike `share`); returns `v`. A part frozen
 * already is taken as frozen throughout.
 */
export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** Whether `v` is a shared, deep-frozen collection (`share`). */
export function isShared(v: unknown): boolean {
  // Most data is not shared: `Object.isFrozen` answers that without a hash lookup.
  return typeof v === 'object' && v !== null && Object.isFrozen(v) && SHARED.has(v);
}

/**
 * `parent[key]`, ready to be changed in place: a shared value (`share`) is first replaced by a shallow,
 * writable copy of it, whose own values stay shared (copy on write: a change deeper down takes its own
 * `owned` of each level on the way, and what it leaves alone stays shared, with its text written once).
 * `parent` itself must be writable (`owned` of its own parent, or a fresh object). Returns the value
 * (undefined when absent), which is then `parent[key]`.
 */
export function owned<T extends Json>(parent: { [key: string]: Json } | Json[], key: string | number): T | undefined {
  const v = (parent as Record<string, Json>)[key as string];
  if (v === undefined || v === null || !SHARED.has(v as object)) return v as T | undefined;
  let copy: Json[] | JsonObject;
  if (Array.isArray(v)) copy = v.slice();
  else {
    const obj: JsonObject = {};
    if (isJsonObject(v)) for (const k in v) setOwn(obj, k, v[k]);
    copy = obj;
  }
  (parent as Record<string, Json>)[key as string] = copy;
  return copy as T;
}

/**
 * The value `map` holds for `key`, made by `make` and stored on the first call: a memo over a `Map` or
 * `WeakMap` (or anything with their `get`/`set`). A stored `undefined` counts as absent.
 */
export function getOrMake<K, V>(
  map: { get(key: K): V | undefined; set(key: K, value: V): unknown },
  key: K,
  make: () => V,
): V {
  const had = map.get(key);
  if (had !== undefined) return had;
  const made = make();
  map.set(key, made);
  return made;
}

/**
 * Whether a shared subtree holds a `key: null` entry, by subtree (see `hasNullEntry`).
 * Module state by design: a memo keyed by deep-frozen subtrees (`share`), which cannot change.
 */
const SHARED_NULLS = new WeakMap<object, boolean>();

/**
 * Whether some map in `v` has a `null` value (null array entries do not count); remembered for a shared
 * subtree (`share`), which cannot change.
 */
export function hasNullEntry(v: Json): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (!isShared(v)) return scanNulls(v);
  return getOrMake(SHARED_NULLS, v, () => scanNulls(v));
}

/** `hasNullEntry` of one collection, stopping at the first null entry found. */
function scanNulls(v: Json[] | JsonObject): boolean {
  if (Array.isArray(v)) {
    for (const x of v) if (typeof x === 'object' && x !== null && hasNullEntry(x)) return true;
    return false;
  }
  for (const k in v) {
    const x = v[k];
    if (x === null || (typeof x === 'object' && hasNullEntry(x))) return true;
  }
  return false;
}

/**
 * A copy of `v` without `key: null` map entries, recursively (Kubernetes, and Go's typed decoding, read
 * null as absent; strategicpatch `discardNullValuesFromPatch`). Array entries are kept. A shared subtree
 * (`share`) without null entries is returned as it is: it cannot change, so it is as good as a copy.
 */
export function withoutNulls(v: Json): Json {
  if (typeof v !== 'object' || v === null) return v;
  // A shared subtree cannot change: one without nulls is its own copy (and keeps its identity).
  if (isShared(v) && !hasNullEntry(v)) return v;
  if (Array.isArray(v)) {
    return v.map(withoutNulls);
  }
  const out: JsonObject = {};
  for (const k in v) {
    const x = v[k];
    if (x !== null) setOwn(out, k, x === undefined ? x : withoutNulls(x));
  }
  return out;
}

/**
 * The value at `path` (object keys; numeric strings index arrays), or undefined. Only own properties count,
 * so input keys named like `Object.prototype` members (`constructor`, `__proto__`) are plain keys.
 */
export function getIn(value: Json | undefined, path: readonly string[]): Json | undefined {
  let cur: Json | undefined = value;
  for (const k of path) {
    if (Array.isArray(cur)) cur = /^\d+$/.test(k) ? cur[Number(k)] : undefined;
    else if (isJsonObject(cur) && Object.hasOwn(cur, k)) cur = cur[k];
    else return undefined;
  }
  return cur;
}

/**
 * Sets `obj[key] = value` as an own data property, also for `__proto__` (a plain assignment would change
 * the object's prototype instead). Returns `obj`. The one way source code writes a key it read from data (a
 * tenant's map, a patch path, a template's `dict`): test/security/prototype-keys.test.ts scans `src/` for key
 * copies that do not use it (issue 36).
 * @throws Error when `obj` is `Object.prototype` or `Array.prototype` (a path walked through `__proto__`): a bug
 *   that would change every object of the process
 */
export function setOwn<T>(obj: { [key: string]: T }, key: string, value: T): { [key: string]: T } {
  if ((obj as object) === Object.prototype || (obj as object) === Array.prototype)
    throw new Error(`refused to write key ${JSON.stringify(key)} into a shared prototype`);
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
  return obj;
}

/**
 * Copies every own enumerable key of `source` into `target` with `setOwn` (what `Object.assign` does, except that
 * a `__proto__` key is copied as a key instead of changing `target`'s prototype). Returns `target`.
 */
export function assignOwn<T>(
  target: { [key: string]: T },
  source: { readonly [key: string]: T },
): { [key: string]: T } {
  for (const k of Object.keys(source)) setOwn(target, k, source[k] as T);
  return target;
}

/**
 * The string entries of the map at `path` of `value` (labels, annotations) as a new object, keys copied with
 * `setOwn`; entries whose value is not a string are left out; `{}` when there is no map there.
 */
export function stringsAt(value: Json | undefined, path: readonly string[]): Record<string, string> {
  const m = getIn(value, path);
  const out: Record<string, string> = {};
  if (isJsonObject(m)) for (const [k, x] of Object.entries(m)) if (typeof x === 'string') setOwn(out, k, x);
  return out;
}

/** The object at `path` (see `getIn`), or `{}` when there is none. */
export function objectAt(value: Json | undefined, ...path: string[]): JsonObject {
  const v = getIn(value, path);
  return isJsonObject(v) ? v : {};
}

/**
 * A deep copy of a JSON value: objects and arrays are copied, scalars (including non-finite numbers, which
 * a `JSON.parse(JSON.stringify(v))` round trip would turn into `null`) are kept as they are. Own keys only,
 * in order; a `__proto__` key stays an own data property. Several times faster than `structuredClone` on
 * pod-sized data. `T` is any type of JSON data (`Json`, `PodTemplate`); class instances such as `Date` or
 * `Map` are not JSON and would come back as plain objects.
 */
export function cloneJson<T>(v: T): T {
  return copyJson(v as Json) as T;
}

/**
 * A deep copy of a JSON value that keeps its shared subtrees (`share`): each collection outside them is copied
 * (own keys, in order, as `cloneJson`), each shared one is the same object, deep-frozen already (copy on write:
 * code that changes a part of the copy takes it with `owned` first). With `freeze`, each collection copied is
 * frozen too, so the whole result is deep-frozen: a read-only view of `v` that copies only what is not frozen for
 * good already (most of an injected pod template served by a sidecar plan is shared). `v` is not changed; its
 * later changes do not reach the copy. Cost: one walk of the unshared part of `v`.
 */
export function copyUnshared<T>(v: T, freeze = false): T {
  return copyOutsideShared(v as Json, freeze) as T;
}

function copyOutsideShared(v: Json, freeze: boolean): Json {
  if (typeof v !== 'object' || v === null || isShared(v)) return v;
  let out: Json[] | JsonObject;
  if (Array.isArray(v)) out = v.map((x) => copyOutsideShared(x, freeze));
  else {
    const obj: JsonObject = {};
    for (const k in v) {
      const x = v[k];
      // A key holding undefined (not JSON, but a typed pod may carry one) is copied as it is.
      setOwn(obj, k, x === undefined ? x : copyOutsideShared(x, freeze));
    }
    out = obj;
  }
  if (freeze) Object.freeze(out);
  return out;
}

function copyJson(v: Json): Json {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    return v.map(copyJson);
  }
  const out: JsonObject = {};
  for (const k in v) {
    const x = v[k];
    // A key holding undefined (not JSON, but a typed pod may carry one) is copied as it is.
    setOwn(out, k, x === undefined ? x : copyJson(x));
  }
  return out;
}
