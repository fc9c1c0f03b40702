// Directory inputs write manifests only (issue #23, item 1): a package's kustomization/Kptfile files are not
// inputs; local-config documents and meshinject's own config are read (a Namespace's labels, the config) but not
// written; each file or document left out is an info result. Runs the built CLI as a user would (non-TTY stderr).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runCli, workspace, type Obj } from '../helpers/e2e.ts';

const NS = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {mesh: "on"}\n';
const APP = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: web:1}
`;
const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: mesh}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n';
const LOCAL_CM =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn-input\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata: {a: b}\n';
const KUSTOMIZATION =
  'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [ns.yaml, app.yaml]\n';
const KPTFILE = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: pkg}\n';

const kinds = (text: string): string[] =>
  parseAllDocuments(text)
    .map((d) => (d.toJS() as Obj | null)?.kind as string)
    .filter(Boolean);
const PACKAGE = {
  'pkg/cfg.yaml': CONFIG,
  'pkg/ns.yaml': NS,
  'pkg/app.yaml': APP,
  'pkg/fn-input.yaml': LOCAL_CM,
  'pkg/kustomization.yaml': KUSTOMIZATION,
  'pkg/sub/kustomization.yml': KUSTOMIZATION,
  'pkg/Kustomization': KUSTOMIZATION,
  'pkg/Kptfile': KPTFILE,
};

t.test(
  'a directory: only what the cluster applies is written; the config and Namespace labels are still read',
  async (t) => {
    const dir = workspace(t, PACKAGE);
    const r = runCli(['-c', 'pkg/cfg.yaml', 'pkg'], { cwd: dir });
    t.equal(r.status, 0, r.stderr);
    t.same(
      kinds(r.stdout).sort(),
      ['Deployment', 'Namespace'],
      'no SidecarInjection, ConfigMap (local-config), Kustomization or Kptfile',
    );
    t.match(r.stdout, /istio-proxy/, "the Namespace's label (read from the directory) selected the Deployment");
    t.notMatch(
      r.stdout,
      /kustomize\.config\.k8s\.io|kpt\.dev|meshinject\.dev\/v1alpha1/,
      'nothing of the package files',
    );
  },
);

t.test('each file or document left out is an info result naming it', async (t) => {
  const dir = workspace(t, PACKAGE);
  const r = runCli(['-c', 'pkg/cfg.yaml', 'pkg'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  const info = r.stderr.split('\n').filter((l) => l.startsWith('[info]') && /left out|not written/.test(l));
  for (const f of ['pkg/kustomization.yaml', 'pkg/sub/kustomization.yml', 'pkg/Kustomization', 'pkg/Kptfile']) {
    t.ok(
      info.some((l) => l.includes(`${f}: not an input`)),
      `${f} reported`,
    );
  }
  t.ok(
    info.some((l) => l.includes('v1/ConfigMap/fn-input') && l.includes('local-config')),
    'the local-config ConfigMap reported',
  );
  t.ok(
    info.some((l) => l.includes('SidecarInjection/mesh') && l.includes('(pkg/cfg.yaml)')),
    'the SidecarInjection reported with its file',
  );
  t.equal(info.length, 6, 'one result per file or document left out, nothing else');
});

t.test('the README pattern on the bundled shop: no SidecarInjection, no Kustomization in the output', async (t) => {
  const r = runCli(['-c', 'examples/shop/injection.yaml', 'examples/shop']);
  t.equal(r.status, 0, r.stderr);
  const k = kinds(r.stdout);
  t.notOk(k.includes('SidecarInjection') || k.includes('Kustomization'), `kinds: ${k.join(', ')}`);
  t.ok(k.includes('Deployment') && k.includes('Namespace'), 'the manifests are there');
});

t.test('files named one by one are written as given (only directory inputs are manifests-only)', async (t) => {
  const dir = workspace(t, PACKAGE);
  const r = runCli(['-c', 'pkg/cfg.yaml', 'pkg/ns.yaml', 'pkg/fn-input.yaml', 'pkg/app.yaml'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.same(kinds(r.stdout), ['Namespace', 'ConfigMap', 'Deployment']);
});

t.test('a local-config value other than "true" is a manifest', async (t) => {
  const dir = workspace(t, { 'd/cm.yaml': LOCAL_CM.replace('"true"', '"false"'), 'd/app.yaml': APP });
  const r = runCli(['d'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.same(kinds(r.stdout).sort(), ['ConfigMap', 'Deployment']);
});

t.test('a ResourceList keeps its contract: local-config items come back (kpt expects them)', async (t) => {
  const list = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- ${LOCAL_CM.trimEnd().split('\n').join('\n  ')}
- ${APP.trimEnd().split('\n').join('\n  ')}
`;
  const r = runCli([], { input: list });
  t.equal(r.status, 0, r.stderr);
  const out = parseAllDocuments(r.stdout)[0]!.toJS() as { items: Obj[] };
  t.same(
    out.items.map((i) => i.kind),
    ['ConfigMap', 'Deployment'],
  );
});

t.test('diff --in-place on a directory leaves the config and package files as they were', async (t) => {
  const dir = workspace(t, PACKAGE);
  const r = runCli(['diff', '-i', '-c', 'pkg/cfg.yaml', 'pkg'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.equal(readFileSync(join(dir, 'pkg/cfg.yaml'), 'utf8'), CONFIG, 'the config file untouched');
  t.equal(readFileSync(join(dir, 'pkg/fn-input.yaml'), 'utf8'), LOCAL_CM, 'the local-config file untouched');
  t.equal(readFileSync(join(dir, 'pkg/kustomization.yaml'), 'utf8'), KUSTOMIZATION, 'the Kustomization untouched');
  t.match(readFileSync(join(dir, 'pkg/app.yaml'), 'utf8'), /istio-proxy/, 'the Deployment injected in place');
});
