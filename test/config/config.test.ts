import t from 'tap';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import type { LoadResult } from '../../src/config/load.ts';
import type { IstioSettings } from '../../src/drivers/istio/config.ts';
import { loadConfig } from '../helpers/config.ts';
import { driverNames } from '../../src/drivers/registry.ts';
import type { Config } from '../../src/model.ts';
import { ISTIO_CHART_VALUES, ISTIO_MESH_DEFAULTS } from '../../src/drivers/istio/defaults.ts';
import type { JsonObject } from '../../src/model.ts';
import { corpus, needs } from '../helpers/data.ts';

const KRM_INPUTS = corpus('krm-inputs');
const ISTIO = corpus('conformance/istio');

const sidecarInjection = (spec?: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'meshinject.dev/v1alpha1',
  kind: 'SidecarInjection',
  metadata: { name: 'cfg' },
  ...(spec === undefined ? {} : { spec }),
  ...extra,
});
const configMap = (data?: unknown) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'function-input' },
  ...(data === undefined ? {} : { data }),
});

/** A valid result, with the Istio driver's settings shown under `config.istio` for the assertions. */
function ok(r: LoadResult): { config: Config & { istio: IstioSettings }; warnings: string[] } {
  if (!r.ok) throw new Error(`expected a valid config, got ${JSON.stringify(r.issues, null, 2)}`);
  return { config: { ...r.config, istio: r.settings as IstioSettings }, warnings: r.warnings };
}
function issues(r: LoadResult) {
  if (r.ok) throw new Error('expected issues');
  return r.issues;
}
const paths = (r: LoadResult) =>
  issues(r)
    .map((i) => i.path)
    .sort();
const messageAt = (r: LoadResult, path: string) =>
  issues(r).find((i) => i.path === path)?.message ?? `<no issue at ${path}>`;
const get = (o: JsonObject, dotted: string) =>
  dotted.split('.').reduce<unknown>((cur, k) => (cur as JsonObject | undefined)?.[k], o);

/** The functionConfig of a recorded runner input (krm-inputs), or undefined when the test data is missing. */
function functionConfigOf(fixture: string): unknown {
  if (!KRM_INPUTS.url) return undefined;
  return parse(readFileSync(new URL(fixture, KRM_INPUTS.url), 'utf8')).functionConfig;
}

