import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describeMissing, missingFunctions } from '../../../scripts/istio-release/func-check.ts';
import { INJECTION_FUNCS_SINCE, istioFuncMap } from '../../../src/drivers/istio/go-funcs.ts';
import { GoTemplate } from '../../../src/render/gotemplate/index.ts';
import { SPRIG_FUNCS } from '../../../src/render/gotemplate/sprig.ts';
import { dynamic } from '../../../src/render/gotemplate/value.ts';
import { corpus, needs } from '../../helpers/data.ts';

// Issue #25: every Istio release corpus's injection templates call only functions meshinject's func map has for
// that release; the check names the function and the release when one is missing.
const VERSIONS = corpus('conformance/istio-versions');
const versionsRoot = VERSIONS.path ?? '';

type Templates = Record<string, string>;

/** Every distinct template text of a release corpus: shared templates, each case's injector and values templates. */
function releaseTemplates(dir: string): Templates {
  const out: Templates = {};
  const add = (src: unknown, where: string) => {
    if (!src || typeof src !== 'object') return;
    for (const [name, text] of Object.entries(src as Templates)) {
      if (typeof text !== 'string') continue;
      const key = Object.values(out).includes(text) ? undefined : out[name] === undefined ? name : `${name} (${where})`;
      if (key) out[key] = text;
    }
  };
  const shared = join(dir, 'shared-templates.yaml');
  if (existsSync(shared)) add((parse(readFileSync(shared, 'utf8')) as { templates: Templates }).templates, 'shared');
  for (const c of readdirSync(join(dir, 'cases')).sort()) {
    const istio = (
      parse(readFileSync(join(dir, 'cases', c, 'fn-config.yaml'), 'utf8')) as {
        spec: {
          istio: {
            injectorConfig?: { templates?: Templates };
            values?: { sidecarInjectorWebhook?: { templates?: Templates } };
          };
        };
      }
    ).spec.istio;
    add(istio.injectorConfig?.templates, c);
    add(istio.values?.sidecarInjectorWebhook?.templates, c);
  }
  return out;
}

