/**
 * The read-only view of uninject (src/patch/uninject.ts `readOnlyCopy`) copies only what is not shared between
 * workloads (issue #40): the parts a sidecar plan shares (src/json.ts `share`, deep-frozen for good) are held as
 * they are, the rest is copied and frozen (src/json.ts `copyUnshared`). The promise of issue #37 stays: a hook that
 * writes into what it may only read throws a TypeError, whether the write lands in a shared or a copied part, and
 * the caller's pod is unchanged.
 *
 * - `copyUnshared` over generated JSON with generated shared subtrees: the copy equals the input (key order
 *   included), keeps each shared subtree (the same object), holds no unshared collection of the input, and is
 *   deep-frozen with `freeze` (writable but for the shared parts without).
 * - For every driver (istio, linkerd, osm, fsm, kuma, custom), an injected pod with generated parts shared: the
 *   plain uninject gives what it gives for the same pod unshared, and a write planted in either hook at a generated
 *   place (a shared or a copied collection) throws, the caller's pod unchanged.
 */
import t from 'tap';
import fc from 'fast-check';
import { parse } from 'yaml';
import { run } from '../../src/index.ts';
import { loadConfig } from '../../src/config/load.ts';
import { DRIVERS } from '../../src/drivers/registry.ts';
import type { ActiveMesh, UninjectContext } from '../../src/contract/driver.ts';
import { uninjectPod } from '../../src/patch/uninject.ts';
import { copyUnshared, isShared, share } from '../../src/json.ts';
import type { Json, PodTemplate } from '../../src/model.ts';
import { APP, fnConfig } from '../helpers/uninject-drivers.ts';

type Path = Array<string | number>;

/** The paths of every collection (map or list) in `v`, the root first. */
function collectionPaths(v: Json, at: Path = []): Path[] {
  if (typeof v !== 'object' || v === null) return [];
  const entries: Array<[string | number, Json]> = Array.isArray(v)
    ? v.map((x, i) => [i, x])
    : Object.entries(v as Record<string, Json>);
  return [at, ...entries.flatMap(([k, x]) => collectionPaths(x, [...at, k]))];
}

function at(v: unknown, path: Path): Json {
  let cur: any = v;
  for (const k of path) cur = cur[k];
  return cur;
}

/** Every collection reachable from `v`. */
function collections(v: Json, out = new Set<object>()): Set<object> {
  if (typeof v !== 'object' || v === null) return out;
  out.add(v);
  for (const x of Array.isArray(v) ? v : Object.values(v)) collections(x as Json, out);
  return out;
}

/** `v` (a fresh value) with the collections at `shared` (paths of `v`) shared, deepest first. */
function withShared<T>(v: T, shared: Path[]): T {
  for (const p of [...shared].sort((a, b) => b.length - a.length)) if (p.length > 0) share(at(v, p));
  return v;
}

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constant('__proto__')), tie('value'), { maxKeys: 4 }),
  ),
})).value as fc.Arbitrary<Json>;

t.test('copyUnshared: equal, shared parts kept, the rest copied, frozen with freeze', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 5 }),
      fc.array(fc.nat(), { maxLength: 4 }),
      fc.boolean(),
      (raw, picks, freeze) => {
        runs++;
        const input = structuredClone(raw) as Json;
        const paths = collectionPaths(input);
        const shared = picks.map((i) => paths[i % paths.length]!);
        withShared(input, shared);
        const sharedParts = [...collections(input)].filter(isShared);
        const unshared = [...collections(input)].filter((x) => !isShared(x));
        const copy = copyUnshared(input, freeze);
        if (JSON.stringify(copy) !== JSON.stringify(input)) return false;
        const reached = collections(copy);
        if (unshared.some((x) => reached.has(x))) return false;
        if (sharedParts.some((x) => !reached.has(x))) return false;
        const unfrozen = [...reached].filter((x) => !Object.isFrozen(x));
        return freeze ? unfrozen.length === 0 : unfrozen.length === [...reached].filter((x) => !isShared(x)).length;
      },
    ),
  );
  t.ok(runs >= 100, `${runs} generated values`);
});

/** Writes a hook might make, at a collection of the pod it reads. */
const WRITES = ['set a key', 'delete a key', 'push an entry', 'replace an entry'] as const;

function plant(pod: PodTemplate, path: Path, write: (typeof WRITES)[number]): void {
  const target: any = at(pod, path);
  if (Array.isArray(target)) {
    if (write === 'push an entry' || target.length === 0) target.push('planted');
    else target[0] = 'planted';
  } else if (write === 'delete a key' && Object.keys(target).length > 0) delete target[Object.keys(target)[0]!];
  else target.planted = 'x';
}

const context: Omit<UninjectContext, 'injected'> = {
  workload: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop', namespaceDefaulted: false },
  config: {} as never,
};

for (const driver of DRIVERS.map((d) => d.name)) {
  t.test(`${driver}: with parts shared, the view is read-only and uninject gives the same`, async (t) => {
    const cfg = fnConfig(driver);
    const injected = run(APP, { functionConfig: JSON.stringify(cfg) });
    t.equal(injected.exitCode, 0, 'inject succeeds');
    const text = JSON.stringify((parse(injected.stdout) as any).spec.template);
    const loaded = loadConfig(cfg, DRIVERS);
    if (!loaded.ok) throw new Error(`config of ${driver} does not load`);
    const mesh: ActiveMesh = loaded.mesh;
    const ctx = { ...context, config: loaded.config };
    const plain = uninjectPod(mesh, JSON.parse(text), ctx);
    t.ok(plain, 'the pod unshared uninjects');
    const paths = collectionPaths(JSON.parse(text));
    let writes = 0;
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.nat(),
        fc.constantFrom('inventory', 'uninject'),
        fc.constantFrom(...WRITES),
        (picks, target, hook, write) => {
          const pod = withShared<PodTemplate>(
            JSON.parse(text),
            picks.map((i) => paths[i % paths.length]!),
          );
          const before = JSON.stringify(pod);
          // With parts shared, the same uninject.
          if (JSON.stringify(uninjectPod(mesh, pod, ctx)) !== JSON.stringify(plain)) return false;
          const where = paths[target % paths.length]!;
          const planted: ActiveMesh =
            hook === 'inventory'
              ? {
                  ...mesh,
                  inventory: (p) => {
                    plant(p, where, write);
                    return mesh.inventory(p);
                  },
                }
              : {
                  ...mesh,
                  uninject: (p, inv, c) => {
                    plant(c.injected, where, write);
                    return mesh.uninject?.(p, inv, c) ?? p;
                  },
                };
          writes++;
          try {
            uninjectPod(planted, pod, ctx);
            return false;
          } catch (e) {
            return e instanceof TypeError && JSON.stringify(pod) === before;
          }
        },
      ),
      { numRuns: 60 },
    );
    t.equal(writes, 60, 'every generated write was refused, the pod unchanged');
  });
}
