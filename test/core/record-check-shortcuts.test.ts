/**
 * The companion record's check (src/patch/status-record.ts `withOriginalRecord`) after issue #40's session 47:
 * each shortcut gives what the code it replaced gave, on generated inputs, not only on the bench.
 * - `diffRepairs` compares each pair of values once (a path built only for a pair that differs): the same repairs,
 *   in the same order, as the previous walk (kept below as the reference), on pairs that share most of their
 *   structure, as an injected pod template uninjected and the one that came in do.
 * - `removeInventory` finds the containers that mount a recorded volume for the recorded volumes only and removes
 *   list entries in one loop: the same pod template, or the same refusal naming the same volume and container.
 * - Istio's reuse test (`sameMetadata`, src/drivers/istio/reinject.ts) answers what `jsonEqual` of the two
 *   `metadataOf` copies answered.
 */
import t from 'tap';
import fc from 'fast-check';
import { diffRepairs, fingerprint, sameJson, type Repair } from '../../src/patch/status-repairs.ts';
import { removeInventory } from '../../src/patch/uninject.ts';
import { metadataOf, sameMetadata } from '../../src/drivers/istio/reinject.ts';
import { isJsonObject, jsonEqual } from '../../src/json.ts';
import { ORIGINAL_ANNOTATION } from '../../src/patch/status-record.ts';
import type { Json, JsonObject, PodTemplate } from '../../src/model.ts';
import type { Inventory } from '../../src/contract/driver.ts';
import { podJson } from '../helpers/pod-json.ts';

// ---- the previous diff, as it was (the reference) ----
function oldSameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => oldSameJson(x, b[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && oldSameJson(a[k], b[k]));
}
function oldDiffMaps(now: JsonObject, want: JsonObject, path: Array<string | number>, out: Repair[], byName = false) {
  const wantKeys = Object.keys(want);
  // Since session 51 the pod spec's keys are visited in sorted order (the record comes out in one order).
  const nowKeys = byName ? Object.keys(now).sort() : Object.keys(now);
  for (const k of nowKeys) if (!Object.hasOwn(want, k)) out.push([[...path, k], fingerprint(now[k])]);
  const visit = byName
    ? [...wantKeys.entries()].sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0))
    : wantKeys.entries();
  for (const [i, k] of visit) {
    if (Object.hasOwn(now, k)) oldDiffValues(now[k], want[k], [...path, k], out);
    else {
      const next = wantKeys.slice(i + 1).find((x) => Object.hasOwn(now, x));
      const v = want[k] as Json;
      out.push(next === undefined ? [[...path, k], '-', v] : [[...path, k], '-', v, next]);
    }
  }
}
function oldSameOrder(now: JsonObject, want: JsonObject): boolean {
  const a = Object.keys(now).filter((k) => Object.hasOwn(want, k));
  const b = Object.keys(want).filter((k) => Object.hasOwn(now, k));
  return a.every((k, i) => k === b[i]);
}
function oldDiffValues(now: Json | undefined, want: Json | undefined, path: Array<string | number>, out: Repair[]) {
  if (oldSameJson(now, want)) return;
  if (want === undefined) {
    out.push([path, fingerprint(now)]);
    return;
  }
  // The pod spec's own keys are matched by name too (since session 51: their order is the text's).
  const meta =
    (path.length === 1 && path[0] === 'spec') ||
    (path.length === 2 && path[0] === 'metadata' && (path[1] === 'labels' || path[1] === 'annotations'));
  if (isJsonObject(now) && isJsonObject(want) && (oldSameOrder(now, want) || meta)) {
    oldDiffMaps(now, want, path, out, path.length === 1 && path[0] === 'spec');
    return;
  }
  if (Array.isArray(now) && Array.isArray(want) && now.length === want.length) {
    for (let i = 0; i < now.length; i++) oldDiffValues(now[i], want[i], [...path, i], out);
    return;
  }
  out.push([path, fingerprint(now), want]);
}

/** Pod-shaped JSON with keys that collide often. */
const { value, pod: podLike } = podJson(['name', 'port', 'path', 'labels', 'annotations', 'a', '__proto__']);

