/**
 * A sidecar plan's key must hold every template input a render reads (src/render/plan-keys.ts, `keyOf` of
 * src/render/plans.ts): two workloads whose renders differ must never get one plan's output. The generator takes
 * a base workload and changes one template input at a time (the workload's kind, name or namespace, a label or
 * annotation value, an annotation Istio reads into its template data: `proxy.istio.io/config`, interception mode,
 * native sidecar, status port, proxy image; a container's name, image, port name, number or protocol, an env value,
 * the service account, the restart policy), and runs a stream of the base and its variants, each twice and in
 * between the base again, through every template route (Istio's built-in Handlebars templates, Istio Go templates
 * of an injector config, the custom driver's Handlebars), with plans on (verification off, so that a stale key
 * shows as a wrong output) and off (`MESHINJECT_PLANS=0`): stdout, stderr and the exit code must be the same.
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/run.ts';
import type { PlanStats } from '../../src/render/plans.ts';
import { enabledSpecConfig } from '../helpers/config.ts';

const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

/** One workload: the template inputs the generator changes. */
interface Workload {
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Job';
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  serviceAccount: string;
  restart: boolean;
  containers: Array<{
    name: string;
    image: string;
    env: string;
    ports: Array<{ name: string; port: number; protocol: string }>;
  }>;
}

const NAMES = ['web', 'api-1', 'cart', 'reviews-v2', 'db', 'x.y'];
/** Values, plain (a plan fills them in) and not (`123`, `yes`, `1e3`, empty, spaces: keyed as they are). */
const VALUES = ['v1', 'team-a', 'eu.west-1', 'a/b', '123', 'yes', '1e3', '', 'a b', 'mi-7'];
const PORTS = [1, 80, 8080, 9090, 15020, 65535, 0];

/** The changes of one input each, as functions of the base workload. */
type Change = (w: Workload) => Workload;

const copy = (w: Workload): Workload => JSON.parse(JSON.stringify(w)) as Workload;
const withAnnotation =
  (k: string, v: string): Change =>
  (w) => {
    const c = copy(w);
    c.annotations[k] = v;
    return c;
  };
const onContainer =
  (i: number, f: (c: Workload['containers'][number]) => void): Change =>
  (w) => {
    const c = copy(w);
    const target = c.containers[i % c.containers.length];
    if (target) f(target);
    return c;
  };

/**
 * Changes of one input to two or three different values (`values`, each made by `f`): the variants of a group
 * have the same shape and differ in that input's value alone, where a stale key would serve one the other's plan.
 */
const group = <T>(values: readonly T[], f: (v: T) => Change): fc.Arbitrary<Change[]> =>
  fc.uniqueArray(fc.constantFrom(...values), { minLength: 2, maxLength: 3 }).map((vs) => vs.map(f));
/** A group of changes of container `i`'s input (`i` the same for the group). */
const containerGroup = <T>(values: readonly T[], f: (c: Workload['containers'][number], v: T) => void) =>
  fc.nat(1).chain((i) => group(values, (v) => onContainer(i, (c) => f(c, v))));
const firstPort = (c: Workload['containers'][number]) => {
  const port = c.ports[0];
  if (port) return port;
  const added = { name: 'http', port: 8080, protocol: 'TCP' };
  c.ports.push(added);
  return added;
};
const changeArb: fc.Arbitrary<Change[]> = fc.oneof(
  group(['Deployment', 'StatefulSet', 'DaemonSet'] as const, (kind) => (w) => ({ ...copy(w), kind })),
  // One value only: a group of one (a unique array of two would never be found: the generator would not end).
  fc.constant<Change[]>([(w) => ({ ...copy(w), kind: 'Job', restart: true })]),
  group(NAMES, (name) => (w) => ({ ...copy(w), name })),
  group(['shop', 'team-7', '007', 'null'], (namespace) => (w) => ({ ...copy(w), namespace })),
  fc.constantFrom('app', 'version', 'service.istio.io/workload-name').chain((k) =>
    group(VALUES, (v) => (w) => {
      const c = copy(w);
      c.labels[k] = v;
      return c;
    }),
  ),
  fc
    .constantFrom('example.com/note', 'prometheus.io/scrape', 'sidecar.istio.io/proxyCPU')
    .chain((k) => group([...VALUES, '100m', '2'], (v) => withAnnotation(k, v))),
  group(['concurrency: 1', 'concurrency: 2', 'holdApplicationUntilProxyStarts: true'], (v) =>
    withAnnotation('proxy.istio.io/config', v),
  ),
  group(['TPROXY', 'NONE', 'REDIRECT'], (v) => withAnnotation('sidecar.istio.io/interceptionMode', v)),
  group(['true', 'false', ''], (v) => withAnnotation('sidecar.istio.io/nativeSidecar', v)),
  group(['15021', '15020', '8080'], (v) => withAnnotation('status.sidecar.istio.io/port', v)),
  group(['proxy:2', 'docker.io/istio/proxyv2:1.30.0'], (v) => withAnnotation('sidecar.istio.io/proxyImage', v)),
  containerGroup([...NAMES, 'istio-proxy'], (c, v) => {
    c.name = v;
  }),
  containerGroup(['nginx:1', 'busybox:1.36', 'r.example/a:b'], (c, v) => {
    c.image = v;
  }),
  containerGroup(VALUES, (c, v) => {
    c.env = v;
  }),
  containerGroup(PORTS, (c, v) => {
    firstPort(c).port = v;
  }),
  containerGroup(['http', 'grpc', 'tcp-db', '8080'], (c, v) => {
    firstPort(c).name = v;
  }),
  containerGroup(['TCP', 'UDP', 'SCTP'], (c, v) => {
    firstPort(c).protocol = v;
  }),
  group(['', 'reviews', 'default'], (serviceAccount) => (w) => ({ ...copy(w), serviceAccount })),
);

