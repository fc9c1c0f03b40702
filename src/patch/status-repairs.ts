/**
 * The repairs of the shared status record (`meshinject.dev/original`, part `replaced`; src/patch/status-record.ts):
 * what an injection replaced or rewrote that the driver's own uninject does not give back exactly. At inject
 * time the pipeline uninjects the injected pod template as uninject would (the driver's rules and the record's
 * other parts) and compares the result with the pod template as it came in; each difference becomes one repair:
 * a probe Kuma rewrote to its probe proxy that comes back without its `scheme: HTTP`, a named probe port that
 * comes back as its number, a handler whose keys come back in another order, a user's
 * `kubectl.kubernetes.io/default-container` that the mesh's uninject removes. Uninject applies the repairs
 * last, so inject then uninject gives back the pod template exactly, key order included, for every driver.
 *
 * A repair is `[path, guard]` (remove the key at `path`), `[path, guard, value]` (set it) or
 * `[path, guard, value, before]` (add the key, absent after the driver's uninject, in front of key `before`
 * of the same map). `path` is the keys and list indexes from the pod template's root (`["spec", "containers",
 * 0, "livenessProbe", "httpGet", "scheme"]`). `guard` is {@link fingerprint} of what the driver's uninject
 * leaves at `path` (`-` for nothing): a repair applies only where uninject leaves exactly that, so a pod the
 * user changed after the injection keeps the driver's rules there instead of getting an old value back.
 * Mesh-neutral: it names no mesh.
 */
import { isJsonObject, setOwn } from '../json.ts';
import type { Json, JsonObject } from '../model.ts';

/** One repair (see the module comment): `[path, guard, value?, before?]`. */
export type Repair = [Array<string | number>, string] | [Array<string | number>, string, Json, string?];

/** The guard of a path that holds nothing. */
const ABSENT = '-';

/**
 * A short fingerprint of a JSON value, key order included: FNV-1a (32 bits) of its JSON text, 8 hex digits;
 * `-` for undefined. Tells a changed value from the one recorded; not a security measure (whoever can edit the
 * record can edit the pod).
 */
export function fingerprint(v: Json | undefined): string {
  if (v === undefined) return ABSENT;
  const text = JSON.stringify(v);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** Deep equality of JSON values, object key order included. Loops, no closure per level (issue #40). */
export function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (k !== kb[i] || !sameJson(a[k], b[k])) return false;
  }
  return true;
}

/** `obj` with `key` set to `value` in front of key `before` (at the end when `obj` lacks it); a new object. */
function insertBefore(obj: JsonObject, key: string, value: Json, before: string | undefined): JsonObject {
  const out: JsonObject = {};
  let placed = false;
  for (const [k, v] of Object.entries(obj)) {
    if (k === key) continue;
    if (k === before && !placed) {
      setOwn(out, key, value);
      placed = true;
    }
    setOwn(out, k, v);
  }
  if (!placed) setOwn(out, key, value);
  return out;
}

/**
 * The repairs for two maps: keys to add (in place), to remove, and the changes inside the keys both have. With
 * `byName` (the pod spec, whose key order is the text's: {@link isMetadataMap}) the keys are visited in sorted order, so
 * that the repairs come in one order whatever order the two maps hold their keys in (a re-injection's pod holds
 * the spec's lists where its merge put them: the record must come out as the first injection wrote it).
 */
function diffMaps(
  now: JsonObject,
  want: JsonObject,
  path: Array<string | number>,
  out: Repair[],
  byName = false,
): void {
  const wantKeys = Object.keys(want);
  const nowKeys = Object.keys(now);
  if (byName) nowKeys.sort();
  for (const k of nowKeys) if (!Object.hasOwn(want, k)) out.push([[...path, k], fingerprint(now[k])]);
  const visit = byName
    ? [...wantKeys.entries()].sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0))
    : wantKeys.entries();
  for (const [i, k] of visit) {
    if (Object.hasOwn(now, k)) {
      // The path is built for a key whose values differ only (most are the same; issue #40).
      if (!sameJson(now[k], want[k])) diffValues(now[k], want[k], [...path, k], out);
    } else {
      const next = wantKeys.slice(i + 1).find((x) => Object.hasOwn(now, x));
      const v = want[k] as Json;
      out.push(next === undefined ? [[...path, k], ABSENT, v] : [[...path, k], ABSENT, v, next]);
    }
  }
}

/** True when the keys both maps have come in the same order in each (the others are added in place). */
function sameOrder(now: JsonObject, want: JsonObject): boolean {
  const a = Object.keys(now).filter((k) => Object.hasOwn(want, k));
  const b = Object.keys(want).filter((k) => Object.hasOwn(now, k));
  return a.every((k, i) => k === b[i]);
}

/**
 * The pod's labels and annotations, and the pod spec's own keys: their keys are matched by name, never put back in
 * order. The text of a kept key stays where it is whatever the order of the map read back, and the writer places
 * the keys an injection adds (a flow map's new keys) where it writes them; an order repair there would hold the
 * writer's order. (A pod-spec list the injection filled, `volumes:` with no value, comes back from the record
 * where the re-injected pod's merge put it, not where its text stands: an order repair of the whole spec made a
 * second injection write another record than the first.)
 */
