/**
 * Issue #40: the strategic merge's shortcuts give what its general path gives.
 * - A shared (deep-frozen) subtree of a patch is answered once per subtree and schema (`plainWithoutNulls` of
 *   trusted-patch.ts): merging a patch with shared parts gives the same pod as merging an unshared copy, on the
 *   first merge and on every merge after it, with the same subtree at places of different schemas.
 * - Lists merged by key whose keys are distinct strings (an injection's containers and volumes) skip the general
 *   merge: the same lists keyed by numbers instead always take the general path, so the two results, keys mapped
 *   back, must agree.
 * - A merge into a target the caller owns (`strategicMergeInto`) gives the same pod without copying it first, and
 *   copies a shared subtree of the target before writing into it.
 * - A patch merged into the empty pod as checked (`trustedIntoEmpty`: without its nulls, its null-free parts
 *   uncopied) gives the general merge's pod, and leaves the patch as it was for the next merge.
 * Inputs hold nulls, `$patch` directives, repeated and missing merge keys.
 */
import t from 'tap';
import fc from 'fast-check';
import {
  cloneJson,
  strategicMerge,
  strategicMergeInto,
  strategicMergeTrusted,
} from '../../src/patch/strategic-merge.ts';
import { plainDroppingNulls, plainWithoutNulls, trustedIntoEmpty } from '../../src/patch/trusted-patch.ts';
import { POD_SCHEMA } from '../../src/patch/patch-schema.ts';
import { hasNullEntry, isJsonObject, isShared, share } from '../../src/json.ts';
import type { Json, JsonObject } from '../../src/model.ts';

/** Merge-key values: strings here, numbers (`KEY_BASE + i`) in the general path's twin. */
const KEYS = ['k0', 'k1', 'k2', 'k3'];
const KEY_BASE = 100;

const scalar = fc.oneof(fc.constant(null), fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 2 }), fc.boolean());
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'image'), tie('v'), { maxKeys: 3 }),
  ),
})).v as fc.Arbitrary<Json>;

/** A list entry merged by `name`: usually keyed (keys repeat), sometimes a null or missing key or a directive. */
const entry = (inner: fc.Arbitrary<Json>): fc.Arbitrary<JsonObject> =>
  fc
    .record({
      name: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...KEYS) }, fc.constant(null), fc.constant(undefined)),
      image: inner,
      directive: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, fc.constantFrom('delete', 'replace')),
    })
    .map(({ name, image, directive }) => {
      const e: JsonObject = {};
      if (name !== undefined) e.name = name;
      e.image = image;
      if (directive !== undefined) e.$patch = directive;
      return e;
    });
const env = fc.array(entry(value), { maxLength: 4 });
const container = fc
  .tuple(entry(value), env)
  .map(([c, e]) => (e.length === 0 ? c : { ...c, env: e.map((x) => ({ ...x, value: x.image ?? null })) }));
const pod = fc
  .record({
    containers: fc.array(container, { maxLength: 4 }),
    volumes: fc.array(entry(value), { maxLength: 4 }),
    hostname: value,
    labels: fc.dictionary(fc.constantFrom('p', 'q'), scalar, { maxKeys: 2 }),
  })
  .map(({ containers, volumes, hostname, labels }) => ({
    metadata: { labels },
    spec: { containers, volumes, hostname },
  })) as fc.Arbitrary<JsonObject>;

/** The outcome of a merge as text: the merged pod's JSON, or that it failed. */
function outcome(original: JsonObject, patch: JsonObject): string {
  try {
    return JSON.stringify(strategicMerge(original, patch, POD_SCHEMA));
  } catch {
    return 'failed';
  }
}

/** `v` with each merge-key string `k<i>` turned into the number `KEY_BASE + i` (`back`: the other way). */
function mapKeys(v: Json, back = false): Json {
  if (Array.isArray(v)) return v.map((x) => mapKeys(x, back));
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) out[k] = mapKeys(x, back);
    return out;
  }
  if (!back && typeof v === 'string' && KEYS.includes(v)) return KEY_BASE + KEYS.indexOf(v);
  if (back && typeof v === 'number' && v >= KEY_BASE && v < KEY_BASE + KEYS.length) return KEYS[v - KEY_BASE] ?? v;
  return v;
}

