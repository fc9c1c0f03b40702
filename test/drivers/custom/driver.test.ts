/**
 * The custom driver as a user sees it: the example (CLI and `kpt fn render`), the template data model, template
 * selection, errors that name the template and line, the sandbox (no prototype access, no environment, no
 * files), the "templates only add" rule, the status annotation (re-injection, uninject), and templates from a
 * local-config ConfigMap of the input.
 */
import t from 'tap';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../../../src/index.ts';

type Obj = Record<string, any>;
const EX = fileURLToPath(new URL('../../../examples/custom/', import.meta.url));
const BIN = fileURLToPath(new URL('../../../bin/meshinject.js', import.meta.url));
const read = (f: string) => readFileSync(join(EX, f), 'utf8');

const APP = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {team: payments}
  annotations: {owner: alice}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    metadata:
      labels:
        app: storefront
    spec:
      containers:
      - name: web
        image: web:1
`;

const cfg = (custom: Obj, extra: Obj = {}) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: t}
spec: ${JSON.stringify({ mesh: 'custom', resultAnnotations: false, ...extra, custom })}
`;

/** Runs the inline template `sidecar` (plus `more`) against APP and returns the run and the web pod. */
function inject(templates: Record<string, string>, values: Obj = {}, input = APP, extra: Obj = {}) {
  const out = run(input, { functionConfig: cfg({ templates, values }, extra) });
  const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
  return { out, pod: docs.find((d) => d?.kind === 'Deployment')?.spec.template as Obj | undefined };
}

const errorOf = (out: ReturnType<typeof run>) => out.results.find((r) => r.severity === 'error');

t.test('example: the CLI output is the reviewed golden, and uninject gives the input back', async (t) => {
  const input = `${read('app.yaml')}---\n${read('log-shipper-templates.yaml')}`;
  const out = run(input, { functionConfig: read('injection.yaml') });
  t.equal(out.exitCode, 0);
  t.equal(
    out.stdout,
    `${read('app.injected.yaml')}---\n${read('log-shipper-templates.yaml')}`,
    'whole output, byte for byte',
  );
  const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
  const checkout = docs.find((d) => d.metadata?.name === 'checkout')!.spec.template;
  t.same(
    checkout.spec.containers.map((c: Obj) => c.name),
    ['checkout', 'fluent-bit'],
    'the app stays the first container',
  );
  t.same(
    checkout.spec.initContainers.map((c: Obj) => c.name),
    ['log-dir-init'],
  );
  t.same(
    checkout.spec.containers[1].env,
    [
      { name: 'APP_NAME', value: 'checkout' },
      { name: 'APP_NAMESPACE', value: 'shop' },
      { name: 'LOG_SINK', value: 'fluentd.logging.svc:24224' },
    ],
    'pod label app, workload namespace, namespace annotation',
  );
  const orders = docs.find((d) => d.metadata?.name === 'orders')!.spec.template;
  t.same(
    orders.spec.volumes.map((v: Obj) => v.name),
    ['app-logs', 'fluent-bit-config', 'fluent-bit-buffer'],
    "sidecar,buffer: both templates, the pod's own volume first",
  );
  t.ok(
    orders.spec.containers[1].volumeMounts.some((m: Obj) => m.name === 'fluent-bit-buffer'),
    'buffer patches the sidecar container',
  );
  const migrate = docs.find((d) => d.metadata?.name === 'migrate')!;
  t.same(
    migrate.spec.template.spec.containers.map((c: Obj) => c.name),
    ['migrate'],
    'opted out',
  );
  t.equal(run(out.stdout, { functionConfig: read('injection.yaml') }).stdout, out.stdout, 'second run: no change');
  const un = run(out.stdout, {
    functionConfig: read('injection.yaml').replace(
      'mesh: custom',
      'mesh: custom\n  mode: uninject\n  resultAnnotations: false',
    ),
  });
  const plain = run(input, {
    functionConfig: read('injection.yaml').replace('mesh: custom', 'mesh: custom\n  resultAnnotations: false'),
  });
  const back = run(plain.stdout, {
    functionConfig: read('injection.yaml').replace(
      'mesh: custom',
      'mesh: custom\n  mode: uninject\n  resultAnnotations: false',
    ),
  });
  t.equal(back.stdout, input, 'uninject after inject: the input, byte for byte');
  t.equal(un.exitCode, 0);
});

