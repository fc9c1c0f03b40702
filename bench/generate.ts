/**
 * Deterministic generator of benchmark inputs: N workloads (Deployments, StatefulSets, CronJobs) plus
 * Services and ConfigMaps, with comments on some resources and, optionally, the annotations kpt adds when
 * it sends a package to a function (krm-ecosystem.md §1.4 / §7.1). The same (n, seed) always gives the
 * same bytes, so timings of different tools are taken over identical inputs.
 */

/** One generated resource: its kind, name, the file kpt would read it from, and its block-YAML text. */
export interface GeneratedResource {
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Job' | 'CronJob' | 'Service' | 'ConfigMap';
  name: string;
  namespace: string;
  /** Package-relative file path (`<namespace>/<kind>-<name>.yaml`), as kpt's `internal.config.kubernetes.io/path`. */
  path: string;
  /** The resource as block YAML at column 0, ending with a newline. */
  text: string;
  /** True for the workload kinds (Deployment, StatefulSet, DaemonSet, Job, CronJob). */
  workload: boolean;
}

/** Generator options. */
export interface GenerateOptions {
  /** PRNG seed (default 1). */
  seed?: number;
  /** Add kpt's path/index/id annotations (default true), as `kpt fn eval/render` sends them. */
  kptAnnotations?: boolean;
}

/** mulberry32: a tiny deterministic PRNG returning floats in [0, 1). */
function makeRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const APPS = ['cart', 'checkout', 'catalog', 'search', 'payments', 'users', 'orders', 'reviews', 'ads', 'mail'];
const IMAGES = ['nginx:1.27', 'ghcr.io/acme/app:2.3.1', 'registry.example.com/team/api:v1.14.0', 'busybox:1.36'];

function indent(text: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return text
    .split('\n')
    .map((l) => (l.length ? pad + l : l))
    .join('\n');
}

function kptAnnotationLines(path: string, id: number): string {
  return [
    `    config.kubernetes.io/index: '0'`,
    `    config.kubernetes.io/path: '${path}'`,
    `    internal.config.kubernetes.io/index: '0'`,
    `    internal.config.kubernetes.io/path: '${path}'`,
    `    internal.config.kubernetes.io/seqindent: 'compact'`,
    `    internal.config.kubernetes.io/annotations-migration-resource-id: '${id}'`,
    `    internal.config.kubernetes.io/id: '${id}'`,
    `    config.k8s.io/id: '${id}'`,
  ].join('\n');
}

function metadata(
  name: string,
  ns: string,
  app: string,
  extraAnn: string[],
  kpt: string | undefined,
  comment: boolean,
): string {
  const ann = [...extraAnn, ...(kpt ? [kpt] : [])];
  return [
    'metadata:',
    `  name: ${name}${comment ? ` # owned by the ${app} team` : ''}`,
    `  namespace: ${ns}`,
    '  labels:',
    `    app.kubernetes.io/name: ${app}`,
    `    app.kubernetes.io/part-of: shop`,
    ...(ann.length ? ['  annotations:', ...ann] : []),
  ].join('\n');
}

function container(rnd: () => number, name: string, app: string, idx: number): string {
  const image = IMAGES[Math.floor(rnd() * IMAGES.length)]!;
  const port = 8000 + Math.floor(rnd() * 1000);
  const lines = [
    `- name: ${name}`,
    `  image: ${image}`,
    '  ports:',
    `  - name: http${idx ? `-${idx}` : ''}`,
    `    containerPort: ${port}`,
    '    protocol: TCP',
    '  env:',
    '  - name: APP_NAME',
    `    value: "${app}"`,
    '  - name: LOG_LEVEL',
    `    value: ${rnd() < 0.5 ? 'info' : 'debug'}`,
    '  resources:',
    '    requests:',
    `      cpu: ${50 + Math.floor(rnd() * 200)}m`,
    `      memory: ${64 * (1 + Math.floor(rnd() * 4))}Mi`,
    '    limits:',
    `      memory: 512Mi`,
  ];
  if (rnd() < 0.6) {
    lines.push(
      '  readinessProbe:',
      '    httpGet:',
      '      path: /healthz',
      `      port: ${port}`,
      '    periodSeconds: 10',
    );
  }
  return lines.join('\n');
}

