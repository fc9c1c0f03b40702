/**
 * Uninject no longer copies what the driver's hook only reads (issue #40): `uninjectPod` hands the hook its
 * deep-frozen view of the pod with the inventory removed (the kept containers, volumes and maps are the view's own
 * objects, not a copy), and Istio's hook copies on write (the containers whose probes or hooks it restores, the
 * lists that hold them) instead of deep-copying the pod. The inject-time check of the companion record reads the
 * result as it is (`readOnly`); uninject itself still gets a writable copy.
 *
 * For every driver (istio, linkerd, osm, fsm, kuma, custom) and generated pod templates (app containers with
 * probes and lifecycle hooks of every kind, some rewritten by the mesh and some not, volume mounts, annotations a
 * mesh writes already set, a pod securityContext), fixed seed (test/setup/property-seed.mjs):
 * - the hook given a deep-frozen pod (the precondition) returns what it returns for a writable copy of the same pod,
 *   key order included, without a write (a TypeError); Istio's hook both restores probes (a copy) and leaves
 *   containers alone (the pod's own object) across the generated pods;
 * - `uninjectPod` with `readOnly` gives the same pod template as without, the latter with no frozen object outside
 *   the parts shared between workloads, and the pod as found unchanged;
 * - inject then uninject, as the CLI runs it, gives back the input bytes.
 */
import t from 'tap';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { run } from '../../src/index.ts';
import { loadConfig } from '../../src/config/load.ts';
import { DRIVERS } from '../../src/drivers/registry.ts';
import type { ActiveMesh, UninjectContext } from '../../src/contract/driver.ts';
import { removeInventory, uninjectPod } from '../../src/patch/uninject.ts';
import { cloneJson, isShared } from '../../src/json.ts';
import type { Json, PodTemplate } from '../../src/model.ts';
import { fnConfig } from '../helpers/uninject-drivers.ts';

type Obj = Record<string, any>;

const port = fc.constantFrom<Json>(8080, 9090, 'http');
const handler: fc.Arbitrary<Obj> = fc.oneof(
  fc
    .record({ path: fc.constantFrom('/healthz', '/ready'), port, scheme: fc.constantFrom(undefined, 'HTTP') })
    .map((h) => ({ httpGet: h.scheme ? h : { path: h.path, port: h.port } })),
  port.map((p) => ({ tcpSocket: { port: p } })),
  fc.constant({ grpc: { port: 9090 } }),
  fc.constant({ exec: { command: ['cat', '/tmp/ready'] } }),
);
const probe = fc.option(
  fc.tuple(handler, fc.boolean()).map(([h, period]) => (period ? { ...h, periodSeconds: 10 } : h)),
  { nil: undefined },
);
const hook = fc.option(
  fc.constantFrom<Obj>({ httpGet: { path: '/drain', port: 8080 } }, { exec: { command: ['sleep', '5'] } }),
  { nil: undefined },
);

const container = (name: string): fc.Arbitrary<Obj> =>
  fc
    .record({
      probed: fc.boolean(),
      liveness: probe,
      readiness: probe,
      startup: probe,
      preStop: hook,
      postStart: hook,
      mount: fc.boolean(),
    })
    .map((c) => {
      const out: Obj = {
        name,
        image: `example/${name}:1`,
        ports: [
          { name: 'http', containerPort: 8080 },
          { name: 'grpc', containerPort: 9090 },
        ],
      };
      // Half the containers without probes: Istio rewrites every HTTP, TCP and gRPC probe.
      if (c.probed && c.liveness) out.livenessProbe = c.liveness;
      if (c.probed && c.readiness) out.readinessProbe = c.readiness;
      if (c.probed && c.startup) out.startupProbe = c.startup;
      if (c.preStop || c.postStart)
        out.lifecycle = {
          ...(c.preStop ? { preStop: c.preStop } : {}),
          ...(c.postStart ? { postStart: c.postStart } : {}),
        };
      if (c.mount) out.volumeMounts = [{ name: 'data', mountPath: '/data' }];
      return out;
    });

