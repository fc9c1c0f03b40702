/**
 * The fast paths give what the slow paths give (issue #40: "outputs byte-identical with the fast paths on, off and
 * verified"), for generated fleets. A fleet is a few pod shapes (containers, ports, which labels and annotations,
 * a restart policy) repeated over workloads of the kinds each shape fits (Deployment, StatefulSet, DaemonSet; Job,
 * CronJob), with compact or wide lists, whose slot values differ: names, namespaces, label and annotation values,
 * container and port names, port numbers, drawn mostly from plain values and sometimes from values that need
 * quoting or escaping in YAML (`123`, `1e3`, `yes`, `null`, `1:20`, `2001-12-14`, `a: b`, `#x`, quotes, unicode,
 * an empty string, line breaks). Each fleet runs through every
 * template route (Istio's built-in Handlebars templates, Istio Go templates of an injector config, the custom
 * driver's Handlebars) and one of the code drivers (Linkerd, OSM, FSM, Kuma), as a YAML stream or a ResourceList,
 * three ways: sidecar plans on (recorded at a shape's first or at its second workload, as library use and the CLI
 * do), plans off, and plans verified against full renders. What a user sees must be the same: stdout, stderr, the
 * exit code.
 *
 * The drivers' planners live as long as the process, and one that has recorded 64 plans serving fewer workloads
 * than it recorded records no more (`RECORDING_TRIAL` of src/render/plans.ts): some 15 fleets into a run
 * (`PROPERTY_RUNS`, 15 by default), later fleets are mostly rendered in full on every path.
 */
import t from 'tap';
import fc from 'fast-check';
import { run, type RunOutput } from '../../src/run.ts';
import type { PlanStats } from '../../src/render/plans.ts';
import { enabledSpecConfig } from '../helpers/config.ts';

const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

/** Plain names and values (slot-safe: plans fill them in), and some with a dash or a dot. */
const PLAIN_NAMES = ['web', 'api-1', 'cart', 'reviews-v2', 'db'];
const PLAIN_VALUES = ['v1', 'reviews', 'team-a', 'eu.west-1', 'a/b'];
/** DNS labels that other YAML readers would read as numbers, booleans, null or floats when written plain. */
const ODD_NAMES = ['123', '1e3', '0x1f', 'yes', 'no', 'on', 'true', 'null', 'nan', 'inf', '0o17'];
const NAMESPACES = ['shop', 'team-7', '007', 'true', 'null'];
/** Label and annotation values: YAML 1.1/1.2 look-alikes, indicators, quotes, unicode, empty, line breaks. */
const ODD_VALUES = [
  '1.0',
  '15020',
  '1:20',
  '2001-12-14',
  '1_000',
  '0777',
  'Yes',
  'off',
  '~',
  'null',
  '=',
  '<<',
  'a: b',
  '#x',
  '-x',
  '@x',
  '*x',
  "'q'",
  '"dq"',
  'ü-ß',
  '日本',
  'a b',
  ' lead',
  '',
  'line1\nline2',
  'tab\there',
  'x\u2028y',
];
/** Mostly plain (so shapes repeat and plans serve), sometimes odd. */
const mostlyPlain = (plain: readonly string[], odd: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...plain) }, { weight: 1, arbitrary: fc.constantFrom(...odd) });
const CONTAINER_NAMES = ['app', 'main', 'sidecar-1', 'worker', '1', 'true'];
const PORT_NAMES = ['http', 'grpc', 'metrics', 'http', '8080', 'yes'];
const PORTS = [1, 80, 443, 8080, 9090, 15020, 65535];
const KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob'] as const;

interface Shape {
  /** `restartPolicy: Never` (the pods of Jobs and CronJobs). */
  restart: boolean;
  /** Ports per container (at least one container). */
  containers: number[];
  labels: string[];
  annotations: string[];
}

interface Workload {
  shape: number;
  kindPick: number;
  /** Lists indented under their key. */
  wide: boolean;
  name: string;
  namespace: string;
  values: string[];
  containerNames: string[];
  portNames: string[];
  ports: number[];
}

