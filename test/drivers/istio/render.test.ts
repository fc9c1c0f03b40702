import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { loaded, type Loaded } from '../../helpers/config.ts';
import type { WorkloadRef } from '../../../src/contract/driver.ts';
import { applyImageType, resolveProxyImage, resolveProxyInitImage } from '../../../src/drivers/istio/images.ts';
import { effectiveProxyConfig, proxyConfigToJSON } from '../../../src/drivers/istio/proxy-config.ts';
import {
  ISTIO_TEMPLATE_NAMES,
  renderIstioTemplate,
  selectedTemplates,
  type RenderedFragment,
} from '../../../src/drivers/istio/render.ts';
import { buildTemplateData, openshiftProxyIds } from '../../../src/drivers/istio/template-data.ts';
import { podDeployMeta } from '../../../src/drivers/istio/workload-meta.ts';
import type { JsonObject, PodTemplate } from '../../../src/model.ts';
import { InjectError } from '../../../src/results/errors.ts';
import { formatGoDuration, formatGoFloat } from '../../../src/render/go-values.ts';
import {
  appendMultusNetwork,
  appendMultusNetworkTo,
  excludeInboundPort,
  ISTIO_TEMPLATE_FUNCTIONS,
  omitNil,
  otelResourceAttributes,
} from '../../../src/drivers/istio/template-functions.ts';
import { PRECOMPILED } from '../../../src/drivers/templates-precompiled.gen.js';
import { TEMPLATES } from '../../../src/drivers/templates.gen.ts';
import { createTemplateEngine } from '../../../src/render/engine.ts';
import { readdirSync } from 'node:fs';
import { canonicalQuantity } from '../../../src/drivers/istio/quantity.ts';
import { corpus, needs } from '../../helpers/data.ts';

const ISTIO = corpus('conformance/istio');
const casesDir = new URL('cases/', ISTIO.url ?? 'file:///nonexistent/');
const read = (c: string, f: string): string => readFileSync(new URL(`${c}/${f}`, casesDir), 'utf8');

/** Containers, volumes and metadata of the first pod template in a manifest (Deployment or Pod). */
function firstPod(doc: JsonObject): { pod: PodTemplate; workload: WorkloadRef } {
  const meta = (doc.metadata ?? {}) as JsonObject;
  const workload: WorkloadRef = {
    apiVersion: String(doc.apiVersion),
    kind: String(doc.kind),
    name: String(meta.name ?? ''),
    namespace: String(meta.namespace ?? 'default'),
    namespaceDefaulted: meta.namespace === undefined,
  };
  if (doc.kind === 'Pod')
    return { pod: { metadata: meta as PodTemplate['metadata'], spec: doc.spec as JsonObject }, workload };
  const template = (doc.spec as JsonObject).template as JsonObject;
  return {
    pod: { metadata: (template.metadata ?? {}) as PodTemplate['metadata'], spec: template.spec as JsonObject },
    workload,
  };
}

function configOf(caseName: string): Loaded {
  return loaded(parse(read(caseName, 'fn-config.yaml')));
}

/** The template data of the case's input under its fn-config, and the templates its pod selects. */
function caseData(caseName: string): { data: ReturnType<typeof buildTemplateData>; names: string[] } {
  const { config, istio } = configOf(caseName);
  const { pod, workload } = firstPod(parseAllDocuments(read(caseName, 'input.yaml'))[0]!.toJSON() as JsonObject);
  if (workload.namespaceDefaulted) workload.namespace = config.defaultNamespace;
  const namespace = config.namespaces.find((n) => n.name === workload.namespace);
  const proxyConfig = effectiveProxyConfig(istio.meshConfig, pod.metadata.annotations);
  const data = buildTemplateData({
    pod,
    workload,
    ...(namespace ? { namespace } : {}),
    settings: istio,
    proxyConfig,
    nativeSidecars: config.nativeSidecars,
  });
  return { data, names: selectedTemplates(pod.metadata.annotations) };
}

/** Renders the case's input with its fn-config: every selected template, in order. */
function renderCase(caseName: string): RenderedFragment[] {
  const { data, names } = caseData(caseName);
  return names.map((name) => renderIstioTemplate(name, data));
}

function expectedPod(caseName: string): PodTemplate {
  return firstPod(parseAllDocuments(read(caseName, 'expected.yaml'))[0]!.toJSON() as JsonObject).pod;
}

