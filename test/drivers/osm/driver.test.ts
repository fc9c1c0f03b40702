/**
 * The osm and fsm drivers, called directly. Every expectation here was written by reasoning from
 * the project reference notes (reference/) peers.md §2 (OSM `mustInject`, `createPatch`, the iptables rule order, the exclusion
 * merge order, the probe rewrite; the osm-edge/FSM sidecar-driver model), not copied from the output. The
 * whole-file goldens are test/testdata/{osm,fsm}-*.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import type { Config } from '../../../src/model.ts';
import type { DriverDecideInput, Inventory, WorkloadRef } from '../../../src/contract/driver.ts';
import { fsmDriver } from '../../../src/drivers/fsm/index.ts';
import { iptablesScript, trafficLists } from '../../../src/drivers/osm/exclusions.ts';
import { FSM, OSM, osmDriver, type OsmSettings } from '../../../src/drivers/osm/index.ts';
import type { JsonObject, NamespaceInfo, PodTemplate } from '../../../src/model.ts';
import { driverNames, findDriver } from '../../../src/drivers/registry.ts';
import { loadConfig, loaded } from '../../helpers/config.ts';

function settings(mesh: 'osm' | 'fsm', section: Record<string, unknown> = {}): OsmSettings {
  const r = loadConfig({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh, [mesh]: section },
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.settings as OsmSettings;
}

function issues(mesh: 'osm' | 'fsm', section: Record<string, unknown>): string[] {
  const r = loadConfig({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh, [mesh]: section },
  });
  return r.ok ? [] : r.issues.map((i) => i.message);
}

const config = loaded({ apiVersion: 'meshinject.dev/v1alpha1', kind: 'SidecarInjection', spec: { mesh: 'osm' } })
  .config as Config;

function ns(
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): NamespaceInfo {
  return { name, labels, annotations };
}

function workload(kind = 'Deployment', name = 'web', namespace = 'shop'): WorkloadRef {
  return { apiVersion: kind === 'Pod' ? 'v1' : 'apps/v1', kind, name, namespace, namespaceDefaulted: false };
}

function pod(annotations: Record<string, string> = {}, spec: JsonObject = {}): PodTemplate {
  return {
    metadata: { labels: { app: 'web' }, annotations },
    spec: { containers: [{ name: 'web', image: 'web:1' }], ...spec },
  };
}

const MONITORED = ns('shop', { 'openservicemesh.io/monitored-by': 'osm' });

function decide(s: OsmSettings, p: PodTemplate, info: NamespaceInfo | undefined, namespace = info?.name ?? 'shop') {
  const input: DriverDecideInput<OsmSettings> = {
    podMeta: p.metadata,
    podSpec: p.spec,
    namespace,
    ...(info ? { namespaceInfo: info } : {}),
    namespaceLabels: { ...(info?.labels ?? {}), 'kubernetes.io/metadata.name': namespace },
    hostNetwork: false,
    config,
    settings: s,
  };
  return osmDriver.decide(input);
}

function inject(s: OsmSettings, p: PodTemplate, info: NamespaceInfo | undefined = MONITORED, w = workload()) {
  return (s.flavor.mesh === 'osm' ? osmDriver : fsmDriver).inject({
    pod: p,
    workload: w,
    ...(info ? { namespace: info } : {}),
    config,
    settings: s,
  });
}

const containerNames = (p: PodTemplate, field = 'containers') =>
  ((p.spec[field] as JsonObject[] | undefined) ?? []).map((c) => c.name);

t.test('config: defaults per flavor, policy disabled unless set, unknown class lists the known ones', async (t) => {
  const osm = settings('osm');
  t.equal(osm.meshName, 'osm');
  t.equal(osm.namespace, 'osm-system');
  t.equal(osm.sidecarClass.name, 'envoy');
  t.equal(osm.logLevel, 'error', 'OSM DefaultEnvoyLogLevel');
  t.equal(osm.interceptionMode, 'iptables');
  const fsm = settings('fsm');
  t.same(
    [fsm.meshName, fsm.namespace, fsm.sidecarClass.name, fsm.interceptionMode],
    ['fsm', 'fsm-system', 'pipy', 'PodLevel'],
  );
  t.same(
    [fsm.holdApplicationUntilProxyStarts, fsm.gracefulExitUntilDownstreamEnds],
    [true, true],
    'FSM chart defaults',
  );
  t.equal(
    loaded({ apiVersion: 'meshinject.dev/v1alpha1', kind: 'SidecarInjection', spec: { mesh: 'osm' } }).config.policy,
    'disabled',
    'no annotation means no injection (mustInject)',
  );
  t.equal(
    loaded({
      apiVersion: 'meshinject.dev/v1alpha1',
      kind: 'SidecarInjection',
      spec: { mesh: 'osm', policy: 'enabled' },
    }).config.policy,
    'enabled',
    'an explicit policy wins',
  );
  t.same(issues('osm', { meshConfig: { sidecar: { sidecarClass: 'linkerd' } } }), [
    'spec.osm.meshConfig.sidecar.sidecarClass: unknown sidecar class "linkerd"; known classes of OSM: envoy, pipy',
  ]);
  t.same(issues('fsm', { meshConfig: { sidecar: { sidecarClass: 'envoy' } } }), [
    'spec.fsm.meshConfig.sidecar.sidecarClass: unknown sidecar class "envoy"; known classes of FSM: pipy',
  ]);
  t.match(
    issues('fsm', { meshConfig: { sidecar: { localDNSProxy: { enable: true } } } })[0],
    /spec\.fsm\.meshConfig\.sidecar\.localDNSProxy\.enable is true, which meshinject's fsm driver does not support/,
  );
  t.match(
    issues('osm', { meshConfig: { traffic: { outboundPortExclusionList: [0] } } })[0],
    /outboundPortExclusionList\/0|outboundPortExclusionList\[0\]/,
  );
  t.match(
    issues('osm', { meshConfig: { traffic: { networkInterfaceExclusionList: ['eth0; reboot'] } } })[0],
    /networkInterfaceExclusionList\[0\] must be a network interface name/,
  );
  t.match(issues('osm', { meshName: 'Not A Label' })[0], /spec\.osm\.meshName must be a DNS label/);
  const cm = loadConfig({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c' },
    data: { mesh: 'fsm', 'fsm.meshName': 'blue', 'fsm.namespace': 'blue-system' },
  });
  t.ok(cm.ok, 'ConfigMap form');
  if (cm.ok)
    t.same(
      [(cm.settings as OsmSettings).meshName, (cm.settings as OsmSettings).namespace, cm.config.policy],
      ['blue', 'blue-system', 'disabled'],
    );
});

t.test(
  'config: image precedence is sidecarImage, then the sidecarDrivers entry of the class, then the default',
  async (t) => {
    const drivers = [
      {
        sidecarName: 'ENVOY',
        sidecarImage: 'entry/envoy',
        sidecarWindowsImage: 'entry/envoy-win',
        initContainerImage: 'entry/init',
      },
      { sidecarName: 'pipy', sidecarImage: 'entry/pipy', proxyServerPort: 7070 },
    ];
    const fromEntry = settings('osm', { meshConfig: { sidecar: { sidecarDrivers: drivers } } });
    t.same(
      fromEntry.images,
      {
        sidecar: 'entry/envoy',
        windows: 'entry/envoy-win',
        init: 'entry/init',
        healthcheck: OSM.classes.envoy!.defaultHealthcheckImage,
      },
      'entry matched case-insensitively',
    );
    const explicit = settings('osm', {
      meshConfig: {
        sidecar: {
          sidecarImage: 'top/envoy',
          envoyImage: 'v1/envoy',
          initContainerImage: 'top/init',
          sidecarDrivers: drivers,
        },
      },
    });
    t.same(
      [explicit.images.sidecar, explicit.images.windows, explicit.images.init],
      ['top/envoy', 'entry/envoy-win', 'top/init'],
    );
    t.equal(
      settings('osm', { meshConfig: { sidecar: { envoyImage: 'v1/envoy', sidecarDrivers: drivers } } }).images.sidecar,
      'v1/envoy',
      'OSM v1.x envoyImage before the driver entry',
    );
    t.same(settings('osm').images, {
      sidecar: OSM.classes.envoy!.defaultImage,
      windows: OSM.classes.envoy!.defaultWindowsImage,
      init: OSM.classes.envoy!.defaultInitImage,
      healthcheck: OSM.classes.envoy!.defaultHealthcheckImage,
    });
    const pipy = settings('osm', { meshConfig: { sidecar: { sidecarClass: 'pipy', sidecarDrivers: drivers } } });
    t.same(
      [pipy.images.sidecar, pipy.images.init, pipy.proxyServerPort],
      ['entry/pipy', OSM.classes.pipy!.defaultInitImage, 7070],
    );
    t.equal(
      settings('fsm', { meshConfig: { repoServer: { port: 6161 } } }).proxyServerPort,
      6161,
      'FSM repoServer.port without a driver entry',
    );
    t.equal(settings('fsm').proxyServerPort, 6060);
  },
);

t.test('decision: OSM mustInject', async (t) => {
  const s = settings('osm');
  const verdict = (p: PodTemplate, info: NamespaceInfo | undefined, namespace?: string) => {
    const d = decide(s, p, info, namespace);
    return d.verdict
      ? [d.verdict.inject, d.verdict.reason, d.verdict.namespaceBased === true]
      : ['undecided', d.undecided];
  };
  t.same(verdict(pod(), ns('osm-system', { 'openservicemesh.io/monitored-by': 'osm' })), [
    false,
    'control-plane-namespace',
    false,
  ]);
  t.same(verdict(pod(), ns('kube-public')), [false, 'system-namespace', false]);
  t.same(verdict(pod({ 'openservicemesh.io/sidecar-injection': 'enabled' }), ns('shop')), [
    false,
    'namespace-not-monitored',
    true,
  ]);
  t.same(
    verdict(pod({ 'openservicemesh.io/sidecar-injection': 'enabled' }), undefined, 'shop'),
    [false, 'namespace-not-monitored', true],
    'unknown namespace: labels unknown',
  );
  t.same(verdict(pod(), ns('shop', { 'openservicemesh.io/monitored-by': 'other' })), [
    false,
    'namespace-not-monitored',
    true,
  ]);
  t.same(verdict(pod(), ns('shop', { 'openservicemesh.io/monitored-by': 'osm', 'openservicemesh.io/ignore': '' })), [
    false,
    'namespace-ignored',
    true,
  ]);
  t.same(verdict(pod(), ns('shop', { 'openservicemesh.io/monitored-by': 'osm', 'control-plane': 'x' })), [
    false,
    'namespace-control-plane-label',
    true,
  ]);
  t.same(verdict(pod({ 'openservicemesh.io/sidecar-injection': 'Yes' }), MONITORED), [
    true,
    'pod-annotation-enabled',
    false,
  ]);
  t.same(
    verdict(
      pod({ 'openservicemesh.io/sidecar-injection': 'FALSE' }),
      ns('shop', MONITORED.labels, { 'openservicemesh.io/sidecar-injection': 'enabled' }),
    ),
    [false, 'pod-annotation-disabled', false],
  );
  t.same(
    verdict(
      pod({ 'openservicemesh.io/sidecar-injection': 'true' }),
      ns('shop', MONITORED.labels, { 'openservicemesh.io/sidecar-injection': 'disabled' }),
    ),
    [true, 'pod-annotation-enabled', false],
    'the pod wins over the namespace',
  );
  t.same(verdict(pod(), ns('shop', MONITORED.labels, { 'openservicemesh.io/sidecar-injection': 'ENABLED' })), [
    true,
    'namespace-annotation-enabled',
    true,
  ]);
  t.same(verdict(pod(), ns('shop', MONITORED.labels, { 'openservicemesh.io/sidecar-injection': 'no' })), [
    false,
    'namespace-annotation-disabled',
    true,
  ]);
  t.same(verdict(pod(), MONITORED), [
    'undecided',
    'no openservicemesh.io/sidecar-injection annotation on the pod or the namespace (OSM injects only when one says enabled)',
  ]);
  t.throws(() => decide(s, pod({ 'openservicemesh.io/sidecar-injection': 'on' }), MONITORED), {
    name: 'InjectError',
    field: 'metadata.annotations[openservicemesh.io/sidecar-injection]',
    message: /invalid value "on" of pod annotation/,
  });
  t.throws(
    () =>
      decide(
        s,
        pod({ 'openservicemesh.io/sidecar-injection': 'enabled' }),
        ns('shop', MONITORED.labels, { 'openservicemesh.io/sidecar-injection': '1' }),
      ),
    { message: /invalid value "1" of annotation openservicemesh\.io\/sidecar-injection on Namespace shop/ },
    'OSM reads both before deciding',
  );
  const fsm = settings('fsm', { meshName: 'blue' });
  const d = fsmDriver.decide({
    podMeta: pod().metadata,
    podSpec: {},
    namespace: 'shop',
    namespaceInfo: ns('shop', { 'flomesh.io/monitored-by': 'blue' }, { 'flomesh.io/sidecar-injection': 'yes' }),
    namespaceLabels: { 'flomesh.io/monitored-by': 'blue' },
    hostNetwork: false,
    config,
    settings: fsm,
  });
  t.same(
    [d.verdict?.inject, d.verdict?.reason],
    [true, 'namespace-annotation-enabled'],
    'FSM: flomesh.io/ prefix and its meshName',
  );
});

t.test(
  'exclusions: ports mesh first, IP ranges pod first, de-duplicated; bad values name the annotation',
  async (t) => {
    const s = settings('osm', {
      meshConfig: {
        traffic: {
          outboundPortExclusionList: [443, 80],
          inboundPortExclusionList: [15020],
          outboundIPRangeExclusionList: ['10.0.0.0/8'],
          outboundIPRangeInclusionList: ['10.96.0.0/12'],
          networkInterfaceExclusionList: ['eth1', 'eth2'],
        },
      },
    });
    const lists = trafficLists(
      {
        'openservicemesh.io/outbound-port-exclusion-list': '80, 8080',
        'openservicemesh.io/inbound-port-exclusion-list': '15020,9000',
        'openservicemesh.io/outbound-ip-range-exclusion-list': '192.168.0.0/16, 10.0.0.0/8',
        'openservicemesh.io/outbound-ip-range-inclusion-list': 'fd00::/8',
      },
      s,
    );
    t.same(lists, {
      outboundPorts: [443, 80, 8080],
      inboundPorts: [15020, 9000],
      outboundIPExclusions: ['192.168.0.0/16', '10.0.0.0/8'],
      outboundIPInclusions: ['fd00::/8', '10.96.0.0/12'],
      interfaces: ['eth1', 'eth2'],
    });
    t.equal(
      iptablesScript(OSM, lists, 'Localhost'),
      [
        'iptables-restore --noflush <<EOF',
        '# OSM sidecar interception rules',
        '*nat',
        ':OSM_PROXY_INBOUND - [0:0]',
        ':OSM_PROXY_IN_REDIRECT - [0:0]',
        ':OSM_PROXY_OUTBOUND - [0:0]',
        ':OSM_PROXY_OUT_REDIRECT - [0:0]',
        '-A OSM_PROXY_IN_REDIRECT -p tcp -j REDIRECT --to-port 15003',
        '-A PREROUTING -p tcp -j OSM_PROXY_INBOUND',
        '-A OSM_PROXY_INBOUND -p tcp --dport 15010 -j RETURN',
        '-A OSM_PROXY_INBOUND -p tcp --dport 15901 -j RETURN',
        '-A OSM_PROXY_INBOUND -p tcp --dport 15902 -j RETURN',
        '-A OSM_PROXY_INBOUND -p tcp --dport 15903 -j RETURN',
        '-A OSM_PROXY_INBOUND -p tcp --dport 15904 -j RETURN',
        '-A OSM_PROXY_INBOUND -p tcp -j OSM_PROXY_IN_REDIRECT',
        '-I OSM_PROXY_INBOUND -i eth1 -j RETURN',
        '-I OSM_PROXY_INBOUND -i eth2 -j RETURN',
        '-I OSM_PROXY_INBOUND -p tcp --match multiport --dports 15020,9000 -j RETURN',
        '-A OSM_PROXY_OUT_REDIRECT -p tcp -j REDIRECT --to-port 15001',
        '-A OSM_PROXY_OUT_REDIRECT -p tcp --dport 15000 -j ACCEPT',
        '-A OUTPUT -p tcp -j OSM_PROXY_OUTBOUND',
        '-A OSM_PROXY_OUTBOUND -o lo ! -d 127.0.0.1/32 -m owner --uid-owner 1500 -j OSM_PROXY_IN_REDIRECT',
        '-A OSM_PROXY_OUTBOUND -o lo -m owner ! --uid-owner 1500 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -m owner --uid-owner 1500 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -d 127.0.0.1/32 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -o eth1 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -o eth2 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -d 192.168.0.0/16 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -d 10.0.0.0/8 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -p tcp --match multiport --dports 443,80,8080 -j RETURN',
        '-A OSM_PROXY_OUTBOUND -d fd00::/8 -j OSM_PROXY_OUT_REDIRECT',
        '-A OSM_PROXY_OUTBOUND -d 10.96.0.0/12 -j OSM_PROXY_OUT_REDIRECT',
        '-A OSM_PROXY_OUTBOUND -j RETURN',
        'COMMIT',
        'EOF',
        '',
      ].join('\n'),
    );
    for (const [key, value, entry] of [
      ['openservicemesh.io/outbound-port-exclusion-list', '80,0', '0'],
      ['openservicemesh.io/inbound-port-exclusion-list', '', ''],
      ['openservicemesh.io/outbound-port-exclusion-list', '70000', '70000'],
      ['openservicemesh.io/outbound-ip-range-inclusion-list', '10.0.0.0', '10.0.0.0'],
      ['openservicemesh.io/outbound-ip-range-exclusion-list', '10.0.0.0/8,300.0.0.0/8', '300.0.0.0/8'],
    ] as const) {
      t.throws(
        () => trafficLists({ [key]: value }, s),
        {
          name: 'InjectError',
          field: `metadata.annotations[${key}]`,
          message: new RegExp(`"${entry.replace(/\./g, '\\.')}" in annotation ${key.replace(/\./g, '\\.')}`),
        },
        `${key}: ${value}`,
      );
    }
  },
);

t.test('probes: OSM per-container rewrite and the osm-edge/FSM healthcheck-path rewrite', async (t) => {
  const probes: JsonObject = {
    ports: [{ name: 'http', containerPort: 8080 }],
    livenessProbe: { httpGet: { path: '/live', port: 'http' }, periodSeconds: 3 },
    readinessProbe: { tcpSocket: { port: 'http' } },
    startupProbe: { httpGet: { path: '/start', port: 8443, scheme: 'HTTPS' } },
  };
  const p = (): PodTemplate => ({
    metadata: { annotations: { 'openservicemesh.io/sidecar-injection': 'enabled' } },
    spec: { containers: [{ name: 'app', image: 'a', ...structuredClone(probes) }] },
  });
  const osm = inject(settings('osm'), p()).pod;
  const app = (osm.spec.containers as JsonObject[])[0]!;
  t.same(app.livenessProbe, { httpGet: { path: '/osm-liveness-probe/app', port: 15901 }, periodSeconds: 3 });
  t.same(
    app.readinessProbe,
    { httpGet: { path: '/osm-healthcheck', port: 15904, httpHeaders: [{ name: 'Original-Tcp-Port', value: '8080' }] } },
    'TCP → HTTP on 15904, named port resolved',
  );
  t.same(
    app.startupProbe,
    { httpGet: { path: '/start', port: 15903, scheme: 'HTTPS' } },
    'HTTPS: only the port changes',
  );
  t.same(containerNames(osm), ['app', 'osm-healthcheck', 'envoy']);
  t.same(
    ((osm.spec.containers as JsonObject[])[2]!.ports as JsonObject[]).map((x) => x.name),
    ['proxy-admin', 'proxy-inbound', 'proxy-metrics', 'liveness-port', 'readiness-port', 'startup-port'],
  );

  const fsm = inject(settings('fsm'), p(), ns('shop'), workload()).pod;
  const fapp = (fsm.spec.containers as JsonObject[]).find((c) => c.name === 'app')!;
  t.same(fapp.livenessProbe, {
    httpGet: {
      path: '/fsm-healthcheck',
      port: 15901,
      httpHeaders: [
        { name: 'Original-Http-Port', value: '8080' },
        { name: 'Original-Http-Path', value: '/live' },
      ],
    },
    periodSeconds: 3,
  });
  t.same(fapp.startupProbe, {
    httpGet: {
      path: '/fsm-healthcheck',
      port: 15903,
      scheme: 'HTTP',
      httpHeaders: [{ name: 'Original-Tcp-Port', value: '8443' }],
    },
  });
  t.same(containerNames(fsm), ['sidecar', 'app', 'fsm-healthcheck'], 'FSM holds the application: sidecar first');

  const unnamed: PodTemplate = {
    metadata: {},
    spec: { containers: [{ name: 'app', image: 'a', readinessProbe: { tcpSocket: { port: 'grpc' } } }] },
  };
  t.throws(() => inject(settings('osm'), unnamed), {
    name: 'InjectError',
    field: 'spec.containers[0].readinessProbe.tcpSocket.port',
    message: /"grpc" names no port of container app/,
  });
});

t.test('identity: a name-based UUID per workload, stable and independent of time', async (t) => {
  const s = settings('osm');
  const a = inject(s, pod()).pod.metadata.labels!['osm-proxy-uuid'];
  // RFC 4122 §4.3 by hand: SHA-1 of the URL namespace bytes and the name, version 5, variant 10.
  const ns = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');
  const h = createHash('sha1').update(ns).update('meshinject.dev/osm/osm/shop/Deployment/web').digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  t.equal(a, `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
  t.equal(inject(s, pod()).pod.metadata.labels!['osm-proxy-uuid'], a, 'same workload, same UUID');
  t.not(
    inject(s, pod(), MONITORED, workload('StatefulSet')).pod.metadata.labels!['osm-proxy-uuid'],
    a,
    'kind is part of the name',
  );
  const res = inject(s, pod({}, { serviceAccountName: 'api' }));
  t.match(
    res.warnings[0],
    new RegExp(
      `the cluster must provide Secret shop/envoy-bootstrap-config-${a} with the envoy bootstrap config and a certificate for CN ${a}\\.sidecar\\.api\\.shop`,
    ),
  );
  t.same(res.pod.spec.volumes, [
    { name: 'envoy-bootstrap-config-volume', secret: { secretName: `envoy-bootstrap-config-${a}` } },
  ]);
});

t.test('platforms and modes: Windows, interception none, FSM NodeLevel', async (t) => {
  const win = inject(settings('osm'), pod({}, { nodeSelector: { 'kubernetes.io/os': 'Windows' } })).pod;
  t.equal(win.spec.initContainers, undefined, 'no init container on Windows');
  t.equal((win.spec.containers as JsonObject[])[1]!.image, OSM.classes.envoy!.defaultWindowsImage);
  t.throws(
    () =>
      inject(
        settings('osm', { meshConfig: { sidecar: { sidecarClass: 'pipy' } } }),
        pod({}, { nodeSelector: { 'kubernetes.io/os': 'windows' } }),
      ),
    { message: /no Windows image for sidecar class pipy/ },
  );
  t.throws(() => inject(settings('fsm'), pod({}, { nodeSelector: { 'kubernetes.io/os': 'windows' } }), ns('shop')), {
    message: /FSM has no Windows sidecar/,
  });
  const none = inject(settings('osm', { meshConfig: { traffic: { interceptionMode: 'none' } } }), pod()).pod;
  t.same(
    [none.spec.initContainers, containerNames(none)],
    [undefined, ['web', 'envoy']],
    'interception none: no init container',
  );
  const node = inject(
    settings('fsm', { meshConfig: { traffic: { interceptionMode: 'NodeLevel' } } }),
    pod(),
    ns('shop'),
  );
  t.same(containerNames(node.pod), ['web'], 'NodeLevel: no sidecar');
  t.ok(node.pod.metadata.labels!['fsm-proxy-uuid'], 'NodeLevel: the UUID label only');
  t.equal(node.summary, 'fsm, pipy, NodeLevel');
});

t.test(
  'refusals and warnings: Jobs, an injection done elsewhere, annotations not reproduced, controllers unknown before run time',
  async (t) => {
    const s = settings('osm');
    t.equal(
      osmDriver.traits?.podMetadataPath,
      undefined,
      "a CronJob is injected on its pods' own metadata (the default trait)",
    );
    t.match(inject(s, pod(), MONITORED, workload('CronJob')).warnings.join('\n'), /the CronJob's Jobs do not complete/);
    t.throws(
      () => inject(settings('fsm'), pod(), ns('shop'), workload('CronJob')),
      { message: /POD_CONTROLLER_KIND\/NAME.*CronJob/ },
      'pipy: the Job name is chosen at run time',
    );
    const job = inject(s, pod(), MONITORED, workload('Job'));
    t.match(job.warnings.join('\n'), /OSM does not support Jobs/);
    const native = osmDriver.inject({
      pod: pod(),
      workload: workload(),
      namespace: MONITORED,
      config: { ...config, nativeSidecars: true },
      settings: s,
    });
    t.same(
      [containerNames(native.pod), native.pod.spec.initContainers && containerNames(native.pod, 'initContainers')],
      [['web', 'envoy'], ['osm-init']],
      'nativeSidecars: still a regular container',
    );
    t.match(native.warnings.join('\n'), /spec\.nativeSidecars has no effect with OSM/);
    const foreign = pod(
      {},
      {
        containers: [
          { name: 'web', image: 'w' },
          { name: 'envoy', image: 'e' },
        ],
      },
    );
    t.throws(() => inject(s, foreign), {
      field: 'spec.containers',
      message: /already has "envoy" and there is no meshinject\.dev\/osm-status annotation/,
    });
    t.throws(() => inject(settings('fsm'), pod({ 'flomesh.io/sidecar-resource-limits-cpu': '1' }), ns('shop')), {
      message: /pod annotation flomesh\.io\/sidecar-resource-limits-cpu is honoured by FSM but not reproduced/,
    });
    t.throws(() => inject(settings('fsm'), pod(), ns('shop'), workload('DeploymentConfig')), {
      message: /POD_CONTROLLER_KIND\/NAME/,
    });
    const rs = inject(settings('fsm'), pod(), ns('shop'), workload('ReplicaSet', 'web-5d8f')).pod;
    const env = ((rs.spec.containers as JsonObject[])[0]!.env as JsonObject[]).filter((e) =>
      String(e.name).startsWith('POD_CONTROLLER'),
    );
    t.same(
      env,
      [
        { name: 'POD_CONTROLLER_KIND', value: 'Deployment' },
        { name: 'POD_CONTROLLER_NAME', value: 'web' },
      ],
      'FSM reads a ReplicaSet <x>-<suffix> as Deployment <x>',
    );
    const bare = inject(settings('fsm'), pod(), ns('shop'), workload('Pod')).pod;
    const benv = ((bare.spec.containers as JsonObject[])[0]!.env as JsonObject[]).filter((e) =>
      String(e.name).startsWith('POD_CONTROLLER'),
    );
    t.same(
      benv,
      [{ name: 'POD_CONTROLLER_KIND' }, { name: 'POD_CONTROLLER_NAME' }],
      'a bare pod: empty values, omitted as Go does',
    );
    const garbled: PodTemplate = {
      metadata: { annotations: { 'meshinject.dev/osm-status': '{"x":1}' } },
      spec: { containers: [] },
    };
    t.throws(() => inject(s, garbled), { message: /not a status meshinject wrote/ });
    t.equal(osmDriver.inventory(garbled), undefined, 'an unreadable status names nothing');
  },
);

/** What the engine's generic uninject removes for an inventory (containers, init containers, volumes, annotations, labels). */
function genericRemoval(p: PodTemplate, inv: Inventory): PodTemplate {
  const out = structuredClone(p);
  for (const [field, names] of [
    ['containers', inv.containers],
    ['initContainers', inv.initContainers],
    ['volumes', inv.volumes],
  ] as const) {
    const kept = ((out.spec[field] as JsonObject[] | undefined) ?? []).filter((x) => !names.includes(x.name as string));
    if (kept.length > 0) out.spec[field] = kept;
    else delete out.spec[field];
  }
  for (const [field, keys] of [
    ['annotations', inv.annotations ?? []],
    ['labels', inv.labels ?? []],
  ] as const) {
    const m = { ...(out.metadata[field] ?? {}) };
    for (const k of keys) delete m[k];
    if (Object.keys(m).length > 0) out.metadata[field] = m;
    else delete out.metadata[field];
  }
  return out;
}

