import t from 'tap';
import { parse } from 'yaml';
import { run } from '../../../src/run.ts';
import { deployment as fixtureDeployment } from '../../helpers/fixtures.ts';

// Where Istio templates come from (issue #12): values templates > injectorConfig > built-in ports, per name.
const deployment = (annotations = '') => fixtureDeployment('web', { noSelector: true, templateExtra: annotations });

const withTemplates = (annotation: string) =>
  deployment(`\n      annotations: {inject.istio.io/templates: "${annotation}"}`);

const config = (istio: string, extra = '') => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: c}
spec:
  mesh: istio${extra}
  istio:
${istio}`;

const MARK = (label: string) =>
  `spec:\n  containers:\n  - name: web\n    env:\n    - name: FROM\n      value: ${label}\n`;

function envOf(stdout: string): string[] {
  const doc = parse(stdout) as {
    spec: {
      template: { spec: { containers: Array<{ name: string; env?: Array<{ name: string; value?: string }> }> } };
    };
  };
  const web = doc.spec.template.spec.containers.find((c) => c.name === 'web');
  return (web?.env ?? []).map((e) => `${e.name}=${e.value}`);
}

t.test(
  'a values template wins over the injector config of the same name; other names fall back to built-in ports',
  async (t) => {
    const istio = `    values:
      sidecarInjectorWebhook:
        templates:
          mark: ${JSON.stringify(MARK('values'))}
    injectorConfig:
      templates:
        mark: ${JSON.stringify(MARK('injectorConfig'))}
        other: ${JSON.stringify(MARK('other'))}
`;
    const out = run(withTemplates('sidecar,mark'), { functionConfig: config(istio) });
    t.equal(out.exitCode, 0, out.stderr);
    t.same(envOf(out.stdout), ['FROM=values']);
    t.match(out.stdout, /name: istio-proxy/, 'sidecar came from the built-in port');
    const result = out.results.find((r) => /injected/.test(r.message));
    t.match(
      result?.message,
      /templates sidecar from built-in templates \(Istio 1\.31 line\); templates mark from spec\.istio\.values\.sidecarInjectorWebhook\.templates \(Istio version not given\)/,
    );
    const other = run(withTemplates('other'), { functionConfig: config(istio) });
    t.same(envOf(other.stdout), ['FROM=other']);
  },
);

t.test('injectorConfig as pasted YAML text: defaultTemplates, aliases and version', async (t) => {
  const block = (label: string) =>
    MARK(label).replace('name: FROM', `name: FROM_${label.toUpperCase()}`).trimEnd().replace(/^/gm, '    ');
  const text = `defaultTemplates: [both]\naliases:\n  both: [a, b]\ntemplates:\n  a: |\n${block('a')}\n  b: |\n${block('b')}\n`;
  const out = run(deployment(), {
    functionConfig: config(`    version: "1.26.0"\n    injectorConfig: ${JSON.stringify(text)}\n`),
  });
  t.equal(out.exitCode, 0, out.stderr);
  t.same(envOf(out.stdout).sort(), ['FROM_A=a', 'FROM_B=b'], 'the default template is an alias for both a and b');
  t.ok(out.results.some((r) => /templates a, b from spec\.istio\.injectorConfig \(Istio 1\.26\.0\)/.test(r.message)));
});

t.test('a template no source has is an error listing the available names', async (t) => {
  const out = run(withTemplates('nope'), {
    functionConfig: config(`    injectorConfig:\n      templates:\n        mine: ${JSON.stringify(MARK('m'))}\n`),
  });
  t.equal(out.exitCode, 1);
  t.ok(
    out.results.some(
      (r) =>
        r.severity === 'error' &&
        r.message.includes('requested template "nope" not found; have gateway, grpc-agent, grpc-simple, mine, sidecar'),
    ),
  );
});

t.test("a Go template that does not parse is a config error with Go's message", async (t) => {
  const out = run(deployment(), {
    functionConfig: config(`    injectorConfig:\n      templates:\n        bad: "{{ if }}"\n`),
  });
  t.not(out.exitCode, 0);
  t.match(
    out.stderr + JSON.stringify(out.results),
    /spec\.istio\.injectorConfig\.templates\.bad: template: bad:1: missing value for if/,
  );
});

t.test('env reads only the allow-list, never the process environment', async (t) => {
  process.env.MESHINJECT_TEST_SECRET = 'leaked';
  try {
    const tmpl =
      'spec:\n  containers:\n  - name: web\n    env:\n    - name: A\n      value: {{ env "MESHINJECT_TEST_SECRET" "unset" }}\n    - name: B\n      value: {{ env "ALLOWED" "unset" }}\n    - name: C\n      value: "{{ env "ENABLE_NATIVE_SIDECARS" "x" }}"\n';
    const istio = `    env: {ALLOWED: yes-allowed}\n    injectorConfig:\n      templates:\n        sidecar: ${JSON.stringify(tmpl)}\n`;
    const out = run(deployment(), { functionConfig: config(istio, '\n  nativeSidecars: true') });
    t.equal(out.exitCode, 0, out.stderr);
    t.same(envOf(out.stdout), ['A=unset', 'B=yes-allowed', 'C=true']);
  } finally {
    delete process.env.MESHINJECT_TEST_SECRET;
  }
});

t.test('a runaway template stops with an error naming it', async (t) => {
  const out = run(deployment(), {
    functionConfig: config(
      `    injectorConfig:\n      templates:\n        sidecar: '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}'\n`,
    ),
  });
  t.equal(out.exitCode, 1);
  t.ok(
    out.results.some(
      (r) => r.severity === 'error' && /executing "r" .*exceeded maximum template depth/.test(r.message),
    ),
  );
});

t.test('without template sources the output is unchanged (built-in path)', async (t) => {
  const plain = run(deployment());
  const empty = run(deployment(), { functionConfig: config('    values: {}\n') });
  t.equal(empty.stdout, plain.stdout);
});

t.test('an istio-sidecar-injector ConfigMap in the input supplies templates, values and version', async (t) => {
  const cmConfig = `policy: enabled\ndefaultTemplates: [sidecar]\ntemplates:\n  sidecar: |\n    spec:\n      containers:\n      - name: web\n        env:\n        - name: HUB\n          value: {{ .Values.global.hub }}\n`;
  const cm = `apiVersion: v1
