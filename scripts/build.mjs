// Generates the template and functionConfig-validator modules, then bundles the CLI (src/cli/entry.ts, which runs src/cli.ts's main) into dist/meshinject.cjs (one file) with a V8 code cache (fast start-up).
import { writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeAll as writeTemplates } from './gen-templates.mjs';
import { writeAll as writeValidators } from './gen-validators.mjs';

writeTemplates();

/**
 * A small ResourceList with the common workload kinds and YAML forms (kpt annotations, comments, quoted and
 * block scalars), for the code-cache warm-up: functions it does not run are compiled on first use instead.
 */
const WARMUP_INPUT = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: shop, labels: {mesh: "on"}}
- # the web front end
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web # owned by the web team
    namespace: shop
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'shop/deployment-web.yaml'
      internal.config.kubernetes.io/seqindent: 'compact'
  spec:
    replicas: 2
    selector:
      matchLabels: {app: web}
    template:
      metadata:
        labels: {app: web}
        annotations: {prometheus.io/scrape: "true", prometheus.io/port: "9090"}
      spec:
        containers:
        - name: web
          image: web:1
          ports: [{name: http, containerPort: 8080}]
          env:
          - name: MODE
            value: "prod"
          readinessProbe: {httpGet: {path: /ready, port: http}}
          livenessProbe: {tcpSocket: {port: 8080}}
        volumes:
        - name: config
          configMap: {name: web-config}
- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: db, namespace: shop}
  spec:
    serviceName: db
    selector:
      matchLabels: {app: db}
    template:
      metadata:
        labels: {app: db}
      spec:
        containers:
        - name: db
          image: db:1
          resources:
            requests: {cpu: 100m, memory: 128Mi}
    volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
- apiVersion: batch/v1
  kind: CronJob
  metadata: {name: job, namespace: shop}
  spec:
    schedule: "*/5 * * * *"
    jobTemplate:
      spec:
        template:
          spec:
            containers:
            - {name: job, image: job:1}
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: shop}
  spec:
    ports:
    - port: 80   # aligned comment
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: web-config, namespace: shop}
  data:
    app.properties: |
      server.port=8080
    banner: >-
      hello
functionConfig:
  apiVersion: meshinject.dev/v1alpha1
  kind: SidecarInjection
  metadata: {name: warmup}
  spec:
    mesh: istio
    policy: enabled
    namespaceSelector: {matchLabels: {mesh: "on"}}
`;
writeValidators();
/**
 * Bundles `handlebars` as src/render/handlebars-lazy.cjs: the runtime, with the compiler initialised only
 * when a template that is not precompiled is compiled (never in a CLI run; see that file).
 */
const lazyHandlebars = {
  name: 'lazy-handlebars',
  setup(b) {
    b.onResolve({ filter: /^handlebars$/ }, () => ({ path: fileURLToPath(new URL('../src/render/handlebars-lazy.cjs', import.meta.url)) }));
  },
};
await build({
  entryPoints: ['src/cli/entry.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile: 'dist/meshinject.cjs',
  charset: 'ascii', // (esbuild's default) bin/meshinject.js reads the bundle as latin1
  plugins: [lazyHandlebars],
  logLevel: 'warning',
});

// Warm-up run that writes V8's code cache (bin/meshinject.js loads it): parsing, compiling and the
// functions a typical injection runs are then cached, which saves a third of the start-up time.
const warmup = spawnSync(process.execPath, ['bin/meshinject.js'], {
  input: WARMUP_INPUT,
  env: { ...process.env, MESHINJECT_WRITE_CODE_CACHE: '1', LOG_TO_STDERR: 'false' },
  encoding: 'utf8',
});
if (warmup.status !== 0) throw new Error(`warm-up run failed (${warmup.status}): ${warmup.stderr}`);
