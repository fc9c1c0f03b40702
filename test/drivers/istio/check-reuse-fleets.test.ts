/**
 * Every-shape-different fleets through the inject-time uninject check (issue #40 item 2: the check without a second
 * render). Istio's uninject injects the uninjected pod again to learn which labels and annotations the injection
 * writes; the keys that meshinject's companion record (`meshinject.dev/original`) gives back are set by uninject's
 * last step whatever the hook decides, so they are no candidates and the probe carries their recorded values: in
 * the check, the probe is then the pod template just injected, and the hook takes that injection instead of
 * rendering again (`UninjectContext.injection`), also for pods whose own annotations the injection reads and
 * writes (`traffic.sidecar.istio.io/excludeOutboundPorts`, `kubectl.kubernetes.io/default-container`, ...).
 *
 * A fleet: 2–6 workloads, each pod its own container count, ports, labels and annotations (plain user keys and
 * keys the Istio templates read or write), through both template engines (Istio's built-in Handlebars templates
 * and an injector config's Go template writing those keys), three ways: fast paths on, off (`plans.enabled:
 * false`, which also renders the check), and verified (every reuse rendered too and compared). What a user
 * sees must be the same; the output needs no repairs in its record (the hook alone gives the pod back), and
 * uninjecting it gives back the input.
 */
import t from 'tap';
import { docsOf, WEB_WORKLOAD } from '../../helpers/fixtures.ts';
import fc from 'fast-check';
import { run, type RunOutput } from '../../../src/run.ts';
import { loadSpec } from '../../helpers/config.ts';
import { uninjectPod } from '../../../src/patch/uninject.ts';
import { readOriginal, withOriginalRecord } from '../../../src/patch/status-record.ts';
import { createRenderRun, withRenderRun } from '../../../src/render/run-state.ts';
import type { ActiveMesh, WorkloadRef } from '../../../src/contract/driver.ts';
import type { PodTemplate } from '../../../src/model.ts';

const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

/** Keys of the pod's annotations, each with how its value is drawn from the workload's numbers. */
const ANNOTATIONS: ReadonlyArray<readonly [string, (n: number, containers: string[]) => string]> = [
  ['sidecar.istio.io/proxyCPU', (n) => `${10 + (n % 990)}m`],
  ['sidecar.istio.io/proxyMemory', (n) => `${64 + n}Mi`],
  ['traffic.sidecar.istio.io/excludeOutboundPorts', (n) => `${1 + (n % 65000)}`],
  ['traffic.sidecar.istio.io/includeInboundPorts', (n) => `${1024 + (n % 60000)},${2048 + (n % 60000)}`],
  ['kubectl.kubernetes.io/default-container', (_n, cs) => cs[cs.length - 1] ?? 'app'],
  ['sidecar.istio.io/interceptionMode', (n) => (n % 2 === 0 ? 'REDIRECT' : 'TPROXY')],
  ['example.com/owner', (n) => `team-${n}`],
];
const LABELS: ReadonlyArray<readonly [string, (n: number) => string]> = [
  ['app', (n) => `app-${n}`],
  ['version', (n) => `v${n % 7}`],
  ['service.istio.io/canonical-name', (n) => `svc-${n}`],
];

interface Pod {
  n: number;
  /** Ports per container (1–4 containers). */
  containers: number[];
  annotations: number[];
  labels: number[];
}

const podArb: fc.Arbitrary<Pod> = fc.record({
  n: fc.nat({ max: 50000 }),
  containers: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }),
  annotations: fc.subarray([...ANNOTATIONS.keys()]),
  labels: fc.subarray([...LABELS.keys()]),
});

/** The fleet as a YAML stream of Deployments, each pod template of its own shape. */
function fleet(pods: readonly Pod[]): string {
  return pods
    .map((p, i) => {
      const names = p.containers.map((_, c) => `c${i}-${c}`);
      const labels = p.labels.map((j) => {
        const [k, v] = LABELS[j] ?? ['x', () => 'x'];
        return `        ${k}: ${JSON.stringify(v(p.n))}`;
      });
      const annos = p.annotations.map((j) => {
        const [k, v] = ANNOTATIONS[j] ?? ['x', () => 'x'];
        return `        ${k}: ${JSON.stringify(v(p.n, names))}`;
      });
      const containers = p.containers.flatMap((ports, c) => [
        `      - name: ${names[c]}`,
        `        image: registry.example/w${i}:${p.n}.${c}`,
        ...(ports > 0 ? ['        ports:'] : []),
        ...Array.from({ length: ports }, (_, k) => [
          `        - name: p${c}-${k}`,
          `          containerPort: ${1024 + ((p.n * 7 + c * 3 + k) % 60000)}`,
        ]).flat(),
      ]);
      return [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        `  name: w${i}`,
        '  namespace: shop',
        'spec:',
        '  template:',
        ...(labels.length + annos.length > 0 ? ['    metadata:'] : []),
        ...(labels.length > 0 ? ['      labels:', ...labels] : []),
        ...(annos.length > 0 ? ['      annotations:', ...annos] : []),
        '    spec:',
        '      containers:',
        ...containers,
      ].join('\n');
    })
    .join('\n---\n')
    .concat('\n');
}

