// The Linkerd driver end to end through `run` (bytes in, bytes out): namespace decisions, Namespace and
// Service annotations, CronJob placement, error results for Linkerd's refusals, untouched resources.
import t from 'tap';
import { parse } from 'yaml';
import { run } from '../../../src/run.ts';

const config = (linkerd: string, extra = '') => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: mesh}
spec:
  mesh: linkerd
  resultAnnotations: false
${extra}  linkerd:
${linkerd}`;

const input = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations:
    linkerd.io/inject: disabled
---
apiVersion: v1
kind: Namespace
metadata:
  name: blog
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: blog
spec:
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: api:1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: blog
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: web:1
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
  namespace: blog
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: report
            image: report:1
`;

const docs = (stdout: string) =>
  stdout
    .split(/^---$/m)
    .map((d) => parse(d))
    .filter((d) => d);

t.test(
  'annotation-only: namespace opt-out honoured, Namespace/Service annotated, CronJob pod template annotated',
  async (t) => {
    const out = run(input, {
      functionConfig: config(`    overrideAnnotations:\n      config.linkerd.io/opaque-ports: "5432"\n`),
    });
    t.equal(out.exitCode, 0, out.stderr);
    const [shop, blog, svc, api, web, cron] = docs(out.stdout);
    t.same(shop.metadata.annotations, { 'linkerd.io/inject': 'disabled' }, 'a namespace that opted out stays so');
    t.same(blog.metadata.annotations, { 'config.linkerd.io/opaque-ports': '5432', 'linkerd.io/inject': 'enabled' });
    t.same(svc.metadata.annotations, { 'config.linkerd.io/opaque-ports': '5432' });
    t.notOk(api.spec.template.metadata.annotations, 'the Deployment in the opted-out namespace is skipped');
    t.same(web.spec.template.metadata.annotations, {
      'config.linkerd.io/opaque-ports': '5432',
      'linkerd.io/inject': 'enabled',
    });
    t.same(
      cron.spec.jobTemplate.spec.template.metadata.annotations,
      { 'config.linkerd.io/opaque-ports': '5432', 'linkerd.io/inject': 'enabled' },
      "the CronJob's pod template, not spec.jobTemplate.metadata",
    );
    t.notOk(cron.spec.jobTemplate.metadata, 'spec.jobTemplate.metadata is not created');
    const skipped = out.results.find((r) => r.resourceRef?.name === 'api');
    t.equal(skipped?.tags?.['meshinject.dev/reason'], 'namespace-annotation-disabled');
    const annotated = out.results.find((r) => r.resourceRef?.kind === 'Namespace' && r.resourceRef.name === 'blog');
    t.equal(annotated?.tags?.['meshinject.dev/outcome'], 'annotated');
    const again = run(out.stdout, {
      functionConfig: config(`    overrideAnnotations:\n      config.linkerd.io/opaque-ports: "5432"\n`),
    });
    t.equal(again.stdout, out.stdout, 'a second run changes nothing');
  },
);

t.test('refusals are error results naming the resource and field; other workloads still injected', async (t) => {
  const hostNet = `apiVersion: v1
kind: Pod
metadata: {name: node-agent, namespace: blog}
spec:
  hostNetwork: true
  containers:
  - {name: agent, image: agent:1}
---
apiVersion: v1
kind: Pod
metadata: {name: ok, namespace: blog}
spec:
  containers:
  - {name: app, image: app:1}
`;
  const rl = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${hostNet
    .split('---\n')
    .map((d) =>
      d
        .trimEnd()
        .split('\n')
        .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
        .join('\n'),
    )
    .join('\n')}\n`;
  const out = run(rl, {
    functionConfig: config(`    manual: true\n    values:\n      identityTrustAnchorsPEM: "x"\n`),
  });
  t.equal(out.exitCode, 1);
  const err = out.results.find((r) => r.severity === 'error');
  t.match(err, {
    message: /Pod "blog\/node-agent": hostNetwork is enabled/,
    resourceRef: { name: 'node-agent' },
    field: { path: 'spec.hostNetwork' },
  });
  t.ok(
    out.results.some((r) => r.resourceRef?.name === 'ok' && r.tags?.['meshinject.dev/outcome'] === 'injected'),
    'the other pod is injected',
  );
});

t.test(
  'no annotation on the pod or a known namespace: the policy decides (disabled is the proxy injector reading)',
  async (t) => {
    const out = run(
      `apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: elsewhere}\nspec:\n  containers:\n  - {name: app, image: app:1}\n`,
      { functionConfig: config('    manual: false\n', '  policy: disabled\n') },
    );
    t.equal(out.exitCode, 0);
    t.match(out.results[0], { severity: 'info', tags: { 'meshinject.dev/reason': 'policy-disabled' } });
    t.match(out.results[0]!.message, /no linkerd\.io\/inject annotation on the pod template or its namespace decides/);
  },
);