function isMetadataMap(path: ReadonlyArray<string | number>): boolean {
  if (path.length === 1) return path[0] === 'spec';
  return path.length === 2 && path[0] === 'metadata' && (path[1] === 'labels' || path[1] === 'annotations');
}

/**
 * The repairs for two values that differ (the caller compared them: each pair is compared once, and a path is built
 * only for a pair that differs; issue #40).
 */
function diffValues(now: Json | undefined, want: Json | undefined, path: Array<string | number>, out: Repair[]): void {
  if (want === undefined) {
    out.push([path, fingerprint(now)]);
    return;
  }
  if (isJsonObject(now) && isJsonObject(want)) {
    if (isMetadataMap(path) || sameOrder(now, want)) {
      diffMaps(now, want, path, out, path.length === 1 && path[0] === 'spec');
      return;
    }
  }
  if (Array.isArray(now) && Array.isArray(want) && now.length === want.length) {
    for (let i = 0; i < now.length; i++) if (!sameJson(now[i], want[i])) diffValues(now[i], want[i], [...path, i], out);
    return;
  }
  out.push([path, fingerprint(now), want]);
}

/**
 * The repairs that turn `now` (the pod template as the driver's uninject gives it back) into `want` (the pod
 * template before the injection), the deepest that do: a changed scalar, a key added, removed or put back in
 * its place; a map whose keys come in another order, or a list of another length, whole (the pod's labels
 * and annotations key by key, their order left to the text). `[]` when they are
 * the same, key order included. {@link applyRepairs}`(now, diffRepairs(now, want))` equals `want` exactly, but
 * for the order of the root's own keys (`metadata`, `spec`: the pipeline places them) and of the labels' and
 * annotations' keys.
 */
export function diffRepairs(now: JsonObject, want: JsonObject): Repair[] {
  const out: Repair[] = [];
  diffMaps(now, want, [], out);
  return out;
}

/** The value at `path` (keys and list indexes) of `root`, or undefined. */
export function valueAt(root: Json, path: ReadonlyArray<string | number>): Json | undefined {
  let cur: Json | undefined = root;
  for (const seg of path) {
    if (typeof seg === 'number') cur = Array.isArray(cur) ? cur[seg] : undefined;
    else cur = isJsonObject(cur) && Object.hasOwn(cur, seg) ? cur[seg] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** `container` with the repair applied at `path` (copies along the path; `container` is not changed). */
function applyAt(container: Json, path: ReadonlyArray<string | number>, r: Repair): Json {
  const [seg, ...rest] = path;
  if (seg === undefined) return r.length > 2 ? (r[2] as Json) : container;
  if (typeof seg === 'number') {
    if (!Array.isArray(container) || seg >= container.length) return container;
    const copy = [...container];
    copy[seg] = applyAt(copy[seg] as Json, rest, r);
    return copy;
  }
  if (!isJsonObject(container)) return container;
  if (rest.length > 0) {
    if (!Object.hasOwn(container, seg)) return container;
    return replaceKey(container, seg, applyAt(container[seg] as Json, rest, r));
  }
  if (r.length === 2) {
    const { [seg]: _gone, ...kept } = container;
    void _gone;
    return kept;
  }
  if (Object.hasOwn(container, seg)) return replaceKey(container, seg, r[2]);
  return insertBefore(container, seg, r[2], r[3]);
}

/** `obj` with the value of its key `key` replaced, in place. */
function replaceKey(obj: JsonObject, key: string, value: Json): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) setOwn(out, k, k === key ? value : v);
  return out;
}

/**
 * `root` with each repair applied whose guard matches what `root` holds at its path when its turn comes
 * (see the module comment); the others are skipped. A new value; `root` is not changed. A repair of a path
 * whose parent is missing is skipped.
 */
export function applyRepairs<T extends JsonObject>(root: T, repairs: readonly Repair[]): T {
  let out: Json = root;
  for (const r of repairs) {
    if (fingerprint(valueAt(out, r[0])) !== r[1]) continue;
    out = applyAt(out, r[0], r);
  }
  return out as T;
}

/** True for a well-formed {@link Repair} (what a record read back may hold). */
export function isRepair(v: Json): boolean {
  if (!Array.isArray(v) || v.length < 2 || v.length > 4) return false;
  const [path, guard, , before] = v;
  return isRepairPath(path) && typeof guard === 'string' && (before === undefined || typeof before === 'string');
}

/** True for a path a record may name: non-empty keys and list indexes from `metadata` or `spec`. */
export function isRepairPath(path: Json | undefined): path is Array<string | number> {
  return (
    Array.isArray(path) &&
    path.length > 0 &&
    (path[0] === 'metadata' || path[0] === 'spec') &&
    path.every((s) => (typeof s === 'string' && s !== '') || (typeof s === 'number' && Number.isInteger(s) && s >= 0))
  );
}
