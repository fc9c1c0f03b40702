/**
 * Uninject as a user sees it: `spec.mode: uninject` (SidecarInjection and ConfigMap forms), results and the
 * result annotation, `spec.removeWhenSkipped`, the generic engine with a driver that is not Istio, and the
 * Istio status annotation not taken on trust (issue #8 §1).
 */
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../../src/index.ts';
import { bindDriver, type Inventory, type MeshDriver } from '../../src/contract/driver.ts';
import { removeInventory, uninjectPod } from '../../src/patch/uninject.ts';
import { processItems } from '../../src/pipeline.ts';
import { parseSource } from '../../src/krm/source.ts';
import { writeOutput } from '../../src/krm/write.ts';
import type { Config } from '../../src/model.ts';
import type { PodTemplate } from '../../src/model.ts';
import { InjectError } from '../../src/results/errors.ts';

type Obj = Record<string, any>;

const APP = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels:
        app: web
      annotations:
        team: payments # owned by payments
    spec:
      containers:
      - name: web
        image: web:1
        ports:
        - containerPort: 8080
        readinessProbe:
          httpGet:
            path: /ready
            port: 8080
          periodSeconds: 5
        volumeMounts:
        - name: data
          mountPath: /data
      volumes:
      - name: data
        emptyDir: {}
`;

const config = (spec: Obj = {}) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: t}
spec: ${JSON.stringify(spec)}
`;

/** The injected text with the pod opting out by label (`sidecar.istio.io/inject: "false"`). */
const optOut = (text: string): string => {
  const out = text.replace(
    'labels:\n        app: web\n',
    'labels:\n        app: web\n        sidecar.istio.io/inject: "false"\n',
  );
  if (out === text) throw new Error('test input has no pod labels block');
  return out;
};
const podOf = (out: string): Obj => (parse(out) as Obj).spec.template;
const names = (list: unknown): string[] => ((list ?? []) as Obj[]).map((c) => c.name);