const shapeArb: fc.Arbitrary<Shape> = fc.record({
  restart: fc.boolean(),
  containers: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 3 }),
  labels: fc.subarray(['app', 'version', 'tier']),
  annotations: fc.subarray([
    'example.com/note',
    'example.com/owner',
    'sidecar.istio.io/proxyCPU',
    'proxy.istio.io/config',
  ]),
});

const workloadArb = (shapes: number): fc.Arbitrary<Workload> =>
  fc.record({
    shape: fc.nat({ max: shapes - 1 }),
    kindPick: fc.nat({ max: 5 }),
    wide: fc.boolean(),
    name: mostlyPlain(PLAIN_NAMES, ODD_NAMES),
    namespace: fc.constantFrom(...NAMESPACES),
    values: fc.array(mostlyPlain(PLAIN_VALUES, ODD_VALUES), { minLength: 6, maxLength: 6 }),
    containerNames: fc.shuffledSubarray(CONTAINER_NAMES, { minLength: 3, maxLength: 3 }),
    portNames: fc.array(fc.constantFrom(...PORT_NAMES), { minLength: 6, maxLength: 6 }),
    ports: fc.array(fc.constantFrom(...PORTS), { minLength: 6, maxLength: 6 }),
  });

const fleetArb = fc.array(shapeArb, { minLength: 1, maxLength: 3 }).chain((shapes) =>
  fc.record({
    shapes: fc.constant(shapes),
    workloads: fc.array(workloadArb(shapes.length), { minLength: 3, maxLength: 10 }),
    form: fc.constantFrom('stream', 'list'),
  }),
);

/** A YAML double-quoted scalar (JSON's escapes are YAML's), so the input itself reads as the value. */
const q = (s: string): string => JSON.stringify(s);

/**
 * The pod template of workload `w` (at column 0: `metadata:` and `spec:`), its lists compact (`- ` at the key's
 * column) or wide (indented under the key), as the workload says: injection writes in the resource's style.
 */
function podTemplate(shape: Shape, w: Workload, i: number): string {
  const labels = shape.labels.map((k, j) => `    ${k}: ${q(w.values[j] ?? '')}`);
  // proxyCPU needs a quantity: keep it one, of the workload's own digits. A ProxyConfig of its own (Istio's
  // template data then has a fresh ProxyConfig, where pods without one share the mesh's frozen one).
  const annotations = shape.annotations.map((k, j) =>
    k === 'sidecar.istio.io/proxyCPU'
      ? `    ${k}: ${q(`${w.ports[j] ?? 1}m`)}`
      : k === 'proxy.istio.io/config'
        ? `    ${k}: ${q(`concurrency: ${(w.ports[j] ?? 1) % 3}`)}`
        : `    ${k}: ${q(w.values[3 + j] ?? '')}`,
  );
  const d = w.wide ? '  ' : '';
  const containers = shape.containers.map((ports, c) => {
    const lines = [
      `${d}  - name: ${q(`${w.containerNames[c]}`)}`,
      `${d}    image: ${q(`registry.example/${w.name}:${i}`)}`,
    ];
    if (ports > 0) lines.push(`${d}    ports:`);
    for (let p = 0; p < ports; p++) {
      const k = c * 2 + p;
      lines.push(
        `${d}${d}    - name: ${q(`${w.portNames[k]}-${c}${p}`)}`,
        `${d}${d}      containerPort: ${(((w.ports[k] ?? 80) + c * 2 + p - 1) % 65535) + 1}`,
      );
    }
    return lines.join('\n');
  });
  return [
    'metadata:',
    '  labels:',
    ...(labels.length > 0 ? labels : ['    fleet: x']),
    ...(annotations.length > 0 ? ['  annotations:', ...annotations] : []),
    'spec:',
    ...(shape.restart ? ['  restartPolicy: Never'] : []),
    '  containers:',
    ...containers,
  ].join('\n');
}

const indent = (text: string, n: number): string =>
  text
    .split('\n')
    .map((l) => (l === '' ? l : ' '.repeat(n) + l))
    .join('\n');

