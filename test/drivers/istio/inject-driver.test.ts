import { builtinOnlyTemplates } from '../../../src/drivers/istio/template-sources.ts';
import t from 'tap';
import { WEB_WORKLOAD } from '../../helpers/fixtures.ts';
import type { JsonObject, PodTemplate } from '../../../src/model.ts';
import { istioDriver } from '../../../src/drivers/istio/index.ts';
import { ISTIO_CHART_VALUES, ISTIO_MESH_DEFAULTS, mergeValues } from '../../../src/drivers/istio/defaults.ts';
import type { Config } from '../../../src/model.ts';
import type { IstioSettings } from '../../../src/drivers/istio/config.ts';
import type { WorkloadRef } from '../../../src/contract/driver.ts';

const names = (list: unknown): string[] => ((list ?? []) as Array<{ name: string }>).map((c) => c.name);

// ---- the whole driver (templates from the template engineer's render.ts) ----------------------------------

/** The core config and Istio settings of a request (spread into `inject`). */
function testConfig(
  over: { nativeSidecars?: boolean; revision?: string; platform?: '' | 'openshift'; values?: JsonObject } = {},
): { config: Config; settings: IstioSettings } {
  const config: Config = {
    mesh: 'istio',
    policy: 'enabled',
    namespaces: [],
    defaultNamespace: 'default',
    ignoredNamespaces: [],
    neverInjectSelector: [],
    alwaysInjectSelector: [],
    nativeSidecars: over.nativeSidecars ?? false,
    resultAnnotations: false,
    workloadKinds: [],
  };
  return {
    config,
    settings: {
      values: mergeValues(ISTIO_CHART_VALUES, {
        global: { hub: 'registry.istio.io/testing', tag: 'latest' },
        ...(over.values ?? {}),
      }),
      meshConfig: mergeValues(ISTIO_MESH_DEFAULTS, {}),
      revision: over.revision ?? '',
      revisionTags: [],
      selection: 'kube-inject',
      strictInjectValues: true,
      platform: over.platform ?? '',
      compliancePolicy: '',
      enableNamespacesByDefault: false,
      templates: builtinOnlyTemplates(),
      env: {},
      sourceInputs: { userValues: {}, hasInjectorConfig: false, version: '' },
    },
  };
}

const workload: WorkloadRef = WEB_WORKLOAD;
const appPod = (extra: JsonObject[] = [], annotations: Record<string, string> = {}): PodTemplate => ({
  metadata: { labels: { app: 'web' }, annotations },
  spec: { containers: [{ name: 'web', image: 'web:1', ports: [{ containerPort: 8080 }] }, ...extra] },
});

t.test('driver: non-native injection, status annotation and summary', async (t) => {
  const req = { pod: appPod(), workload, ...testConfig({ revision: 'canary' }) };
  const before = structuredClone(req.pod);
  const res = istioDriver.inject(req);
  t.same(req.pod, before, 'request pod not mutated');
  t.equal(res.summary, 'istio, revision canary');
  t.same(names(res.pod.spec.containers), ['web', 'istio-proxy']);
  t.same(names(res.pod.spec.initContainers), ['istio-init']);
  const status = JSON.parse(res.pod.metadata.annotations!['sidecar.istio.io/status']!);
  t.same(Object.keys(status), ['initContainers', 'containers', 'volumes', 'imagePullSecrets', 'revision']);
  t.same(status.initContainers, ['istio-init']);
  t.same(status.containers, ['istio-proxy']);
  t.equal(status.imagePullSecrets, null);
  t.equal(status.revision, 'canary');
  t.equal(istioDriver.inject({ pod: appPod(), workload, ...testConfig() }).summary, 'istio, revision default');
});