function podSpec(rnd: () => number, app: string, comment: boolean): string {
  const n = rnd() < 0.8 ? 1 : 2;
  const cs = Array.from({ length: n }, (_, i) => container(rnd, i === 0 ? app : `${app}-helper`, app, i));
  const lines = [
    ...(rnd() < 0.3 ? [`serviceAccountName: ${app}`] : []),
    `containers:${comment ? ' # application containers' : ''}`,
    ...cs,
  ];
  if (rnd() < 0.4) lines.push('volumes:', '- name: config', '  configMap:', `    name: ${app}-config`);
  return lines.join('\n');
}

function podTemplate(rnd: () => number, app: string, comment: boolean, withAnn: boolean): string {
  return [
    'template:',
    '  metadata:',
    '    labels:',
    `      app.kubernetes.io/name: ${app}`,
    ...(withAnn ? ['    annotations:', `      prometheus.io/scrape: "true"`] : []),
    '  spec:',
    indent(podSpec(rnd, app, comment), 4),
  ].join('\n');
}

/**
 * A pod template unlike any other in the input (the `every-shape-different` class): workload `i` gets
 * `1 + i % 4` containers, each with `1 + (i + c) % 3` ports numbered from `1024 + (i * 7) % 50000`, and pod
 * annotations that reach the sidecar template (proxy CPU and memory, excluded outbound ports) with values of
 * its own.
 */
function distinctPodTemplate(i: number, app: string): string {
  const base = 1024 + ((i * 7) % 50000);
  const containers: string[] = [];
  for (let c = 0; c < 1 + (i % 4); c++) {
    const ports: string[] = [];
    for (let p = 0; p < 1 + ((i + c) % 3); p++)
      ports.push(`  - name: p${c}-${p}`, `    containerPort: ${base + c * 3 + p}`);
    containers.push(`- name: ${app}-${c}`, `  image: ghcr.io/acme/${app}:${i}.${c}`, '  ports:', ...ports);
  }
  return [
    'template:',
    '  metadata:',
    '    labels:',
    `      app.kubernetes.io/name: ${app}`,
    '    annotations:',
    `      sidecar.istio.io/proxyCPU: ${10 + (i % 990)}m`,
    `      sidecar.istio.io/proxyMemory: ${64 + i}Mi`,
    `      traffic.sidecar.istio.io/excludeOutboundPorts: "${1 + (i % 65000)}"`,
    '  spec:',
    '    containers:',
    ...containers.map((l) => `    ${l}`),
  ].join('\n');
}

function workload(
  rnd: () => number,
  kind: GeneratedResource['kind'],
  name: string,
  ns: string,
  app: string,
  kpt: string | undefined,
  comment: boolean,
  distinct?: number,
): string {
  const head = comment ? `# ${kind} ${name}: generated for the benchmark\n` : '';
  const meta = metadata(name, ns, app, rnd() < 0.3 ? [`    example.com/owner: "team-${app}"`] : [], kpt, comment);
  const tmpl =
    distinct === undefined ? podTemplate(rnd, app, comment, rnd() < 0.5) : distinctPodTemplate(distinct, app);
  if (kind === 'CronJob') {
    return `${head}apiVersion: batch/v1\nkind: CronJob\n${meta}\nspec:\n  schedule: "*/${5 + Math.floor(rnd() * 50)} * * * *"\n  jobTemplate:\n    spec:\n      backoffLimit: 2\n${indent(tmpl.replace('  spec:\n', '  spec:\n    restartPolicy: OnFailure\n'), 6)}\n`;
  }
  if (kind === 'Job') {
    return `${head}apiVersion: batch/v1\nkind: Job\n${meta}\nspec:\n  backoffLimit: 3\n${indent(tmpl.replace('  spec:\n', '  spec:\n    restartPolicy: Never\n'), 2)}\n`;
  }
  const sel = `  selector:\n    matchLabels:\n      app.kubernetes.io/name: ${app}\n`;
  if (kind === 'DaemonSet')
    return `${head}apiVersion: apps/v1\nkind: DaemonSet\n${meta}\nspec:\n${sel}${indent(tmpl, 2)}\n`;
  const replicas = `  replicas: ${1 + Math.floor(rnd() * 5)}\n`;
  if (kind === 'StatefulSet') {
    const vct =
      '  volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources:\n        requests:\n          storage: 1Gi\n';
    return `${head}apiVersion: apps/v1\nkind: StatefulSet\n${meta}\nspec:\n  serviceName: ${name}\n${replicas}${sel}${indent(tmpl, 2)}\n${vct}`;
  }
  return `${head}apiVersion: apps/v1\nkind: Deployment\n${meta}\nspec:\n${replicas}${sel}${indent(tmpl, 2)}\n`;
}