t.test('no config, null, the kpt placeholder and an empty SidecarInjection all give the defaults', async (t) => {
  const base = ok(loadConfig(undefined));
  t.same(base.warnings, []);
  const c = base.config;
  t.equal(c.mesh, 'istio');
  t.equal(c.policy, 'enabled');
  t.equal(c.namespaceSelector, undefined);
  t.same(c.namespaces, []);
  t.equal(c.defaultNamespace, 'default');
  t.same(c.ignoredNamespaces, ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage']);
  t.same([c.neverInjectSelector, c.alwaysInjectSelector, c.workloadKinds], [[], [], []]);
  t.equal(c.nativeSidecars, false);
  t.equal(c.resultAnnotations, true);
  t.same(
    [
      c.istio.revision,
      c.istio.revisionTags,
      c.istio.selection,
      c.istio.strictInjectValues,
      c.istio.platform,
      c.istio.compliancePolicy,
      c.istio.enableNamespacesByDefault,
    ],
    ['', [], 'kube-inject', false, '', '', false],
  );
  for (const [name, fc] of [
    ['null', null],
    ...(KRM_INPUTS.path ? [['kpt eval placeholder (fixture)', functionConfigOf('kpt-eval-noargs.yaml')] as const] : []),
    ['ConfigMap without data', configMap()],
    ['ConfigMap with data: null', configMap(null)],
    ['SidecarInjection without spec', sidecarInjection()],
    ['SidecarInjection with empty spec', sidecarInjection({})],
  ] as const) {
    t.same(ok(loadConfig(fc)).config, c, name);
  }
});

t.test('every problem is reported at once, each naming its field and the expectation', async (t) => {
  const r = loadConfig(
    sidecarInjection({
      policy: 'on',
      mesh: 'consul',
      nativeSidecars: 'yes',
      defaultNamespace: 'Prod',
      ignoredNamespaces: 'kube-system',
      namespaces: [{ name: 'a', labels: { x: 1 } }, { labels: {} }],
      namespaceSelector: { matchLabels: { ok: 'yes' }, matchExpression: [] },
      workloadKinds: [{ kind: 'Rollout' }],
      istio: { revision: 'Canary', values: 42, selection: 'auto', extra: true },
      colour: 'blue',
    }),
  );
  t.same(paths(r), [
    'spec.colour',
    'spec.defaultNamespace',
    'spec.ignoredNamespaces',
    'spec.istio.extra',
    'spec.istio.revision',
    'spec.istio.selection',
    'spec.istio.values',
    'spec.mesh',
    'spec.namespaceSelector.matchExpression',
    'spec.namespaces[0].labels.x',
    'spec.namespaces[1].name',
    'spec.nativeSidecars',
    'spec.policy',
    'spec.workloadKinds[0].templatePath',
  ]);
  t.equal(messageAt(r, 'spec.policy'), 'spec.policy must be one of enabled, disabled; got "on"');
  t.equal(
    messageAt(r, 'spec.mesh'),
    `spec.mesh: unknown mesh "consul"; known meshes: ${driverNames().join(', ')}`,
    'OSM InstallDriver rule: the known drivers are listed',
  );
  t.ok(driverNames().includes('istio'));
  t.equal(messageAt(r, 'spec.nativeSidecars'), 'spec.nativeSidecars must be true, false or auto; got "yes"');
  t.equal(messageAt(r, 'spec.ignoredNamespaces'), 'spec.ignoredNamespaces must be an array; got "kube-system"');
  t.equal(messageAt(r, 'spec.istio.values'), 'spec.istio.values must be an object or a string; got number 42');
  t.equal(messageAt(r, 'spec.namespaces[0].labels.x'), 'spec.namespaces[0].labels.x must be a string; got number 1');
  t.equal(messageAt(r, 'spec.namespaces[1].name'), 'spec.namespaces[1].name is required');
  t.equal(messageAt(r, 'spec.workloadKinds[0].templatePath'), 'spec.workloadKinds[0].templatePath is required');
  t.match(messageAt(r, 'spec.defaultNamespace'), /^spec\.defaultNamespace must be a DNS label .*; got "Prod"$/);
  t.match(messageAt(r, 'spec.istio.revision'), /^spec\.istio\.revision must be empty or a DNS label .*; got "Canary"$/);
  t.equal(messageAt(r, 'spec.istio.selection'), 'spec.istio.selection must be one of kube-inject, webhook; got "auto"');
  t.match(
    messageAt(r, 'spec.colour'),
    /^spec\.colour is not a known field; expected one of: mesh, policy, namespaceSelector, /,
  );
  t.equal(
    messageAt(r, 'spec.namespaceSelector.matchExpression'),
    'spec.namespaceSelector.matchExpression is not a known field (did you mean spec.namespaceSelector.matchExpressions?); expected one of: matchLabels, matchExpressions',
  );
  t.match(messageAt(r, 'spec.istio.extra'), /expected one of: values, meshConfig, revision, revisionTags, selection, /);
});

t.test('semantic checks join the schema issues', async (t) => {
  const r = loadConfig(
    sidecarInjection({
      mesh: 'Consul',
      namespaces: [{ name: 'shop' }, { name: 'shop' }],
      neverInjectSelector: [{ matchExpressions: [{ key: 'a', operator: 'In' }] }],
      alwaysInjectSelector: [{ matchLabels: { 'bad key': 'x' } }],
      policy: 'sometimes',
    }),
  );
  t.same(paths(r), [
    'spec.alwaysInjectSelector[0].matchLabels[bad key]',
    'spec.mesh',
    'spec.namespaces[1].name',
    'spec.neverInjectSelector[0].matchExpressions[0].values',
    'spec.policy',
  ]);
  t.equal(messageAt(r, 'spec.mesh'), 'spec.mesh must be a driver name such as istio; got "Consul"');
  t.match(messageAt(r, 'spec.namespaces[1].name'), 'namespace shop is listed twice (also spec.namespaces[0])');
});

t.test('a functionConfig of another kind names the kind and the accepted kinds', async (t) => {
  const accepted = 'accepted kinds: ConfigMap (apiVersion v1), SidecarInjection (apiVersion meshinject.dev/v1alpha1)';
  t.same(issues(loadConfig({ apiVersion: 'fn.kpt.dev/v1alpha1', kind: 'SetLabels', spec: {} })), [
    { path: 'kind', message: `functionConfig has kind "SetLabels" (apiVersion "fn.kpt.dev/v1alpha1"); ${accepted}` },
  ]);
  t.equal(issues(loadConfig({ data: {} }))[0]!.message, `functionConfig has no kind; ${accepted}`);
  t.match(issues(loadConfig('policy: enabled'))[0]!.message, /functionConfig must be an object .*; got string/);
  t.same(issues(loadConfig(sidecarInjection({}, { apiVersion: 'fn.kpt.dev/v1alpha1' }))), [
    { path: 'apiVersion', message: 'apiVersion must be meshinject.dev/v1alpha1; got "fn.kpt.dev/v1alpha1"' },
  ]);
  t.equal(
    messageAt(loadConfig({ ...configMap({}), apiVersion: 'v2' }), 'apiVersion'),
    'apiVersion must be v1; got "v2"',
  );
});

t.test('ConfigMap form: documented keys are parsed from strings', async (t) => {
  const { config: c } = ok(
    loadConfig(
      configMap({
        mesh: 'istio',
        policy: 'disabled',
        namespaceSelector: 'mesh=on,env in (prod, staging)',
        defaultNamespace: 'shop',
        ignoredNamespaces: ' kube-system , batch ',
        nativeSidecars: 'true',
        resultAnnotations: 'false',
        'istio.revision': 'canary',
        'istio.revisionTags': 'prod,stable',
        'istio.selection': 'webhook',
        'istio.strictInjectValues': 'true',
        'istio.platform': 'openshift',
        'istio.compliancePolicy': 'fips-140-3',
        'istio.enableNamespacesByDefault': 'true',
      }),
    ),
  );
  t.equal(c.policy, 'disabled');
  t.same(c.namespaceSelector, {
    matchLabels: { mesh: 'on' },
    matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'staging'] }],
  });
  t.equal(c.defaultNamespace, 'shop');
  t.same(c.ignoredNamespaces, ['kube-system', 'batch']);
  t.same([c.nativeSidecars, c.resultAnnotations], [true, false]);
  t.same(
    [
      c.istio.revision,
      c.istio.revisionTags,
      c.istio.selection,
      c.istio.strictInjectValues,
      c.istio.platform,
      c.istio.compliancePolicy,
      c.istio.enableNamespacesByDefault,
    ],
    ['canary', ['prod', 'stable'], 'webhook', true, 'openshift', 'fips-140-3', true],
  );
  t.same(ok(loadConfig(configMap({ ignoredNamespaces: '' }))).config.ignoredNamespaces, [], 'empty list means none');
  t.equal(
    ok(loadConfig(configMap({ namespaceSelector: '' }))).config.namespaceSelector,
    undefined,
    'empty selector means every namespace',
  );
});