t.test('lists keyed by distinct strings merge as the general path merges them', async (t) => {
  let fast = 0;
  fc.assert(
    fc.property(pod, pod, (original, patch) => {
      const direct = outcome(original, patch);
      const twin = outcome(mapKeys(original) as JsonObject, mapKeys(patch) as JsonObject);
      const general = twin === 'failed' ? twin : JSON.stringify(mapKeys(JSON.parse(twin) as Json, true));
      const names = (p: JsonObject) => ((p.spec as JsonObject).containers as JsonObject[]).map((c) => c.name);
      const keys = [...names(original), ...names(patch)];
      if (keys.every((k) => typeof k === 'string') && new Set(keys).size === keys.length && keys.length > 1) fast++;
      return direct === general;
    }),
    { numRuns: 1500 },
  );
  t.ok(fast > 100, `the shortcut's case is generated (${fast} of 1500 pairs with distinct string container names)`);

  // The case the shortcut serves, by hand: new patch entries first, then the original's, each in its order.
  const out = strategicMerge(
    { spec: { containers: [{ name: 'b' }, { name: 'a' }] } },
    { spec: { containers: [{ name: 'z', x: null }, { name: 'c' }] } },
    POD_SCHEMA,
  );
  t.same((out.spec as JsonObject).containers, [{ name: 'z' }, { name: 'c' }, { name: 'b' }, { name: 'a' }]);
});

/** The outermost shared subtrees of `v`. */
function sharedParts(v: Json): Json[] {
  if (typeof v !== 'object' || v === null) return [];
  if (isShared(v)) return [v];
  return (Array.isArray(v) ? v : Object.values(v)).flatMap(sharedParts);
}

