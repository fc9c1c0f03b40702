/**
 * Issue #40: a template fragment holding nulls (Istio's sidecar template writes `emptyDir:` with no value) is merged
 * into the workload's pod as its null-free copy (`nullFreeFor`, src/drivers/istio/fragment-merge.ts) only where that
 * gives the general merge's pod: where none of its nulls meets a key of the pod (`nullsDeleteNothing`,
 * src/patch/null-deletes.ts), and no new list entry holds a `__proto__` key. Generated pods and fragments: nulls in
 * metadata maps, in containers matched by name (keys that are strings, numbers and booleans, `1` and `"1"` apart),
 * in new ones, under shared (deep-frozen) parts as a sidecar plan makes them. No generated key is `__proto__`: the
 * general merge of a new entry holding one writes into `Object.prototype` (it reads the key of a fresh `{}`), which
 * would spoil every case after it; the refusal of such entries is tested by hand.
 */
import t from 'tap';
import fc from 'fast-check';
import { mergeInto, nullFreeFor } from '../../../src/drivers/istio/fragment-merge.ts';
import { nullsDeleteNothing } from '../../../src/patch/null-deletes.ts';
import { POD_SCHEMA } from '../../../src/patch/patch-schema.ts';
import { trustedIntoEmpty } from '../../../src/patch/trusted-patch.ts';
import { cloneJson, isJsonObject, isShared, setOwn, share } from '../../../src/json.ts';
import type { Json, JsonObject, PodTemplate } from '../../../src/model.ts';

const scalar = fc.oneof(fc.constant(null), fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 2 }), fc.boolean());
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('v'), { maxLength: 2 }),
    fc.dictionary(fc.constantFrom('a', 'b'), tie('v'), { maxKeys: 2 }),
  ),
})).v as fc.Arbitrary<Json>;

/** Merge-key values: `1` and `"1"` are different keys, `true` a third kind. */
const key = fc.constantFrom<Json>('k0', 'k1', 'k2', 1, '1', true);

/** A map with some of `keys`, each a scalar (often null) or a value. */
const fields = (keys: string[]): fc.Arbitrary<JsonObject> =>
  fc.array(fc.tuple(fc.constantFrom(...keys), fc.oneof(scalar, value)), { maxLength: keys.length }).map((kvs) => {
    const out: JsonObject = {};
    for (const [k, v] of kvs) setOwn(out, k, v);
    return out;
  });

const envEntry = fc.tuple(key, fields(['value', 'valueFrom'])).map(([name, f]) => ({ name, ...f }) as JsonObject);
/** A container: a name, scalar fields, an env list merged by name. */
const container = fc
  .tuple(key, fields(['image', 'args', 'securityContext']), fc.array(envEntry, { maxLength: 3 }))
  .map(([name, f, env]) => {
    const c: JsonObject = { name, ...f };
    if (env.length > 0) c.env = env;
    return c;
  });
const pod = fc
  .record({
    labels: fields(['p', 'q', 'r']),
    annotations: fields(['p', 's']),
    containers: fc.array(container, { maxLength: 3 }),
    volumes: fc.array(
      fc.tuple(key, fields(['emptyDir', 'secret'])).map(([name, f]) => ({ name, ...f })),
      { maxLength: 3 },
    ),
    spec: fields(['hostname', 'securityContext', 'dnsPolicy']),
  })
  .map(({ labels, annotations, containers, volumes, spec }) => ({
    metadata: { labels, annotations },
    spec: { ...spec, containers, volumes },
  })) as fc.Arbitrary<JsonObject>;

/** `v` with the subtrees `pick` chooses shared (deep-frozen, as a sidecar plan's token-free parts); the rest copied. */
function withShared(v: JsonObject, picks: boolean[]): JsonObject {
  let n = 0;
  const walk = (x: Json, top: boolean): Json => {
    if (typeof x !== 'object' || x === null) return x;
    if (!top && picks[n++ % picks.length] === true) return share(cloneJson(x));
    if (Array.isArray(x)) return x.map((y) => walk(y, false));
    const out: JsonObject = {};
    for (const k of Object.keys(x)) setOwn(out, k, walk(x[k] as Json, false));
    return out;
  };
  return walk(v, true) as JsonObject;
}

const asPod = (o: JsonObject): PodTemplate => o as unknown as PodTemplate;

