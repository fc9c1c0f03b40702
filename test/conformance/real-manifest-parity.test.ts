/**
 * The last parity gaps of issue #21, through the CLI: YAML 1.1 readers (§6: NEL, LS, PS and C1 controls
 * escaped; a template named like a prototype member is a name), Linkerd (§5: configured opaque ports keep
 * their names, as `linkerd inject --opaque-ports` does in cli/cmd/testdata/inject_emojivoto_deployment_opaque_ports;
 * null items of a `kind: List` are kept and reported, as in inject_emojivoto_list_empty_resources).
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runCli, workspace } from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const ISTIO =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: t}\nspec:\n  mesh: istio\n  policy: enabled\n  resultAnnotations: false\n';

const deployment = (annotations: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations:
${annotations}
    spec:
      containers:
      - name: web
        image: web:1
        ports:
        - {name: http, containerPort: 8080}
`;

t.test('YAML 1.1 readers get the same strings: NEL, LS, PS and C1 controls are escaped', async (t) => {
  for (const [name, ch] of [
    ['NEL', '\u0085'],
    ['LS', '\u2028'],
    ['PS', '\u2029'],
    ['C1', '\u0091'],
  ] as const) {
    const path = `/metrics${ch}x`;
    const dir = workspace(
      t,
      {
        'in.yaml': deployment(
          `        prometheus.io/path: ${JSON.stringify(path).replace(ch, `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}`,
        ),
        'c.yaml': ISTIO,
      },
      'nel',
    );
    const r = runCli(['-q', '-c', 'c.yaml', 'in.yaml'], { cwd: dir });
    t.equal(r.status, 0, `${name}: exit 0`);
    t.notOk(r.stdout.includes(ch), `${name}: never written raw`);
    for (const version of ['1.1', '1.2'] as const) {
      const doc = parseAllDocuments(r.stdout, { version })[0]!.toJS() as {
        spec: {
          template: { spec: { containers: Array<{ name: string; env?: Array<{ name: string; value?: string }> }> } };
        };
      };
      const proxy = doc.spec.template.spec.containers.find((c) => c.name === 'istio-proxy')!;
      const record = proxy.env!.find((e) => e.name === 'ISTIO_PROMETHEUS_ANNOTATIONS')!.value!;
      t.equal(
        (JSON.parse(record) as { path: string }).path,
        path,
        `${name}: a YAML ${version} reader reads back the user's path`,
      );
    }
  }
});

t.test('a template named like a prototype member is a template name', async (t) => {
  for (const n of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const dir = workspace(
      t,
      { 'in.yaml': deployment(`        inject.istio.io/templates: ${n}`), 'c.yaml': ISTIO },
      'proto',
    );
    const r = runCli(['-c', 'c.yaml', 'in.yaml'], { cwd: dir });
    t.equal(r.status, 1, `${n}: an error result`);
    t.match(
      r.stderr,
      `requested template "${n}" not found; have sidecar, gateway, grpc-simple, grpc-agent`,
      `${n}: the message names the template`,
    );
    t.notMatch(r.stderr, /native code|\[object Object\]/, `${n}: no prototype member leaks into the message`);
  }
});

const LINKERD = corpus('conformance/linkerd/cases/emojivoto-deployment');
const LINKERD_CASE = LINKERD.path ?? '';

t.test('Linkerd: configured opaque ports reach the proxy as written, names included', needs(LINKERD), async (t) => {
  const base = readFileSync(join(LINKERD_CASE, 'fn-config.yaml'), 'utf8');
  t.match(base, /\n {4}values:\n/, 'the corpus config has values');
  const config = base.replace(
    '\n    values:\n',
    '\n    overrideAnnotations:\n      config.linkerd.io/opaque-ports: "3000,5000-6000,mysql"\n    values:\n',
  );
  const dir = workspace(
    t,
    { 'in.yaml': readFileSync(join(LINKERD_CASE, 'input.yaml'), 'utf8'), 'c.yaml': config },
    'opaque',
  );
  const r = runCli(['-q', '-c', 'c.yaml', 'in.yaml'], { cwd: dir });
  t.equal(r.status, 0, 'exit 0');
  const doc = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as { kind?: string })
    .find((d) => d?.kind === 'Deployment') as {
    spec: {
      template: {
        metadata: { annotations: Record<string, string> };
        spec: { containers: Array<{ name: string; env?: Array<{ name: string; value?: string }> }> };
      };
    };
  };
  const spec = doc.spec.template.spec as {
    containers: Array<{ name: string; env?: Array<{ name: string; value?: string }> }>;
    initContainers?: Array<{ name: string; env?: Array<{ name: string; value?: string }> }>;
  };
  const proxy = [...spec.containers, ...(spec.initContainers ?? [])].find((c) => c.name === 'linkerd-proxy')!;
  t.equal(
    proxy.env!.find((e) => e.name === 'LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION')?.value,
    '3000,5000-6000,mysql',
    'the name stays next to the numbers',
  );
  t.equal(
    doc.spec.template.metadata.annotations['config.linkerd.io/opaque-ports'],
    '3000,5000-6000,mysql',
    'and the annotation is written',
  );

  // A pod's own annotation is parsed: a container port name is resolved, an unknown name dropped with a warning.
  const own = readFileSync(join(LINKERD_CASE, 'input.yaml'), 'utf8').replace(
    /(\n {4}metadata:\n)/,
    '$1      annotations:\n        config.linkerd.io/opaque-ports: "3000,mysql"\n',
  );
  t.not(own, readFileSync(join(LINKERD_CASE, 'input.yaml'), 'utf8'), 'fixture edited');
  const dir2 = workspace(t, { 'in.yaml': own, 'c.yaml': base }, 'opaque-own');
  const r2 = runCli(['-c', 'c.yaml', '--report', 'github=report.txt', 'in.yaml'], { cwd: dir2 });
  t.match(
    r2.stdout,
    /LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION\n\s+value: "3000"\n/,
    "the pod's own list is parsed",
  );
  t.match(
    readFileSync(join(dir2, 'report.txt'), 'utf8'),
    /"mysql" is neither a port, a port range nor a container port name/,
    'the unknown name is reported',
  );
});

t.test('Linkerd: null items of a kind: List are kept and reported', needs(LINKERD), async (t) => {
  const base = readFileSync(join(LINKERD_CASE, 'fn-config.yaml'), 'utf8');
  const list = `apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: emojivoto}
  spec:
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers:
        - {name: web, image: web:1}
- null
- null
metadata: {}
`;
  const dir = workspace(t, { 'in.yaml': list, 'c.yaml': base }, 'nulls');
  const r = runCli(['-c', 'c.yaml', '--report', 'github=report.txt', 'in.yaml'], { cwd: dir });
  const report = readFileSync(join(dir, 'report.txt'), 'utf8');
  t.equal(r.status, 0, 'exit 0, as linkerd inject');
  t.match(r.stdout, /name: linkerd-proxy/, 'the Deployment is injected');
  t.match(r.stdout, /\n- null\n- null\nmetadata: \{\}\n$/, 'the null items stay as they were');
  t.match(
    report,
    /::warning .*in\.yaml items\[1\]: document missing "kind" field, skipped/,
    'each is reported (a warning) as linkerd inject reports it',
  );
  t.match(report, /in\.yaml items\[2\]: document missing "kind" field, skipped/);
  const bad = runCli(['-c', 'c.yaml', 'in.yaml'], {
    cwd: workspace(t, { 'in.yaml': list.replace('- null\n- null', '- 42'), 'c.yaml': base }, 'scalar'),
  });
  t.equal(bad.status, 2, 'an item that is neither a resource nor null is still bad input');
});