function service(
  rnd: () => number,
  name: string,
  ns: string,
  app: string,
  kpt: string | undefined,
  comment: boolean,
): string {
  const port = 80 + Math.floor(rnd() * 8000);
  return `apiVersion: v1\nkind: Service\n${metadata(name, ns, app, [], kpt, comment)}\nspec:\n  selector:\n    app.kubernetes.io/name: ${app}\n  ports:\n  - name: http\n    port: ${port}   # hand-aligned comment\n    targetPort: ${port}\n`;
}

function configMap(
  rnd: () => number,
  name: string,
  ns: string,
  app: string,
  kpt: string | undefined,
  comment: boolean,
): string {
  return `apiVersion: v1\nkind: ConfigMap\n${metadata(name, ns, app, [], kpt, comment)}\ndata:\n  LOG_FORMAT: json\n  FEATURE_FLAGS: "a,b,${Math.floor(rnd() * 100)}"\n  app.properties: |\n    server.port=8080\n    cache.size=${Math.floor(rnd() * 1000)}\n`;
}

/**
 * Generates the resources of a benchmark input: `n` workloads (≈60% Deployments, 25% StatefulSets, 15%
 * CronJobs), one Service per two workloads and one ConfigMap per four. Every 7th resource carries comments
 * (a head comment on workloads, line comments). Namespaces are `team-0` … `team-19` (never ignored).
 */
export function generateResources(n: number, opts: GenerateOptions = {}): GeneratedResource[] {
  const rnd = makeRandom(opts.seed ?? 1);
  const kpt = opts.kptAnnotations ?? true;
  const out: GeneratedResource[] = [];
  let id = 0;
  const add = (
    kind: GeneratedResource['kind'],
    name: string,
    ns: string,
    make: (k: string | undefined, c: boolean) => string,
  ) => {
    const path = `${ns}/${kind.toLowerCase()}-${name}.yaml`;
    const comment = out.length % 7 === 3;
    const text = make(kpt ? kptAnnotationLines(path, id++) : undefined, comment);
    out.push({ kind, name, namespace: ns, path, text, workload: kind !== 'Service' && kind !== 'ConfigMap' });
  };
  for (let i = 0; i < n; i++) {
    const app = APPS[i % APPS.length]!;
    const ns = `team-${i % 20}`;
    const name = `${app}-${i}`;
    const r = rnd();
    const kind = r < 0.6 ? 'Deployment' : r < 0.85 ? 'StatefulSet' : 'CronJob';
    add(kind, name, ns, (k, c) => workload(rnd, kind, name, ns, app, k, c));
    if (i % 2 === 0) add('Service', name, ns, (k, c) => service(rnd, name, ns, app, k, c));
    if (i % 4 === 1) add('ConfigMap', `${name}-config`, ns, (k, c) => configMap(rnd, `${name}-config`, ns, app, k, c));
  }
  return out;
}