t.test('example: kpt fn render of the package', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshinject-custom-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['app.yaml', 'injection.yaml', 'log-shipper-templates.yaml']) copyFileSync(join(EX, f), join(dir, f));
  writeFileSync(join(dir, 'Kptfile'), read('Kptfile').replace(/^(\s*- exec: ).*$/m, `$1${BIN}`));
  const r = spawnSync('kpt', ['fn', 'render', dir, '--allow-exec'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.equal(readFileSync(join(dir, 'app.yaml'), 'utf8'), read('app.injected.yaml'), 'app.yaml rendered as the golden');
  t.equal(
    readFileSync(join(dir, 'log-shipper-templates.yaml'), 'utf8'),
    read('log-shipper-templates.yaml'),
    'the templates file is untouched',
  );
});

t.test('data model: pod, workload, namespace, values', async (t) => {
  const { out, pod } = inject(
    {
      sidecar: `metadata:
  annotations:
    seen: "{{pod.metadata.labels.app}}|{{workload.apiVersion}}|{{workload.kind}}|{{workload.name}}|{{workload.namespace}}|{{namespace.name}}|{{namespace.labels.team}}|{{namespace.annotations.owner}}|{{values.tier}}|{{pod.spec.containers.0.image}}"
`,
    },
    { tier: 'gold' },
  );
  t.equal(out.exitCode, 0);
  t.equal(pod!.metadata.annotations.seen, 'storefront|apps/v1|Deployment|web|shop|shop|payments|alice|gold|web:1');
});

t.test('template selection: meshinject.dev/templates, default sidecar, unknown names', async (t) => {
  const templates = {
    sidecar: 'spec:\n  containers:\n  - {name: a, image: a}\n',
    more: 'spec:\n  containers:\n  - {name: b, image: b}\n',
  };
  const picked = inject(
    templates,
    {},
    APP.replace(
      'app: storefront',
      'app: storefront\n      annotations:\n        meshinject.dev/templates: "more, sidecar"',
    ),
  );
  t.same(
    picked.pod!.spec.containers.map((c: Obj) => c.name),
    ['web', 'b', 'a'],
    "the pod's own, then template order",
  );
  t.match(
    picked.out.results.find((r) => r.resourceRef?.name === 'web')!.message,
    /^injected \(custom, templates more,sidecar\)/,
  );
  const unknown = inject(
    templates,
    {},
    APP.replace('app: storefront', 'app: storefront\n      annotations:\n        meshinject.dev/templates: nope'),
  );
  t.equal(unknown.out.exitCode, 1);
  t.match(
    errorOf(unknown.out)!.message,
    /meshinject\.dev\/templates names template "nope", but it is not defined; known templates: sidecar, more/,
  );
  const noDefault = inject({ more: templates.more });
  t.match(
    errorOf(noDefault.out)!.message,
    /default template "sidecar" is used, but it is not defined; known templates: more/,
  );
});

t.test('errors name the template, where it came from, and the line', async (t) => {
  const missing = inject({ sidecar: 'metadata:\n  labels:\n    x: "{{pod.metadata.labels.nope}}"\n' });
  t.equal(missing.out.exitCode, 1);
  t.match(
    errorOf(missing.out)!.message,
    /template "sidecar" \(spec\.custom\.templates\.sidecar\) failed at line 3, column \d+: "nope" not defined/,
  );
  const syntax = inject({ sidecar: 'spec:\n  containers:\n{{#if values.x}}\n' });
  t.match(
    errorOf(syntax.out)!.message,
    /template "sidecar" \(spec\.custom\.templates\.sidecar\) failed at line 4: syntax error/,
  );
  const yaml = inject({ sidecar: 'spec:\n  containers: [\n' });
  t.match(errorOf(yaml.out)!.message, /template "sidecar" \(spec\.custom\.templates\.sidecar\) rendered invalid YAML/);
});