type Container = JsonObject & { name: string; env?: Array<JsonObject & { name: string; value?: string }> };
function container(spec: JsonObject | undefined, name: string): Container | undefined {
  const all = [...((spec?.initContainers ?? []) as Container[]), ...((spec?.containers ?? []) as Container[])];
  return all.find((c) => c.name === name);
}

function canonicalResources(r: unknown): unknown {
  if (!r || typeof r !== 'object') return r;
  return Object.fromEntries(
    Object.entries(r).map(([k, v]) => [
      k,
      Object.fromEntries(Object.entries(v as object).map(([kk, vv]) => [kk, canonicalQuantity(vv as string) ?? vv])),
    ]),
  );
}

/** Env entries the Go post-processing adds or moves after the template ran. */
const POST_PROCESSED_ENV = new Set(['ISTIO_KUBE_APP_PROBERS', 'ISTIO_PROMETHEUS_ANNOTATIONS']);
const JSON_ENV = new Set(['PROXY_CONFIG', 'ISTIO_META_POD_PORTS']);
function envAsData(env: Container['env']): unknown[] {
  return (env ?? [])
    .filter((e) => !POST_PROCESSED_ENV.has(e.name))
    .map((e) => (JSON_ENV.has(e.name) && typeof e.value === 'string' ? { ...e, value: JSON.parse(e.value) } : e));
}

/** Compares what the template alone determines for one injected container with the golden. */
function compareContainer(t: Test, got: Container | undefined, want: Container | undefined, fields: string[]): void {
  t.ok(got, `rendered ${want?.name}`);
  if (!got || !want) return;
  for (const f of fields) {
    if (f === 'env') t.same(envAsData(got.env), envAsData(want.env), `${want.name}.env`);
    else if (f === 'resources')
      t.same(canonicalResources(got.resources), canonicalResources(want.resources), `${want.name}.resources`);
    else t.same(got[f], want[f], `${want.name}.${f}`);
  }
}

const INIT_FIELDS = ['image', 'args', 'securityContext', 'resources', 'restartPolicy'];
const PROXY_FIELDS = [
  'image',
  'args',
  'env',
  'ports',
  'securityContext',
  'volumeMounts',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'restartPolicy',
  'resources',
];

function compareVolumes(t: Test, fragment: RenderedFragment, want: PodTemplate): void {
  const volumes = (fragment.spec?.volumes ?? []) as JsonObject[];
  const wantVolumes = ((want.spec.volumes ?? []) as JsonObject[]).filter((v) => volumes.some((g) => g.name === v.name));
  const dropEmpty = (v: JsonObject): JsonObject =>
    Object.fromEntries(
      Object.entries(v).filter(
        ([, x]) => x !== null && !(typeof x === 'object' && Object.keys(x as object).length === 0),
      ),
    );
  t.same(volumes.map(dropEmpty), wantVolumes.map(dropEmpty), 'volumes in order');
  t.ok(volumes.length > 0, 'renders volumes');
}

function compareMetadata(t: Test, fragment: RenderedFragment, want: PodTemplate): void {
  for (const [k, v] of Object.entries(fragment.metadata?.labels ?? {}))
    t.equal(v, want.metadata.labels?.[k], `label ${k}`);
  for (const [k, v] of Object.entries(fragment.metadata?.annotations ?? {}))
    t.equal(v, want.metadata.annotations?.[k], `annotation ${k}`);
}

t.test('sidecar template renders what the hello golden holds (native sidecars)', needs(ISTIO), async (t) => {
  const [fragment] = renderCase('hello');
  const want = expectedPod('hello');
  compareContainer(t, container(fragment!.spec, 'istio-init'), container(want.spec, 'istio-init'), INIT_FIELDS);
  compareContainer(t, container(fragment!.spec, 'istio-proxy'), container(want.spec, 'istio-proxy'), PROXY_FIELDS);
  t.same(
    ((fragment!.spec!.initContainers ?? []) as Container[]).map((c) => c.name),
    ['istio-init', 'istio-proxy'],
  );
  t.equal(fragment!.spec!.containers, undefined, 'no containers list when native');
  compareVolumes(t, fragment!, want);
  compareMetadata(t, fragment!, want);
  t.same(fragment!.metadata?.labels, {
    'security.istio.io/tlsMode': 'istio',
    'service.istio.io/canonical-name': 'hello',
    'service.istio.io/canonical-revision': 'latest',
  });
});