t.test('status, inventory and uninject: re-injection is a no-op, uninject gives the input back', async (t) => {
  const metricsNs = ns('shop', MONITORED.labels, { 'openservicemesh.io/metrics': 'enabled' });
  const original: PodTemplate = {
    metadata: {
      labels: { app: 'web' },
      annotations: { 'openservicemesh.io/sidecar-injection': 'enabled', 'prometheus.io/port': '9090' },
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'w',
          ports: [{ name: 'http', containerPort: 80 }],
          livenessProbe: { httpGet: { path: '/', port: 'http' } },
          readinessProbe: { tcpSocket: { port: 80 } },
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
  for (const [s, driver] of [
    [settings('osm'), osmDriver],
    [settings('fsm'), fsmDriver],
  ] as const) {
    const nsInfo = s.flavor === OSM ? metricsNs : ns('shop', {}, { 'flomesh.io/metrics': 'enabled' });
    const input =
      s.flavor === FSM
        ? {
            ...original,
            metadata: {
              ...original.metadata,
              annotations: { ...original.metadata.annotations, 'flomesh.io/sidecar-injection': 'enabled' },
            },
          }
        : original;
    const once = inject(s, input, nsInfo).pod;
    const twice = inject(s, once, nsInfo).pod;
    t.same(twice, once, `${s.flavor.mesh}: injecting the output again changes nothing`);
    const inv = driver.inventory(once)!;
    const key = `meshinject.dev/${s.flavor.mesh}-status`;
    t.same(
      { ...inv, detail: undefined },
      {
        statusAnnotation: key,
        containers: s.flavor === OSM ? ['osm-healthcheck', 'envoy'] : ['fsm-healthcheck', 'sidecar'],
        initContainers: [s.flavor.initContainerName],
        volumes: [s.flavor === OSM ? 'envoy-bootstrap-config-volume' : 'sidecar-bootstrap-config-volume'],
        imagePullSecrets: [],
        annotations: [key, 'prometheus.io/scrape', 'prometheus.io/path'],
        labels: [s.flavor.uuidLabel],
        detail: undefined,
      },
      `${s.flavor.mesh}: inventory names exactly what was added (prometheus.io/port existed: restored, not removed)`,
    );
    t.same(
      driver.uninject!(genericRemoval(once, inv), inv, s, {
        injected: once,
        workload: workload(),
        namespace: nsInfo,
        config,
      }),
      input,
      `${s.flavor.mesh}: generic removal + uninject gives the input back`,
    );
    t.equal(driver.inventory(input), undefined, 'no status annotation: nothing injected');
  }
  const changed = inject(
    settings('osm', { meshConfig: { sidecar: { logLevel: 'debug' } } }),
    inject(settings('osm'), original, metricsNs).pod,
    metricsNs,
  ).pod;
  t.same(
    changed,
    inject(settings('osm', { meshConfig: { sidecar: { logLevel: 'debug' } } }), original, metricsNs).pod,
    'a changed configuration replaces the previous injection cleanly',
  );
});

t.test('the drivers are registered under their mesh names', async (t) => {
  t.same(
    driverNames().filter((n) => n === 'osm' || n === 'fsm'),
    ['osm', 'fsm'],
  );
  t.equal(findDriver('osm'), osmDriver);
  t.equal(findDriver('fsm'), fsmDriver);
});
