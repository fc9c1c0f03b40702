// End to end: a ResourceList well over 1 MiB through the real binary over a pipe. Node's
// `process.exit()` cuts piped stdout at 64 KiB, and kpt then deletes the missing files
// (krm-ecosystem.md, hazard G1): every byte of every unchanged item must come out, and the injected
// items must be complete.
import t from 'tap';
import { parse } from 'yaml';
import { BIN, get, injectionProblems, runCli, runTool, splitItems, splitStream, type Obj } from '../helpers/e2e.ts';

// Injection costs ~10 ms of CPU per workload and multiplies a workload's size by ~10: 400 Deployments
// and 1500 Services make a > 1 MiB input and a ~4 MiB output without making the test slow.
const D = 400;
const S = 1500;

/** A Deployment and a Service per index, hand-formatted (comments, flow maps, quoting) so bytes matter. */
function deployment(i: number, indent: string): string {
  return [
    `apiVersion: apps/v1`,
    `kind: Deployment`,
    `metadata:`,
    `  name: app-${i} # app number ${i}`,
    `  namespace: ns-${i % 7}`,
    `  labels: {app: app-${i}, tier: "backend"}`,
    `spec:`,
    `  replicas: ${(i % 3) + 1}`,
    `  selector:`,
    `    matchLabels:`,
    `      app: app-${i}`,
    `  template:`,
    `    metadata:`,
    `      labels:`,
    `        app: app-${i}`,
    `    spec:`,
    `      containers:`,
    `      # the application container`,
    `      - name: app`,
    `        image: 'registry.example.com/app:${i}.0'`,
    `        ports:`,
    `        - containerPort: ${8000 + (i % 1000)}`,
    `        env:`,
    `        - {name: INDEX, value: "${i}"}`,
  ]
    .map((l, k) => (k === 0 ? l : `${indent}${l}`))
    .join('\n');
}

function service(i: number, indent: string): string {
  return [
    `apiVersion: v1`,
    `kind: Service`,
    `metadata:`,
    `  name: app-${i}`,
    `  namespace: ns-${i % 7}`,
    `  annotations:`,
    `    note: "service ${i}: keep   these   spaces"`,
    `    description: >-`,
    `      Service number ${i}, padded so that the list is large: ${'lorem ipsum '.repeat(20).trim()}`,
    `spec:`,
    `  selector: {app: app-${i}}`,
    `  ports:`,
    `    - port: 80     # hand-aligned comment`,
    `      targetPort: ${8000 + (i % 1000)}`,
  ]
    .map((l, k) => (k === 0 ? l : `${indent}${l}`))
    .join('\n');
}

t.test(`a ${D}-Deployment + ${S}-Service ResourceList (> 1 MiB) comes out complete`, async (t) => {
  const items: string[] = [];
  for (let i = 0; i < S; i++) {
    if (i < D) items.push(`- ${deployment(i, '  ')}\n`);
    items.push(`- ${service(i, '  ')}\n`);
  }
  const input = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${items.join('')}functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: function-input\n  data: {}\n`;
  t.ok(input.length > 1024 * 1024, `input is ${input.length} bytes`);
  const r = runCli([], { input });
  t.equal(r.status, 0, r.stderr.slice(0, 2000));
  t.ok(r.stdout.length > input.length, `output (${r.stdout.length} bytes) larger than the input`);
  const out = splitItems(r.stdout);
  t.equal(out.items.length, D + S, 'every item present');
  let servicesIntact = 0;
  let injectedOk = 0;
  const inputItems = splitItems(input).items;
  inputItems.forEach((itemIn, k) => {
    const itemOut = out.items[k]!;
    if (itemIn.value.kind === 'Service') {
      if (itemOut.text === itemIn.text) servicesIntact++;
      else t.fail(`Service item ${k} changed`, { found: itemOut.text, wanted: itemIn.text });
    } else {
      const problems = injectionProblems(itemOut.value, itemIn.value);
      if (problems.length === 0) injectedOk++;
      else t.fail(`Deployment item ${k}`, { problems });
    }
  });
  t.equal(servicesIntact, S, 'every Service byte for byte');
  t.equal(injectedOk, D, 'every Deployment injected, complete and valid');
  const whole = parse(r.stdout, { maxAliasCount: -1 }) as Obj;
  t.equal((whole.results as Obj[]).length, D, 'one result per Deployment; the document parses to its end');
  t.ok(r.stdout.endsWith('\n'), 'ends with a newline');
});

const K = 200;
t.test(`${K} Deployments + ${K} Services as a multi-document stream through kpt fn eval - --exec`, async (t) => {
  const docs: string[] = [];
  for (let i = 0; i < K; i++) docs.push(deployment(i, ''), service(i, ''));
  const input = `${docs.join('\n---\n')}\n`;
  const r = runTool('kpt', ['fn', 'eval', '-', '--exec', BIN, '-o', 'unwrap'], { input });
  t.equal(r.status, 0, r.stderr.slice(-2000));
  const out = splitStream(r.stdout).filter((d) => d.trim() !== '');
  t.equal(out.length, 2 * K, 'kpt wrote back every resource');
  const values = out.map((d) => parse(d) as Obj);
  const withProxy = values.filter((v) =>
    ((get(v, 'spec', 'template', 'spec', 'containers') ?? []) as Obj[]).some((c) => c.name === 'istio-proxy'),
  );
  t.equal(withProxy.length, K, 'every Deployment has istio-proxy after kpt');
  t.equal(values.filter((v) => v.kind === 'Service').length, K, 'every Service kept');
  t.ok(r.stdout.length > 1024 * 1024, `kpt output is ${r.stdout.length} bytes (far over 64 KiB)`);
});