/** `v` with one place changed (a value replaced, a key dropped, or a map's keys reversed), picked by `seed`. */
function mutate(v: Json, seed: number, other: Json): Json {
  if (Array.isArray(v)) {
    if (v.length === 0) return [other];
    const i = seed % v.length;
    return v.map((x, j) => (j === i ? mutate(x, Math.floor(seed / 3), other) : x));
  }
  if (!isJsonObject(v)) return other;
  const keys = Object.keys(v);
  if (keys.length === 0 || seed % 7 === 0) return Object.fromEntries(Object.entries(v).reverse());
  const k = keys[seed % keys.length] as string;
  const out: JsonObject = {};
  for (const [kk, x] of Object.entries(v))
    if (kk !== k || seed % 5 !== 1)
      Object.defineProperty(out, kk, {
        value: kk === k ? mutate(x, Math.floor(seed / 3), other) : x,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  return out;
}

t.test('diffRepairs gives the repairs of the previous walk, in order', async (t) => {
  fc.assert(
    fc.property(podLike, fc.nat(), value, fc.boolean(), (now, seed, other, unrelated) => {
      const want = (unrelated ? other : mutate(now as Json, seed, other)) as JsonObject;
      if (!isJsonObject(want)) return;
      const ref: Repair[] = [];
      oldDiffMaps(now as JsonObject, want, [], ref);
      t.strictSame(diffRepairs(now as JsonObject, want), ref);
      t.equal(sameJson(now as Json, want), oldSameJson(now as Json, want));
    }),
  );
});

// ---- the previous removal's refusal and lists, as they were (the reference) ----
function oldRemoval(pod: PodTemplate, inv: Inventory): { pod: Json } | { error: string } {
  const named = (list: Json | undefined) => (Array.isArray(list) ? list.filter(isJsonObject) : []);
  const injected = new Set([...inv.containers, ...inv.initContainers]);
  for (const v of inv.volumes) {
    for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
      for (const c of named(pod.spec[list])) {
        if (typeof c.name === 'string' && injected.has(c.name)) continue;
        if ([...named(c.volumeMounts), ...named(c.volumeDevices)].some((m) => m.name === v))
          return { error: `${v} ${String(c.name)}` };
      }
    }
  }
  const names: Record<string, readonly string[]> = {
    containers: inv.containers,
    initContainers: inv.initContainers,
    volumes: inv.volumes,
    imagePullSecrets: inv.imagePullSecrets,
  };
  const spec: JsonObject = {};
  for (const [k, v] of Object.entries(pod.spec)) {
    const drop = Object.hasOwn(names, k) ? (names[k] as readonly string[]) : [];
    if (!Array.isArray(v) || drop.length === 0) {
      spec[k] = v as Json;
      continue;
    }
    const kept = v.filter((e) => !(isJsonObject(e) && typeof e.name === 'string' && drop.includes(e.name)));
    if (kept.length === v.length) spec[k] = v;
    else if (kept.length > 0) spec[k] = kept;
  }
  return { pod: spec };
}

const nameOf = fc.constantFrom('app', 'istio-proxy', 'istio-init', 'data', 'envoy', 'token', 'pull');
const mount = fc.record({ name: nameOf, mountPath: fc.constant('/x') });
const container = fc.record(
  { name: nameOf, volumeMounts: fc.array(mount, { maxLength: 3 }), volumeDevices: fc.array(mount, { maxLength: 1 }) },
  { requiredKeys: ['name'] },
);
const named = fc.array(fc.oneof(fc.record({ name: nameOf }), fc.constant<Json>('x')), { maxLength: 4 });
const spec = fc.record(
  {
    initContainers: fc.array(container, { maxLength: 2 }),
    containers: fc.array(container, { maxLength: 3 }),
    ephemeralContainers: fc.array(container, { maxLength: 1 }),
    volumes: named,
    imagePullSecrets: named,
    restartPolicy: fc.constant('Always'),
  },
  { requiredKeys: [] },
);
const names = fc.uniqueArray(nameOf, { maxLength: 3 });
const inventory = fc.record({
  containers: names,
  initContainers: names,
  volumes: names,
  imagePullSecrets: names,
});

t.test('removeInventory removes and refuses as the previous removal did', async (t) => {
  fc.assert(
    fc.property(spec, inventory, (s, lists) => {
      const pod = { metadata: {}, spec: s as JsonObject } as PodTemplate;
      const inv: Inventory = { statusAnnotation: 'status', ...lists };
      const ref = oldRemoval(pod, inv);
      let got: { pod: Json } | { error: string };
      try {
        got = { pod: removeInventory(pod, inv).spec };
      } catch (e) {
        const m = /lists volume "([^"]+)" as injected, but container "([^"]+)"/.exec((e as Error).message);
        got = { error: m ? `${m[1]} ${m[2]}` : (e as Error).message };
      }
      // As JSON text: key order counts, prototypes do not (the generator's maps may have none; the removal's copy has).
      t.equal(JSON.stringify(got), JSON.stringify(ref));
    }),
  );
});

const annotations = fc.dictionary(
  fc.constantFrom('a', 'b', ORIGINAL_ANNOTATION, '__proto__'),
  fc.constantFrom('x', 'y'),
  {
    maxKeys: 3,
  },
);
const metadata = fc.record(
  {
    labels: fc.oneof(fc.dictionary(fc.constantFrom('app', 'b'), fc.constantFrom('x', 'y'), { maxKeys: 2 })),
    annotations: fc.oneof(annotations, fc.constant<Json>('text'), fc.constant<Json>(null)),
    name: fc.constantFrom('web', 'api'),
    other: fc.constant<Json>(undefined as unknown as Json),
  },
  { requiredKeys: [] },
);

t.test("Istio's reuse test answers what jsonEqual of the two metadataOf copies answered", async (t) => {
  fc.assert(
    fc.property(metadata, metadata, fc.boolean(), (a, b, same) => {
      const ma = a as PodTemplate['metadata'];
      const mb = (same ? a : b) as PodTemplate['metadata'];
      const want = jsonEqual(metadataOf({ metadata: ma, spec: {} }), metadataOf({ metadata: mb, spec: {} }));
      t.equal(sameMetadata(ma, mb), want);
      t.equal(sameMetadata(mb, ma), want);
    }),
  );
});
