import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../src/run.ts';

const deployment = (name: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: shop
spec:
  template:
    metadata:
      labels: {app: ${name}}${extra}
    spec:
      containers:
      - name: ${name}
        image: ${name}:1
`;

const config = (spec: string) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: c}
spec:
${spec}`;

t.test('a skipped workload that already carries a sidecar gets a warning, and is left as it is', async (t) => {
  const injected = run(deployment('web')).stdout;
  const out = run(injected, { functionConfig: config('  policy: disabled\n') });
  t.equal(out.exitCode, 0);
  t.ok(out.results.some((r) => r.severity === 'warning' && /already injected \(sidecar\.istio\.io\/status\)/.test(r.message)));
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
  const kptfn = deployment('tool').replace('  namespace: shop\n', '  namespace: shop\n  annotations:\n    config.kubernetes.io/local-config: "true"\n');
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
  t.ok(rl.results.some((r: { severity: string; message: string }) => r.severity === 'error' && /includeInboundPorts/.test(r.message)));
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
      t.equal(again.stdout, run(input, { functionConfig: to }).stdout, `${configs.indexOf(from)} -> ${configs.indexOf(to)}`);
    }
  }
});
