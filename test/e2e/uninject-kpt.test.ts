// End to end: uninject (#9 §5) under the real `kpt fn render --allow-exec`, with bin/meshinject.js as the
// Kptfile's `exec:` mutator. A package is rendered once with a config that injects nothing (kpt's own
// formatting of the files, the baseline), then injected, then rendered with `spec.mode: uninject`: the files
// must come back to the baseline byte for byte, and a second uninject render changes nothing.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, makeTempDir, runTool } from '../helpers/e2e.ts';

const config = (spec: string) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: mesh
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  mesh: istio
  resultAnnotations: false
${spec}`;

const app = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
      annotations:
        team: storefront # owner
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 8080
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
  namespace: shop
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: report
            image: busybox:1.36
`;

t.test('kpt fn render: inject, then spec.mode: uninject gives the files back', async (t) => {
  const tmp = makeTempDir('uninject-kpt');
  t.teardown(tmp.cleanup);
  const pkg = join(tmp.dir, 'pkg');
  mkdirSync(pkg);
  writeFileSync(
    join(pkg, 'Kptfile'),
    `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n    - exec: ${BIN}\n      configPath: injection.yaml\n`,
  );
  writeFileSync(join(pkg, 'app.yaml'), app);
  const render = () => runTool('kpt', ['fn', 'render', pkg, '--allow-exec']);
  const file = () => readFileSync(join(pkg, 'app.yaml'), 'utf8');

  writeFileSync(join(pkg, 'injection.yaml'), config('  policy: disabled\n'));
  const baseline = render();
  t.equal(baseline.status, 0, baseline.stderr);
  const before = file();
  t.notMatch(before, /istio-proxy/, 'policy disabled: nothing injected');

  writeFileSync(join(pkg, 'injection.yaml'), config('  policy: enabled\n'));
  const injected = render();
  t.equal(injected.status, 0, injected.stderr);
  const after = file();
  t.equal(after.match(/name: istio-proxy/g)?.length, 2, 'both workloads injected');
  t.match(after, /team: storefront # owner/, 'the comment survives injection');

  writeFileSync(join(pkg, 'injection.yaml'), config('  mode: uninject\n'));
  const removed = render();
  t.equal(removed.status, 0, removed.stderr);
  t.equal(file(), before, 'uninject gives back the files byte for byte');
  const again = render();
  t.equal(again.status, 0, again.stderr);
  t.equal(file(), before, 'a second uninject render changes nothing');
});