/**
 * The `all-workloads` and `every-shape-different` classes: `n` resources, every one a workload that is
 * injected, of five kinds (≈50% Deployments, 20% StatefulSets, 10% each DaemonSets, Jobs, CronJobs). With
 * `distinct`, every pod template has a shape of its own (`distinctPodTemplate`); otherwise the shapes come
 * from the same few random choices as the mixed input (containers, probes, volumes, annotations).
 */
export function generateWorkloads(n: number, distinct = false, opts: GenerateOptions = {}): GeneratedResource[] {
  const rnd = makeRandom(opts.seed ?? 2);
  const kpt = opts.kptAnnotations ?? true;
  const out: GeneratedResource[] = [];
  for (let i = 0; i < n; i++) {
    const app = APPS[i % APPS.length]!;
    const ns = `team-${i % 20}`;
    const name = `${app}-${i}`;
    const r = rnd();
    const kind = r < 0.5 ? 'Deployment' : r < 0.7 ? 'StatefulSet' : r < 0.8 ? 'DaemonSet' : r < 0.9 ? 'Job' : 'CronJob';
    const path = `${ns}/${kind.toLowerCase()}-${name}.yaml`;
    const text = workload(
      rnd,
      kind,
      name,
      ns,
      app,
      kpt ? kptAnnotationLines(path, i) : undefined,
      i % 7 === 3,
      distinct ? i : undefined,
    );
    out.push({ kind, name, namespace: ns, path, text, workload: true });
  }
  return out;
}

/** The functionConfig used by the benchmark: Istio, everything injected. */
export const BENCH_CONFIG = `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: bench
spec:
  mesh: istio
  policy: enabled
`;

/** Frames resources as a kpt-style ResourceList (`items:` compact sequence, head comments on the first key). */
export function toResourceList(resources: readonly GeneratedResource[], functionConfig = BENCH_CONFIG): string {
  const parts = ['apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n'];
  for (const r of resources) {
    // kpt puts a file's head comment on the first key: `- # comment`.
    const m = /^(# [^\n]*)\n/.exec(r.text);
    const body = m ? `${m[1]}\n${r.text.slice(m[0].length)}` : r.text;
    parts.push(`- ${indent(body, 2).slice(2)}`);
  }
  parts.push('functionConfig:\n', indent(functionConfig, 2));
  return parts.join('');
}

/** Frames resources as a multi-document YAML stream (`---` separated). */
export function toStream(resources: readonly GeneratedResource[]): string {
  return resources.map((r) => r.text).join('---\n');
}

/** Frames resources as a `kind: List`. */
export function toList(resources: readonly GeneratedResource[]): string {
  return `apiVersion: v1\nkind: List\nitems:\n${resources.map((r) => `- ${indent(r.text, 2).slice(2)}`).join('')}`;
}

/**
 * Input shapes that once took super-linear time (issue #8 §3), each of a given size `n`:
 * - `compact-json`: a `kind: List` of n Deployments as JSON on one line (`kubectl get -o json | jq -c`);
 * - `wide-configmap`: a stream of one Deployment and a ConfigMap with n `data` keys;
 * - `wide-values`: a ResourceList with one Deployment whose functionConfig has n keys in `spec.istio.values`
 *   (the only shape that carries its own functionConfig);
 * (The Deployment of the YAML shapes uses an anchor, so they are read by the `yaml` path, not the fast reader.)
 * - `huge-annotation`: one Deployment with an annotation of n KiB;
 * - `anchored-docs`: a stream of n tiny documents (ConfigMaps using an anchor and an alias) and one Deployment;
 * - `one-anchored`: a stream of n plain Deployments the fast reader reads and, last, one ConfigMap using an
 *   anchor (a rendered chart with one such document), which only that document leaves to the `yaml` package.
 * - `look-alikes`: a stream of n Deployments each holding plain YAML 1.1 booleans in string fields (a label
 *   `logging: on`, an env value `no`): strings in the Kubernetes reading and in YAML 1.2, once read and read back
 *   by the `yaml` package (13.5 s of CPU for 1 000 of them against 2.7 s without).
 */
export type Shape =
  | 'compact-json'
  | 'wide-configmap'
  | 'wide-values'
  | 'huge-annotation'
  | 'anchored-docs'
  | 'one-anchored'
  | 'look-alikes';

/** Every shape, in the order the benchmark runs them. */
export const SHAPES: readonly Shape[] = [
  'compact-json',
  'wide-configmap',
  'wide-values',
  'huge-annotation',
  'anchored-docs',
  'one-anchored',
  'look-alikes',
];

function jsonDeployment(i: number): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `app-${i}`, namespace: 'shop', labels: { app: `app-${i}` } },
    spec: {
      selector: { matchLabels: { app: `app-${i}` } },
      template: {
        metadata: { labels: { app: `app-${i}` } },
        spec: { containers: [{ name: 'app', image: 'ghcr.io/acme/app:1.0', ports: [{ containerPort: 8080 }] }] },
      },
    },
  };
}

