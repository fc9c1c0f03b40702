import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../../src/run.ts';
import { deployment as fixtureDeployment } from '../helpers/fixtures.ts';

const deployment = (name: string, extra = '') => fixtureDeployment(name, { noSelector: true, templateExtra: extra });

const config = (spec: string) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: c}
spec:
${spec}`;

t.test('a skipped workload that already carries a sidecar gets a warning, and is left as it is', async (t) => {
  const injected = run(deployment('web')).stdout;
  const out = run(injected, { functionConfig: config('  policy: disabled\n') });
  t.equal(out.exitCode, 0);
  t.ok(
    out.results.some(
      (r) => r.severity === 'warning' && /already injected \(sidecar\.istio\.io\/status\)/.test(r.message),
    ),
  );
  t.match(out.stdout, /name: istio-proxy/, 'not removed');
  t.match(out.stdout, /meshinject\.dev\/injection: skipped \(policy-disabled\)/);
});

t.test('resultAnnotations: false leaves skipped workloads byte-identical', async (t) => {
  const input = deployment('web', '\n      annotations: {sidecar.istio.io/inject: "false"}');
  const out = run(input, { functionConfig: config('  resultAnnotations: false\n') });
  t.equal(out.stdout, input);
  t.equal(out.results.length, 1);
  t.match(out.results[0]!.message, /skipped \(annotation-false\)/);
});

t.test('local-config objects (Kptfile, function configs) are never injected', async (t) => {
  const kptfn = deployment('tool').replace(
    '  namespace: shop\n',
    '  namespace: shop\n  annotations:\n    config.kubernetes.io/local-config: "true"\n',
  );
  const out = run(`${kptfn}---\n${deployment('web')}`);
  const docs = parseAllDocuments(out.stdout).map((d) => d.toJS());
  t.notMatch(JSON.stringify(docs[0]), /istio-proxy/);
  t.match(JSON.stringify(docs[1]), /istio-proxy/);
  t.equal(out.results.length, 1, 'one result: the workload');
});

t.test('an error in one workload leaves every resource unchanged and exits 1', async (t) => {
  const bad = deployment('bad', '\n      annotations: {traffic.sidecar.istio.io/includeInboundPorts: "x"}');
  const input = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${[deployment('web'), bad]
    .map((d) => `- ${d.trimEnd().replace(/\n/g, '\n  ')}\n`)
    .join('')}`;
  const out = run(input);
  t.equal(out.exitCode, 1);
  t.equal(out.stdout.slice(0, input.length), input, 'items unchanged, results appended');
  const rl = parse(out.stdout);
  t.ok(
    rl.results.some(
      (r: { severity: string; message: string }) => r.severity === 'error' && /includeInboundPorts/.test(r.message),
    ),
  );
  t.match(out.stderr, /\[error\] apps\/v1\/Deployment\/shop\/bad/);
});

t.test('the same input and config always give the same bytes', async (t) => {
  const input = `${deployment('a')}---\n${deployment('b')}`;
  const first = run(input).stdout;
  for (let i = 0; i < 3; i++) t.equal(run(input).stdout, first);
  t.notMatch(first, /\d{4}-\d\d-\d\dT/, 'no timestamps');
});

t.test('re-injecting under another revision, proxy image or sidecar mode equals a fresh injection', async (t) => {
  const input = `${deployment('a')}---\n${deployment('b', '\n      annotations: {prometheus.io/scrape: "true", prometheus.io/port: "9090"}')}`;
  const configs = [
    config('  nativeSidecars: true\n  istio:\n    revision: canary\n    values: {global: {tag: 1.30.0}}\n'),
    config('  istio:\n    values: {global: {tag: 1.31.0}}\n'),
    config('  nativeSidecars: true\n  istio:\n    values: {global: {tag: 1.31.0}}\n'),
  ];
  for (const from of configs) {
    for (const to of configs) {
      if (from === to) continue;
      const first = run(input, { functionConfig: from });
      const again = run(first.stdout, { functionConfig: to });
      t.equal(
        again.stdout,
        run(input, { functionConfig: to }).stdout,
        `${configs.indexOf(from)} -> ${configs.indexOf(to)}`,
      );
      // and uninject after the re-injection gives back the input, byte for byte (the companion record's
      // texts, the flow maps here, come back although the second injection wrote other values beside them)
      const quiet = (c: string) => `${c}  resultAnnotations: false\n`;
      const twice = run(run(input, { functionConfig: quiet(from) }).stdout, { functionConfig: quiet(to) });
      t.equal(
        run(twice.stdout, { functionConfig: `${quiet(to)}  mode: uninject\n` }).stdout,
        input,
        `${configs.indexOf(from)} -> ${configs.indexOf(to)} -> uninjected`,
      );
    }
  }
});