t.test('ConfigMap form: unknown keys, non-string values and bad strings are all reported', async (t) => {
  const r = loadConfig(
    configMap({
      polcy: 'enabled',
      nativeSidecars: true,
      resultAnnotations: 'yes',
      ignoredNamespaces: 'kube-system,,Bad',
      namespaceSelector: 'env in (a',
      'istio.meshConfig': 'defaultConfig: [',
      'istio.revision': 'v1.2',
    }),
  );
  t.same(paths(r), [
    'data.ignoredNamespaces',
    'data.istio.meshConfig',
    'data.istio.revision',
    'data.namespaceSelector',
    'data.nativeSidecars',
    'data.polcy',
    'data.resultAnnotations',
  ]);
  t.match(
    messageAt(r, 'data.polcy'),
    /^data\.polcy is not a known key \(did you mean data\.policy\?\); expected one of: mesh, policy, namespaceSelector, defaultNamespace, ignoredNamespaces, nativeSidecars, resultAnnotations, mode, unknownNamespaces, removeWhenSkipped, kindPolicies, custom\.templateConfigMaps, fsm\.meshName, fsm\.namespace, istio\.revision, /,
  );
  t.equal(
    messageAt(r, 'data.nativeSidecars'),
    'data.nativeSidecars must be one of "true", "false", auto; got boolean true (ConfigMap data values are strings: quote the value)',
  );
  t.equal(messageAt(r, 'data.resultAnnotations'), 'data.resultAnnotations must be one of "true", "false"; got "yes"');
  t.match(messageAt(r, 'data.ignoredNamespaces'), /must be a comma-separated list of DNS labels/);
  t.match(messageAt(r, 'data.namespaceSelector'), /^data\.namespaceSelector is not a valid label selector: unbalanced/);
  t.match(messageAt(r, 'data.istio.meshConfig'), /^data\.istio\.meshConfig is a string but not valid YAML: /);
  const semantic = loadConfig(configMap({ namespaceSelector: 'a in ()', mesh: 'nosuchmesh' }));
  t.same(paths(semantic), ['data.mesh', 'data.namespaceSelector.matchExpressions[0].values']);
});

