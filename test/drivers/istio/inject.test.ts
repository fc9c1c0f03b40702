import t from 'tap';
import type { JsonObject, PodTemplate } from '../../../src/model.ts';
import { InjectError } from '../../../src/results/errors.ts';
import { injectionStatusValue, parseInjectionStatus } from '../../../src/drivers/istio/status.ts';
import { reorderPod } from '../../../src/drivers/istio/reorder.ts';
import { applyRewrite, dumpAppProbers, mergeOrAppendProbers } from '../../../src/drivers/istio/probes.ts';
import { applyPrometheusMerge, applySecurePrometheusAnnotation } from '../../../src/drivers/istio/prometheus.ts';
import { validateAnnotations } from '../../../src/drivers/istio/validate.ts';
import { overwriteClusterInfo, clusterEnvs } from '../../../src/drivers/istio/postprocess.ts';
import { reapplyOverwrittenContainers, reinsertOverrides } from '../../../src/drivers/istio/overrides.ts';
import { resolveNativeSidecars, stripPod } from '../../../src/drivers/istio/inject.ts';

const names = (list: unknown): string[] => ((list ?? []) as Array<{ name: string }>).map((c) => c.name);
const proxy = (env: JsonObject[] = []): JsonObject => ({ name: 'istio-proxy', image: 'proxyv2', env });

t.test('status annotation: Go json.Marshal field order, null for empty lists, default revision', async (t) => {
  const spec: JsonObject = {
    initContainers: [{ name: 'istio-init' }],
    containers: [{ name: 'istio-proxy' }],
    volumes: [{ name: 'istio-envoy' }, { name: 'istio-data' }],
  };
  t.equal(
    injectionStatusValue(spec, ''),
    '{"initContainers":["istio-init"],"containers":["istio-proxy"],"volumes":["istio-envoy","istio-data"],"imagePullSecrets":null,"revision":"default"}',
  );
  t.equal(
    injectionStatusValue({ initContainers: [{ name: 'istio-init' }, { name: 'istio-proxy' }] }, 'canary'),
    '{"initContainers":["istio-init","istio-proxy"],"containers":null,"volumes":null,"imagePullSecrets":null,"revision":"canary"}',
  );
  t.same(
    parseInjectionStatus(
      '{"initContainers":null,"containers":["istio-proxy"],"volumes":null,"imagePullSecrets":null,"revision":"default"}',
    )?.containers,
    ['istio-proxy'],
  );
  t.equal(parseInjectionStatus('not json'), undefined);
  t.equal(parseInjectionStatus('{"containers":"istio-proxy"}'), undefined, 'wrong types count as not injected');
});

t.test('reorder: proxy last, or first when holding the application', async (t) => {
  const spec: JsonObject = { containers: [{ name: 'istio-proxy' }, { name: 'app' }, { name: 'other' }] };
  reorderPod(spec, {}, false);
  t.same(names(spec.containers), ['app', 'other', 'istio-proxy']);
  reorderPod(spec, {}, true);
  t.same(names(spec.containers), ['istio-proxy', 'app', 'other']);
});

t.test(
  'reorder: native init containers are istio-init, istio-validation, istio-proxy, enable-core-dump, rest',
  async (t) => {
    const spec: JsonObject = {
      containers: [{ name: 'app' }],
      initContainers: [
        { name: 'user-init' },
        { name: 'enable-core-dump' },
        { name: 'istio-proxy' },
        { name: 'istio-init' },
      ],
    };
    reorderPod(spec, {}, false);
    t.same(names(spec.initContainers), ['istio-init', 'istio-proxy', 'enable-core-dump', 'user-init']);
  },
);

t.test('reorder: non-native puts istio-validation first, istio-init then enable-core-dump last', async (t) => {
  const spec: JsonObject = {
    containers: [{ name: 'app' }],
    initContainers: [{ name: 'istio-init' }, { name: 'enable-core-dump' }, { name: 'user-init' }],
  };
  reorderPod(spec, {}, false);
  t.same(names(spec.initContainers), ['user-init', 'istio-init', 'enable-core-dump']);
  const cni: JsonObject = { initContainers: [{ name: 'user-init' }, { name: 'istio-validation' }] };
  reorderPod(cni, {}, false);
  t.same(names(cni.initContainers), ['istio-validation', 'user-init']);
});