const baseArb: fc.Arbitrary<Workload> = fc.record({
  kind: fc.constantFrom('Deployment' as const, 'StatefulSet' as const),
  name: fc.constantFrom(...NAMES),
  namespace: fc.constantFrom('shop', 'team-7'),
  labels: fc.constantFrom({ app: 'web' }, { app: 'web', version: 'v1' }),
  annotations: fc.constantFrom({}, { 'example.com/note': 'n1' }),
  serviceAccount: fc.constantFrom('', 'web'),
  restart: fc.constant(false),
  containers: fc.array(
    fc.record({
      name: fc.constantFrom('app', 'main', 'worker'),
      image: fc.constant('nginx:1.27'),
      env: fc.constantFrom('info', 'debug'),
      ports: fc.array(
        fc.record({
          name: fc.constantFrom('http', 'metrics'),
          port: fc.constantFrom(8080, 9090),
          protocol: fc.constant('TCP'),
        }),
        { maxLength: 2 },
      ),
    }),
    { minLength: 1, maxLength: 2 },
  ),
});

const q = (s: string): string => JSON.stringify(s);

/** Workload `w` as a resource (the `i`-th of the stream: its name made unique, so the stream is valid). */
function resource(w: Workload, i: number): string {
  const map = (m: Record<string, string>, at: string): string[] =>
    Object.entries(m).map(([k, v]) => `${at}${q(k)}: ${q(v)}`);
  const pod = [
    '    metadata:',
    '      labels:',
    ...map(w.labels, '        '),
    ...(Object.keys(w.annotations).length > 0 ? ['      annotations:', ...map(w.annotations, '        ')] : []),
    '    spec:',
    ...(w.serviceAccount ? [`      serviceAccountName: ${q(w.serviceAccount)}`] : []),
    ...(w.restart ? ['      restartPolicy: Never'] : []),
    '      containers:',
    ...w.containers.flatMap((c, j) => [
      `      - name: ${q(c.name === 'istio-proxy' ? c.name : `${c.name}${j === 0 ? '' : `-${j}`}`)}`,
      `        image: ${q(c.image)}`,
      '        env:',
      '        - name: LOG_LEVEL',
      `          value: ${q(c.env)}`,
      ...(c.ports.length > 0 ? ['        ports:'] : []),
      ...c.ports.flatMap((p, k) => [
        `        - name: ${q(`${p.name}${k === 0 ? '' : `-${k}`}`)}`,
        `          containerPort: ${p.port + k}`,
        `          protocol: ${p.protocol}`,
      ]),
    ]),
  ];
  const apiVersion = w.kind === 'Job' ? 'batch/v1' : 'apps/v1';
  const selector = w.kind === 'Job' ? [] : ['  selector:', '    matchLabels:', '      app: web'];
  return [
    `apiVersion: ${apiVersion}`,
    `kind: ${w.kind}`,
    'metadata:',
    `  name: ${q(`${w.name}-${i}`)}`,
    `  namespace: ${q(w.namespace)}`,
    'spec:',
    ...selector,
    '  template:',
    ...pod,
    '',
  ].join('\n');
}