t.test('CNI: istio-validation container and traffic annotations', needs(ISTIO), async (t) => {
  const [fragment] = renderCase('hello-cni');
  const want = expectedPod('hello-cni');
  compareContainer(
    t,
    container(fragment!.spec, 'istio-validation'),
    container(want.spec, 'istio-validation'),
    INIT_FIELDS,
  );
  t.equal(container(fragment!.spec, 'istio-init'), undefined);
  const got = container(fragment!.spec, 'istio-proxy')!;
  const names = (got.env ?? []).map((e) => e.name);
  t.ok(
    names.indexOf('ISTIO_META_NETWORK') > names.indexOf('ISTIO_META_INTERCEPTION_MODE'),
    'template places the network env; Go moves it later',
  );
  t.equal(got.env?.find((e) => e.name === 'ISTIO_META_NETWORK')?.value, 'network1');
  compareMetadata(t, fragment!, want);
  t.equal(fragment!.metadata?.annotations?.['sidecar.istio.io/interceptionMode'], 'REDIRECT');
  t.equal(fragment!.metadata?.annotations?.['traffic.sidecar.istio.io/excludeInboundPorts'], '15020');
  t.equal(
    fragment!.metadata?.annotations?.['traffic.sidecar.istio.io/excludeOutboundIPRanges'],
    undefined,
    'empty range left out',
  );
});

t.test('multus CNI appends istio-cni to the networks annotation', needs(ISTIO), async (t) => {
  const [fragment] = renderCase('hello-existing-cncf-networks');
  t.equal(
    fragment!.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks'],
    expectedPod('hello-existing-cncf-networks').metadata.annotations?.['k8s.v1.cni.cncf.io/networks'],
  );
});

t.test('TPROXY interception', needs(ISTIO), async (t) => {
  const [fragment] = renderCase('hello-tproxy');
  const want = expectedPod('hello-tproxy');
  compareContainer(t, container(fragment!.spec, 'istio-init'), container(want.spec, 'istio-init'), INIT_FIELDS);
  compareContainer(t, container(fragment!.spec, 'istio-proxy'), container(want.spec, 'istio-proxy'), PROXY_FIELDS);
});

t.test('native sidecars off: proxy in containers, no restartPolicy nor preStop', needs(ISTIO), async (t) => {
  const [fragment] = renderCase('hello-old-version');
  const want = expectedPod('hello-old-version');
  t.same(
    ((fragment!.spec!.initContainers ?? []) as Container[]).map((c) => c.name),
    ['istio-init'],
  );
  t.same(
    ((fragment!.spec!.containers ?? []) as Container[]).map((c) => c.name),
    ['istio-proxy'],
  );
  compareContainer(t, container(fragment!.spec, 'istio-proxy'), container(want.spec, 'istio-proxy'), PROXY_FIELDS);
});

t.test('traffic, status and resource annotations', needs(ISTIO), async (t) => {
  for (const name of [
    'traffic-annotations',
    'traffic-params',
    'status-params',
    'kubevirtInterfaces',
    'reroute-virtual-interfaces',
    'resource-annotations',
    'proxy-resources-null',
    'hello-probes-localhost',
    'hello-otel-semconv',
    'user-volume',
    'truncate-canonical-name-pod',
    'hello-openshift',
  ]) {
    t.test(name, async (t) => {
      const [fragment] = renderCase(name);
      const want = expectedPod(name);
      const init = container(want.spec, 'istio-init') ? 'istio-init' : 'istio-validation';
      compareContainer(t, container(fragment!.spec, init), container(want.spec, init), INIT_FIELDS);
      compareContainer(t, container(fragment!.spec, 'istio-proxy'), container(want.spec, 'istio-proxy'), PROXY_FIELDS);
      compareVolumes(t, fragment!, want);
      compareMetadata(t, fragment!, want);
    });
  }
});