/** An injector config's Go template writing keys Istio's uninject proves by re-injection, from the pod's own. */
const GO_TEMPLATE = [
  'metadata:',
  '  labels:',
  '    service.istio.io/canonical-name: {{ index .ObjectMeta.Labels "app" | default .DeploymentMeta.Name | quote }}',
  '  annotations:',
  '    kubectl.kubernetes.io/default-container: {{ (index .Spec.Containers 0).Name | quote }}',
  '    traffic.sidecar.istio.io/excludeOutboundPorts: {{ index .ObjectMeta.Annotations "traffic.sidecar.istio.io/excludeOutboundPorts" | default "15020" | quote }}',
  'spec:',
  '  containers:',
  '  - name: istio-proxy',
  '    image: proxy:1',
  '    args:',
  '{{- range $c := .Spec.Containers }}{{- range $c.Ports }}',
  '    - "--port={{ .ContainerPort }}"',
  '{{- end }}{{- end }}',
].join('\n');

const config = (spec: Record<string, unknown>): string =>
  JSON.stringify({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { policy: 'enabled', resultAnnotations: false, ...spec },
  });

/** Both template engines of the Istio driver. */
const ROUTES: Record<string, Record<string, unknown>> = {
  handlebars: { mesh: 'istio' },
  go: {
    mesh: 'istio',
    istio: { injectorConfig: { defaultTemplates: ['sidecar'], templates: { sidecar: GO_TEMPLATE } } },
  },
};

const seen = (r: RunOutput) => ({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });

/** The run of `input` with the fast paths on (unverified), off, and on and verified (the preload set aside). */
function threeWays(input: string, functionConfig: string) {
  const g = globalThis as Record<symbol, unknown>;
  const preload = g[VERIFY_GLOBAL];
  try {
    g[VERIFY_GLOBAL] = false;
    const on = run(input, { functionConfig, plans: { enabled: true, verify: false } });
    const off = run(input, { functionConfig, plans: { enabled: false, verify: false } });
    g[VERIFY_GLOBAL] = true;
    const verified = run(input, { functionConfig, plans: { enabled: true, verify: true } });
    return { on: seen(on), off: seen(off), verified: seen(verified) };
  } finally {
    g[VERIFY_GLOBAL] = preload;
  }
}

t.test('every-shape-different fleets: the same output with the check reusing the injection or not', async (t) => {
  let cases = 0;
  let records = 0;
  fc.assert(
    fc.property(fc.array(podArb, { minLength: 2, maxLength: 6 }), (pods) => {
      const input = fleet(pods);
      cases++;
      for (const [route, spec] of Object.entries(ROUTES)) {
        const r = threeWays(input, config(spec));
        if (
          r.on.exitCode !== 0 ||
          JSON.stringify(r.on) !== JSON.stringify(r.off) ||
          JSON.stringify(r.verified) !== JSON.stringify(r.off)
        ) {
          t.same(
            { on: r.on, verified: r.verified, exitCode: r.off.exitCode },
            { on: r.off, verified: r.off, exitCode: 0 },
            `${route}: ${input}`,
          );
          return false;
        }
        records += (r.on.stdout.match(/meshinject\.dev\/original/g) ?? []).length;
        // The hook gives the pod back alone: the record keeps values, never repairs.
        if (r.on.stdout.includes('replaced')) {
          t.fail(
            `${route}: the check recorded repairs: ${r.on.stdout.match(/meshinject\.dev\/original: .*replaced.*/)?.[0]}`,
          );
          return false;
        }
        const back = run(r.on.stdout, { functionConfig: config({ ...spec, mode: 'uninject' }) });
        if (back.exitCode !== 0 || JSON.stringify(docsOf(back.stdout)) !== JSON.stringify(docsOf(input))) {
          t.same(
            { exitCode: back.exitCode, docs: docsOf(back.stdout) },
            { exitCode: 0, docs: docsOf(input) },
            `${route}: uninject gives back the input`,
          );
          return false;
        }
      }
      return true;
    }),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 15) },
  );
  t.pass(`${cases} fleets, each through both template engines three ways and uninjected`);
  // Not vacuous: pods with the keys the injection rewrites got companion records, which the probe now carries.
  t.ok(records > 0, `companion records written (${records})`);
});

