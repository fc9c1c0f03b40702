/**
 * Issue #39, item 3 end to end: `spec.unknownNamespaces` with the real kpt (a Kptfile mutator, `exec:
 * meshinject` on PATH) and `kubectl kustomize` piped into meshinject, and the default namespace a runner
 * passes in the environment (HELM_NAMESPACE; ARGOCD_APP_NAMESPACE is test/e2e/argocd.test.ts's).
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workspace } from '../helpers/e2e.ts';
import { makeStandIns, runWith } from '../helpers/runners.ts';

const APP =
  'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments\n  namespace: payments\nspec:\n  selector: {matchLabels: {app: payments}}\n  template:\n    metadata: {labels: {app: payments}}\n    spec:\n      containers: [{name: payments, image: payments:1}]\n';
const config = (setting: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: mesh\n  annotations: {config.kubernetes.io/local-config: "true"}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n  unknownNamespaces: ${setting}\n`;
const KPTFILE =
  'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: payments\n  annotations: {config.kubernetes.io/local-config: "true"}\npipeline:\n  mutators:\n    - exec: meshinject\n      configPath: injection.yaml\n';

t.test('kpt fn render: error fails the render and writes nothing; assume-selected injects; warn skips', async (t) => {
  for (const [setting, status, injected] of [
    ['error', 1, false],
    ['assume-selected', 0, true],
    ['warn', 0, false],
  ] as const) {
    const dir = workspace(t, { 'pkg/Kptfile': KPTFILE, 'pkg/app.yaml': APP, 'pkg/injection.yaml': config(setting) });
    const s = makeStandIns(dir);
    const r = runWith('kpt', ['fn', 'render', 'pkg', '--allow-exec'], { cwd: dir, env: s.env });
    t.equal(r.status === 0 ? 0 : 1, status, `${setting}: kpt exits ${status ? 'non-zero' : '0'}\n${r.stderr}`);
    const after = readFileSync(join(dir, 'pkg/app.yaml'), 'utf8');
    t.equal(/istio-proxy/.test(after), injected, `${setting}: ${injected ? 'injected' : 'not injected'}`);
    if (setting === 'error') {
      t.equal(after, APP, 'error: app.yaml unchanged');
      t.match(r.stderr, /namespace payments is neither a Namespace object/, 'error: kpt shows the reason');
    }
  }
});

t.test(
  'kubectl kustomize | meshinject: the same three outcomes; HELM_NAMESPACE places a resource without a namespace',
  async (t) => {
    const dir = workspace(t, { 'overlay/kustomization.yaml': 'resources: [app.yaml]\n', 'overlay/app.yaml': APP });
    const s = makeStandIns(dir);
    const built = runWith('kubectl', ['kustomize', 'overlay'], { cwd: dir, env: s.env });
    t.equal(built.status, 0, built.stderr);
    for (const [setting, status] of [
      ['error', 1],
      ['assume-selected', 0],
      ['warn', 0],
    ] as const) {
      writeFileSync(join(dir, `${setting}.yaml`), config(setting));
      const r = runWith('meshinject', ['-c', `${setting}.yaml`], { cwd: dir, env: s.env, input: built.stdout });
      t.equal(r.status, status, `${setting}: exit ${status}\n${r.stderr}`);
      t.equal(
        /istio-proxy/.test(r.stdout),
        setting === 'assume-selected',
        `${setting}: injected only when assumed selected`,
      );
    }
    writeFileSync(
      join(dir, 'ns.yaml'),
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: mesh}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n  namespaces: [{name: payments, labels: {mesh: "on"}}]\n',
    );
    const unplaced = built.stdout.replace('  namespace: payments\n', '');
    const helm = runWith('meshinject', ['-c', 'ns.yaml'], {
      cwd: dir,
      env: { ...s.env, HELM_NAMESPACE: 'payments' },
      input: unplaced,
    });
    t.equal(helm.status, 0, helm.stderr);
    t.match(helm.stdout, /istio-proxy/, 'HELM_NAMESPACE=payments: decided as in payments, injected');
    const none = runWith('meshinject', ['-c', 'ns.yaml'], { cwd: dir, env: s.env, input: unplaced });
    t.notMatch(none.stdout, /istio-proxy/, 'without it: the default namespace, not selected');
  },
);