const GO_TEMPLATE = [
  'spec:',
  '  containers:',
  '  - name: istio-proxy',
  '    image: {{ .ProxyImage | default "proxy:1" | quote }}',
  '    args: ["--name", "{{ .DeploymentMeta.Name }}", "--ns", "{{ .DeploymentMeta.Namespace }}", "--kind", "{{ .TypeMeta.Kind }}"]',
  '    env:',
  '    - name: APP',
  '      value: {{ index .ObjectMeta.Labels "app" | default "none" | quote }}',
  '    - name: NOTE',
  '      value: {{ index .ObjectMeta.Annotations "example.com/note" | default "none" | quote }}',
  '    - name: SA',
  '      value: {{ .Spec.ServiceAccountName | quote }}',
  '    - name: CONC',
  '      value: {{ .ProxyConfig.Concurrency | quote }}',
  '{{- range $i, $c := .Spec.Containers }}',
  '    - name: C_{{ $i }}',
  '      value: {{ $c.Name }}:{{ $c.Image }}',
  '{{- range $c.Ports }}',
  '    - name: PORT_{{ $i }}_{{ .ContainerPort }}',
  '      value: "{{ .Name }}/{{ .Protocol }}"',
  '{{- end }}',
  '{{- end }}',
].join('\n');

const CUSTOM_TEMPLATE = [
  'metadata:',
  '  annotations:',
  '    example.com/for: "{{workload.kind}}/{{workload.name}}"',
  '    example.com/note: {{quote (index pod.metadata.annotations "example.com/note")}}',
  'spec:',
  '  containers:',
  '  - name: shipper',
  '    image: {{quote values.image}}',
  '    args: [--ns, {{quote workload.namespace}}, --sa, {{quote pod.spec.serviceAccountName}}]',
  '    env:',
  '{{#each pod.spec.containers}}',
  '    - name: C_{{@index}}',
  '      value: "{{this.name}}:{{this.image}}"',
  '{{#each this.env}}',
  '    - name: E_{{@../index}}_{{this.name}}',
  '      value: {{quote this.value}}',
  '{{/each}}',
  '{{#each this.ports}}',
  '    - name: PORT_{{@../index}}_{{@index}}',
  '      value: "{{this.containerPort}}/{{this.name}}/{{this.protocol}}"',
  '{{/each}}',
  '{{/each}}',
].join('\n');

const config = enabledSpecConfig;

/** Every template route: both engines, both drivers that render templates. */
const ROUTES: Record<string, string> = {
  istio: config({ mesh: 'istio' }),
  'istio-go': config({
    mesh: 'istio',
    istio: { injectorConfig: { defaultTemplates: ['sidecar'], templates: { sidecar: GO_TEMPLATE } } },
  }),
  custom: config({ mesh: 'custom', custom: { templates: { sidecar: CUSTOM_TEMPLATE }, values: { image: 'fb:3' } } }),
};

/** Plans on (verification off) and off: what a user sees of each. */
function bothWays(input: string, functionConfig: string, stats: PlanStats) {
  const g = globalThis as Record<symbol, unknown>;
  const preload = g[VERIFY_GLOBAL];
  try {
    g[VERIFY_GLOBAL] = false;
    const on = run(input, { functionConfig, plans: { enabled: true, verify: false, stats } });
    const off = run(input, { functionConfig, plans: { enabled: false, verify: false } });
    return {
      on: { exitCode: on.exitCode, stdout: on.stdout, stderr: on.stderr },
      off: { exitCode: off.exitCode, stdout: off.stdout, stderr: off.stderr },
    };
  } finally {
    g[VERIFY_GLOBAL] = preload;
  }
}

t.test(
  'workloads that differ from a base in one template input: planned output = full render, every route',
  async (t) => {
    const stats = new Map<string, PlanStats>(
      Object.keys(ROUTES).map((k) => [k, { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 }]),
    );
    let streams = 0;
    fc.assert(
      fc.property(baseArb, fc.array(changeArb, { minLength: 1, maxLength: 4 }), (base, groups) => {
        // The base, then each group's variants, each twice (a plan recorded for one is looked up by the next and
        // by the other values of the group), and the base again.
        const docs: Workload[] = [base, base];
        for (const changes of groups) {
          for (const change of changes) docs.push(change(base), change(base));
          docs.push(base);
        }
        const input = docs.map(resource).join('---\n');
        for (const [route, functionConfig] of Object.entries(ROUTES)) {
          const { on, off } = bothWays(input, functionConfig, stats.get(route) as PlanStats);
          if (on.exitCode !== off.exitCode || on.stdout !== off.stdout || on.stderr !== off.stderr) {
            t.strictSame(on, off, `route ${route}: planned output differs from the full render of\n${input}`);
            return false;
          }
        }
        streams++;
        return true;
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 25), endOnFailure: true },
    );
    t.ok(streams > 0, `${streams} streams, each through ${Object.keys(ROUTES).length} routes`);
    for (const [route, s] of stats)
      t.ok(s.hits > s.lookups / 3, `route ${route}: plans served ${s.hits} of ${s.lookups} renders`);
  },
);
