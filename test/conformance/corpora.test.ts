import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { compareDocuments, normalizeDocument, parseYamlStream } from '../../scripts/conformance/normalize.ts';
import { canonicalQuantity } from '../../src/drivers/istio/quantity.ts';
import {
  buildResourceList,
  checkMinimums,
  ensureFreshBundle,
  runConformance,
  splitDocuments,
  summarize,
} from '../../scripts/conformance/runner.ts';
import { corpus as testData, needs, recordCases } from '../helpers/data.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ISTIO = testData('conformance/istio');
const LINKERD = testData('conformance/linkerd');
const KUMA = testData('conformance/kuma');

t.test('normalisation: Go round-trip artifacts and formatting do not matter', async (t) => {
  const golden = parseYamlStream(`apiVersion: apps/v1
kind: Deployment
metadata:
  creationTimestamp: null
  name: x
spec:
  strategy: {}
  template:
    metadata:
      annotations:
        sidecar.istio.io/status: '{"initContainers":null,"containers":["istio-proxy"],"revision":"default"}'
    spec:
      containers:
      - name: istio-proxy
        resources:
          limits:
            cpu: "2"
            memory: 1Gi
        env:
        - name: PROXY_CONFIG
          value: |
            {}
      volumes:
      - name: workload-socket
status: {}
---
`);
  const ours = parseYamlStream(`apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/status: '{"containers": ["istio-proxy"], "initContainers": null, "revision": "default"}'
    spec:
      containers:
        - name: istio-proxy
          env:
            - {name: PROXY_CONFIG, value: "{}"}
          resources: {limits: {cpu: 2000m, memory: 1024Mi}}
      volumes:
        - name: workload-socket
          emptyDir: {}
`);
  t.same(compareDocuments(golden, ours), { equal: true });
});

t.test('normalisation never equates different values', async (t) => {
  const base = `kind: Pod
metadata:
  annotations:
    prometheus.io/port: "15020"
    sidecar.istio.io/status: '{"containers":null}'
spec:
  containers:
  - name: a
  - name: b
`;
  const [doc] = parseYamlStream(base);
  t.notOk(compareDocuments([doc!], parseYamlStream(base.replace('"15020"', '15020'))).equal, 'string vs int');
  t.notOk(
    compareDocuments([doc!], parseYamlStream(base.replace('null', '[]'))).equal,
    'null vs [] in JSON annotations',
  );
  const swapped = compareDocuments(
    [doc!],
    parseYamlStream(base.replace('- name: a\n  - name: b', '- name: b\n  - name: a')),
  );
  t.notOk(swapped.equal, 'list order');
  t.match(swapped.detail, /\/spec\/containers\/0\/name/);
  t.notOk(
    compareDocuments([doc!], parseYamlStream(base.replace('"15020"', 'on'))).equal,
    'YAML 1.1 boolean is not a string',
  );
  t.notOk(compareDocuments([doc!], [doc!, doc!]).equal, 'document count');
});

t.test('normalisation drops hostNetwork: false of a spec only (Go omitempty)', async (t) => {
  t.same(normalizeDocument({ spec: { hostNetwork: false, x: 1 } }), { spec: { x: 1 } });
  t.same(normalizeDocument({ spec: { hostNetwork: true } }), { spec: { hostNetwork: true } });
  t.same(normalizeDocument({ data: { hostNetwork: false } }), { data: { hostNetwork: false } });
});

t.test('normalisation drops zero status and DeploymentConfig defaults only', async (t) => {
  t.same(normalizeDocument({ kind: 'DaemonSet', status: { numberReady: 0, desiredNumberScheduled: 0 } }), {
    kind: 'DaemonSet',
  });
  t.same(normalizeDocument({ kind: 'DaemonSet', status: { numberReady: 1 } }), {
    kind: 'DaemonSet',
    status: { numberReady: 1 },
  });
  t.same(
    normalizeDocument({
      kind: 'DeploymentConfig',
      spec: { test: false, paused: false, minReadySeconds: 0, replicas: 1 },
    }),
    {
      kind: 'DeploymentConfig',
      spec: { replicas: 1 },
    },
  );
  t.same(normalizeDocument({ kind: 'Deployment', spec: { paused: false } }), {
    kind: 'Deployment',
    spec: { paused: false },
  });
  t.same(
    normalizeDocument({
      kind: 'List',
      items: [
        { kind: 'DeploymentConfig', spec: { test: false, replicas: 1 } },
        { kind: 'Deployment', spec: { paused: false } },
      ],
    }),
    {
      kind: 'List',
      items: [
        { kind: 'DeploymentConfig', spec: { replicas: 1 } },
        { kind: 'Deployment', spec: { paused: false } },
      ],
    },
    'List items get the same rule',
  );
});

t.test('quantities are canonicalised like resource.Quantity', async (t) => {
  t.equal(canonicalQuantity('2000m'), '2');
  t.equal(canonicalQuantity('1024Mi'), '1Gi');
  t.equal(canonicalQuantity('1000m'), '1');
  t.equal(canonicalQuantity('100m'), '100m');
  t.equal(canonicalQuantity('1536Mi'), '1536Mi');
  t.equal(canonicalQuantity(1), '1');
  t.equal(canonicalQuantity('1 core'), undefined);
});

