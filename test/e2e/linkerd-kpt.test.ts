// End to end: a small package injected with Linkerd by the real `kpt fn render --allow-exec`, running
// bin/meshinject.js as an `exec:` mutator (manual injection), and by the CLI (annotation-only). The package
// is written here by hand; the checks are what a Linkerd user looks at: the proxy as a native sidecar after
// linkerd-init, the identity volumes, Linkerd's annotations and labels, a valid Kubernetes object, the
// Namespace opted in, and a second render that changes nothing.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { BIN, makeTempDir, runCli, runTool, schemaError, type Obj } from '../helpers/e2e.ts';

const PEM = '-----BEGIN CERTIFICATE-----\\nMIIBwTCCAWagAwIBAgIQ\\n-----END CERTIFICATE-----\\n';
const injection = (manual: boolean) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: linkerd
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  mesh: linkerd
  linkerd:
    manual: ${manual}
    values:
      identityTrustAnchorsPEM: "${PEM}"
      proxy:
        image:
          version: stable-2.18.0
`;
const app = `apiVersion: v1
kind: Namespace
metadata:
  name: emojivoto
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: emojivoto
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: buoyantio/emojivoto-web:v11
        ports:
        - containerPort: 8080
`;

const docsOf = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d);
const names = (l: unknown) => (Array.isArray(l) ? l.map((c) => (c as Obj).name) : []);

t.test('kpt fn render: manual Linkerd injection as an exec mutator', async (t) => {
  const tmp = makeTempDir('meshinject-linkerd-kpt-');
  t.teardown(tmp.cleanup);
  const pkg = join(tmp.dir, 'pkg');
  mkdirSync(pkg);
  writeFileSync(
    join(pkg, 'Kptfile'),
    `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n    - exec: ${BIN}\n      configPath: injection.yaml\n`,
  );
  writeFileSync(join(pkg, 'injection.yaml'), injection(true));
  writeFileSync(join(pkg, 'app.yaml'), app);
  const first = runTool('kpt', ['fn', 'render', pkg, '--allow-exec']);
  t.equal(first.status, 0, first.stderr);
  const [ns, web] = docsOf(readFileSync(join(pkg, 'app.yaml'), 'utf8')) as [Obj, any];
  t.same((ns.metadata as Obj).annotations, { 'linkerd.io/inject': 'enabled' }, 'the Namespace is opted in');
  const tpl = web.spec.template;
  t.same(names(tpl.spec.initContainers), ['linkerd-init', 'linkerd-proxy']);
  t.equal(tpl.spec.initContainers[1].restartPolicy, 'Always');
  t.equal(tpl.spec.initContainers[1].image, 'cr.l5d.io/linkerd/proxy:stable-2.18.0');
  t.same(names(tpl.spec.containers), ['web']);
  t.same(names(tpl.spec.volumes), [
    'linkerd-proxy-init-xtables-lock',
    'linkerd-identity-end-entity',
    'linkerd-identity-token',
  ]);
  t.equal(tpl.metadata.annotations['linkerd.io/proxy-version'], 'stable-2.18.0');
  t.equal(tpl.metadata.labels['linkerd.io/proxy-deployment'], 'web');
  t.equal(web.metadata.annotations['meshinject.dev/injection'], 'injected (linkerd, manual, proxy stable-2.18.0)');
  t.equal(schemaError(web), undefined, 'a valid Deployment');
  const once = readFileSync(join(pkg, 'app.yaml'), 'utf8');
  const second = runTool('kpt', ['fn', 'render', pkg, '--allow-exec']);
  t.equal(second.status, 0, second.stderr);
  t.equal(readFileSync(join(pkg, 'app.yaml'), 'utf8'), once, 'a second render changes nothing');
});

t.test('CLI: annotation-only injection for clusters where the proxy injector runs', async (t) => {
  const tmp = makeTempDir('meshinject-linkerd-cli-');
  t.teardown(tmp.cleanup);
  writeFileSync(join(tmp.dir, 'injection.yaml'), injection(false));
  const out = runCli(['--config', join(tmp.dir, 'injection.yaml')], { input: app });
  t.equal(out.status, 0, out.stderr);
  const [, web] = docsOf(out.stdout) as [Obj, any];
  t.same(web.spec.template.metadata.annotations, { 'linkerd.io/inject': 'enabled' });
  t.same(web.spec.template.spec, (docsOf(app)[1] as any).spec.template.spec, 'the pod spec is untouched');
  t.match(out.stdout, /\n {6}labels: \{app: web\}\n/, 'untouched lines keep their flow style');
});
