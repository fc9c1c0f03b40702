// Generates the template and functionConfig-validator modules, then bundles the CLI (src/cli/entry.ts, which runs src/cli.ts's main) into dist/meshinject.cjs (one file) with a V8 code cache (fast start-up).
import { appendFileSync, chmodSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { createRequire, isBuiltin } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeAll as writeTemplates } from './gen-templates.mjs';
import { writeAll as writeValidators } from './gen-validators.mjs';

writeTemplates();

/**
 * `n` workloads of a small application (one pod template shape each, as the services of an app have), for the
 * warm-up: kinds, container counts, ports, probes and resources vary with the index.
 */
function warmupFleet(n) {
  const kinds = [
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    ['apps/v1', 'DaemonSet'],
    ['batch/v1', 'Job'],
  ];
  let out = '';
  for (let i = 0; i < n; i++) {
    const [apiVersion, kind] = kinds[i % kinds.length];
    const name = `svc-${i}`;
    const port = 8000 + 17 * i;
    const probe =
      i % 3 === 0
        ? `httpGet: {path: /healthz, port: ${port}}`
        : i % 3 === 1
          ? 'httpGet: {path: /ready, port: http}'
          : `tcpSocket: {port: ${port}}`;
    const sidecar =
      i % 2 === 0
        ? ''
        : `
        - name: ${name}-helper
          image: ghcr.io/acme/helper:1.${i}
          ports:
          - {name: metrics, containerPort: ${9000 + i}}
          resources:
            limits: {memory: ${64 * (i + 1)}Mi}`;
    out += `- apiVersion: ${apiVersion}
  kind: ${kind}
  metadata:
    name: ${name}
    namespace: ${i % 2 ? 'shop' : 'store'}
    labels: {app.kubernetes.io/name: ${name}, app.kubernetes.io/part-of: shop}
    annotations:
      config.kubernetes.io/path: '${kind.toLowerCase()}-${name}.yaml'
  spec:${kind === 'StatefulSet' ? `\n    serviceName: ${name}` : ''}
    selector:
      matchLabels: {app.kubernetes.io/name: ${name}}
    template:
      metadata:
        labels: {app.kubernetes.io/name: ${name}, version: v${i % 3}}
      spec:${kind === 'Job' ? '\n        restartPolicy: OnFailure' : ''}
        serviceAccountName: ${name}
        containers:
        - name: ${name}
          image: ghcr.io/acme/${name}:2.${i}.0
          ports:
          - name: http
            containerPort: ${port}
            protocol: TCP
          env:
          - name: APP_NAME
            value: "${name}"
          - name: LOG_LEVEL
            value: ${i % 2 ? 'debug' : 'info'}
          resources:
            requests: {cpu: ${10 * (i + 1)}m, memory: ${32 * (i + 1)}Mi}
          readinessProbe:
            ${probe}
            periodSeconds: ${5 + i}${sidecar}
`;
  }
  return out;
}

/**
 * A Deployment of the warm-up's `web` shape named `name` (kpt index `index`, a comment before it and
 * `nameComment` after its name): three of them, so that a sidecar plan is recorded (at the second of the
 * shape) and served (the third).
 */
function webShaped(name, index, comment, nameComment = '') {
  return `- # ${comment}
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: ${name}${nameComment}
    namespace: shop
    annotations:
      config.kubernetes.io/index: '${index}'
      config.kubernetes.io/path: 'shop/deployment-${name}.yaml'
      internal.config.kubernetes.io/seqindent: 'compact'
  spec:
    replicas: 2
    selector:
      matchLabels: {app: ${name}}
    template:
      metadata:
        labels: {app: ${name}}
        annotations: {prometheus.io/scrape: "true", prometheus.io/port: "9090"}
      spec:
        containers:
        - name: ${name}
          image: ${name}:1
          ports: [{name: http, containerPort: 8080}]
          env:
          - name: MODE
            value: "prod"
          readinessProbe: {httpGet: {path: /ready, port: http}}
          livenessProbe: {tcpSocket: {port: 8080}}
        volumes:
        - name: config
          configMap: {name: ${name}-config}
`;
}

/**
 * The warm-up input: a ResourceList with the common workload kinds and YAML forms (kpt annotations, comments,
 * quoted and block scalars, flow and block collections) and pod template parts (several containers, ports, env,
 * resources, probes on named and numbered ports, volume claim templates), and a fleet of a dozen workloads
 * of shapes of their own. Functions the warm-up does not run are compiled on first use instead; and a run
 * starts faster when the warm-up ran its code paths many times, not once: measured on `npm run bench`'s
 * 10-workload start-up input (callgrind), 913 million instructions after a warm-up of 4 workloads (5 renders),
 * 885-889 after one of 10 to 16 full renders (this list; the online-boutique app; the bench's own input),
 * against 505 for bare `node -e 0`. (The cause is V8's: its code cache holds no execution state, yet runs
 * after a longer warm-up take fewer property-access and object-literal misses.)
 */
