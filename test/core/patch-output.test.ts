// `--output patches` (issue #23, item 6; istio/istio#38966): a kustomize Component whose patches apply the injection
// to the input. Each case renders the input plus that Component with the real `kubectl kustomize` and compares the
// result, as data (resources by identity, YAML read as kustomize reads it), with meshinject's injected output.
import t, { type Test } from 'tap';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const readText = (path: string): string => readFileSync(path, 'utf8');
import { parseAllDocuments } from 'yaml';
import { ROOT, makeTempDir, runCli, runTool, workspace, type Obj } from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const REAL_WORLD = corpus('real-world');

const hasKubectl = runTool('sh', ['-c', 'command -v kubectl']).status === 0;

/**
 * `v` without map entries holding `[]` or `{}`: the Component empties a list or map uninject removes item by item
 * (so an item an upstream adds later stays), and Kubernetes reads an empty one as none.
 */
function withoutEmptyLists(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmptyLists);
  if (typeof v !== 'object' || v === null) return v;
  const empty = (x: unknown) => typeof x === 'object' && x !== null && Object.keys(x).length === 0;
  return Object.fromEntries(
    Object.entries(v)
      .map(([k, x]) => [k, withoutEmptyLists(x)] as const)
      .filter(([, x]) => !empty(x)),
  );
}

/** Resources of a YAML stream by `kind/namespace/name`, values as kustomize reads them (YAML 1.1). */
function byIdentity(text: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const d of parseAllDocuments(text, { version: '1.1', merge: true })) {
    const o = withoutEmptyLists(d.toJS()) as Obj | null;
    if (!o) continue;
    const m = (o.metadata ?? {}) as Obj;
    out.set(`${String(o.kind)}/${String(m.namespace ?? '')}/${String(m.name)}`, o);
  }
  return out;
}

/**
 * Runs meshinject twice on `files` (in a kustomization directory): once `-o patches` into `mesh/`, once plainly;
 * builds the directory (resources + the Component) with `kubectl kustomize` and checks it equals the injection.
 */
function roundTrip(
  t: Test,
  files: Record<string, string>,
  args: string[] = [],
): { component: string; injected: string } {
  const names = Object.keys(files).filter((f) => !f.startsWith('cfg'));
  const dir = workspace(t, {
    ...files,
    'kustomization.yaml': `resources: [${names.join(', ')}]\ncomponents: [mesh]\n`,
  });
  const patches = runCli([...args, '-o', 'patches', ...names], { cwd: dir });
  t.equal(patches.status, 0, patches.stderr);
  mkdirSync(join(dir, 'mesh'));
  writeFileSync(join(dir, 'mesh/kustomization.yaml'), patches.stdout);
  const injected = runCli([...args, ...names], { cwd: dir });
  t.equal(injected.status, 0, injected.stderr);
  const built = runTool('kubectl', ['kustomize', dir]);
  t.equal(built.status, 0, `kubectl kustomize builds input + Component: ${built.stderr}`);
  const want = byIdentity(injected.stdout);
  const got = byIdentity(built.stdout);
  t.same([...got.keys()].sort(), [...want.keys()].sort(), 'the same resources');
  for (const [k, v] of want) t.same(got.get(k), v, `${k}: kustomize(input + Component) == meshinject's output`);
  return { component: patches.stdout, injected: injected.stdout };
}

t.test(
  'the bundled shop (Istio, classic and native sidecars, a CronJob, skipped workloads)',
  { skip: !hasKubectl && 'kubectl is not installed' },
  async (t) => {
    const shop = join(ROOT, 'examples/shop');
    const files: Record<string, string> = {};
    for (const f of ['namespaces.yaml', 'storefront.yaml', 'data.yaml', 'ops.yaml', 'backoffice.yaml'])
      files[f] = readText(join(shop, f));
    const cfg = readText(join(shop, 'injection.yaml'));
    roundTrip(t, { ...files, 'cfg.yaml': cfg }, ['-c', 'cfg.yaml']);
    roundTrip(t, { ...files, 'cfg.yaml': cfg.replace('nativeSidecars: true', 'nativeSidecars: false') }, [
      '-c',
      'cfg.yaml',
    ]);
  },
);

t.test(
  'the real-world apps of the test data, one kustomization per app directory',
  needs(REAL_WORLD, !hasKubectl && 'kubectl is not installed'),
  async (t) => {
    const root = REAL_WORLD.path ?? '';
    const apps = [
      'bookinfo',
      'online-boutique',
      'podinfo/bases/database',
      'podinfo/bases/cache',
      'podinfo/bases/frontend',
      'podinfo/bases/backend',
    ];
    for (const app of apps) {
      const files: Record<string, string> = {};
      for (const f of readdirSync(join(root, app)))
        if (/\.ya?ml$/.test(f) && f !== 'kustomization.yaml') files[f] = readText(join(root, app, f));
      t.ok(Object.keys(files).length > 0, `${app}: ${Object.keys(files).length} files`);
      t.test(app, async (t) => {
        roundTrip(t, files);
      });
    }
    t.test('podinfo/production.rendered.yaml', async (t) => {
      roundTrip(t, { 'app.yaml': readText(join(root, 'podinfo/production.rendered.yaml')) });
    });
  },
);