t.test('sandbox: no prototype access, no environment, no files', async (t) => {
  const proto = inject(
    {
      sidecar:
        'metadata:\n  annotations:\n    a: "{{pod.constructor}}{{values.toString}}{{lookup pod \'__proto__\'}}"\n    b: "{{values.constructor}}"\n',
    },
    { constructor: 'own' },
  );
  t.equal(proto.out.exitCode, 0);
  t.equal(proto.pod!.metadata.annotations.a, '', 'inherited properties render as nothing');
  t.equal(proto.pod!.metadata.annotations.b, 'own', 'an own key named like a prototype property is data');
  process.env.MESHINJECT_TEST_SECRET = 'leaked';
  t.teardown(() => delete process.env.MESHINJECT_TEST_SECRET);
  const env = inject({ sidecar: 'metadata:\n  annotations:\n    e: "{{env "MESHINJECT_TEST_SECRET" "none"}}"\n' });
  t.match(errorOf(env.out)!.message, /template "sidecar" .*failed at .*env/, 'no env helper in the shared set');
  t.notOk(env.out.stdout.includes('leaked'));
  t.equal(
    errorOf(inject({ sidecar: '{{process.env.MESHINJECT_TEST_SECRET}}' }).out)?.severity,
    'error',
    'no process object',
  );
  t.match(errorOf(inject({ sidecar: '{{> /etc/passwd}}' }).out)!.message, /template "sidecar"/, 'no file partials');
  t.match(
    errorOf(inject({ sidecar: '{{> more}}', more: 'x: 1' }).out)!.message,
    /template "sidecar" .*failed/,
    'templates are not partials of each other',
  );
  t.notOk(
    JSON.stringify(inject({ sidecar: 'metadata:\n  annotations:\n    x: "{{json values}}"\n' }).pod).includes('leaked'),
  );
});

t.test('templates only add: other fields and clashes with the pod are errors', async (t) => {
  const other = inject({ sidecar: 'spec:\n  hostNetwork: true\n' });
  t.match(
    errorOf(other.out)!.message,
    /renders spec\.hostNetwork: a custom template may add only metadata\.labels, .*spec\.imagePullSecrets/,
  );
  const clash = inject({ sidecar: 'spec:\n  containers:\n  - {name: web, image: evil}\n' });
  t.match(errorOf(clash.out)!.message, /add containers entry "web", but the pod already has one of that name/);
  t.equal(errorOf(clash.out)!.field?.path, 'spec.template.spec.containers');
  const label = inject({ sidecar: 'metadata:\n  labels:\n    app: other\n' });
  t.match(errorOf(label.out)!.message, /set label app to "other", but the pod has "storefront"/);
  const same = inject({ sidecar: 'metadata:\n  labels:\n    app: storefront\n    added: "yes"\n' });
  t.same(
    JSON.parse(same.pod!.metadata.annotations['meshinject.dev/custom-status']).labels,
    ['added'],
    "a label with the pod's own value is not recorded",
  );
});

t.test('status annotation: re-injection after a template change replaces the old injection', async (t) => {
  const v1 = inject({
    sidecar: 'spec:\n  containers:\n  - {name: shipper, image: "s:1"}\n  volumes:\n  - {name: old, emptyDir: {}}\n',
  });
  const v2 = run(v1.out.stdout, {
    functionConfig: cfg({ templates: { sidecar: 'spec:\n  containers:\n  - {name: shipper, image: "s:2"}\n' } }),
  });
  const pod = (parseAllDocuments(v2.stdout)[1]!.toJS() as Obj).spec.template;
  t.same(pod.spec.containers, [
    { name: 'web', image: 'web:1' },
    { name: 'shipper', image: 's:2' },
  ]);
  t.equal(pod.spec.volumes, undefined, 'the volume the old template added is gone');
  const broken = APP.replace(
    'app: storefront',
    'app: storefront\n      annotations:\n        meshinject.dev/custom-status: "{oops"',
  );
  t.match(
    errorOf(inject({ sidecar: 'x: 1' }, {}, broken).out)!.message,
    /meshinject\.dev\/custom-status is not valid JSON/,
  );
});