/** `patch` with the subtrees `pick` chooses shared (deep-frozen); the rest a fresh copy. */
function withShared(patch: JsonObject, pick: (path: string) => boolean): JsonObject {
  const walk = (v: Json, path: string): Json => {
    if (typeof v !== 'object' || v === null) return v;
    if (pick(path)) return share(cloneJson(v));
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}/${i}`));
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x, `${path}/${k}`);
    return out;
  };
  return walk(patch, '') as JsonObject;
}

t.test('a patch with shared subtrees merges as its unshared copy, every time', async (t) => {
  let sharedNulls = 0;
  fc.assert(
    fc.property(pod, pod, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (original, patch, picks) => {
      let n = 0;
      const shared = withShared(patch, (path) => path !== '' && picks[n++ % picks.length] === true);
      if (JSON.stringify(shared).includes('null')) sharedNulls++;
      const expected = outcome(original, patch);
      // First merge (answers worked out), second (answers remembered), and the original merged again.
      return (
        outcome(original, shared) === expected &&
        outcome(original, shared) === expected &&
        outcome({}, shared) === outcome({}, patch)
      );
    }),
    { numRuns: 800 },
  );
  t.ok(sharedNulls > 100, `patches with nulls are generated (${sharedNulls} of 800)`);
});

t.test('one shared subtree at places of different schemas gets each place its own answer', async (t) => {
  fc.assert(
    fc.property(fc.array(entry(value), { maxLength: 4 }), (list) => {
      const plain = cloneJson(list);
      const one = share(cloneJson(list));
      // Under `containers` it merges by name; under `hostname` (no schema) it is a value; in either order.
      const a = { spec: { containers: one, hostname: one } };
      const b = { spec: { hostname: one, initContainers: one } };
      const unshared = (x: { spec: JsonObject }) => {
        const out: JsonObject = {};
        for (const k of Object.keys(x.spec)) out[k] = cloneJson(plain);
        return { spec: out };
      };
      return outcome({}, a) === outcome({}, unshared(a)) && outcome({}, b) === outcome({}, unshared(b));
    }),
    { numRuns: 500 },
  );
  // By hand: repeated names merge in a merge-keyed list and stay as they are in a plain value.
  const dup = share([
    { name: 'k0', image: 'a' },
    { name: 'k0', b: null },
  ] as Json[]);
  const out = strategicMerge({}, { spec: { hostname: dup, containers: dup } }, POD_SCHEMA).spec as JsonObject;
  t.same(out.hostname, [{ name: 'k0', image: 'a' }, { name: 'k0' }], 'a value: nulls dropped, entries kept');
  t.same(out.containers, [{ name: 'k0', image: 'a' }], 'merged by name');
});

t.test('a shared subtree taken into the result stays shared: nobody can change it for the next workload', async (t) => {
  const volumes = share([{ name: 'v', emptyDir: null }, { name: 'w' }] as Json[]);
  const first = strategicMerge({}, { spec: { hostname: volumes } }, POD_SCHEMA).spec as JsonObject;
  const second = strategicMerge({}, { spec: { hostname: volumes } }, POD_SCHEMA).spec as JsonObject;
  t.same(first.hostname, [{ name: 'v' }, { name: 'w' }], 'the null map value dropped');
  t.ok(isShared(first.hostname), 'the copy without nulls is shared');
  t.equal(first.hostname, second.hostname, 'and made once');
  t.throws(() => {
    (first.hostname as JsonObject[]).push({ name: 'x' });
  }, 'a write throws');
  t.same(volumes, [{ name: 'v', emptyDir: null }, { name: 'w' }], 'the patch is as it was');
});

t.test("a merge into an owned target gives the copying merge's pod, and leaves its shared parts alone", async (t) => {
  let merges = 0;
  fc.assert(
    fc.property(pod, pod, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (original, patch, picks) => {
      const expected = outcome(original, patch);
      const into = (target: JsonObject): string => {
        try {
          return JSON.stringify(strategicMergeInto(target, patch, POD_SCHEMA));
        } catch {
          return 'failed';
        }
      };
      if (into(cloneJson(original)) !== expected) return false;
      // The target's own top level, with shared (deep-frozen) parts inside: copied on write.
      let n = 0;
      const partly = withShared(original, (path) => path !== '' && picks[n++ % picks.length] === true);
      const shared = sharedParts(partly).map((x) => ({ x, text: JSON.stringify(x) }));
      const got = into(partly);
      if (got !== 'failed') merges++;
      return got === expected && shared.every(({ x, text }) => JSON.stringify(x) === text);
    }),
    { numRuns: 800 },
  );
  t.ok(merges > 400, `${merges} of 800 merges succeeded`);
  const target: JsonObject = { spec: share({ containers: [{ name: 'app', image: 'a' }] } as JsonObject) };
  const frozen = target.spec;
  const out = strategicMergeInto(target, { spec: { containers: [{ name: 'app', image: 'b' }] } }, POD_SCHEMA);
  t.equal(out, target, 'the target itself is returned');
  t.same(out.spec, { containers: [{ name: 'app', image: 'b' }] }, 'merged');
  t.same(frozen, { containers: [{ name: 'app', image: 'a' }] }, 'the shared part as it was');
});

/** The empty pod a sidecar template's fragment is first merged into (`injectIstioPod`'s template pod). */
const emptyPod = (): JsonObject => ({ metadata: {}, spec: {} });

t.test('a patch merged into the empty pod as checked, without its nulls, gives the general merge', async (t) => {
  let checked = 0;
  let withNulls = 0;
  fc.assert(
    fc.property(pod, pod, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (original, plain, picks) => {
      let n = 0;
      const patch = withShared(plain, (path) => path !== '' && picks[n++ % picks.length] === true);
      const before = JSON.stringify(patch);
      const expected = outcome(emptyPod(), plain);
      const trusted = trustedIntoEmpty(emptyPod(), patch, POD_SCHEMA);
      if (trusted === undefined) return expected === outcome(emptyPod(), patch);
      checked++;
      if (hasNullEntry(patch)) withNulls++;
      // Null-free parts are the patch's own: the patch itself when it has no null at all.
      if (!hasNullEntry(patch) && trusted.trusted !== patch) return false;
      const got = JSON.stringify(strategicMergeTrusted(emptyPod(), trusted, POD_SCHEMA));
      // The patch is then merged into the workload's pod (the general path): it must be as it was.
      return (
        got === expected && JSON.stringify(patch) === before && outcome(original, patch) === outcome(original, plain)
      );
    }),
    { numRuns: 1500 },
  );
  t.ok(checked > 150, `patches checked into the empty pod: ${checked} of 1500`);
  t.ok(withNulls > 100, `of them holding nulls: ${withNulls}`);
});

t.test('dropping nulls copies only what it changes, and drops what the copying walk drops', async (t) => {
  fc.assert(
    fc.property(pod, (patch) => {
      const copied = plainWithoutNulls(patch, POD_SCHEMA);
      const reused = plainDroppingNulls(patch, POD_SCHEMA);
      if (JSON.stringify(copied) !== JSON.stringify(reused)) return false;
      // Every map of the result is the patch's own where the patch's map had no null below it.
      const same = (a: Json | undefined, b: Json): boolean => {
        if (typeof b !== 'object' || b === null) return true;
        if (!hasNullEntry(b)) return a === b;
        if (a === b || typeof a !== 'object' || a === null) return false;
        if (Array.isArray(b)) return Array.isArray(a) && b.every((x, i) => same(a[i], x));
        return isJsonObject(a) && Object.keys(b).every((k) => b[k] === null || same(a[k], b[k] as Json));
      };
      return reused === undefined || same(reused, patch);
    }),
    { numRuns: 1500 },
  );
  // By hand: a null after kept keys, an undefined value (a typed pod's), a null list entry (kept).
  const kept = { name: 'k0', image: 'i' };
  const v: JsonObject = { spec: { volumes: [kept, { name: 'k1', emptyDir: null }], hostname: [null] } };
  (v.spec as JsonObject).subdomain = undefined as unknown as Json;
  const out = plainDroppingNulls(v, POD_SCHEMA) as JsonObject;
  t.same(out, { spec: { volumes: [kept, { name: 'k1' }], hostname: [null] } });
  t.equal(((out.spec as JsonObject).volumes as Json[])[0], kept, 'the unchanged entry is the same object');
  t.equal((out.spec as JsonObject).hostname, (v.spec as JsonObject).hostname, 'and the unchanged list');
  t.not(out.spec, v.spec, 'the changed map is a copy');
  t.same(((v.spec as JsonObject).volumes as Json[])[1], { name: 'k1', emptyDir: null }, 'the patch as it was');
  t.equal(
    trustedIntoEmpty(emptyPod(), { spec: { $patch: 'replace' } }, POD_SCHEMA),
    undefined,
    'a directive: not plain',
  );
});

t.test('a patch is merged as checked only into a map of empty maps whose keys it does not null', async (t) => {
  // The general merge deletes a key the patch nulls: `spec: null` leaves the empty pod without its spec.
  for (const patch of [{ spec: null }, { metadata: null, spec: { containers: [{ name: 'a' }] } }] as JsonObject[]) {
    t.equal(trustedIntoEmpty(emptyPod(), patch, POD_SCHEMA), undefined, `refused: ${JSON.stringify(patch)}`);
    t.not(outcome(emptyPod(), patch), outcome(emptyPod(), { metadata: {}, spec: {} }), 'the general merge deletes');
  }
  // A target holding a key (a second template's merge, into the first one's output) is refused, nulls or not.
  const second: JsonObject = { metadata: {}, spec: { containers: [{ name: 'a' }] } };
  t.equal(trustedIntoEmpty(second, { spec: { hostname: 'h' } }, POD_SCHEMA), undefined, 'a target holding a key');
  t.equal(trustedIntoEmpty({ spec: 'x' }, { metadata: {} }, POD_SCHEMA), undefined, 'a target value not a map');
  // Nulls below the empty maps, and new top-level keys set to null, delete nothing: accepted.
  const ok = trustedIntoEmpty(emptyPod(), { metadata: { labels: null }, status: null }, POD_SCHEMA);
  t.same(ok?.trusted, { metadata: {} }, 'nulls below dropped');
});
