/**
 * The inputs a driver's hooks may only read are read-only by construction (issue #37 item 3): uninject hands
 * the driver's `inventory` and `uninject` hooks a deep-frozen copy of the pod as found (`context.injected`,
 * src/patch/uninject.ts `uninjectPod`), so a hook that writes into it throws instead of changing the pod the
 * pipeline keeps and writes. For every driver (istio, linkerd, osm, fsm, kuma, custom), each hook gets a planted
 * write (a new annotation, a new container, an `env` on a container, a removed key) and the write is refused with a
 * TypeError, the caller's pod unchanged; without the planted write the same call uninjects.
 */
import t from 'tap';
import { parse } from 'yaml';
import { run } from '../../src/index.ts';
import { loadConfig } from '../../src/config/load.ts';
import { DRIVERS } from '../../src/drivers/registry.ts';
import type { ActiveMesh, UninjectContext } from '../../src/contract/driver.ts';
import { uninjectPod } from '../../src/patch/uninject.ts';
import type { PodTemplate } from '../../src/model.ts';
import { APP, fnConfig } from '../helpers/uninject-drivers.ts';

type Obj = Record<string, any>;

/** Writes a hook might make into a pod it may only read. */
const WRITES: Record<string, (pod: PodTemplate) => void> = {
  'a new annotation': (pod) => {
    (pod.metadata.annotations as Obj).planted = 'x';
  },
  'a new container': (pod) => {
    (pod.spec.containers as Obj[]).push({ name: 'planted' });
  },
  'an env on a container': (pod) => {
    const [first] = pod.spec.containers as Obj[];
    if (first) first.env = [];
  },
  'a removed key': (pod) => {
    delete (pod.metadata as Obj).labels;
  },
};

const context: Omit<UninjectContext, 'injected'> = {
  workload: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop', namespaceDefaulted: false },
  config: {} as never,
};

for (const driver of DRIVERS.map((d) => d.name)) {
  t.test(`${driver}: a hook's write into the pod it reads is refused`, async (t) => {
    const cfg = fnConfig(driver);
    const injected = run(APP, { functionConfig: JSON.stringify(cfg) });
    t.equal(injected.exitCode, 0, 'inject succeeds');
    const pod = (parse(injected.stdout) as Obj).spec.template as PodTemplate;
    const loaded = loadConfig(cfg, DRIVERS);
    if (!loaded.ok) throw new Error(`config of ${driver} does not load`);
    const mesh: ActiveMesh = loaded.mesh;
    const ctx = { ...context, config: loaded.config };
    const before = structuredClone(pod);
    const plain = uninjectPod(mesh, pod, ctx);
    t.ok(plain, 'without a planted write: uninjects');
    t.notSame(plain?.pod, before, 'and takes the injection away');
    const hooks = ['inventory', ...(mesh.uninject ? ['uninject'] : [])];
    t.ok(hooks.includes('uninject'), `${driver} has an uninject hook`);
    for (const hook of hooks) {
      for (const [what, write] of Object.entries(WRITES)) {
        const planted: ActiveMesh =
          hook === 'inventory'
            ? {
                ...mesh,
                inventory: (p) => {
                  write(p);
                  return mesh.inventory(p);
                },
              }
            : {
                ...mesh,
                uninject: (p, inv, c) => {
                  write(c.injected);
                  return mesh.uninject?.(p, inv, c) ?? p;
                },
              };
        t.throws(() => uninjectPod(planted, pod, ctx), TypeError, `${hook}: ${what} throws`);
        t.same(pod, before, `${hook}: ${what}: the caller's pod unchanged`);
      }
    }
  });
}

/** `v` deep-frozen (a copy). */
function frozen<T>(v: T): T {
  const copy = structuredClone(v);
  const freeze = (x: unknown): void => {
    if (typeof x !== 'object' || x === null) return;
    for (const y of Array.isArray(x) ? x : Object.values(x)) freeze(y);
    Object.freeze(x);
  };
  freeze(copy);
  return copy;
}

for (const driver of DRIVERS.map((d) => d.name)) {
  t.test(`${driver}: decide and inventory read their inputs only (frozen, same answer)`, async (t) => {
    const cfg = fnConfig(driver);
    const loaded = loadConfig(cfg, DRIVERS);
    if (!loaded.ok) throw new Error(`config of ${driver} does not load`);
    const injected = run(APP, { functionConfig: JSON.stringify(cfg) });
    for (const [which, text] of [
      ['the app', APP],
      ['the injected app', injected.stdout],
    ] as const) {
      const pod = (parse(text) as Obj).spec.template as PodTemplate;
      const input = {
        podMeta: pod.metadata,
        namespace: 'shop',
        namespaceLabels: { 'kubernetes.io/metadata.name': 'shop' },
        hostNetwork: false,
        kind: 'Deployment',
        podSpec: pod.spec,
        config: loaded.config,
      };
      const open = loaded.mesh.decide(structuredClone(input));
      t.same(loaded.mesh.decide(frozen(input)), open, `${which}: decide on frozen inputs gives the same decision`);
      t.same(loaded.mesh.inventory(frozen(pod)), loaded.mesh.inventory(pod), `${which}: inventory on a frozen pod`);
    }
  });
}