/**
 * The kind of workload `w`: one the pod shape fits, picked per workload (the same pod at another column: a Job's
 * at 4, a CronJob's at 8). Istio's `TypeMeta` is a slot root: one plan serves every kind whose template data has
 * the same shape, unless a template branches on the kind (`GO_KIND_TEMPLATE`), which steers it into the key.
 */
function kindOf(shape: Shape, w: Workload): (typeof KINDS)[number] {
  const fits = shape.restart ? (['Job', 'CronJob'] as const) : (['Deployment', 'StatefulSet', 'DaemonSet'] as const);
  return fits[w.kindPick % fits.length] ?? 'Deployment';
}

/** Workload `w` as a resource of its kind. */
function resource(shape: Shape, w: Workload, i: number): string {
  const name = `${w.name}-${i}`;
  const kind = kindOf(shape, w);
  const head = `kind: ${kind}\nmetadata:\n  name: ${q(name)}\n  namespace: ${q(w.namespace)}\n`;
  const tmpl = indent(podTemplate(shape, w, i), 4);
  switch (kind) {
    case 'CronJob':
      return `apiVersion: batch/v1\n${head}spec:\n  schedule: "*/5 * * * *"\n  jobTemplate:\n    spec:\n      template:\n${indent(tmpl, 4)}\n`;
    case 'Job':
      return `apiVersion: batch/v1\n${head}spec:\n  template:\n${tmpl}\n`;
    default:
      return `apiVersion: apps/v1\n${head}spec:\n  selector:\n    matchLabels:\n      fleet: x\n  template:\n${tmpl}\n`;
  }
}

/** The fleet as a YAML stream or a ResourceList (functionConfig given to `run` apart). */
function fleetInput(f: { shapes: Shape[]; workloads: Workload[]; form: string }): string {
  const docs = f.workloads.map((w, i) => resource(f.shapes[w.shape] as Shape, w, i));
  if (f.form === 'stream') return docs.join('---\n');
  return `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${docs.map((d) => `- ${indent(d, 2).slice(2)}`).join('')}`;
}

/** The custom driver's template: copies names, label and annotation values, container names and port numbers. */
const CUSTOM_TEMPLATE = [
  'metadata:',
  '  annotations:',
  '    example.com/injected-for: {{quote workload.name}}',
  '    example.com/app: {{quote (default workload.name (index pod.metadata.labels "app"))}}',
  'spec:',
  '  containers:',
  '  - name: shipper',
  '    image: {{quote values.image}}',
  '    args: [--ns, {{quote workload.namespace}}, --note, {{quote (index pod.metadata.annotations "example.com/note")}}]',
  '    env:',
  '{{#each pod.spec.containers}}',
  '    - name: C_{{@index}}',
  '      value: {{quote this.name}}',
  '    - name: RAW_{{@index}}',
  '      value: {{this.name}}',
  '{{#each this.ports}}',
  '    - name: PORT_{{@../index}}_{{@index}}',
  '      value: "{{this.containerPort}}"',
  '{{/each}}',
  '{{/each}}',
].join('\n');

/** An Istio injector config whose sidecar template is a Go template copying the same kinds of values. */
const GO_TEMPLATE = [
  'spec:',
  '  containers:',
  '  - name: istio-proxy',
  '    image: proxy:1',
  '    args: ["--name", "{{ .DeploymentMeta.Name }}", "--ns", "{{ .DeploymentMeta.Namespace }}"]',
  '    env:',
  '    - name: APP',
  '      value: {{ index .ObjectMeta.Labels "app" | default "none" | quote }}',
  '{{- range $i, $c := .Spec.Containers }}',
  '    - name: C_{{ $i }}',
  '      value: {{ $c.Name | quote }}',
  '    - name: RAW_{{ $i }}',
  '      value: {{ $c.Name }}',
  '{{- range $c.Ports }}',
  '    - name: PORT_{{ $i }}_{{ .ContainerPort }}',
  '      value: "{{ .ContainerPort }}"',
  '{{- end }}',
  '{{- end }}',
].join('\n');