/**
 * The check as the pipeline runs it (src/pipeline/workload.ts `needs`): the companion record of `before` injected
 * by `mesh`, with `uninject` handed the injection (`made`: what the hook may take instead of a render), in a run
 * with plans on and unverified (the reuse taken, not rendered again). Returns the pod as written.
 */
function checked(mesh: ActiveMesh, before: PodTemplate, made?: PodTemplate): PodTemplate {
  const { config } = loadSpec({ policy: 'enabled', resultAnnotations: false });
  const injected = mesh.inject({ pod: structuredClone(before), workload, config }).pod;
  const request = { pod: before, workload, config };
  const needs = {
    recordKeys: mesh.recordKeys?.bind(mesh),
    recordsProbePorts: mesh.recordsProbePorts === true,
    uninject: (pod: PodTemplate) =>
      uninjectPod(mesh, pod, { workload, config, injection: { request, pod: made ?? injected } })?.pod,
  };
  return withRenderRun(createRenderRun({ plans: { enabled: true, verify: false } }), () =>
    withOriginalRecord(before, injected, needs, false),
  );
}

const workload: WorkloadRef = WEB_WORKLOAD;
/** A pod whose own annotations the injection reads and writes again (the record keeps them). */
const own = (): PodTemplate => ({
  metadata: {
    labels: { app: 'web' },
    annotations: {
      'traffic.sidecar.istio.io/excludeOutboundPorts': '9000',
      'kubectl.kubernetes.io/default-container': 'web',
      'sidecar.istio.io/proxyCPU': '120m',
    },
  },
  spec: { containers: [{ name: 'web', image: 'web:1', ports: [{ containerPort: 8080 }] }] },
});
const CANONICAL = 'service.istio.io/canonical-name';

t.test('a pod with keys the record gives back: the check takes the injection at hand', async (t) => {
  const { mesh } = loadSpec({ policy: 'enabled' });
  const honest = checked(mesh, own());
  const rec = readOriginal(honest, mesh.recordKeys?.bind(mesh));
  t.same(
    Object.keys(rec?.annotations ?? {}).sort(),
    ['kubectl.kubernetes.io/default-container', 'traffic.sidecar.istio.io/excludeOutboundPorts'],
    'the record keeps the values of the keys the injection writes again',
  );
  t.same(rec?.replaced, [], 'no repairs: the hook gives the pod back');
  // A doctored injection (the canonical-name label changed) shows that it was taken: the hook keeps a label whose
  // value the re-injection does not write again, and the check records the repair that takes it off.
  const injected = mesh.inject({ pod: own(), workload, config: loadSpec({ policy: 'enabled' }).config }).pod;
  const doctored: PodTemplate = structuredClone(injected);
  doctored.metadata.labels = { ...doctored.metadata.labels, [CANONICAL]: 'doctored' };
  const taken = readOriginal(checked(mesh, own(), doctored), mesh.recordKeys?.bind(mesh));
  t.ok(
    (taken?.replaced ?? []).some((r) => JSON.stringify(r).includes(CANONICAL)),
    `the doctored injection was reused (a repair names ${CANONICAL}): ${JSON.stringify(taken?.replaced)}`,
  );
});

t.test('a broken uninject is still reported by the check that reuses the injection', async (t) => {
  const { mesh } = loadSpec({ policy: 'enabled' });
  const hook = mesh.uninject?.bind(mesh);
  if (!hook) throw new Error('the Istio driver has an uninject hook');
  // Planted: the hook also drops the user's proxyCPU annotation (which the injection only reads).
  const broken: ActiveMesh = {
    ...mesh,
    uninject: (pod, inv, ctx) => {
      const out = hook(pod, inv, ctx);
      const { 'sidecar.istio.io/proxyCPU': _dropped, ...rest } = out.metadata.annotations ?? {};
      return { ...out, metadata: { ...out.metadata, annotations: rest } };
    },
  };
  const written = checked(broken, own());
  const rec = readOriginal(written, mesh.recordKeys?.bind(mesh));
  t.ok(
    (rec?.replaced ?? []).some((r) => JSON.stringify(r).includes('sidecar.istio.io/proxyCPU')),
    `the check records the repair of what the broken uninject loses: ${JSON.stringify(rec?.replaced)}`,
  );
  t.same(
    uninjectPod(broken, written, { workload, config: loadSpec({}).config })?.pod,
    own(),
    'uninject gives the pod back',
  );
});