t.test(
  'lists the injection reorders or extends: an existing init container, a proxy held first, probes rewritten',
  { skip: !hasKubectl && 'kubectl is not installed' },
  async (t) => {
    const app = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
  annotations: {"example.com/a~b": "x"}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
      annotations: {proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'}
    spec:
      initContainers:
      - {name: migrate, image: migrate:1}
      containers:
      - name: api
        image: api:1
        ports: [{containerPort: 8080, name: http}]
        readinessProbe: {httpGet: {path: /ready, port: 8080}}
      - {name: cache, image: redis:7}
      volumes:
      - {name: data, emptyDir: {}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: once, image: once:1}]
`;
    const { component } = roundTrip(t, { 'app.yaml': app });
    t.match(
      component,
      /- op: add\n\s*path: \/spec\/template\/spec\/containers\/0\n\s*value:\n\s*name: istio-proxy\n/,
      'the held proxy is inserted first, the app containers kept in place',
    );
    t.notMatch(
      component,
      /path: \/spec\/template\/spec\/(containers|initContainers|volumes)\n/,
      'no list replaced or added wholesale',
    );
    t.match(
      component,
      /- op: test\n\s*path: \/spec\/template\/spec\/containers\/1\/name\n\s*value: api\n/,
      'an edit of a kept container checks its name first',
    );
    t.match(component, /^kind: Component$/m);
  },
);

t.test(
  'uninject as patches: removals from named lists',
  { skip: !hasKubectl && 'kubectl is not installed' },
  async (t) => {
    const shop = join(ROOT, 'examples/shop');
    const tmp = makeTempDir('patches-uninject');
    t.teardown(tmp.cleanup);
    const injected = runCli([
      '-c',
      join(shop, 'injection.yaml'),
      join(shop, 'storefront.yaml'),
      join(shop, 'namespaces.yaml'),
    ]);
    t.equal(injected.status, 0, injected.stderr);
    const cfg =
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec: {mode: uninject, resultAnnotations: false}\n';
    roundTrip(t, { 'cfg.yaml': cfg, 'injected.yaml': injected.stdout }, ['-c', 'cfg.yaml']);
  },
);

t.test(
  'nothing to change: an empty Component that kustomize accepts',
  { skip: !hasKubectl && 'kubectl is not installed' },
  async (t) => {
    const cfg =
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec: {policy: disabled, resultAnnotations: false}\n';
    const svc = 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}]\n';
    const { component } = roundTrip(t, { 'cfg.yaml': cfg, 'svc.yaml': svc }, ['-c', 'cfg.yaml']);
    t.match(component, /^patches: \[\]$/m);
  },
);

t.test('refusals: a resource twice in the input, -o patches on another command', async (t) => {
  const dep =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: web:1}]\n';
  const dir = workspace(t, { 'a.yaml': dep, 'b.yaml': dep.replace('web:1', 'web:2') });
  // Two different resources of one identity are an error result of the run (issue #20: one identity, one resource).
  const r = runCli(['-o', 'patches', 'a.yaml', 'b.yaml'], { cwd: dir });
  t.equal(r.status, 1);
  t.equal(r.stdout, '');
  t.match(
    r.stderr,
    /Deployment "shop\/web" \(group apps\) appears twice with different content, at a\.yaml document 1 and b\.yaml document 1/,
  );
  // Identical copies are only a warning for the run, but a patch could not name which one it changes.
  const same = runCli(['-o', 'patches', 'a.yaml', 'a.yaml'], { cwd: dir });
  t.equal(same.status, 2);
  t.equal(same.stdout, '');
  t.match(same.stderr, /Deployment shop\/web appears twice in the input/);
  const ex = runCli(['explain', '-o', 'patches', 'a.yaml'], { cwd: dir });
  t.equal(ex.status, 2);
  t.match(ex.stderr, /--output patches is for meshinject \(inject\)/);
});

t.test(
  'NEL, LS and PS in injected values: escaped in the Component as in every output, read back exactly',
  async (t) => {
    // Istio copies the app's probes into the proxy's ISTIO_KUBE_APP_PROBERS (JSON), so the probe path reaches the
    // Component. (kustomize's own output writes these characters raw, so its build is not compared here.)
    for (const c of ['\u0085', '\u2028', '\u2029']) {
      const app = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: api:1
        readinessProbe: {httpGet: {path: "/ready${c}x", port: 8080}}
`;
      const dir = workspace(t, { 'app.yaml': app });
      const r = runCli(['-o', 'patches', 'app.yaml'], { cwd: dir });
      t.equal(r.status, 0, r.stderr);
      const name = `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
      t.notOk(/[\u0085\u2028\u2029]/.test(r.stdout), `${name} is not written raw`);
      const patches = (parseAllDocuments(r.stdout, { version: '1.1' })[0]!.toJS() as Obj).patches as Obj[];
      const values = JSON.stringify(
        patches.map((p) => parseAllDocuments(String(p.patch), { version: '1.1' })[0]!.toJS()),
      );
      t.ok(
        values.includes(JSON.stringify(`/ready${c}x`).slice(1, -1)),
        `${name}: a YAML 1.1 reader reads it back inside the patch`,
      );
    }
  },
);