/** The workloads of `WARMUP_INPUT`, every one injected: web, cart, orders, db, job and the fleet. */
const WARMUP_WORKLOADS = 5 + 12;
const WARMUP_INPUT = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: shop, labels: {mesh: "on"}}
- apiVersion: v1
  kind: Namespace
  metadata: {name: store, labels: {mesh: "on"}}
${webShaped('web', 0, 'the web front end', ' # owned by the web team')}${webShaped('cart', 1, "a second workload of web's shape (sidecar plans are recorded when a shape repeats)")}${webShaped('orders', 2, 'a third of that shape (served by the plan)')}- apiVersion: apps/v1
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
          ports:
          - name: tcp
            containerPort: 5432
            protocol: TCP
          env:
          - name: PGDATA
            value: "/data"
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits:
              memory: 512Mi
        - name: exporter
          image: exporter:2
          ports:
          - name: http-metrics
            containerPort: 9187
          readinessProbe:
            httpGet:
              path: /healthz
              port: 9187
            periodSeconds: 10
    volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 1Gi
- apiVersion: batch/v1
  kind: CronJob
  metadata:
    name: job
    namespace: shop
    labels:
      app.kubernetes.io/name: job
  spec:
    schedule: "*/5 * * * *"
    jobTemplate:
      spec:
        backoffLimit: 2
        template:
          metadata:
            labels:
              app.kubernetes.io/name: job
          spec:
            restartPolicy: OnFailure
            serviceAccountName: job
            containers:
            - name: job
              image: job:1
              env:
              - name: LOG_LEVEL
                value: debug
              resources:
                requests:
                  cpu: 50m
${warmupFleet(WARMUP_WORKLOADS - 5)}- apiVersion: v1
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
    b.onResolve({ filter: /^handlebars$/ }, () => ({
      path: fileURLToPath(new URL('../src/render/handlebars-lazy.cjs', import.meta.url)),
    }));
  },
};
/**
 * Modules that the bundle loads on first use instead of at start, as module name → what the stand-in requires:
 * - `node:crypto` (SHA-256 of resource fingerprints, Linkerd's and sprig's hashes) and `node:net` (`isIP`, OSM
 *   exclusions) cost ~5 ms of a start to load (`node:net` is loaded anyway when stdout or stderr is a pipe),
 *   `node:os` (signal numbers, read at a signal exit) a little;
 * - `fast-json-patch` (Kuma's JSON patches; bundled) ~2 ms of initialisation.
 * Each import of one resolves to a CommonJS stand-in whose exports are getters that require the real module
 * when first read: esbuild reads a CommonJS module's named imports at each use (and a default import is the
 * stand-in itself), so nothing loads before a getter runs. The getters are the module's own export names, read
 * here.
 */
const LAZY_MODULES = {
  'node:crypto': 'node:crypto',
  'node:net': 'node:net',
  'node:os': 'node:os',
  'fast-json-patch': 'fast-json-patch/index.js',
};
const requireHere = createRequire(import.meta.url);
const lazyModules = {
  name: 'lazy-modules',
  setup(b) {
    const names = Object.keys(LAZY_MODULES).map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    b.onResolve({ filter: new RegExp(`^(?:${names.join('|')})$`) }, (args) =>
      args.namespace === 'lazy-module'
        ? { path: args.path, external: true }
        : { path: args.path, namespace: 'lazy-module' },
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-module' }, (args) => {
      const target = LAZY_MODULES[args.path];
      const keys = Object.keys(requireHere(target)).filter((k) => k !== 'default');
      return {
        loader: 'js',
        resolveDir: fileURLToPath(new URL('..', import.meta.url)),
        contents: `let m;\nfor (const k of ${JSON.stringify(keys)}) Object.defineProperty(exports, k, { enumerable: true, get: () => (m ??= require(${JSON.stringify(target)}))[k] });\n`,
      };
    });
  },
};
/**
 * The `yaml` package prints debugging output to stdout when the process environment sets LOG_TOKENS (its
 * parser: every lexical token) or LOG_STREAM (its composer: every document). A KRM function's stdout is its
 * output, so a variable left set in a runner's environment would corrupt every YAML read through that package;
 * and the parser reads `process.env.LOG_TOKENS` once per lexical token, a call into Node's environment each
 * time (15 % of the CPU of reading a stream through the `yaml` path). In the bundle both read as unset. The
 * build fails when a `yaml` release no longer has these exact reads (so that a new one is looked at).
 */