t.test('gateway template', needs(ISTIO), async (t) => {
  const fragments = renderCase('gateway');
  t.equal(fragments.length, 1);
  const want = expectedPod('gateway');
  const got = container(fragments[0]!.spec, 'istio-proxy');
  compareContainer(t, got, container(want.spec, 'istio-proxy'), [
    'args',
    'ports',
    'securityContext',
    'volumeMounts',
    'readinessProbe',
    'image',
  ]);
  const envNames = (got?.env ?? []).map((e) => e.name);
  t.same(
    envNames,
    (container(want.spec, 'istio-proxy')?.env ?? []).map((e) => e.name),
  );
  t.equal(fragments[0]!.spec!.initContainers, undefined);
  t.same(fragments[0]!.spec!.securityContext, want.spec.securityContext);
  compareVolumes(t, fragments[0]!, want);
  compareMetadata(t, fragments[0]!, want);
});

t.test('grpc templates', needs(ISTIO), async (t) => {
  const [simple] = renderCase('grpc-simple');
  const wantSimple = expectedPod('grpc-simple');
  compareContainer(
    t,
    container(simple!.spec, 'grpc-bootstrap-init'),
    container(wantSimple.spec, 'grpc-bootstrap-init'),
    ['image', 'command', 'env', 'volumeMounts'],
  );
  compareContainer(t, container(simple!.spec, 'traffic'), container(wantSimple.spec, 'traffic'), [
    'env',
    'volumeMounts',
  ]);
  compareMetadata(t, simple!, wantSimple);
  const [agent] = renderCase('grpc-agent');
  const wantAgent = expectedPod('grpc-agent');
  compareContainer(t, container(agent!.spec, 'istio-proxy'), container(wantAgent.spec, 'istio-proxy'), [
    'image',
    'args',
    'env',
    'ports',
    'lifecycle',
    'readinessProbe',
    'volumeMounts',
    'resources',
  ]);
  compareContainer(t, container(agent!.spec, 'traffic'), container(wantAgent.spec, 'traffic'), ['env', 'volumeMounts']);
  t.same(
    ((agent!.spec!.containers ?? []) as Container[]).map((c) => c.name),
    ['istio-proxy', 'traffic'],
    'status order',
  );
  compareVolumes(t, agent!, wantAgent);
  compareMetadata(t, agent!, wantAgent);
});

t.test('template selection', needs(ISTIO), async (t) => {
  t.same(selectedTemplates(undefined), ['sidecar']);
  t.same(selectedTemplates({ 'inject.istio.io/templates': 'sidecar, gateway ,sidecar' }), [
    'sidecar',
    'gateway',
    'sidecar',
  ]);
  t.same(ISTIO_TEMPLATE_NAMES, ['sidecar', 'gateway', 'grpc-simple', 'grpc-agent']);
  t.equal(renderCase('multiple-templates').length, 3);
  const config = configOf('hello');
  const { pod, workload } = firstPod(parseAllDocuments(read('hello', 'input.yaml'))[0]!.toJSON() as JsonObject);
  const data = buildTemplateData({
    pod,
    workload,
    settings: config.istio,
    proxyConfig: effectiveProxyConfig(config.istio.meshConfig, {}),
    nativeSidecars: true,
  });
  t.throws(() => renderIstioTemplate('custom', data), {
    message: 'requested template "custom" not found; have sidecar, gateway, grpc-simple, grpc-agent',
  });
  t.throws(() => renderIstioTemplate('custom', data), InjectError);
});

t.test('ProxyConfig: annotation merge and protoToJSON', needs(ISTIO), async (t) => {
  const mesh = configOf('traffic-annotations').istio.meshConfig;
  const annotations = parse(read('traffic-annotations', 'input.yaml')).spec.template.metadata.annotations as Record<
    string,
    string
  >;
  const pc = effectiveProxyConfig(mesh, annotations);
  t.same(JSON.parse(proxyConfigToJSON(pc)), {
    discoveryAddress: 'foo:123',
    concurrency: 0,
    proxyMetadata: { FOO: 'bar', ISTIO_META_TLS_CLIENT_KEY: '/etc/identity2/client/keys/client-key.pem' },
  });
  t.equal(
    proxyConfigToJSON(effectiveProxyConfig(mesh, undefined)),
    '{"proxyMetadata":{"ISTIO_META_TLS_CLIENT_KEY":"/etc/identity/client/keys/client-key.pem"}}',
  );
  t.equal(proxyConfigToJSON(effectiveProxyConfig(configOf('hello').istio.meshConfig, undefined)), '{}');
  t.equal(
    proxyConfigToJSON({
      drainDuration: '23s',
      interceptionMode: 'TPROXY',
      statusPort: 15020,
      holdApplicationUntilProxyStarts: false,
    }),
    '{"drainDuration":"23s","interceptionMode":"TPROXY","holdApplicationUntilProxyStarts":false}',
  );
  t.equal(
    proxyConfigToJSON({ tracing: {}, interceptionMode: 'REDIRECT', controlPlaneAuthPolicy: 'MUTUAL_TLS' }),
    '{"tracing":{}}',
  );
  t.equal(
    proxyConfigToJSON({ discovery_address: 'x:1' } as JsonObject),
    '{"discovery_address":"x:1"}',
    'only parsed input is normalised',
  );
  t.same(effectiveProxyConfig({}, { 'proxy.istio.io/config': 'discovery_address: x:1' }).discoveryAddress, 'x:1');
  t.throws(() => effectiveProxyConfig(mesh, { 'proxy.istio.io/config': 'a: [' }), {
    message: /annotation 'proxy\.istio\.io\/config'/,
  });
  t.throws(() => effectiveProxyConfig(mesh, { 'proxy.istio.io/config': '- a' }), InjectError);
});