const deployment = fc
  .record({
    containers: fc.tuple(container('web'), fc.option(container('worker'), { nil: undefined })),
    annotations: fc.subarray([
      ['kubectl.kubernetes.io/default-container', 'web'],
      ['prometheus.io/scrape', 'true'],
      ['kuma.io/envoy-admin-port', '9901'],
    ] as const),
    securityContext: fc.boolean(),
  })
  .map((d) => {
    const spec: Obj = { containers: d.containers.filter((c) => c !== undefined) };
    if (d.securityContext) spec.securityContext = { runAsNonRoot: true };
    spec.volumes = [{ name: 'data', emptyDir: {} }];
    const metadata: Obj = { labels: { app: 'web' } };
    if (d.annotations.length > 0) metadata.annotations = Object.fromEntries(d.annotations);
    return stringify(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata, spec } },
      },
      { aliasDuplicateObjects: false },
    );
  });

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** The first object in `v` that is frozen but not shared between workloads (a path), or undefined. */
function frozenPart(v: unknown, path = ''): string | undefined {
  if (typeof v !== 'object' || v === null || isShared(v)) return undefined;
  if (Object.isFrozen(v)) return path || '(root)';
  for (const [k, x] of Object.entries(v)) {
    const hit = frozenPart(x, `${path}.${k}`);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

const workload = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'web',
  namespace: 'shop',
  namespaceDefaulted: false,
};

for (const driver of DRIVERS.map((d) => d.name)) {
  t.test(`${driver}: uninject reads the pod without copying it, and gives back the input`, async (t) => {
    const cfg = fnConfig(driver);
    const loaded = loadConfig(cfg, DRIVERS);
    if (!loaded.ok) throw new Error(`config of ${driver} does not load`);
    const mesh: ActiveMesh = loaded.mesh;
    const hookOf = mesh.uninject;
    if (!hookOf) throw new Error(`${driver} has no uninject hook`);
    const ctx: Omit<UninjectContext, 'injected'> = { workload, config: loaded.config };
    const mode = (m: string) => JSON.stringify({ ...cfg, spec: { ...cfg.spec, mode: m } });
    let injectedCount = 0;
    let restored = 0;
    let leftAlone = 0;
    fc.assert(
      fc.property(deployment, (input) => {
        const injected = run(input, { functionConfig: mode('inject') });
        if (injected.exitCode !== 0 || injected.stdout === input) return true;
        injectedCount++;
        const pod = (parse(injected.stdout) as Obj).spec.template as PodTemplate;
        const asFound = JSON.stringify(pod);
        // The hook on a deep-frozen pod (what uninjectPod hands it) and on a writable copy of the same pod.
        const view = deepFreeze(cloneJson(pod));
        const inv = mesh.inventory(view);
        if (!inv) return false;
        const frozenIn = deepFreeze(removeInventory(view, inv));
        const fromFrozen = hookOf(frozenIn, inv, { ...ctx, injected: view });
        const fromWritable = hookOf(removeInventory(cloneJson(pod), inv), inv, { ...ctx, injected: view });
        if (JSON.stringify(fromFrozen) !== JSON.stringify(fromWritable)) return false;
        const kept = (p: PodTemplate) => (Array.isArray(p.spec.containers) ? p.spec.containers : []);
        kept(fromFrozen).forEach((c, i) => {
          if (c === kept(frozenIn)[i]) leftAlone++;
          else restored++;
        });
        // uninjectPod: the check's read-only result equals uninject's writable one; the pod as found is unchanged.
        const checked = uninjectPod(mesh, pod, ctx, true)?.pod;
        const written = uninjectPod(mesh, pod, ctx)?.pod;
        if (JSON.stringify(checked) !== JSON.stringify(written) || frozenPart(written) !== undefined) return false;
        if (JSON.stringify(pod) !== asFound) return false;
        // What a user sees: the input bytes back.
        const un = run(injected.stdout, { functionConfig: mode('uninject') });
        return un.exitCode === 0 && un.stdout === input;
      }),
      { numRuns: 40 },
    );
    t.ok(injectedCount >= 20, `most generated inputs are injected (${injectedCount} of 40)`);
    if (driver === 'istio')
      t.ok(
        restored > 0 && leftAlone > 0,
        `Istio's hook restores some containers (${restored}) and leaves others (${leftAlone})`,
      );
  });
}