t.test('driver: native sidecars, per-pod opt-out, user istio-proxy moved to init containers', async (t) => {
  const native = istioDriver.inject({ pod: appPod(), workload, ...testConfig({ nativeSidecars: true }) }).pod;
  t.same(names(native.spec.initContainers), ['istio-init', 'istio-proxy']);
  t.same(names(native.spec.containers), ['web']);
  const optOut = istioDriver.inject({
    pod: appPod([], { 'sidecar.istio.io/nativeSidecar': 'false' }),
    workload,
    ...testConfig({ nativeSidecars: true }),
  }).pod;
  t.same(names(optOut.spec.containers), ['web', 'istio-proxy']);
  const custom = istioDriver.inject({
    pod: appPod([{ name: 'istio-proxy', image: 'auto', imagePullPolicy: 'Never' }]),
    workload,
    ...testConfig({ nativeSidecars: true }),
  }).pod;
  t.same(names(custom.spec.containers), ['web']);
  const p = (custom.spec.initContainers as JsonObject[]).find((c) => c.name === 'istio-proxy')!;
  t.equal(p.imagePullPolicy, 'Never');
  t.equal(p.image, 'registry.istio.io/testing/proxyv2:latest');
  t.equal(
    custom.metadata.annotations!['proxy.istio.io/overrides'],
    '{"initContainers":[{"name":"istio-proxy","resources":{},"imagePullPolicy":"Never"}]}',
  );
});

t.test('driver: re-injecting its own output changes nothing', async (t) => {
  const config = testConfig({ nativeSidecars: true });
  const once = istioDriver.inject({ pod: appPod(), workload, ...config }).pod;
  const twice = istioDriver.inject({ pod: structuredClone(once), workload, ...config }).pod;
  t.same(twice, once);
});

t.test('driver: invalid annotation is an InjectError naming the field', async (t) => {
  t.throws(
    () =>
      istioDriver.inject({
        pod: appPod([], { 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '*' }),
        workload,
        ...testConfig(),
      }),
    { name: 'InjectError', field: 'metadata.annotations[traffic.sidecar.istio.io/excludeOutboundIPRanges]' },
  );
  t.throws(
    () => istioDriver.inject({ pod: appPod([], { 'inject.istio.io/templates': 'nope' }), workload, ...testConfig() }),
    /requested template "nope" not found/,
  );
});

t.test('driver: OpenShift drops a user proxy uid equal to the app uid', async (t) => {
  const sc = { runAsUser: 1000620000 };
  const pod: PodTemplate = {
    metadata: {},
    spec: {
      containers: [
        { name: 'web', image: 'web:1', securityContext: { ...sc } },
        { name: 'istio-proxy', image: 'auto', securityContext: { ...sc, readOnlyRootFilesystem: false } },
      ],
    },
  };
  const out = istioDriver.inject({ pod, workload, ...testConfig({ platform: 'openshift' }) }).pod;
  t.equal(
    out.metadata.annotations!['proxy.istio.io/overrides'],
    '{"containers":[{"name":"istio-proxy","resources":{},"securityContext":{"readOnlyRootFilesystem":false}}]}',
  );
  const plain = istioDriver.inject({ pod, workload, ...testConfig() }).pod;
  t.match(plain.metadata.annotations!['proxy.istio.io/overrides'], /"runAsUser":1000620000/);
});

t.test('driver: the network label becomes the proxy network env and stays on the pod', async (t) => {
  const pod = appPod();
  pod.metadata.labels!['topology.istio.io/network'] = 'net-a';
  const out = istioDriver.inject({
    pod,
    workload,
    ...testConfig({ values: { global: { hub: 'h', tag: 't', network: 'net-b' } } }),
  }).pod;
  const env = (out.spec.containers as JsonObject[]).find((c) => c.name === 'istio-proxy')!.env as JsonObject[];
  t.same(env[env.length - 1], { name: 'ISTIO_META_NETWORK', value: 'net-a' });
  t.equal(env.filter((e) => e.name === 'ISTIO_META_NETWORK').length, 1);
  t.equal(out.metadata.labels!['topology.istio.io/network'], 'net-a');
});