t.test('proxy images', needs(ISTIO), async (t) => {
  const values = configOf('hello').istio.values;
  t.equal(resolveProxyImage(values, {}), 'registry.istio.io/testing/proxyv2:latest');
  t.equal(
    resolveProxyImage(values, {}, { 'sidecar.istio.io/proxyImageType': 'distroless' }),
    'registry.istio.io/testing/proxyv2:latest-distroless',
  );
  t.equal(
    resolveProxyImage(values, { image: { imageType: 'debug' } }),
    'registry.istio.io/testing/proxyv2:latest-debug',
  );
  t.equal(
    resolveProxyInitImage(configOf('hello-proxyInitImageName').istio.values, {}),
    'registry.istio.io/testing/proxyInitTest:latest',
  );
  t.equal(applyImageType('1.31.0-distroless', 'default'), '1.31.0');
  t.equal(applyImageType('1.31.0-distroless', 'debug'), '1.31.0-debug');
  t.equal(applyImageType('1.31.0-distroless', ''), '1.31.0-distroless');
});

t.test('template functions', needs(ISTIO), async (t) => {
  t.equal(formatGoFloat(15020), '15020');
  t.equal(formatGoFloat(1000000), '1e+06');
  t.equal(formatGoFloat(123456), '123456');
  t.equal(formatGoFloat(0.5), '0.5');
  t.equal(formatGoFloat(0.00001), '1e-05');
  t.equal(formatGoDuration('90s'), '1m30s');
  t.equal(formatGoDuration('0.5s'), '500ms');
  t.equal(excludeInboundPort(15020, '4,5,6'), '4,5,6,15020');
  t.equal(excludeInboundPort('15020', '15020'), '15020');
  t.equal(excludeInboundPort('0', '1'), '1');
  t.equal(appendMultusNetwork('', 'default/istio-cni'), 'default/istio-cni');
  t.equal(appendMultusNetwork('a, default/istio-cni', 'default/istio-cni'), 'a, default/istio-cni');
  t.equal(
    appendMultusNetwork('[{"name": "a"}]', 'default/istio-cni'),
    '[{"name": "a"}, {"name": "istio-cni", "namespace": "default"}]',
  );
  // Istio appendMultusNetwork (template.go at 86c9f01f): the namespace is part of the match; absent = "".
  t.equal(
    appendMultusNetwork('[{"name": "istio-cni"}]', 'default/istio-cni'),
    '[{"name": "istio-cni"}, {"name": "istio-cni", "namespace": "default"}]',
  );
  t.equal(
    appendMultusNetwork('[{"name": "istio-cni", "namespace": "default", "x": 1}]', 'default/istio-cni'),
    '[{"name": "istio-cni", "namespace": "default", "x": 1}]',
  );
  t.equal(appendMultusNetwork('[{"name": "istio-cni"}]', 'istio-cni'), '[{"name": "istio-cni"}]');
  t.equal(
    appendMultusNetwork('istio-cni', 'default/istio-cni'),
    'istio-cni, default/istio-cni',
    'a flat entry matches only the whole value',
  );
  t.equal(
    appendMultusNetwork('["a"]', 'default/istio-cni'),
    '["a"]',
    'not a list of objects (Go cannot unmarshal it): unchanged',
  );
  t.equal(
    appendMultusNetwork('[{"name": "a"},\n]', 'istio-cni'),
    '[{"name": "a"},\n]',
    'not JSON (a trailing comma): unchanged',
  );
  t.equal(
    appendMultusNetworkTo('[{"name": "a"}]', 'default/istio-cni', false),
    '[{"name": "a"}, {"name": "default/istio-cni"}]',
    'before Istio 1.26 the whole value is the name',
  );
  t.same(omitNil({ limits: { cpu: null, memory: '1Gi' }, requests: { cpu: null } }), { limits: { memory: '1Gi' } });
  t.same(
    omitNil({ limits: {}, requests: { cpu: '1' } }),
    { limits: {}, requests: { cpu: '1' } },
    'no null anywhere: unchanged, empty maps kept (Go omitNil)',
  );
  t.same(omitNil({ a: {}, b: null }), { a: {} }, 'an empty map without nulls stays beside a dropped null');
  t.equal(otelResourceAttributes({}, {}, {}, 'ns', []), '');
  t.same(openshiftProxyIds({ 'openshift.io/sa.scc.uid-range': '1000620000/10000' }, 1337), {
    uid: 1000629999,
    gid: 1000629999,
  });
  t.same(
    openshiftProxyIds({ 'openshift.io/sa.scc.uid-range': '5-9,2/5', 'openshift.io/sa.scc.supplemental-groups': '' }, 1),
    { uid: 1, gid: 1 },
    'a block holding a slash is read as start/size (5-9 is not); an empty supplemental-groups annotation leaves the GID',
  );
  t.same(openshiftProxyIds({ 'openshift.io/sa.scc.uid-range': '5-9,20-25' }, 1), { uid: 9, gid: 9 });
  t.same(
    podDeployMeta(
      {
        metadata: {
          name: '',
          generateName: 'web-7d9-',
          labels: { 'pod-template-hash': '7d9' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9', controller: true }],
        },
        spec: {},
      },
      'prod',
    ),
    { deployMeta: { Name: 'web', Namespace: 'prod' }, typeMeta: { APIVersion: 'apps/v1', Kind: 'Deployment' } },
  );
  t.same(
    podDeployMeta(
      {
        metadata: {
          name: 'x',
          generateName: 'nightly-28000000-',
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'nightly-28000000', controller: true }],
        },
        spec: {},
      },
      'ns',
    ).typeMeta,
    { APIVersion: 'batch/v1', Kind: 'CronJob' },
  );
});