t.test('ConfigMap from kpt eval key=value arguments: the foreign keys are named', needs(KRM_INPUTS), async (t) => {
  t.same(paths(loadConfig(functionConfigOf('kpt-eval-kvargs.yaml'))), ['data.key', 'data.value']);
});

t.test('Istio values pasted as the istio-sidecar-injector ConfigMap JSON', async (t) => {
  const pasted = JSON.stringify(
    {
      global: { hub: 'gcr.io/mine', proxy: { autoInject: 'disabled' } },
      sidecarInjectorWebhook: {
        enableNamespacesByDefault: true,
        neverInjectSelector: [{ matchLabels: { job: 'batch' } }],
        alwaysInjectSelector: [],
      },
      revision: 'canary',
    },
    null,
    2,
  );
  const { config: c, warnings } = ok(loadConfig(sidecarInjection({ istio: { values: pasted } })));
  t.same(warnings, []);
  t.equal(c.policy, 'disabled', 'policy from global.proxy.autoInject');
  t.same(c.neverInjectSelector, [{ matchLabels: { job: 'batch' } }]);
  t.equal(c.istio.enableNamespacesByDefault, true);
  t.equal(c.istio.revision, 'canary');
  t.equal(get(c.istio.values, 'global.hub'), 'gcr.io/mine');
  const chartGlobal = ISTIO_CHART_VALUES.global as JsonObject;
  const untouched = Object.keys(chartGlobal).find((k) => k !== 'hub' && k !== 'proxy');
  t.ok(untouched, 'the chart defaults have other global keys');
  t.same(
    get(c.istio.values, `global.${untouched}`),
    chartGlobal[untouched!],
    'chart defaults kept under the pasted values',
  );

  const explicit = ok(loadConfig(sidecarInjection({ policy: 'enabled', istio: { values: pasted, revision: '' } })));
  t.equal(explicit.config.policy, 'enabled', 'explicit spec.policy wins');
  t.equal(explicit.config.istio.revision, '', 'explicit spec.istio.revision wins');
  t.equal(get(explicit.config.istio.values, 'global.proxy.autoInject'), 'enabled', 'values follow the resolved policy');
  t.equal(get(explicit.config.istio.values, 'revision'), '', 'values follow the resolved revision');
  t.same(explicit.warnings.sort(), [
    'spec.istio.revision ("") overrides spec.istio.values.revision ("canary")',
    'spec.policy ("enabled") overrides spec.istio.values.global.proxy.autoInject ("disabled")',
  ]);

  const fromConfigMap = ok(loadConfig(configMap({ 'istio.values': pasted })));
  t.equal(fromConfigMap.config.policy, 'disabled', 'the ConfigMap form takes the same pasted JSON');

  const yamlValues = ok(loadConfig(sidecarInjection({ istio: { values: 'global:\n  tag: 1.2.3\n' } })));
  t.equal(get(yamlValues.config.istio.values, 'global.tag'), '1.2.3', 'values may also be YAML');
});