/** The merge `injectIstioPod` made before: the fragment as it is, into a fresh copy of the pod. */
function general(original: JsonObject, fragment: JsonObject): string {
  try {
    return JSON.stringify(mergeInto(asPod(cloneJson(original)), fragment, undefined, true, true));
  } catch (e) {
    return `failed: ${(e as Error).message}`;
  }
}

/** Every unshared collection of `v`. */
function unsharedParts(v: Json, out = new Set<object>()): Set<object> {
  if (typeof v !== 'object' || v === null || isShared(v)) return out;
  out.add(v);
  for (const x of Array.isArray(v) ? v : Object.values(v)) unsharedParts(x, out);
  return out;
}

t.test('a fragment merged as its null-free copy gives the general merge, or is merged as it is', async (t) => {
  let fast = 0;
  let fastWithNulls = 0;
  let refused = 0;
  fc.assert(
    fc.property(pod, pod, fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), (original, plain, picks) => {
      const fragment = withShared(plain, picks);
      const before = JSON.stringify(fragment);
      const expected = general(original, fragment);
      const clean = trustedIntoEmpty({ metadata: {}, spec: {} }, fragment, POD_SCHEMA);
      const target = asPod(cloneJson(original));
      const trusted = nullFreeFor(target, fragment, clean, true);
      if (trusted === undefined) {
        if (clean !== undefined) refused++;
        return JSON.stringify(fragment) === before;
      }
      fast++;
      if (before.includes('null')) fastWithNulls++;
      let got: string;
      let merged: PodTemplate | undefined;
      try {
        merged = mergeInto(target, fragment, trusted, false, true);
        got = JSON.stringify(merged);
      } catch (e) {
        got = `failed: ${(e as Error).message}`;
      }
      // The same pod, the fragment as it was, and no collection of the template pod's (`clean`) in the pod.
      const templateParts = unsharedParts(defined(clean).trusted);
      const shares =
        merged !== undefined && [...unsharedParts(merged as unknown as Json)].some((x) => templateParts.has(x));
      return got === expected && JSON.stringify(fragment) === before && !shares;
    }),
    { numRuns: 3000 },
  );
  t.ok(fast > 300, `fragments merged as their null-free copy: ${fast} of 3000`);
  t.ok(fastWithNulls > 200, `of them holding nulls: ${fastWithNulls}`);
  t.same(Object.keys(Object.prototype), [], 'no merge wrote into Object.prototype');
  t.ok(refused > 300, `plain fragments refused (a null meets a key of the pod): ${refused}`);
});

function defined<T>(v: T | undefined): T {
  if (v === undefined) throw new Error('undefined');
  return v;
}

t.test('the nulls that delete, and the entries that differ, are refused', async (t) => {
  const pod: JsonObject = {
    metadata: { labels: { app: 'a' } },
    spec: {
      containers: [
        { name: 'app', image: 'i', env: [{ name: 'E', value: 'v' }] },
        { name: 1, image: 'j' },
      ],
    },
  };
  const refuse = (fragment: JsonObject, why: string) => t.notOk(nullsDeleteNothing(pod, fragment, POD_SCHEMA), why);
  const accept = (fragment: JsonObject, why: string) => t.ok(nullsDeleteNothing(pod, fragment, POD_SCHEMA), why);
  refuse({ metadata: { labels: { app: null } } }, 'a null label the pod has');
  accept({ metadata: { labels: { other: null } } }, 'a null label the pod has not');
  refuse({ spec: { containers: [{ name: 'app', image: null }] } }, 'a null field of a container matched by name');
  refuse(
    { spec: { containers: [{ name: 'app', env: [{ name: 'E', value: null }] }] } },
    'a null in an env entry matched by name, in a matched container',
  );
  accept({ spec: { containers: [{ name: '1', image: null }] } }, 'the key "1" is not the key 1: a new container');
  refuse({ spec: { containers: [{ name: 1, image: null }] } }, 'the key 1 matches');
  accept({ spec: { containers: [{ name: 'new', image: null }], volumes: [{ name: 'v', emptyDir: null }] } }, 'new');
  const proto: JsonObject = { name: 'new' };
  setOwn(proto, '__proto__', { a: 'x' });
  refuse({ spec: { containers: [proto] } }, 'a new entry with an own __proto__ (the general merge assigns it)');
  refuse({ spec: { $patch: 'replace' } }, 'a directive');
  refuse({ spec: { containers: [{ name: { a: 'x' } }] } }, 'a merge key that is a map');
  t.ok(isJsonObject(pod.spec), 'the pod is only read');
});