const cronJob = (podAnnotations: string, jobAnnotations = '') => `apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
  namespace: shop
spec:
  schedule: "0 * * * *"
  jobTemplate:
    metadata:${jobAnnotations || ' {}'}
    spec:
      template:
        metadata:
          labels: {app: report}${podAnnotations}
        spec:
          restartPolicy: OnFailure
          containers:
          - name: report
            image: report:1
`;

t.test('a CronJob is decided on its pod template, as the webhook sees its pods', async (t) => {
  const optOut = run(cronJob('\n          annotations: {sidecar.istio.io/inject: "false"}'));
  t.equal(optOut.exitCode, 0);
  t.notMatch(optOut.stdout, /istio-proxy/, 'the pod-level opt-out is honoured: Job pods must be able to complete');
  const result = optOut.results.find((r) => r.tags?.['meshinject.dev/outcome'] === 'skipped');
  t.equal(result?.tags?.['meshinject.dev/reason'], 'annotation-false');
  t.match(
    result?.message ?? '',
    /istioctl kube-inject reads spec\.jobTemplate\.metadata instead and would inject it/,
    'the result says where kube-inject would differ',
  );

  const jobLevel = run(cronJob('', '\n      annotations: {sidecar.istio.io/inject: "false"}'));
  t.match(
    jobLevel.stdout,
    /istio-proxy/,
    'an opt-out on jobTemplate.metadata does not reach the pods, so the webhook injects',
  );
  t.match(
    jobLevel.results.find((r) => r.tags)?.message ?? '',
    /kube-inject reads spec\.jobTemplate\.metadata instead and would skip it/,
  );

  const plain = run(cronJob(''));
  t.notMatch(plain.results.find((r) => r.tags)?.message ?? '', /kube-inject/, 'no note when both readings agree');
});

t.test('an unknown namespace under a namespaceSelector is reported once for the run, not per workload', async (t) => {
  const input = ['a', 'b', 'c'].map((n) => deployment(n).replace('namespace: shop', 'namespace: ghost')).join('---\n');
  const out = run(input, { functionConfig: config('  namespaceSelector: {matchLabels: {mesh: "on"}}\n') });
  t.equal(out.exitCode, 0);
  const perWorkload = out.results.filter((r) => r.resourceRef);
  t.equal(perWorkload.length, 3, 'one result per workload');
  t.ok(
    perWorkload.every(
      (r) => r.severity === 'warning' && r.tags?.['meshinject.dev/reason'] === 'namespace-not-selected',
    ),
  );
  const runLevel = out.results.filter((r) => !r.resourceRef);
  t.equal(runLevel.length, 1);
  t.match(
    runLevel[0]!.message,
    /^namespace ghost is neither a Namespace object in the input nor listed in spec\.namespaces; .*\(3 workloads skipped on that basis\)$/,
  );
});

t.test(
  'a spec.namespaces entry shadowed by a Namespace object of the same name is a warning naming both',
  async (t) => {
    const ns = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {mesh: "on"}\n---\n';
    const out = run(ns + deployment('web'), {
      functionConfig: config(
        '  namespaceSelector: {matchLabels: {mesh: "on"}}\n  namespaces:\n  - name: shop\n    labels: {mesh: "off"}\n',
      ),
    });
    t.match(out.stdout, /istio-proxy/, 'the Namespace object in the input wins');
    const w = out.results.find((r) => r.severity === 'warning' && !r.resourceRef);
    t.match(w?.message ?? '', /Namespace shop is both an object in the input and an entry of spec\.namespaces/);
  },
);

t.test('an invalid pod-template annotation is reported with a field path from the resource root', async (t) => {
  const out = run(deployment('web', '\n      annotations: {traffic.sidecar.istio.io/excludeOutboundIPRanges: "*"}'));
  t.equal(out.exitCode, 1);
  const e = out.results.find((r) => r.severity === 'error');
  t.equal(e?.field?.path, 'spec.template.metadata.annotations[traffic.sidecar.istio.io/excludeOutboundIPRanges]');
  const cron = run(cronJob('', '\n      annotations: {traffic.sidecar.istio.io/excludeOutboundIPRanges: "*"}'));
  t.equal(
    cron.results.find((r) => r.severity === 'error')?.field?.path,
    'spec.jobTemplate.metadata.annotations[traffic.sidecar.istio.io/excludeOutboundIPRanges]',
    "a CronJob's injection metadata lives on the job template",
  );
});

t.test('a containerPort that is not a port number is an error naming the field', async (t) => {
  for (const port of ['.inf', '-1', '70000', '80.5']) {
    const out = run(
      deployment('web').replace(
        '        image: web:1\n',
        `        image: web:1\n        ports: [{containerPort: ${port}}]\n`,
      ),
    );
    t.equal(out.exitCode, 1, `${port}: exit 1`);
    t.match(
      out.stderr,
      /spec\.template\.spec\.containers\[0\]\.ports\[0\]\.containerPort must be a port number from 1 to 65535/,
      `${port}: named`,
    );
  }
});