t.test('probe rewrite: http, named port, tcp, grpc and lifecycle hooks go through the agent', async (t) => {
  const pod: PodTemplate = {
    metadata: {},
    spec: {
      containers: [
        {
          name: 'app',
          ports: [{ name: 'http', containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/ready', port: 'http', scheme: 'HTTPS' }, timeoutSeconds: 2 },
          livenessProbe: { tcpSocket: { port: 9000 } },
          startupProbe: { grpc: { port: 7000 } },
          lifecycle: { preStop: { httpGet: { path: '/stop', port: 8080 } }, postStart: { exec: { command: ['x'] } } },
        },
        proxy(),
      ],
    },
  };
  applyRewrite(pod, 15020, true);
  const app = (pod.spec.containers as JsonObject[])[0]!;
  t.same(app.readinessProbe, {
    httpGet: { path: '/app-health/app/readyz', port: 15020, scheme: 'HTTP' },
    timeoutSeconds: 2,
  });
  t.same(app.livenessProbe, { httpGet: { path: '/app-health/app/livez', port: 15020 } });
  t.same(app.startupProbe, { httpGet: { path: '/app-health/app/startupz', port: 15020 } });
  t.same(app.lifecycle, {
    preStop: { httpGet: { path: '/app-lifecycle/app/prestopz', port: 15020 } },
    postStart: { exec: { command: ['x'] } },
  });
  const env = ((pod.spec.containers as JsonObject[])[1]!.env as JsonObject[]).find(
    (e) => e.name === 'ISTIO_KUBE_APP_PROBERS',
  );
  t.ok(env, 'probers env added');
  const probers = JSON.parse(env!.value as string);
  t.same(
    Object.keys(probers),
    ['/app-health/app/livez', '/app-health/app/readyz', '/app-health/app/startupz', '/app-lifecycle/app/prestopz'],
    'sorted keys',
  );
  t.same(probers['/app-health/app/readyz'], {
    httpGet: { path: '/ready', port: 8080, scheme: 'HTTPS' },
    timeoutSeconds: 2,
  });
  t.same(probers['/app-health/app/livez'], { tcpSocket: { port: 9000 } });
  // Go's GRPCAction.Service is a *string without omitempty (Istio's TestDumpAppGRPCProbers: "service": null)
  t.same(probers['/app-health/app/startupz'], { grpc: { port: 7000, service: null } });
});

t.test('probe rewrite: off by annotation, skipped without a proxy, unresolvable named port dropped', async (t) => {
  const mk = (annotations: Record<string, string>, withProxy: boolean): PodTemplate => ({
    metadata: { annotations },
    spec: {
      containers: [
        {
          name: 'app',
          readinessProbe: { httpGet: { path: '/r', port: 'nope' } },
          livenessProbe: { httpGet: { path: '/l', port: 80 } },
        },
        ...(withProxy ? [proxy()] : []),
      ],
    },
  });
  const off = mk({ 'sidecar.istio.io/rewriteAppHTTPProbers': 'false' }, true);
  applyRewrite(off, 15020, true);
  t.same((off.spec.containers as JsonObject[])[0]!.livenessProbe, { httpGet: { path: '/l', port: 80 } });
  const noProxy = mk({}, false);
  applyRewrite(noProxy, 15020, true);
  t.same((noProxy.spec.containers as JsonObject[])[0]!.livenessProbe, { httpGet: { path: '/l', port: 80 } });
  t.equal(dumpAppProbers(mk({}, true).spec, 15020), '{"/app-health/app/livez":{"httpGet":{"path":"/l","port":80}}}');
  t.equal(
    dumpAppProbers({ containers: [{ name: 'app', readinessProbe: { httpGet: { port: 15020 } } }] }, 15020),
    '',
    'already rewritten',
  );
});

t.test('probers of a previous injection are merged, old entries win', async (t) => {
  const env: JsonObject[] = [{ name: 'ISTIO_KUBE_APP_PROBERS', value: '{"/a":{"httpGet":{"port":1}}}' }];
  mergeOrAppendProbers(true, env, '{"/a":{"httpGet":{"port":2}},"/b":{"httpGet":{"port":3}}}');
  t.same(JSON.parse(env[0]!.value as string), { '/a': { httpGet: { port: 1 } }, '/b': { httpGet: { port: 3 } } });
  const fresh: JsonObject[] = [];
  mergeOrAppendProbers(false, fresh, '{"/x":{}}');
  t.same(fresh, [{ name: 'ISTIO_KUBE_APP_PROBERS', value: '{"/x":{}}' }]);
});

t.test('prometheus merge moves the scrape annotations into the proxy env', async (t) => {
  const pod: PodTemplate = {
    metadata: {
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090', 'prometheus.io.path': '/m' },
    },
    spec: { containers: [{ name: 'app' }, proxy()] },
  };
  applyPrometheusMerge(pod, { enablePrometheusMerge: true }, 15020);
  t.same(pod.metadata.annotations, {
    'prometheus.io/port': '15020',
    'prometheus.io/path': '/stats/prometheus',
    'prometheus.io/scrape': 'true',
  });
  const env = (pod.spec.containers as JsonObject[])[1]!.env as JsonObject[];
  t.same(JSON.parse(env[0]!.value as string), { scrape: 'true', path: '/m', port: '9090' });
});

t.test('prometheus merge: scrape false, merge disabled, already merged, secure port', async (t) => {
  const noScrape: PodTemplate = {
    metadata: { annotations: { 'prometheus.io/scrape': 'false' } },
    spec: { containers: [proxy()] },
  };
  applyPrometheusMerge(noScrape, { enablePrometheusMerge: true }, 15020);
  t.same(noScrape.metadata.annotations, { 'prometheus.io/scrape': 'false' });
  const disabled: PodTemplate = {
    metadata: { annotations: { 'prometheus.istio.io/merge-metrics': 'false' } },
    spec: { containers: [proxy()] },
  };
  applyPrometheusMerge(disabled, { enablePrometheusMerge: true }, 15020);
  t.same(disabled.metadata.annotations, { 'prometheus.istio.io/merge-metrics': 'false' });
  const plain: PodTemplate = { metadata: {}, spec: { containers: [proxy()] } };
  applyPrometheusMerge(plain, {}, 15020);
  t.equal(plain.metadata.annotations?.['prometheus.io/port'], '15020');
  t.same((plain.spec.containers as JsonObject[])[0]!.env, [], 'no env when nothing to carry over');
  const secure: PodTemplate = {
    metadata: {},
    spec: { containers: [proxy([{ name: 'ENVOY_SECURE_MERGED_METRICS_PORT', value: '15091' }])] },
  };
  applySecurePrometheusAnnotation(secure);
  t.equal(secure.metadata.annotations?.['prometheus.istio.io/secure-port'], '15091');
  t.throws(
    () =>
      applyPrometheusMerge(
        {
          metadata: { annotations: { 'prometheus.istio.io/scrape-targets': '15090:/x' } },
          spec: { containers: [proxy()] },
        },
        {},
        15020,
      ),
    InjectError,
    'reserved port in scrape targets',
  );
});

t.test('annotation validation errors name the annotation and the value', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['traffic.sidecar.istio.io/includeOutboundIPRanges', 'bad', /includeIPRanges invalid/],
    ['traffic.sidecar.istio.io/excludeOutboundIPRanges', '*', /excludeIPRanges invalid/],
    ['traffic.sidecar.istio.io/includeInboundPorts', 'bad', /includeInboundPorts invalid/],
    ['traffic.sidecar.istio.io/excludeInboundPorts', '*', /excludeInboundPorts invalid/],
    ['traffic.sidecar.istio.io/excludeOutboundPorts', '1,70000', /excludeOutboundPorts invalid/],
    ['sidecar.istio.io/interceptionMode', 'FOO', /interceptionMode invalid/],
    ['readiness.status.sidecar.istio.io/periodSeconds', '-1', /invalid syntax/],
    ['prometheus.istio.io/merge-metrics', 'yes', /ParseBool/],
    ['sidecar.istio.io/proxyCPU', '1 core', /quantities must match/],
    // resource.ParseQuantity's own refusals, and Go's unicode.IsControl (C1 included) first
    ['sidecar.istio.io/proxyCPU', '1K', /: unable to parse quantity's suffix$/],
    ['sidecar.istio.io/proxyCPULimit', '1e', /: unable to parse quantity's suffix$/],
    ['sidecar.istio.io/proxyMemory', '1Gi\u0085', /: value contains control characters$/],
    ['sidecar.istio.io/proxyMemoryLimit', ' 1Gi', /quantities must match/],
    ['readiness.status.sidecar.istio.io/periodSeconds', '+5', /ParseUint: parsing "\+5": invalid syntax/],
    ['readiness.status.sidecar.istio.io/failureThreshold', '4294967296', /value out of range/],
    // netip.ParsePrefix: a length past the family's bits is its own error; a leading zero is bad bits
    ['traffic.sidecar.istio.io/includeOutboundIPRanges', '10.0.0.0/33', /: prefix length out of range$/],
    ['traffic.sidecar.istio.io/excludeOutboundIPRanges', '10.0.0.0/08', /bad bits after slash: "08"/],
  ];
  for (const [k, v, re] of cases) {
    try {
      validateAnnotations({ [k]: v });
      t.fail(`${k}=${v} accepted`);
    } catch (e) {
      t.ok(e instanceof InjectError, `${k}: InjectError`);
      const err = e as InjectError;
      t.ok(err.message.startsWith(`invalid value '${v}' for annotation '${k}': `), err.message);
      t.match(err.message, re);
      t.equal(err.field, `metadata.annotations[${k}]`);
      t.equal(err.code, 'BAD_ANNOTATION');
    }
  }
  t.doesNotThrow(() =>
    validateAnnotations({
      'traffic.sidecar.istio.io/includeOutboundIPRanges': '127.0.0.1/24,10.96.0.1/24',
      'traffic.sidecar.istio.io/excludeOutboundIPRanges': '::ffff:10.0.0.0/128',
      'traffic.sidecar.istio.io/includeInboundPorts': '*',
      'traffic.sidecar.istio.io/excludeInboundPorts': '4,5,6',
      'sidecar.istio.io/proxyCPU': '4000m',
      'sidecar.istio.io/proxyMemory': '1Gi',
      'sidecar.istio.io/proxyCPULimit': '.5', // Go reads `.5` and `1.` as quantities
      'sidecar.istio.io/proxyMemoryLimit': '1.',
      'istio.io/reroute-virtual-interfaces': 'net0ps2',
      'prometheus.istio.io/merge-metrics': 'True',
      'unrelated/annotation': 'anything',
    }),
  );
});

t.test('cluster/network env is re-appended at the end, sorted; the network label wins', async (t) => {
  t.same(
    clusterEnvs(
      { global: { network: 'n1', multiCluster: { clusterName: 'c1' } } },
      { 'topology.istio.io/network': 'n2' },
    ),
    {
      ISTIO_META_CLUSTER_ID: 'c1',
      ISTIO_META_NETWORK: 'n2',
    },
  );
  t.same(clusterEnvs({ global: { network: '' } }, {}), {});
  const pod: PodTemplate = {
    metadata: {},
    spec: {
      containers: [
        proxy([
          { name: 'ISTIO_META_NETWORK', value: 'x' },
          { name: 'A', value: 'a' },
          { name: 'TRUST_DOMAIN', value: 't' },
        ]),
      ],
    },
  };
  overwriteClusterInfo(pod, { ISTIO_META_NETWORK: 'network1' });
  t.same(names((pod.spec.containers as JsonObject[])[0]!.env), ['A', 'TRUST_DOMAIN', 'ISTIO_META_NETWORK']);
});

t.test('user containers named like injected ones are merged on top and recorded', async (t) => {
  const original: PodTemplate = {
    metadata: {},
    spec: { containers: [{ name: 'app' }, { name: 'istio-proxy', image: 'auto', imagePullPolicy: 'IfNotPresent' }] },
  };
  const final: PodTemplate = {
    metadata: {},
    spec: { containers: [{ name: 'istio-proxy', image: 'proxyv2', imagePullPolicy: 'Always' }, { name: 'app' }] },
  };
  const out = reapplyOverwrittenContainers(final, original, { containers: [{ name: 'istio-proxy' }] }, false);
  const p = (out.spec.containers as JsonObject[]).find((c) => c.name === 'istio-proxy')!;
  t.equal(p.image, 'proxyv2', 'image auto keeps the injected image');
  t.equal(p.imagePullPolicy, 'IfNotPresent', 'user field wins');
  t.equal(
    out.metadata.annotations?.['proxy.istio.io/overrides'],
    '{"containers":[{"name":"istio-proxy","resources":{},"imagePullPolicy":"IfNotPresent"}]}',
  );
  const again = reapplyOverwrittenContainers(
    final,
    { ...original, metadata: { annotations: { 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' } } },
    { containers: [{ name: 'istio-proxy' }] },
    false,
  );
  t.equal(
    again.metadata.annotations?.['proxy.istio.io/overrides'],
    undefined,
    'previously injected containers are not overrides',
  );
});

t.test('user runAsUser on istio-proxy propagates to the init container -u argument', async (t) => {
  const original: PodTemplate = {
    metadata: {},
    spec: {
      containers: [{ name: 'istio-proxy', image: 'auto', securityContext: { runAsUser: 1234, runAsGroup: 4321 } }],
    },
  };
  const final: PodTemplate = {
    metadata: {},
    spec: {
      initContainers: [
        { name: 'istio-validation', args: ['istio-iptables', '-u', '1337'], securityContext: { runAsUser: 1337 } },
      ],
      containers: [{ name: 'istio-proxy', securityContext: { runAsUser: 1337 } }],
    },
  };
  const out = reapplyOverwrittenContainers(final, original, { containers: [{ name: 'istio-proxy' }] }, false);
  const init = (out.spec.initContainers as JsonObject[])[0]!;
  t.same(init.args, ['istio-iptables', '-u', '1234']);
  t.same(init.securityContext, { runAsUser: 1234, runAsGroup: 4321 });
  const tp = reapplyOverwrittenContainers(
    structuredClone(final),
    original,
    { containers: [{ name: 'istio-proxy' }] },
    true,
  );
  t.equal(((tp.spec.containers as JsonObject[])[0]!.securityContext as JsonObject).runAsUser, 0, 'TPROXY forces uid 0');
});

t.test('re-injection: strip the previous injection, reinsert saved overrides', async (t) => {
  const pod: PodTemplate = {
    metadata: {
      annotations: {
        'sidecar.istio.io/status':
          '{"initContainers":["istio-init"],"containers":["istio-proxy"],"volumes":["v"],"imagePullSecrets":null,"revision":"default"}',
        'prometheus.io/port': '15020',
        'prometheus.io/path': '/stats/prometheus',
        'proxy.istio.io/overrides': '{"containers":[{"name":"istio-proxy","resources":{},"imagePullPolicy":"Never"}]}',
      },
    },
    spec: {
      initContainers: [{ name: 'istio-init' }],
      containers: [{ name: 'app' }, { name: 'istio-proxy' }],
      volumes: [{ name: 'v' }],
    },
  };
  const stripped = stripPod(pod, 15020);
  t.same(names(stripped.spec.containers), ['app']);
  t.same(names(stripped.spec.initContainers), []);
  t.same(names(stripped.spec.volumes), ['v'], 'volumes stay');
  t.same(Object.keys(stripped.metadata.annotations ?? {}), ['proxy.istio.io/overrides']);
  t.equal(pod.metadata.annotations?.['sidecar.istio.io/status'] !== undefined, true, 'input not mutated');
  const re = reinsertOverrides(stripped);
  t.same(names(re.spec.containers), ['app', 'istio-proxy']);
  t.equal((re.spec.containers as JsonObject[])[1]!.imagePullPolicy, 'Never');
});

t.test('native sidecars per pod: annotation over config', async (t) => {
  t.equal(resolveNativeSidecars({}, true), true);
  t.equal(resolveNativeSidecars({ 'sidecar.istio.io/nativeSidecar': 'false' }, true), false);
  t.equal(resolveNativeSidecars({ 'sidecar.istio.io/nativeSidecar': 'true' }, false), true);
  t.equal(resolveNativeSidecars(undefined, false), false);
  // Istio compares the strings exactly (no ParseBool): other spellings keep the configured value.
  for (const v of ['True', 'TRUE', '1', 'yes', 'False', '0', 'no', '']) {
    t.equal(
      resolveNativeSidecars({ 'sidecar.istio.io/nativeSidecar': v }, false),
      false,
      `${JSON.stringify(v)}, configured off`,
    );
    t.equal(
      resolveNativeSidecars({ 'sidecar.istio.io/nativeSidecar': v }, true),
      true,
      `${JSON.stringify(v)}, configured on`,
    );
  }
});