t.test('templates from a local-config ConfigMap of the input', async (t) => {
  const cm = (name: string, local = true) => `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  annotations: {config.kubernetes.io/local-config: "${local}"}
data:
  sidecar.hbs: |
    spec:
      containers:
      - {name: shipper, image: "{{default "ship:0" (index values "image")}}"}
`;
  const config = (extra: Obj = {}) => cfg({ templateConfigMaps: ['tpl'], values: { image: 'ship:1' }, ...extra });
  const ok = run(APP + cm('tpl'), { functionConfig: config() });
  t.equal(ok.exitCode, 0);
  t.same(
    (parseAllDocuments(ok.stdout)[1]!.toJS() as Obj).spec.template.spec.containers.map((c: Obj) => c.image),
    ['web:1', 'ship:1'],
  );
  t.match(ok.stdout, /kind: ConfigMap\nmetadata:\n {2}name: tpl/, 'the templates ConfigMap passes through');
  const missing = run(APP + cm('tpl', false), { functionConfig: config() });
  t.equal(missing.exitCode, 1);
  t.match(
    errorOf(missing)!.message,
    /no ConfigMap "tpl" marked config\.kubernetes\.io\/local-config: "true" in the input/,
  );
  const twice = run(APP + cm('tpl'), { functionConfig: config({ templates: { sidecar: 'x: 1' } }) });
  t.match(
    errorOf(twice)!.message,
    /template "sidecar" is defined twice: spec\.custom\.templates\.sidecar and ConfigMap tpl data\.sidecar\.hbs/,
  );
  const cmForm = run(APP + cm('tpl'), {
    functionConfig:
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {mesh: custom, custom.templateConfigMaps: tpl, resultAnnotations: "false"}\n',
  });
  t.equal(cmForm.exitCode, 0, 'ConfigMap functionConfig form');
  const none = run(APP, { functionConfig: cfg({}) });
  t.match(none.results.map((r) => r.message).join('\n'), /the custom mesh needs templates/);
});

t.test('decision: meshinject.dev/inject label, then annotation; other values are errors', async (t) => {
  const off = inject(
    { sidecar: 'x: 1' },
    {},
    APP.replace('app: storefront', 'app: storefront\n        meshinject.dev/inject: "false"'),
  );
  t.same(
    off.pod!.spec.containers.map((c: Obj) => c.name),
    ['web'],
  );
  t.same(off.out.results.find((r) => r.resourceRef?.name === 'web')!.tags, {
    'meshinject.dev/outcome': 'skipped',
    'meshinject.dev/reason': 'label-false',
  });
  const bad = inject(
    { sidecar: 'x: 1' },
    {},
    APP.replace('app: storefront', 'app: storefront\n        meshinject.dev/inject: "yes"'),
  );
  t.match(errorOf(bad.out)!.message, /pod label meshinject\.dev\/inject must be "true" or "false"; got "yes"/);
  const disabled = inject(
    { sidecar: 'spec:\n  containers:\n  - {name: s, image: s}\n' },
    {},
    APP.replace('app: storefront', 'app: storefront\n      annotations:\n        meshinject.dev/inject: "true"'),
    { policy: 'disabled' },
  );
  t.same(
    disabled.pod!.spec.containers.map((c: Obj) => c.name),
    ['web', 's'],
    'annotation opt-in beats policy disabled',
  );
  t.equal(parse(cfg({})).kind, 'SidecarInjection');
});