/** A Deployment whose selector is an alias of its pod labels: the input is read by the `yaml` path. */
const SMALL_DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: &labels {app: web}
  template:
    metadata:
      labels: *labels
    spec:
      containers:
      - name: web
        image: nginx:1.27
`;

/** The text of a shape of size `n` (see `Shape`), and the form of stdin meshinject gets. */
export function generateShape(shape: Shape, n: number): string {
  switch (shape) {
    case 'compact-json':
      return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: Array.from({ length: n }, (_, i) => jsonDeployment(i)) })}\n`;
    case 'wide-configmap': {
      const keys = Array.from({ length: n }, (_, i) => `  key-${i}: value ${i}\n`).join('');
      return `${SMALL_DEPLOYMENT}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\ndata:\n${keys}`;
    }
    case 'wide-values': {
      const keys = Array.from({ length: n }, (_, i) => `        extra${i}: ${i}\n`).join('');
      const item = SMALL_DEPLOYMENT.replace(/^/gm, '  ')
        .replace(/^ {2}apiVersion/, '- apiVersion')
        .replace(/\n {2}$/, '\n');
      return `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${item}functionConfig:\n  apiVersion: meshinject.dev/v1alpha1\n  kind: SidecarInjection\n  metadata:\n    name: mesh\n  spec:\n    mesh: istio\n    istio:\n      values:\n${keys}`;
    }
    case 'huge-annotation': {
      const value = 'x'.repeat(n * 1024);
      return SMALL_DEPLOYMENT.replace(
        '  namespace: shop\n',
        `  namespace: shop\n  annotations:\n    example.com/blob: ${value}\n`,
      );
    }
    case 'anchored-docs': {
      const doc = (i: number): string =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\n  labels: &l {app: c}\ndata: *l\n`;
      return [SMALL_DEPLOYMENT, ...Array.from({ length: n }, (_, i) => doc(i))].join('---\n');
    }
    case 'one-anchored': {
      const plain = (i: number): string =>
        SMALL_DEPLOYMENT.replace('  name: web\n', `  name: web-${i}\n`)
          .replace('matchLabels: &labels {app: web}', 'matchLabels: {app: web}')
          .replace('labels: *labels', 'labels: {app: web}');
      return [
        ...Array.from({ length: n }, (_, i) => plain(i)),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: &l {app: c}\ndata: *l\n',
      ].join('---\n');
    }
    case 'look-alikes':
      return Array.from({ length: n }, (_, i) =>
        SMALL_DEPLOYMENT.replace('  name: web\n', `  name: web-${i}\n`)
          .replace('matchLabels: &labels {app: web}', 'matchLabels: {app: web}')
          .replace('labels: *labels', 'labels: {app: web, logging: on}')
          .replace(
            'image: nginx:1.27\n',
            'image: nginx:1.27\n        env:\n        - name: DEBUG\n          value: no\n',
          ),
      ).join('---\n');
  }
}