t.test('mode uninject: removes exactly the injection; results and annotation say uninjected', async (t) => {
  const injected = run(APP, { functionConfig: config({ resultAnnotations: false }) });
  t.equal(injected.exitCode, 0);
  t.same(names(podOf(injected.stdout).spec.containers), ['web', 'istio-proxy'], 'precondition: injected');
  const un = run(injected.stdout, { functionConfig: config({ mode: 'uninject' }) });
  t.equal(un.exitCode, 0);
  const doc = parse(un.stdout) as Obj;
  t.equal(doc.metadata.annotations['meshinject.dev/injection'], 'uninjected (istio)');
  const pod = doc.spec.template;
  t.same(names(pod.spec.containers), ['web']);
  t.equal(pod.spec.initContainers, undefined, 'the init container list the injection created is gone');
  t.same(names(pod.spec.volumes), ['data'], 'the user volume stays');
  t.same(
    pod.metadata,
    { labels: { app: 'web' }, annotations: { team: 'payments' } },
    'only the user labels and annotations stay',
  );
  t.same(
    pod.spec.containers[0].readinessProbe,
    { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 },
    'probe restored',
  );
  t.match(un.stdout, /team: payments # owned by payments/, 'the user comment stays');
  const r = un.results.find((x) => x.resourceRef?.name === 'web')!;
  t.equal(r.severity, 'info');
  t.same(
    r.tags,
    {
      'meshinject.dev/outcome': 'uninjected',
      'meshinject.dev/reason': 'mode-uninject',
      'meshinject.dev/dataplane': 'none',
    },
    'the pod is left without a sidecar, outside ambient: dataplane none',
  );
  t.match(
    r.message,
    /^uninjected \(istio\): removed containers istio-proxy; init containers istio-init; volumes workload-socket, .*; the annotation sidecar\.istio\.io\/status$/,
  );
});

t.test(
  'mode uninject: a workload without the injection is unchanged and reported skipped (not-injected)',
  async (t) => {
    const un = run(APP, { functionConfig: config({ mode: 'uninject', resultAnnotations: false }) });
    t.equal(un.exitCode, 0);
    t.equal(un.stdout, APP, 'byte for byte');
    const annotated = run(APP, { functionConfig: config({ mode: 'uninject' }) });
    t.equal(
      (parse(annotated.stdout) as Obj).metadata.annotations['meshinject.dev/injection'],
      'uninjected (istio)',
      'the annotation records the state: free of istio',
    );
    const r = un.results.find((x) => x.resourceRef?.name === 'web')!;
    t.same(
      r.tags,
      {
        'meshinject.dev/outcome': 'skipped',
        'meshinject.dev/reason': 'not-injected',
        'meshinject.dev/dataplane': 'none',
      },
      'the pod is left without a sidecar, outside ambient: dataplane none',
    );
    t.equal(r.message, 'skipped (not-injected): nothing istio injected was found');
  },
);

t.test('ConfigMap form: data.mode uninject and data.removeWhenSkipped', async (t) => {
  const injected = run(APP, { functionConfig: config({ resultAnnotations: false }) }).stdout;
  const cm = (data: Obj) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: ${JSON.stringify(data)}\n`;
  const un = run(injected, { functionConfig: cm({ mode: 'uninject', resultAnnotations: 'false' }) });
  t.equal(un.exitCode, 0);
  t.equal(un.stdout, APP);
  const bad = run(injected, { functionConfig: cm({ mode: 'remove' }) });
  t.equal(bad.exitCode, 1);
  t.match(bad.results.map((r) => r.message).join('\n'), /data\.mode/);
  const skip = run(optOut(injected), {
    functionConfig: cm({ removeWhenSkipped: 'true', resultAnnotations: 'false' }),
  });
  t.same(names(podOf(skip.stdout).spec.containers), ['web'], 'removeWhenSkipped from the ConfigMap form');
});

t.test('removeWhenSkipped: a skipped workload that still carries the sidecar', async (t) => {
  const injected = run(APP, { functionConfig: config({ resultAnnotations: false }) }).stdout;
  const optedOut = optOut(injected);
  const warned = run(optedOut, { functionConfig: config({ resultAnnotations: false }) });
  t.equal(warned.stdout, optedOut, 'default: left as it is');
  t.ok(
    warned.results.some(
      (r) => r.severity === 'warning' && /already injected .*spec\.removeWhenSkipped/.test(r.message),
    ),
    'with a warning naming the setting',
  );
  const removed = run(optedOut, { functionConfig: config({ removeWhenSkipped: true }) });
  t.equal(removed.exitCode, 0);
  const doc = parse(removed.stdout) as Obj;
  t.same(names(doc.spec.template.spec.containers), ['web']);
  t.same(
    doc.spec.template.metadata.labels,
    { app: 'web', 'sidecar.istio.io/inject': 'false' },
    "the opt-out label is the user's: kept",
  );
  t.equal(
    removed.stdout.replace(/\n {2}annotations:\n {4}meshinject.dev\/injection: .*\n/, '\n'),
    run(optOut(APP), { functionConfig: config({ resultAnnotations: false }) }).stdout,
    'as if never injected',
  );
  t.equal(
    doc.metadata.annotations['meshinject.dev/injection'],
    'skipped (label-false)',
    'the annotation records the state',
  );
  t.equal(
    run(removed.stdout, { functionConfig: config({ removeWhenSkipped: true }) }).stdout,
    removed.stdout,
    'a second run changes nothing',
  );
  const r = removed.results.find((x) => x.resourceRef?.name === 'web')!;
  t.same(
    r.tags,
    {
      'meshinject.dev/outcome': 'uninjected',
      'meshinject.dev/reason': 'label-false',
      'meshinject.dev/dataplane': 'none',
    },
    'the pod is left without a sidecar, outside ambient: dataplane none',
  );
  t.match(r.message, /^uninjected \(istio\): skipped \(label-false\): .*; removed containers istio-proxy/);
});

t.test('uninject is idempotent, and inject after uninject equals the first inject', async (t) => {
  const cfg = config({ resultAnnotations: false });
  const injected = run(APP, { functionConfig: cfg }).stdout;
  const un = run(injected, { functionConfig: config({ mode: 'uninject', resultAnnotations: false }) }).stdout;
  t.equal(run(un, { functionConfig: config({ mode: 'uninject', resultAnnotations: false }) }).stdout, un);
  t.equal(run(un, { functionConfig: cfg }).stdout, injected);
});

t.test('Istio: a label the user set to a value the injection would not write is kept', async (t) => {
  const own = APP.replace(
    'app: web\n      annotations:',
    'app: web\n        service.istio.io/canonical-name: storefront\n      annotations:',
  );
  const injected = run(own, { functionConfig: config({ resultAnnotations: false }) }).stdout;
  const un = run(injected, { functionConfig: config({ mode: 'uninject', resultAnnotations: false }) });
  t.equal(un.stdout, own);
});

t.test('Istio: merged prometheus annotations come back from ISTIO_PROMETHEUS_ANNOTATIONS', async (t) => {
  const scraped = APP.replace(
    'team: payments # owned by payments',
    'team: payments # owned by payments\n        prometheus.io/scrape: "true"\n        prometheus.io/port: "9090"',
  );
  const injected = run(scraped, { functionConfig: config({ resultAnnotations: false }) }).stdout;
  t.equal(podOf(injected).metadata.annotations['prometheus.io/port'], '15020', 'precondition: merged');
  const un = run(injected, { functionConfig: config({ mode: 'uninject', resultAnnotations: false }) });
  t.equal(un.stdout, scraped);
});

t.test(
  'Istio: uninject with another revision keeps the revision annotation only if the status does not name it',
  async (t) => {
    const injected = run(APP, {
      functionConfig: config({ resultAnnotations: false, istio: { revision: 'canary' } }),
    }).stdout;
    t.equal(podOf(injected).metadata.annotations['istio.io/rev'], 'canary');
    const un = run(injected, { functionConfig: config({ mode: 'uninject', resultAnnotations: false }) });
    t.equal(podOf(un.stdout).metadata.annotations['istio.io/rev'], undefined, 'the status records revision canary');
  },
);

// ---- the engine is generic: a driver that is not Istio -------------------------------------------------

const fakeInventory = (pod: PodTemplate): Inventory | undefined =>
  pod.metadata.annotations?.['example.dev/injected'] === undefined
    ? undefined
    : {
        statusAnnotation: 'example.dev/injected',
        containers: ['shipper'],
        initContainers: ['setup'],
        volumes: ['shipper-conf'],
        imagePullSecrets: ['shipper-pull'],
        annotations: ['example.dev/version'],
        labels: ['example.dev/meshed'],
      };

const fakeDriver: MeshDriver<{ tag: string }> = {
  name: 'fake',
  reasons: [],
  loadConfig: () => ({ settings: { tag: 'x' }, issues: [], warnings: [] }),
  decide: () => ({ warnings: [], trace: [] }),
  inject: () => {
    throw new InjectError('not used');
  },
  inventory: fakeInventory,
  uninject(pod, inv, settings, ctx) {
    // What the generic removal cannot know: an env variable the injection added to the app container.
    const out = structuredClone(pod);
    const seen = ctx.injected.spec.containers as Obj[];
    t.ok(
      seen.some((c) => c.name === 'shipper'),
      'the hook sees the pod as injected',
    );
    t.equal(settings.tag, 'x', 'the hook gets the settings');
    t.equal(inv.statusAnnotation, 'example.dev/injected');
    for (const c of out.spec.containers as Obj[]) c.env = (c.env ?? []).filter((e: Obj) => e.name !== 'SHIPPER_ADDR');
    for (const c of out.spec.containers as Obj[]) if (c.env.length === 0) delete c.env;
    return out;
  },
};

const FAKE_INJECTED = `apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: default}
spec:
  template:
    metadata:
      labels: {app: app, example.dev/meshed: "true"}
      annotations:
        example.dev/injected: "1"
        example.dev/version: v2
        user.dev/keep: "yes"
    spec:
      imagePullSecrets: [{name: mine}, {name: shipper-pull}]
      initContainers:
      - name: setup
        image: setup:1
      containers:
      - name: app
        image: app:1
        env:
        - name: SHIPPER_ADDR
          value: localhost:24224
      - name: shipper
        image: shipper:1
        volumeMounts: [{name: shipper-conf, mountPath: /etc/shipper}]
      volumes:
      - name: shipper-conf
        configMap: {name: shipper}
`;

function runWith(
  driver: MeshDriver<{ tag: string }>,
  input: string,
  over: Partial<Config> = {},
): { out: string; results: ReturnType<typeof processItems>['results'] } {
  const cfg: Config = {
    mesh: driver.name,
    policy: 'enabled',
    namespaces: [],
    defaultNamespace: 'default',
    ignoredNamespaces: [],
    neverInjectSelector: [],
    alwaysInjectSelector: [],
    nativeSidecars: false,
    resultAnnotations: false,
    workloadKinds: [],
    mode: 'uninject',
    ...over,
  };
  const source = parseSource(input);
  const res = processItems(source, cfg, bindDriver(driver, { tag: 'x' }));
  return { out: writeOutput(source, res.changed, res.results), results: res.results };
}

t.test("engine: a non-Istio driver's inventory and hook, with no special case", async (t) => {
  const { out, results } = runWith(fakeDriver, FAKE_INJECTED);
  const pod = (parseAllDocuments(out)[0]!.toJS() as Obj).spec.template;
  t.same(pod, {
    metadata: { labels: { app: 'app' }, annotations: { 'user.dev/keep': 'yes' } },
    spec: { imagePullSecrets: [{ name: 'mine' }], containers: [{ name: 'app', image: 'app:1' }] },
  });
  t.equal(
    results[0]!.message,
    'uninjected (fake): removed containers shipper; init containers setup; volumes shipper-conf; image pull secrets shipper-pull; the annotation example.dev/injected',
  );
});

t.test('engine: a recorded volume that a container it does not record mounts is refused', async (t) => {
  const shared = FAKE_INJECTED.replace(
    'image: app:1\n',
    'image: app:1\n        volumeMounts: [{name: shipper-conf, mountPath: /cfg}]\n',
  );
  const { out, results } = runWith(fakeDriver, shared);
  t.equal(out, shared, 'unchanged');
  t.equal(results[0]!.severity, 'error');
  t.match(
    results[0]!.message,
    /example\.dev\/injected lists volume "shipper-conf" as injected, but container "app", which it does not list, mounts it/,
  );
  t.equal(results[0]!.field?.path, 'spec.template.metadata.annotations[example.dev/injected]');
});

t.test('removeInventory / uninjectPod: pure, and nothing to do without an inventory', async (t) => {
  const pod: PodTemplate = { metadata: { annotations: { a: '1' } }, spec: { containers: [{ name: 'x' }] } };
  const before = structuredClone(pod);
  const out = removeInventory(pod, {
    statusAnnotation: 'a',
    containers: ['x'],
    initContainers: [],
    volumes: [],
    imagePullSecrets: [],
  });
  t.same(pod, before, 'input not mutated');
  t.same(out, { metadata: {}, spec: {} });
  const mesh = bindDriver(fakeDriver, { tag: 'x' });
  t.equal(
    uninjectPod(mesh, pod, {
      workload: { apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'default', namespaceDefaulted: true },
      config: {} as Config,
    }),
    undefined,
  );
});

// ---- issue #8 §1: the status annotation is not taken on trust ----------------------------------------

const LYING_STATUS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/status: '{"initContainers":null,"containers":["app"],"volumes":["data"],"imagePullSecrets":null,"revision":"default"}'
    spec:
      containers:
      - name: app
        image: app:1
      - name: web
        image: web:1
      volumes:
      - name: data
        emptyDir: {}
`;

t.test("#8: a status annotation listing the user's container is refused, in inject and uninject", async (t) => {
  for (const mode of ['inject', 'uninject']) {
    const out = run(LYING_STATUS, { functionConfig: config({ mode }) });
    t.equal(out.exitCode, 1, `${mode}: error`);
    const err = out.results.find((r) => r.severity === 'error')!;
    t.match(
      err.message,
      /sidecar\.istio\.io\/status lists container "app" as injected, but no Istio injection template adds a container of that name: refusing to remove it/,
    );
    t.equal(err.field?.path, 'spec.template.metadata.annotations[sidecar.istio.io/status]');
  }
  const skipped = run(
    LYING_STATUS.replace('annotations:\n', 'annotations:\n        sidecar.istio.io/inject: "false"\n'),
    { functionConfig: config({ removeWhenSkipped: true }) },
  );
  t.equal(skipped.exitCode, 1, 'removeWhenSkipped: error too');
});

t.test("#8: a status annotation listing the user's volume is refused", async (t) => {
  const vol = LYING_STATUS.replace('"containers":["app"]', '"containers":["istio-proxy"]');
  for (const mode of ['inject', 'uninject']) {
    const out = run(vol, { functionConfig: config({ mode }) });
    t.equal(out.exitCode, 1, `${mode}: error`);
    t.match(out.results.find((r) => r.severity === 'error')!.message, /lists volume "data" as injected/);
  }
});

t.test('#8: a user init container named istio-proxy is refused, not merged away', async (t) => {
  const input = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      initContainers:
      - name: istio-proxy
        image: busybox
        command: [sh, -c, "echo hi"]
      containers:
      - name: web
        image: web:1
`;
  for (const nativeSidecars of [false, true]) {
    const out = run(input, { functionConfig: config({ nativeSidecars }) });
    t.equal(out.exitCode, 1, `nativeSidecars ${nativeSidecars}: error`);
    const err = out.results.find((r) => r.severity === 'error')!;
    t.match(err.message, /init container "istio-proxy" is not an injected proxy .*rename it/);
    t.equal(err.field?.path, 'spec.template.spec.initContainers[0].name');
  }
});

t.test('#8: a native proxy recorded by the status is still re-injected', async (t) => {
  const native = run(APP, { functionConfig: config({ nativeSidecars: true, resultAnnotations: false }) });
  t.equal(native.exitCode, 0);
  t.same(names(podOf(native.stdout).spec.initContainers), ['istio-init', 'istio-proxy']);
  const again = run(native.stdout, { functionConfig: config({ nativeSidecars: true, resultAnnotations: false }) });
  t.equal(again.stdout, native.stdout, 'second run changes nothing');
  const classic = run(native.stdout, { functionConfig: config({ resultAnnotations: false }) });
  t.equal(classic.exitCode, 0, 'native → classic upgrade still allowed');
  t.same(names(podOf(classic.stdout).spec.containers), ['web', 'istio-proxy']);
});

t.test(
  'injectedWorkloadAnnotations: uninject removes those holding the configured value, keeps the others',
  async (t) => {
    const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: migrate:1
`;
    const spec = {
      resultAnnotations: false,
      injectedWorkloadAnnotations: { Job: { 'kustomize.toolkit.fluxcd.io/force': 'enabled' } },
    };
    const injected = run(job, { functionConfig: config(spec) });
    t.equal(
      (parse(injected.stdout) as Obj).metadata.annotations['kustomize.toolkit.fluxcd.io/force'],
      'enabled',
      'precondition: written on inject',
    );
    const un = run(injected.stdout, { functionConfig: config({ ...spec, mode: 'uninject' }) });
    t.equal(un.exitCode, 0);
    t.equal(un.stdout, job, 'byte for byte: the annotations map the injection created is gone too');
    const own = injected.stdout.replace(
      'kustomize.toolkit.fluxcd.io/force: enabled',
      'kustomize.toolkit.fluxcd.io/force: disabled',
    );
    const kept = run(own, { functionConfig: config({ ...spec, mode: 'uninject' }) });
    t.equal(
      (parse(kept.stdout) as Obj).metadata.annotations['kustomize.toolkit.fluxcd.io/force'],
      'disabled',
      "another value is the user's: kept",
    );
    const removed = run(optOutJob(injected.stdout), { functionConfig: config({ ...spec, removeWhenSkipped: true }) });
    t.notOk((parse(removed.stdout) as Obj).metadata.annotations, 'removeWhenSkipped removes it too');
  },
);

/** A Job's injected text with its pod opting out by annotation. */
function optOutJob(text: string): string {
  const out = text.replace(/( {6}annotations:\n)/, '$1        sidecar.istio.io/inject: "false"\n');
  if (out === text) throw new Error('test input has no pod annotations block');
  return out;
}

t.test(
  "#8: a status listing the user's container with an overrides record of it is refused unless re-injection proves it",
  async (t) => {
    // The record claims `app` was patched by the template (as grpc-simple patches the app), but the sidecar
    // template does not touch it: injecting the recorded original does not give the container back.
    const lying = LYING_STATUS.replace('"volumes":["data"]', '"volumes":null').replace(
      '        sidecar.istio.io/status:',
      `        proxy.istio.io/overrides: '{"containers":[{"name":"app","image":"app:0"}]}'\n        sidecar.istio.io/status:`,
    );
    const out = run(lying, { functionConfig: config({ mode: 'uninject' }) });
    t.equal(out.exitCode, 1, 'error');
    const err = out.results.find((r) => r.severity === 'error')!;
    t.match(
      err.message,
      /sidecar\.istio\.io\/status lists container "app" as injected, and injecting the original that proxy\.istio\.io\/overrides records does not give it back/,
    );
    t.equal(err.field?.path, 'spec.template.metadata.annotations[sidecar.istio.io/status]');
    t.notOk(
      out.results.some((r) => r.tags?.['meshinject.dev/outcome'] === 'uninjected'),
      'nothing reported uninjected',
    );
  },
);

t.test(
  'proxyless gRPC (grpc-simple): uninject restores the patched app container in place from proxy.istio.io/overrides',
  async (t) => {
    const input = `apiVersion: apps/v1
kind: Deployment
metadata: {name: grpc}
spec:
  template:
    metadata:
      annotations:
        inject.istio.io/templates: grpc-simple
    spec:
      containers:
      - name: before
        image: before:1
      - name: traffic
        image: traffic:1 # the app
        ports:
        - containerPort: 8080
      - name: after
        image: after:1
`;
    const cfg = { resultAnnotations: false };
    const injected = run(input, { functionConfig: config(cfg) });
    t.equal(injected.exitCode, 0);
    t.same(
      podOf(injected.stdout).spec.containers.map((c: Obj) => [c.name, (c.env ?? []).length > 0]),
      [
        ['before', true],
        ['traffic', true],
        ['after', true],
      ],
      'precondition: every app container patched',
    );
    const un = run(injected.stdout, { functionConfig: config({ ...cfg, mode: 'uninject' }) });
    t.equal(un.exitCode, 0, JSON.stringify(un.results));
    t.equal(un.stdout, input, 'byte for byte, each container in its place');
  },
);

t.test(
  'custom driver: the status record is checked against what its templates add, in uninject and re-injection',
  async (t) => {
    const custom = {
      templates: {
        sidecar:
          'spec:\n  containers:\n  - name: shipper\n    image: shipper:1\n  volumes:\n  - name: shipper-buffer\n    emptyDir: {}\n',
      },
    };
    const customConfig = (extra: Obj = {}) => config({ mesh: 'custom', resultAnnotations: false, custom, ...extra });
    const injected = run(APP, { functionConfig: customConfig() });
    t.equal(injected.exitCode, 0);
    t.equal(
      run(injected.stdout, { functionConfig: customConfig({ mode: 'uninject' }) }).stdout,
      APP,
      'a true record: uninject gives the input back',
    );
    const status = (pod: Obj) => JSON.parse(pod.metadata.annotations['meshinject.dev/custom-status']) as Obj;
    const recorded = status(podOf(injected.stdout));
    const lie = (change: (s: Obj) => void) => {
      const s = structuredClone(recorded);
      change(s);
      return injected.stdout.replace(
        /meshinject\.dev\/custom-status: .*/,
        `meshinject.dev/custom-status: '${JSON.stringify(s)}'`,
      );
    };
    for (const [what, text, message] of [
      [
        "the user's container",
        lie((s) => s.containers.push('web')),
        /meshinject\.dev\/custom-status lists container "web" as injected, but no template \(sidecar\) adds a container of that name: refusing to remove it/,
      ],
      ["the user's volume", lie((s) => s.volumes.push('data')), /lists volume "data" as injected/],
      ["the user's annotation", lie((s) => s.annotations.push('team')), /lists annotation "team" as injected/],
      [
        "the user's container, with a template no longer defined",
        lie((s) => {
          s.templates = ['gone'];
          s.containers.push('web');
        }),
        /lists container "web" as injected, but no template \(sidecar\) adds/,
      ],
    ] as const) {
      for (const mode of ['uninject', 'inject']) {
        const out = run(text, { functionConfig: customConfig({ mode }) });
        t.equal(out.exitCode, 1, `${what}, ${mode}: error`);
        const err = out.results.find((r) => r.severity === 'error')!;
        t.match(err?.message, message, `${what}, ${mode}: the message names the item`);
        t.equal(
          err?.field?.path,
          'spec.template.metadata.annotations[meshinject.dev/custom-status]',
          `${what}, ${mode}: the field`,
        );
      }
    }
  },
);