t.test('ResourceList building keeps document text and turns result annotations off', async (t) => {
  t.same(splitDocuments('---\na: 1\n---\n# only a comment\n---\nb: 2\n'), ['a: 1', 'b: 2\n']);
  const rl = buildResourceList(
    'kind: A # keep me\nx: "1"\n---\nkind: B\n',
    'apiVersion: v\nkind: SidecarInjection\nspec:\n  mesh: istio\n',
  );
  t.match(rl, /- kind: A # keep me\n {2}x: "1"\n- kind: B/);
  const [parsed] = parseYamlStream(rl) as Array<Record<string, any>>;
  t.equal(parsed!.items.length, 2);
  t.same(parsed!.functionConfig.spec, { mesh: 'istio', resultAnnotations: false });
  const modes = (mode: string) =>
    (
      parseYamlStream(
        buildResourceList('kind: A\n', `kind: SidecarInjection\nspec:\n  mesh: linkerd\n  mode: ${mode}\n`),
      )[0] as Record<string, any>
    ).functionConfig.spec;
  t.same(modes('inject'), { mesh: 'linkerd', resultAnnotations: false }, 'mode inject (the default) is left out');
  t.same(modes('uninject'), { mesh: 'linkerd', mode: 'uninject', resultAnnotations: false }, 'other modes are kept');
});

t.test('minimum checks', async (t) => {
  const s = summarize([
    { name: 'a', category: 'x', mode: 'inject', pass: true },
    { name: 'b', category: 'x', mode: 'uninject', pass: false },
  ]);
  t.same(s, { x: { passed: 1, total: 2 } });
  t.same(
    summarize(
      [
        { name: 'a', category: 'x', mode: 'inject', pass: true },
        { name: 'b', category: 'y', mode: 'inject', pass: false },
      ],
      (r) => r.mode,
    ),
    {
      inject: { passed: 1, total: 2 },
    },
  );
  t.same(checkMinimums(s, { x: 1 }), []);
  t.equal(checkMinimums(s, { x: 2, y: 1 }).length, 2);
});

/** Rebuilds the bundle the CLI runs when a source file is newer. */
function ensureBundle(t: Test): void {
  const b = ensureFreshBundle(root);
  t.equal(b.status, 0, `build: ${b.stderr}`);
}

t.test(
  'Istio conformance corpus: pass counts per category do not drop',
  { timeout: 900_000, ...needs(ISTIO) },
  async (t) => {
    ensureBundle(t);
    const min = JSON.parse(readFileSync(join(root, 'test/conformance/conformance-min.json'), 'utf8')) as Record<
      string,
      number
    >;
    const results = await runConformance(ISTIO.path ?? '', { concurrency: 4 });
    recordCases('conformance/istio', results.length);
    const summary = summarize(results);
    for (const r of results) if (!r.pass) t.comment(`FAIL ${r.name} [${r.category}]: ${r.reason}`);
    for (const [cat, s] of Object.entries(summary))
      t.comment(`istio conformance: ${s.passed}/${s.total} passed (${cat})`);
    t.same(checkMinimums(summary, min), [], 'no category below its minimum');
  },
);

t.test(
  'Linkerd conformance corpus: pass counts per mode do not drop',
  { timeout: 900_000, ...needs(LINKERD) },
  async (t) => {
    ensureBundle(t);
    const min = JSON.parse(readFileSync(join(root, 'test/conformance/conformance-min-linkerd.json'), 'utf8')) as Record<
      string,
      number
    >;
    const results = await runConformance(LINKERD.path ?? '', { concurrency: 4 });
    recordCases('conformance/linkerd', results.length);
    const summary = summarize(results, (r) => `linkerd-${r.mode}`);
    for (const r of results) if (!r.pass) t.comment(`FAIL ${r.name} [${r.category}, ${r.mode}]: ${r.reason}`);
    for (const [cat, s] of Object.entries(summary))
      t.comment(`linkerd conformance: ${s.passed}/${s.total} passed (${cat})`);
    t.same(checkMinimums(summary, min), [], 'no mode below its minimum');
    t.ok(results.filter((r) => r.mode === 'inject').length >= 34, 'the whole inject corpus ran');
  },
);

t.test(
  'Kuma conformance corpus: pass counts per category do not drop',
  { timeout: 900_000, ...needs(KUMA) },
  async (t) => {
    ensureBundle(t);
    const min = JSON.parse(readFileSync(join(root, 'test/conformance/conformance-min-kuma.json'), 'utf8')) as Record<
      string,
      number
    >;
    const results = await runConformance(KUMA.path ?? '', { concurrency: 4 });
    recordCases('conformance/kuma', results.length);
    const summary = summarize(results, (r) => `kuma-${r.category}`);
    for (const r of results) if (!r.pass) t.comment(`FAIL ${r.name} [${r.category}]: ${r.reason}`);
    for (const [cat, s] of Object.entries(summary))
      t.comment(`kuma conformance: ${s.passed}/${s.total} passed (${cat})`);
    t.same(checkMinimums(summary, min), [], 'no category below its minimum');
    t.ok(results.length >= 40, 'the whole corpus ran');
    t.ok(results.filter((r) => r.pass).length / results.length >= 0.95, 'at least 95 % of the corpus passes');
  },
);
