// A pod that runs to completion and gets a classic sidecar never completes (issue #37, item 6; linkerd2#5188,
// #7425). The warning saying so must stay true: on a Job or CronJob, and on any workload whose pod template has
// `restartPolicy: Never` or `OnFailure` (a Helm test hook Pod, `helm.sh/hook: test`); on the first run and on a
// second run over the injected output (which adds nothing, yet the pods still carry the sidecar); for every
// driver. The routes (driver × kind × restartPolicy × run) are generated; each expectation is written from the
// route, not from the output.
import t from 'tap';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { run } from '../../src/run.ts';

type Obj = Record<string, any>;

const CA = '"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"';
/** Per driver: its functionConfig spec (classic sidecars, everything in namespace shop injected) and its proxy. */
const DRIVERS: Record<string, { spec: string; proxy: string; refuses?: Shape['kind'] }> = {
  istio: { spec: '  mesh: istio\n', proxy: 'istio-proxy' },
  linkerd: {
    spec: `  mesh: linkerd\n  linkerd:\n    manual: true\n    values: {proxy: {nativeSidecar: false}, identityTrustAnchorsPEM: ${CA}}\n`,
    proxy: 'linkerd-proxy',
  },
  osm: {
    spec: '  mesh: osm\n  policy: enabled\n  namespaces: [{name: shop, labels: {openservicemesh.io/monitored-by: osm}}]\n',
    proxy: 'envoy',
  },
  fsm: {
    spec: '  mesh: fsm\n  policy: enabled\n  namespaces: [{name: shop, labels: {flomesh.io/monitored-by: fsm}}]\n',
    proxy: 'sidecar',
    refuses: 'CronJob',
  }, // FSM's pipy sidecar needs the pods' owner (src/drivers/osm/inject.ts)
  kuma: {
    spec: `  mesh: kuma\n  namespaces: [{name: shop, labels: {kuma.io/sidecar-injection: enabled}}]\n  kuma:\n    controlPlane: {caCert: ${CA}}\n`,
    proxy: 'kuma-sidecar',
  },
  custom: {
    spec: '  mesh: custom\n  policy: enabled\n  custom:\n    templates:\n      sidecar: "spec:\\n  containers:\\n  - {name: shipper, image: shipper:1}\\n"\n',
    proxy: 'shipper',
  },
};
const config = (driver: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec:\n${DRIVERS[driver]!.spec}`;

/** A workload shape: its kind and the pod template's restartPolicy (absent: none written). */
interface Shape {
  kind: 'Job' | 'CronJob' | 'Pod' | 'Deployment' | 'StatefulSet';
  restartPolicy?: 'Never' | 'OnFailure' | 'Always';
  helmTest: boolean;
}

const PATH: Record<Shape['kind'], string[]> = {
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
  Pod: [],
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
};
const API: Record<Shape['kind'], string> = {
  Job: 'batch/v1',
  CronJob: 'batch/v1',
  Pod: 'v1',
  Deployment: 'apps/v1',
  StatefulSet: 'apps/v1',
};

/** The resource of a shape, as JSON (a YAML subset), named `w<i>`. */
function resource(shape: Shape, i: number): string {
  const name = `w${i}`;
  const pod: Obj = { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
  if (shape.restartPolicy) pod.spec.restartPolicy = shape.restartPolicy;
  const meta: Obj = { name, namespace: 'shop', ...(shape.helmTest ? { annotations: { 'helm.sh/hook': 'test' } } : {}) };
  let body: Obj = pod;
  for (const key of [...PATH[shape.kind]].reverse()) body = { [key]: body };
  if (shape.kind === 'Pod') meta.labels = pod.metadata.labels;
  if (shape.kind === 'Pod') delete body.metadata;
  if (shape.kind === 'Deployment' || shape.kind === 'StatefulSet') body.spec.selector = { matchLabels: { app: name } };
  if (shape.kind === 'CronJob') body.spec.schedule = '0 3 * * *';
  return JSON.stringify({ apiVersion: API[shape.kind], kind: shape.kind, metadata: meta, ...body });
}

/** Whether the shape's pods run to completion: the kind, or the restartPolicy (written from Kubernetes' rules). */
const completes = (s: Shape) =>
  s.kind === 'Job' || s.kind === 'CronJob' || s.restartPolicy === 'Never' || s.restartPolicy === 'OnFailure';

const shapeArb: fc.Arbitrary<Shape> = fc
  .record({
    kind: fc.constantFrom('Job', 'CronJob', 'Pod', 'Deployment', 'StatefulSet'),
    restartPolicy: fc.constantFrom(undefined, 'Never', 'OnFailure', 'Always'),
    helmTest: fc.boolean(),
  })
  .map((s) => {
    const out: Shape = { kind: s.kind as Shape['kind'], helmTest: s.helmTest };
    // A Job's pods must not restart Always (the API refuses it); a Job written that way is not a route.
    if (s.restartPolicy !== undefined && !((s.kind === 'Job' || s.kind === 'CronJob') && s.restartPolicy === 'Always'))
      out.restartPolicy = s.restartPolicy;
    return out;
  });

/** Names of the workloads whose pod template has `proxy` in its regular containers. */
function classicIn(stream: string, proxy: string): Set<string> {
  const out = new Set<string>();
  for (const d of parseAllDocuments(stream)) {
    const o = d.toJS() as Obj | null;
    if (!o) continue;
    let pod: Obj = o;
    for (const k of PATH[o.kind as Shape['kind']] ?? []) pod = pod?.[k];
    if ((pod?.spec?.containers ?? []).some((c: Obj) => c.name === proxy)) out.add(o.metadata.name);
  }
  return out;
}

/** Per workload name: the "never completes" warnings of a run. */
function neverCompletes(out: ReturnType<typeof run>): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const r of out.results) {
    if (r.severity !== 'warning' || !/gets a classic sidecar .* never complete/.test(r.message)) continue;
    const name = String(r.resourceRef?.name);
    m.set(name, [...(m.get(name) ?? []), r.message]);
  }
  return m;
}

t.test(
  'every driver, every shape, first and second run: a warning exactly where a completing pod has a classic sidecar',
  async (t) => {
    let routes = 0;
    for (const driver of Object.keys(DRIVERS)) {
      const shapes = fc.array(
        shapeArb.filter((s) => s.kind !== DRIVERS[driver]!.refuses),
        { minLength: 1, maxLength: 6 },
      );
      fc.assert(
        fc.property(shapes, (shapes) => {
          const input = shapes.map(resource).join('\n---\n') + '\n';
          let text = input;
          for (const pass of ['first run', 'second run']) {
            const out = run(text, { functionConfig: config(driver) });
            if (out.exitCode !== 0)
              throw new Error(
                `${driver} ${pass}: exit ${out.exitCode}: ${out.results.map((r) => r.message).join('; ')}`,
              );
            const classic = classicIn(out.stdout, DRIVERS[driver]!.proxy);
            const warned = neverCompletes(out);
            shapes.forEach((s, i) => {
              const name = `w${i}`;
              if (!classic.has(name))
                throw new Error(`${driver} ${pass}: ${name} (${JSON.stringify(s)}) got no classic sidecar`);
              const w = warned.get(name) ?? [];
              const want = completes(s) ? 1 : 0;
              if (w.length !== want)
                throw new Error(
                  `${driver} ${pass}: ${name} ${JSON.stringify(s)}: ${w.length} warnings, want ${want}: ${w.join(' | ')}`,
                );
              if (want && !w[0]!.includes(`container ${DRIVERS[driver]!.proxy}`))
                throw new Error(`${driver} ${pass}: the warning names the sidecar: ${w[0]}`);
              if (
                want &&
                !(s.kind === 'Job' || s.kind === 'CronJob') &&
                !w[0]!.includes(`restartPolicy: ${s.restartPolicy}`)
              )
                throw new Error(`${driver} ${pass}: the warning names the restartPolicy: ${w[0]}`);
              routes++;
            });
            text = out.stdout;
          }
        }),
        { numRuns: 12 },
      );
    }
    t.ok(routes > 100, `${routes} workload routes checked`);
  },
);

t.test('a Helm test hook Pod: the warning says why and what to do', async (t) => {
  const input = resource({ kind: 'Pod', restartPolicy: 'Never', helmTest: true }, 0) + '\n';
  const first = run(input, { functionConfig: config('istio') });
  const again = run(first.stdout, { functionConfig: config('istio') });
  for (const [pass, out] of [
    ['first run', first],
    ['second run', again],
  ] as const) {
    t.equal(out.exitCode, 0, pass);
    t.same(
      [...(neverCompletes(out).get('w0') ?? [])],
      [
        'Pod gets a classic sidecar (container istio-proxy), which keeps running after the other containers exit: the pod (restartPolicy: Never) never completes; ' +
          'inject native sidecars (spec.nativeSidecars: true or auto, Kubernetes >= 1.29; or spec.kindPolicies.Pod: native), or leave Pods out (spec.kindPolicies.Pod: skip)',
      ],
      pass,
    );
  }
  const native = run(input, { functionConfig: config('istio') + '  nativeSidecars: true\n' });
  t.equal(neverCompletes(native).size, 0, 'a native sidecar: no warning');
});