/**
 * A Go template that copies the workload's kind and API version and branches on the kind (`eq`, and `hasPrefix`, which
 * has no plan rule): a plan must not serve a StatefulSet what it recorded for a Deployment.
 */
const GO_KIND_TEMPLATE = [
  'spec:',
  '  containers:',
  '  - name: istio-proxy',
  '    image: proxy:1',
  '    env:',
  '    - name: KIND',
  '      value: {{ .TypeMeta.Kind | quote }}',
  '    - name: API',
  '      value: {{ .TypeMeta.APIVersion }}',
  '{{- if eq .TypeMeta.Kind "StatefulSet" }}',
  '    - name: STATEFUL',
  '      value: "yes"',
  '{{- end }}',
  '{{- if hasPrefix "batch/" .TypeMeta.APIVersion }}',
  '    - name: BATCH',
  '      value: "yes"',
  '{{- end }}',
].join('\n');

const config = enabledSpecConfig;

/** The functionConfigs of every route. */
const CONFIGS: Record<string, string> = {
  istio: config({ mesh: 'istio' }),
  'istio-go': config({
    mesh: 'istio',
    istio: { injectorConfig: { defaultTemplates: ['sidecar'], templates: { sidecar: GO_TEMPLATE } } },
  }),
  'istio-go-kind': config({
    mesh: 'istio',
    istio: { injectorConfig: { defaultTemplates: ['sidecar'], templates: { sidecar: GO_KIND_TEMPLATE } } },
  }),
  custom: config({ mesh: 'custom', custom: { templates: { sidecar: CUSTOM_TEMPLATE }, values: { image: 'fb:3' } } }),
  linkerd: config({ mesh: 'linkerd' }),
  osm: config({ mesh: 'osm' }),
  fsm: config({ mesh: 'fsm' }),
  kuma: config({ mesh: 'kuma' }),
};

/** The routes through templates (sidecar plans), run for every fleet; one code driver is picked per fleet. */
const TEMPLATE_ROUTES = ['istio', 'istio-go', 'istio-go-kind', 'custom'];
const CODE_DRIVERS = ['linkerd', 'osm', 'fsm', 'kuma'];

const newStats = (): PlanStats => ({ lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 });

/** What a user sees of a run. */
const seen = (r: RunOutput) => ({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });

/**
 * The run of `input` with plans on (without verification, the test suite's preload set aside), off, and on and
 * verified; plans-on runs count into `stats`.
 */
function threeWays(input: string, functionConfig: string, recordOnRepeat: boolean, stats: PlanStats) {
  const g = globalThis as Record<symbol, unknown>;
  const preload = g[VERIFY_GLOBAL];
  try {
    g[VERIFY_GLOBAL] = false;
    const on = run(input, { functionConfig, plans: { enabled: true, verify: false, recordOnRepeat, stats } });
    const off = run(input, { functionConfig, plans: { enabled: false, verify: false } });
    g[VERIFY_GLOBAL] = true;
    const verified = run(input, { functionConfig, plans: { enabled: true, verify: true, recordOnRepeat } });
    return { on: seen(on), off: seen(off), verified: seen(verified) };
  } finally {
    g[VERIFY_GLOBAL] = preload;
  }
}

t.test('generated fleets: the same output with sidecar plans on, off and verified, on every route', async (t) => {
  const stats = new Map<string, PlanStats>(Object.keys(CONFIGS).map((k) => [k, newStats()]));
  const injected = new Map<string, number>();
  let cases = 0;
  fc.assert(
    fc.property(fleetArb, fc.constantFrom(...CODE_DRIVERS), fc.boolean(), (fleet, codeDriver, onRepeat) => {
      const input = fleetInput(fleet);
      cases++;
      for (const route of [...TEMPLATE_ROUTES, codeDriver]) {
        const r = threeWays(input, CONFIGS[route] as string, onRepeat, stats.get(route) as PlanStats);
        if (r.off.exitCode === 0) injected.set(route, (injected.get(route) ?? 0) + 1);
        const same =
          JSON.stringify(r.on) === JSON.stringify(r.off) && JSON.stringify(r.verified) === JSON.stringify(r.off);
        if (!same) {
          t.same({ on: r.on, verified: r.verified }, { on: r.off, verified: r.off }, `${route}: ${input}`);
          return false;
        }
      }
      return true;
    }),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 15) },
  );
  t.pass(`${cases} fleets, each run three ways`);
  // Not vacuous: every route injected fleets (plans serving them: the fixed fleet below).
  t.comment(`plan counters per route: ${JSON.stringify(Object.fromEntries(stats))}`);
  for (const route of Object.keys(CONFIGS)) t.ok((injected.get(route) ?? 0) > 0, `${route}: some fleets injected`);
});