t.test('invalid settings inside pasted values are named by their values path', async (t) => {
  const r = loadConfig(
    sidecarInjection({
      istio: {
        values: {
          global: { proxy: { autoInject: 'sometimes' } },
          sidecarInjectorWebhook: { neverInjectSelector: 'app=x', enableNamespacesByDefault: 'yes' },
          revision: 'Canary',
        },
      },
    }),
  );
  t.same(paths(r), [
    'spec.istio.values.global.proxy.autoInject',
    'spec.istio.values.revision',
    'spec.istio.values.sidecarInjectorWebhook.enableNamespacesByDefault',
    'spec.istio.values.sidecarInjectorWebhook.neverInjectSelector',
  ]);
  t.equal(
    messageAt(r, 'spec.istio.values.global.proxy.autoInject'),
    'spec.istio.values.global.proxy.autoInject must be enabled or disabled; got "sometimes"',
  );
  const bad = loadConfig(
    sidecarInjection({
      istio: {
        values: {
          sidecarInjectorWebhook: { alwaysInjectSelector: [{ matchExpressions: [{ key: 'a', operator: 'NotIn' }] }] },
        },
      },
    }),
  );
  t.same(paths(bad), ['spec.istio.values.sidecarInjectorWebhook.alwaysInjectSelector[0].matchExpressions[0].values']);
  t.match(
    messageAt(loadConfig(sidecarInjection({ istio: { values: '{"global": ' } })), 'spec.istio.values'),
    /is a string but not valid JSON or YAML/,
  );
  t.match(
    messageAt(loadConfig(sidecarInjection({ istio: { values: '- a\n- b\n' } })), 'spec.istio.values'),
    /must hold a JSON or YAML object .*; got a list/,
  );
});

t.test('mesh config pasted as the istio ConfigMap mesh YAML', async (t) => {
  const mesh = [
    'defaultConfig:',
    '  discoveryAddress: istiod-canary.istio-system.svc:15012',
    '  proxyMetadata:',
    '    ISTIO_META_DNS_CAPTURE: "true"',
    'trustDomain: example.org',
    '',
  ].join('\n');
  const { config: c } = ok(loadConfig(sidecarInjection({ istio: { meshConfig: mesh } })));
  t.equal(get(c.istio.meshConfig, 'trustDomain'), 'example.org');
  t.equal(get(c.istio.meshConfig, 'defaultConfig.discoveryAddress'), 'istiod-canary.istio-system.svc:15012');
  t.equal(get(c.istio.meshConfig, 'defaultConfig.proxyMetadata.ISTIO_META_DNS_CAPTURE'), 'true');
  const untouched = Object.keys(ISTIO_MESH_DEFAULTS).find((k) => k !== 'trustDomain' && k !== 'defaultConfig');
  t.ok(untouched, 'the mesh defaults have other keys');
  t.same(c.istio.meshConfig[untouched!], ISTIO_MESH_DEFAULTS[untouched!], 'mesh defaults kept');
  t.same(
    ok(loadConfig(configMap({ 'istio.meshConfig': mesh }))).config.istio.meshConfig,
    c.istio.meshConfig,
    'same through the ConfigMap form',
  );
  t.same(
    ok(loadConfig(sidecarInjection({ istio: { meshConfig: '' } }))).config.istio.meshConfig,
    ISTIO_MESH_DEFAULTS,
    'empty text is no override',
  );
});

t.test('workload kinds take a dot path or an array', async (t) => {
  const { config: c } = ok(
    loadConfig(
      sidecarInjection({
        workloadKinds: [
          { kind: 'Rollout', apiVersion: 'argoproj.io/v1alpha1', templatePath: 'spec.template' },
          { kind: 'CronTab', templatePath: ['spec', 'jobTemplate', 'spec', 'template'] },
        ],
      }),
    ),
  );
  t.same(c.workloadKinds, [
    { kind: 'Rollout', apiVersion: 'argoproj.io/v1alpha1', templatePath: ['spec', 'template'] },
    { kind: 'CronTab', templatePath: ['spec', 'jobTemplate', 'spec', 'template'] },
  ]);
  const r = loadConfig(
    sidecarInjection({
      workloadKinds: [
        { kind: 'X', templatePath: 'spec..template' },
        { kind: 'Y', templatePath: [] },
      ],
    }),
  );
  t.same(paths(r), ['spec.workloadKinds[0].templatePath', 'spec.workloadKinds[1].templatePath']);
  t.match(messageAt(r, 'spec.workloadKinds[0].templatePath'), /must be a dot path such as spec\.template/);
});