const releases = !VERSIONS.path
  ? []
  : readdirSync(versionsRoot, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();

t.test(
  'every release corpus: its templates call only functions the func map has for it',
  needs(VERSIONS),
  async (t) => {
    t.ok(releases.length >= 5, `releases: ${releases.join(', ')}`);
    for (const release of releases) {
      const templates = releaseTemplates(join(versionsRoot, release));
      t.ok(Object.keys(templates).includes('sidecar'), `${release}: the sidecar template is there`);
      const missing = missingFunctions(release, templates);
      t.same(
        describeMissing(missing),
        [],
        `${release}: ${Object.keys(templates).length} templates, no function missing`,
      );
    }
  },
);

t.test('the check names the missing function and the release', async (t) => {
  const tmpl = {
    sidecar: '{{ toYaml (omitNil .Values.global.proxy.resources) | indent 6 }}{{ fooBar 1 }}{{ omitNil 2 }}',
  };
  t.same(
    describeMissing(missingFunctions('1.29.0', tmpl)),
    ['function "fooBar" (Istio 1.29.0, template sidecar)', 'function "omitNil" (Istio 1.29.0, template sidecar)'],
    '1.29 has no omitNil (added in 1.30), nobody has fooBar',
  );
  t.same(describeMissing(missingFunctions('1.30.0', tmpl)), ['function "fooBar" (Istio 1.30.0, template sidecar)']);
  t.same(
    missingFunctions('1.31.0-rc.0', {
      sidecar:
        '{{ otelResourceAttributes .MeshConfig .ObjectMeta.Annotations .ObjectMeta.Labels "ns" .Spec.Containers }}',
    }),
    [],
  );
  t.throws(() => missingFunctions('2.0.0', tmpl), /not an Istio 1.x release/);
});

t.test('InjectionFuncmap membership per release (pkg/kube/inject/template.go at each tag)', async (t) => {
  for (let minor = 18; minor <= 31; minor++) {
    const m = istioFuncMap({ minor, env: {} });
    const own = Object.keys(INJECTION_FUNCS_SINCE)
      .filter((n) => m.get(n) !== undefined && m.get(n) !== SPRIG_FUNCS.get(n))
      .sort();
    const want = Object.entries(INJECTION_FUNCS_SINCE)
      .filter(([, r]) => r.since <= minor && (r.until === undefined || minor < r.until))
      .map(([n]) => n)
      .sort();
    t.same(own, want, `1.${minor}`);
  }
  t.notOk(istioFuncMap({ minor: 29, env: {} }).has('omitNil'), '1.29: no omitNil');
  t.notOk(istioFuncMap({ minor: 20, env: {} }).has('mergeMaps'), '1.20: no mergeMaps');
  t.ok(istioFuncMap({ minor: 21, env: {} }).has('mergeMaps'), '1.21: mergeMaps');
});

const run = (minor: number, text: string, data: unknown): string =>
  GoTemplate.parse('t', text, istioFuncMap({ minor, env: {} })).execute(dynamic(data));

t.test('omitNil (1.30): drops nils recursively, empty-after-dropping becomes nil, keeps the rest', async (t) => {
  const r = {
    limits: { cpu: null, memory: '500Mi', 'ephemeral-storage': null },
    requests: { cpu: '100m', memory: null },
    gone: { a: null, b: { c: null } },
    keepEmpty: {},
    list: [null, 'a', { x: null }, { y: 1, z: null }, []],
  };
  const out = parse(run(30, '{{ toYaml (omitNil .r) }}', { r })) as Record<string, unknown>;
  t.same(out, { limits: { memory: '500Mi' }, requests: { cpu: '100m' }, keepEmpty: {}, list: ['a', { y: 1 }, []] });
  t.same(r.limits, { cpu: null, memory: '500Mi', 'ephemeral-storage': null }, 'the values themselves are not changed');
  t.equal(run(30, '{{ toYaml (omitNil .r) }}', { r: { a: null } }), 'null\n', 'all nil → nil (Go yaml.Marshal(nil))');
  t.equal(run(30, '{{ toYaml (omitNil .missing) }}', {}), 'null\n', 'a missing value is nil');
  t.equal(run(30, '{{ omitNil .s }}', { s: 'text' }), 'text', 'scalars pass through');
  t.throws(() => run(29, '{{ omitNil .r }}', { r: {} }), /function "omitNil" not defined/, 'not at 1.29, as in Go');
});

t.test(
  'otelResourceAttributes (1.30): only with OTel semantic-convention enrichment; Go order and fallbacks',
  async (t) => {
    const call =
      '{{ otelResourceAttributes .MeshConfig .ObjectMeta.Annotations .ObjectMeta.Labels .DeploymentMeta.Namespace .Spec.Containers }}';
    const mesh = {
      extensionProviders: [
        {
          name: 'otel',
          opentelemetry: { service: 'c', port: 4317, serviceAttributeEnrichment: 'OTEL_SEMANTIC_CONVENTIONS' },
        },
      ],
    };
    const { sidecarTemplateValue } = await import('../../../src/drivers/istio/go-model.ts');
    const data = (
      meshConfig: unknown,
      annotations: Record<string, string>,
      labels: Record<string, string>,
      containers: unknown[],
    ) =>
      sidecarTemplateValue({
        TypeMeta: { kind: 'Deployment', apiVersion: 'apps/v1' },
        DeploymentMeta: { Name: 'd', Namespace: 'shop' },
        ObjectMeta: { annotations, labels },
        Spec: { containers },
        ProxyConfig: {},
        MeshConfig: meshConfig,
        Values: {},
        Revision: '',
        NativeSidecars: false,
        ProxyImage: '',
        ProxyInitImage: '',
        ProxyUID: 1337,
        ProxyGID: 1337,
        InboundTrafficPolicyMode: 'passthrough',
        CompliancePolicy: '',
      });
    const exec = (d: ReturnType<typeof data>) =>
      GoTemplate.parse('t', call, istioFuncMap({ minor: 30, env: {} })).execute(d);
    t.equal(exec(data({}, {}, {}, [{ name: 'app', image: 'nginx:1.21' }])), '', 'no enrichment → empty');
    t.equal(
      exec(data(mesh, {}, {}, [{ name: 'app', image: 'reg:5000/nginx:1.21@sha256:abc' }])),
      'service.namespace=shop,service.version=1.21@sha256:abc,service.instance.id=shop.$(POD_NAME).app',
    );
    t.equal(
      exec(
        data(mesh, { 'resource.opentelemetry.io/service.namespace': 'n2' }, { 'app.kubernetes.io/version': 'v9' }, [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y:2' },
        ]),
      ),
      'service.namespace=n2,service.version=v9,service.instance.id=shop.$(POD_NAME).a',
      'instance id uses the namespace argument, not the annotation',
    );
    t.equal(
      exec(
        data(mesh, { 'resource.opentelemetry.io/service.instance.id': 'i' }, {}, [
          { name: 'a', image: 'reg:5000/x' },
          { name: 'b' },
        ]),
      ),
      'service.namespace=shop,service.instance.id=i',
      'two containers and no version source: no service.version',
    );
  },
);

t.test(
  'Istio 1.30 through the CLI: OTEL_RESOURCE_ATTRIBUTES per workload (plans verified), no enrichment no variable',
  needs(VERSIONS),
  async (t) => {
    const { runCli } = await import('../../helpers/e2e.ts');
    const { buildResourceList, caseFnConfig } = await import('../../../scripts/conformance/runner.ts');
    const caseDir = join(versionsRoot, '1.30.0/cases/hello-otel-semconv');
    const caseYaml = parse(readFileSync(join(caseDir, 'case.yaml'), 'utf8'));
    const deployment = (name: string, ns: string, version: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata:
      labels: {app: ${name}${version ? `, app.kubernetes.io/version: "${version}"` : ''}}
    spec:
      containers:
      - {name: ${name}-c, image: "reg.example:5000/${name}:2.${name.length}"}
`;
    const input = [
      deployment('alpha', 'shop', 'v1'),
      deployment('bravo', 'shop', ''),
      deployment('charlie', 'ops', 'v3'),
    ].join('---\n');
    const otelOf = (stdout: string) => {
      const rl = parse(stdout) as {
        items: Array<{
          metadata: { name: string };
          spec: {
            template: {
              spec: {
                initContainers?: Array<{ name: string; env?: Array<{ name: string; value?: string }> }>;
                containers: Array<{ name: string; env?: Array<{ name: string; value?: string }> }>;
              };
            };
          };
        }>;
      };
      return Object.fromEntries(
        rl.items.map((d) => {
          const proxy = [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers].find(
            (c) => c.name === 'istio-proxy',
          );
          return [d.metadata.name, proxy?.env?.find((e) => e.name === 'OTEL_RESOURCE_ATTRIBUTES')?.value ?? '(none)'];
        }),
      );
    };
    const withOtel = runCli([], {
      input: buildResourceList(input, caseFnConfig(caseDir, caseYaml)),
      env: { MESHINJECT_VERIFY_PLANS: '1' },
    });
    t.equal(withOtel.status, 0, withOtel.stderr);
    t.same(otelOf(withOtel.stdout), {
      alpha: 'service.namespace=shop,service.version=v1,service.instance.id=shop.$(POD_NAME).alpha-c',
      bravo: 'service.namespace=shop,service.version=2.5,service.instance.id=shop.$(POD_NAME).bravo-c',
      charlie: 'service.namespace=ops,service.version=v3,service.instance.id=ops.$(POD_NAME).charlie-c',
    });
    const fc = parse(caseFnConfig(caseDir, caseYaml)) as { spec: { istio: { meshConfig: Record<string, unknown> } } };
    delete fc.spec.istio.meshConfig.extensionProviders;
    const plain = runCli([], {
      input: buildResourceList(input, JSON.stringify(fc)),
      env: { MESHINJECT_VERIFY_PLANS: '1' },
    });
    t.equal(plain.status, 0, plain.stderr);
    t.same(otelOf(plain.stdout), { alpha: '(none)', bravo: '(none)', charlie: '(none)' });
  },
);