kind: ConfigMap
metadata:
  name: istio-sidecar-injector
  namespace: istio-system
  labels: {app.kubernetes.io/version: "1.24.3"}
data:
  config: ${JSON.stringify(cmConfig)}
  values: '{"global": {"hub": "cluster.example/istio"}}'
`;
  const out = run(`${cm}---\n${deployment()}`, { functionConfig: config('    values: {}\n') });
  t.equal(out.exitCode, 0, out.stderr);
  const docs = out.stdout.split(/^---$/m);
  t.same(envOf(docs[1]!), ['HUB=cluster.example/istio'], 'the ConfigMap template rendered with the ConfigMap values');
  t.ok(
    out.results.some(
      (r) =>
        r.severity === 'info' &&
        /templates and values from ConfigMap istio-system\/istio-sidecar-injector in the input \(Istio 1\.24\.3\)/.test(
          r.message,
        ),
    ),
  );
  t.ok(
    out.results.some((r) =>
      /templates sidecar from ConfigMap istio-sidecar-injector \(Istio 1\.24\.3\)/.test(r.message),
    ),
  );
  const user = run(`${cm}---\n${deployment()}`, {
    functionConfig: config('    values:\n      global: {hub: user.example}\n'),
  });
  t.same(
    envOf(user.stdout.split(/^---$/m)[1]!),
    ['HUB=user.example'],
    'spec.istio.values applies on top of the ConfigMap values',
  );
  const ignored = run(`${cm}---\n${deployment()}`, {
    functionConfig: config(`    injectorConfig:\n      templates:\n        other: ${JSON.stringify(MARK('x'))}\n`),
  });
  t.match(
    ignored.stdout,
    /name: istio-proxy/,
    'with injectorConfig set, the ConfigMap is not used (sidecar is the built-in port)',
  );
  t.ok(ignored.results.some((r) => /is not used: spec\.istio\.injectorConfig is set/.test(r.message)));
  const otherRevision = run(`${cm}---\n${deployment()}`, { functionConfig: config('    revision: canary\n') });
  t.match(otherRevision.stdout, /name: istio-proxy/, 'a ConfigMap of another revision is not used');
});

t.test('injectedAnnotations apply with webhook selection only (kube-inject passes none)', async (t) => {
  const istio = (selection: string) =>
    `    selection: ${selection}\n    injectorConfig:\n      injectedAnnotations: {example.com/injected: "yes"}\n      templates:\n        sidecar: ${JSON.stringify(MARK('m'))}\n`;
  const ns = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {istio-injection: enabled}\n---\n`;
  const webhook = run(ns + deployment(), { functionConfig: config(istio('webhook')) });
  t.equal(webhook.exitCode, 0, webhook.stderr);
  t.match(webhook.stdout, /example\.com\/injected: "?yes"?/);
  const kubeInject = run(ns + deployment(), { functionConfig: config(istio('kube-inject')) });
  t.notMatch(kubeInject.stdout, /example\.com\/injected/);
});