t.test('webhook-only settings warn when selection is kube-inject', async (t) => {
  const { warnings } = ok(
    loadConfig(sidecarInjection({ istio: { revisionTags: ['prod'], enableNamespacesByDefault: true } })),
  );
  t.same(warnings, [
    'spec.istio.revisionTags has no effect unless spec.istio.selection is webhook',
    'spec.istio.enableNamespacesByDefault has no effect unless spec.istio.selection is webhook',
  ]);
  t.same(ok(loadConfig(sidecarInjection({ istio: { selection: 'webhook', revisionTags: ['prod'] } }))).warnings, []);
});

t.test('runner metadata on the functionConfig is accepted (kustomize / kpt configPath annotations)', async (t) => {
  const fc = sidecarInjection(
    { policy: 'disabled' },
    {
      metadata: {
        name: 'x',
        annotations: {
          'config.kubernetes.io/function': 'exec:\n  path: ./meshinject\n',
          'config.kubernetes.io/local-config': 'true',
        },
      },
    },
  );
  t.equal(ok(loadConfig(fc)).config.policy, 'disabled');
});

t.test('every conformance case fn-config loads', needs(ISTIO), async (t) => {
  const casesDir = new URL('cases/', ISTIO.url);
  const cases = readdirSync(casesDir);
  t.ok(cases.length > 50, 'corpus present');
  let openshift = 0;
  for (const name of cases) {
    const fc = parse(readFileSync(new URL(`${name}/fn-config.yaml`, casesDir), 'utf8'));
    const r = loadConfig(fc);
    if (!r.ok) {
      t.fail(`${name}: ${JSON.stringify(r.issues)}`);
      continue;
    }
    t.equal(r.config.nativeSidecars, fc.spec.nativeSidecars ?? false, `${name}: nativeSidecars`);
    const istio = ok(r).config.istio;
    t.equal(get(istio.values, 'global.hub'), fc.spec.istio.values.global.hub, `${name}: hub from the case values`);
    if (istio.platform === 'openshift') openshift++;
  }
  t.ok(openshift > 0, 'some cases use the openshift platform');
});

t.test('any JSON under spec or data yields a config or issues, never an exception', async (t) => {
  const keys = [
    'mesh',
    'policy',
    'namespaceSelector',
    'namespaces',
    'neverInjectSelector',
    'workloadKinds',
    'istio',
    'nativeSidecars',
  ];
  const istioKeys = ['values', 'meshConfig', 'revision', 'revisionTags', 'selection', 'enableNamespacesByDefault'];
  const spec = fc.dictionary(
    fc.constantFrom(...keys),
    fc.oneof(fc.jsonValue(), fc.dictionary(fc.constantFrom(...istioKeys), fc.jsonValue())),
  );
  fc.assert(
    fc.property(spec, (s) => {
      const r = loadConfig(sidecarInjection(s));
      return r.ok || r.issues.length > 0;
    }),
    { numRuns: 300 },
  );
  const data = fc.dictionary(
    fc.constantFrom(
      'policy',
      'namespaceSelector',
      'ignoredNamespaces',
      'istio.values',
      'istio.meshConfig',
      'nativeSidecars',
    ),
    fc.oneof(fc.string(), fc.jsonValue()),
  );
  fc.assert(
    fc.property(data, (d) => {
      const r = loadConfig(configMap(d));
      return r.ok || r.issues.length > 0;
    }),
    { numRuns: 300 },
  );
  t.pass('no exception in 600 random configs');
});

t.test('image values of the wrong type are errors naming the field; a float tag is a warning', async (t) => {
  const hub = loadConfig(sidecarInjection({ istio: { values: { global: { hub: { a: 1 }, tag: [1] } } } }));
  t.same(paths(hub), ['spec.istio.values.global.hub', 'spec.istio.values.global.tag']);
  t.equal(messageAt(hub, 'spec.istio.values.global.hub'), 'spec.istio.values.global.hub must be a string; got {"a":1}');
  const float = ok(loadConfig(sidecarInjection({ istio: { values: 'global:\n  tag: 1.20\n' } })));
  t.match(float.warnings.join('\n'), /spec\.istio\.values\.global\.tag is the number 1\.2: .* quote it \("1\.20"\)/);
  t.same(
    ok(loadConfig(sidecarInjection({ istio: { values: { global: { tag: 131 } } } }))).warnings,
    [],
    'an integer tag is fine',
  );
});