const YAML_DEBUG_READS = {
  'parse/parser.js': 'node_process.env.LOG_TOKENS',
  'compose/composer.js': 'node_process.env.LOG_STREAM',
};
const yamlDebugPatched = new Set();
const yamlWithoutDebugOutput = {
  name: 'yaml-without-debug-output',
  setup(b) {
    b.onLoad(
      { filter: /[\\/]node_modules[\\/]yaml[\\/]dist[\\/](parse[\\/]parser|compose[\\/]composer)\.js$/ },
      (args) => {
        const file = Object.keys(YAML_DEBUG_READS).find((f) =>
          args.path.replaceAll('\\', '/').endsWith(`/yaml/dist/${f}`),
        );
        const read = YAML_DEBUG_READS[file];
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes(read))
          throw new Error(
            `${args.path} no longer reads ${read}: check what the new yaml release prints, then update YAML_DEBUG_READS`,
          );
        yamlDebugPatched.add(file);
        return { contents: text.replaceAll(read, 'undefined'), loader: 'js' };
      },
    );
  },
};
// No cache of an earlier build may outlive this one's bundle, even if this build fails before its warm-up.
rmSync('dist/meshinject.cjs.cache', { force: true });
await build({
  entryPoints: ['src/cli/entry.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile: 'dist/meshinject.cjs',
  charset: 'ascii', // (esbuild's default) bin/meshinject.js reads the bundle as latin1
  // Every start reads the bundle, decodes it and hands it to V8 (2.2 MB as written, 1.6 MB so): whitespace and
  // the syntax esbuild can shorten without changing behaviour. Names are kept, for the stack frames of an
  // internal error (src/cli/session.ts).
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [lazyHandlebars, lazyModules, yamlWithoutDebugOutput],
  logLevel: 'warning',
});
for (const f of Object.keys(YAML_DEBUG_READS))
  if (!yamlDebugPatched.has(f))
    throw new Error(`yaml/dist/${f} was not bundled through the yaml-without-debug-output plugin`);
// bin/meshinject.js hands the bundle its own `require` (so that `node:module` is not loaded at each start): every
// module the bundle requires at run time must be one of Node's built-ins.
const external = [...readFileSync('dist/meshinject.cjs', 'latin1').matchAll(/\brequire\("([^"]+)"\)/g)]
  .map((m) => m[1])
  .filter((n) => !isBuiltin(n));
if (external.length > 0)
  throw new Error(`the bundle requires modules that are not Node built-ins: ${[...new Set(external)].join(', ')}`);
// The build line that ties the code cache to this bundle (bin/meshinject.js): SHA-256 of the bundle's bytes, and a
// place for the SHA-256 of the cache, which the warm-up writes in (same length: the cache stays valid for the source).
const bundleHash = createHash('sha256').update(readFileSync('dist/meshinject.cjs')).digest('hex');
appendFileSync('dist/meshinject.cjs', `//# meshinject-build ${bundleHash} cache ${'0'.repeat(64)}\n`);

// Warm-up run that writes V8's code cache (bin/meshinject.js loads it): parsing, compiling and the
// functions a typical injection runs are then cached, which saves a third of the start-up time.
const warmup = spawnSync(process.execPath, ['bin/meshinject.js'], {
  input: WARMUP_INPUT,
  env: { ...process.env, MESHINJECT_WRITE_CODE_CACHE: '1', LOG_TO_STDERR: 'false' },
  encoding: 'utf8',
});
if (warmup.status !== 0) throw new Error(`warm-up run failed (${warmup.status}): ${warmup.stderr}`);
// Every workload of the warm-up is injected (the runs after a warm-up that injects less start slower: above).
const warmupInjected = warmup.stdout.match(/^ +- name: istio-proxy$/gm)?.length ?? 0;
if (warmupInjected !== WARMUP_WORKLOADS)
  throw new Error(`the warm-up run injected ${warmupInjected} of its ${WARMUP_WORKLOADS} workloads: ${warmup.stderr}`);

// The bin must accept the cache it just wrote (a V8 flag set during the warm-up run, after the bundle was
// compiled, once made every run reject it): a cache that is not used costs its reading and nothing else, so
// this only warns (test/cli/bin-code-cache.test.ts fails).
const check = spawnSync(process.execPath, ['bin/meshinject.js', '--version'], {
  env: { ...process.env, MESHINJECT_CODE_CACHE_REPORT: '1' },
  encoding: 'utf8',
});
if (!/^meshinject: code cache accepted$/m.test(check.stderr))
  process.stderr.write(`build: warning: the V8 code cache is not used: ${check.stderr}`);

// Readable by every user: Argo CD runs the plugin as its own uid from a clone another user built.
chmodSync('dist', 0o755);
for (const f of readdirSync('dist')) chmodSync(`dist/${f}`, 0o644);