/** A workload of plain values (shape 0, the first kind its shape fits), for the fixed fleets below. */
const PLAIN_WORKLOAD: Workload = {
  shape: 0,
  kindPick: 0,
  wide: false,
  name: 'web',
  namespace: 'shop',
  values: ['v1', 'reviews', 'team-a', 'v1', 'reviews', 'team-a'],
  containerNames: ['app', 'main', 'worker'],
  portNames: ['http', 'grpc', 'metrics', 'http', 'grpc', 'metrics'],
  ports: [8080, 9090, 80, 8080, 9090, 80],
};

t.test(
  'a fleet of one shape, plain values: plans serve every template route, and the output is the same',
  async (t) => {
    const input = fleetInput({
      shapes: [{ restart: false, containers: [1], labels: ['app', 'version'], annotations: ['example.com/note'] }],
      workloads: PLAIN_NAMES.map((name) => ({ ...PLAIN_WORKLOAD, name })),
      form: 'stream',
    });
    for (const route of TEMPLATE_ROUTES) {
      const stats = newStats();
      const r = threeWays(input, CONFIGS[route] as string, false, stats);
      t.equal(r.off.exitCode, 0, `${route}: injected`);
      t.same({ on: r.on, verified: r.verified }, { on: r.off, verified: r.off }, `${route}: the same output`);
      t.ok(
        stats.hits >= PLAIN_NAMES.length - 2,
        `${route}: plans served the later workloads (${JSON.stringify(stats)})`,
      );
    }
  },
);

t.test('one plan serves every workload kind of one pod shape, unless the template branches on the kind', async (t) => {
  // Deployment, StatefulSet, DaemonSet, Deployment, ...: no kind twice in a row.
  const workloads = Array.from({ length: 9 }, (_, i) => ({ ...PLAIN_WORKLOAD, name: `web${i}`, kindPick: i % 3 }));
  const input = fleetInput({
    shapes: [{ restart: false, containers: [1], labels: ['app'], annotations: [] }],
    workloads,
    form: 'stream',
  });
  for (const route of ['istio', 'istio-go']) {
    const stats = newStats();
    const r = threeWays(input, CONFIGS[route] as string, false, stats);
    t.equal(r.off.exitCode, 0, `${route}: injected`);
    t.same({ on: r.on, verified: r.verified }, { on: r.off, verified: r.off }, `${route}: the same output`);
    t.equal(stats.recorded, 1, `${route}: one plan for the three kinds (${JSON.stringify(stats)})`);
    t.equal(stats.hits, workloads.length - 1, `${route}: it served every workload after the one it was recorded at`);
  }
  const stats = newStats();
  const r = threeWays(input, CONFIGS['istio-go-kind'] as string, false, stats);
  t.equal(r.off.exitCode, 0, 'a template reading the kind: injected');
  t.same({ on: r.on, verified: r.verified }, { on: r.off, verified: r.off }, 'a template reading the kind: the same');
  t.match(r.off.stdout, /name: STATEFUL/, 'the StatefulSets took the branch');
  // The plan recorded at a Deployment assumes the kind is not "StatefulSet" (`eq`): it serves the other
  // Deployments and the DaemonSets, and the StatefulSets are rendered in full.
  t.same(
    { recorded: stats.recorded, hits: stats.hits, full: stats.full },
    { recorded: 1, hits: 5, full: 3 },
    `a template reading the kind: no StatefulSet served by the Deployment's plan (${JSON.stringify(stats)})`,
  );
});