t.test(
  'the shipped precompiled templates (shared location and empty-hash constants) render as the same sources compiled at run time',
  needs(ISTIO),
  async (t) => {
    const shipped = createTemplateEngine(ISTIO_TEMPLATE_FUNCTIONS, PRECOMPILED);
    const compiled = createTemplateEngine(ISTIO_TEMPLATE_FUNCTIONS);
    const outcome = (f: () => string): string => {
      try {
        return f();
      } catch (e) {
        return `error: ${(e as Error).message}`;
      }
    };
    let rendered = 0;
    for (const c of readdirSync(casesDir).sort()) {
      if (!readdirSync(new URL(`${c}/`, casesDir)).includes('fn-config.yaml')) continue;
      let data: ReturnType<typeof buildTemplateData>;
      try {
        data = caseData(c).data;
      } catch {
        continue; // a case whose config or input the driver refuses: no template data to render
      }
      for (const name of ISTIO_TEMPLATE_NAMES) {
        const label = `istio/${name}`;
        const a = outcome(() => shipped.render(label, TEMPLATES[label]!, data));
        const b = outcome(() => compiled.render(label, TEMPLATES[label]!, data));
        if (a !== b) t.equal(a, b, `${c}: ${name}`);
        else if (!a.startsWith('error: ')) rendered++;
      }
    }
    t.ok(rendered > 100, `renders compared: ${rendered}`);
    // The sharing itself: a precompiled spec holds no per-call location or empty-hash literal.
    const spec = readFileSync(new URL('../../../src/drivers/templates-precompiled.gen.js', import.meta.url), 'utf8');
    t.notMatch(spec, /"loc":\{/, 'no location literal left');
    t.notMatch(spec, /"hash":\{\}/, 'no empty-hash literal left');
  },
);
