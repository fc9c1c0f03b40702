import type { Json, JsonObject } from '../../model.ts';
import { isJsonObject, setOwn } from '../../json.ts';

/** The Istio release whose chart defaults ship here (images tag `1.31.0` on `docker.io/istio`). */
export const ISTIO_VERSION = '1.31.0';

/**
 * The istiod chart `values` as the sidecar injector sees them (the `values` key of the
 * `istio-sidecar-injector` ConfigMap, `default` profile): rendered from
 * `manifests/charts/istio-control/istio-discovery` at istio/istio 86c9f01f (1.31 line, see
 * reference/istio-injection.md §0/§2.1), with `global.hub`/`global.tag` set to the release
 * (`docker.io/istio`, {@link ISTIO_VERSION}) instead of the tests' `registry.istio.io/testing`/`latest`.
 * Keys the chart leaves unset (`global.proxy.lifecycle`, `holdApplicationUntilProxyStarts`, ...) are
 * absent, as in Istio, so the templates see them as nil.
 */
export const ISTIO_CHART_VALUES: JsonObject = {
  gateways: { seccompProfile: {}, securityContext: {} },
  global: {
    caAddress: '',
    caName: '',
    certSigners: [],
    configCluster: false,
    configValidation: true,
    defaultPodDisruptionBudget: { enabled: true },
    defaultResources: { requests: { cpu: '10m' } },
    externalIstiod: false,
    hub: 'docker.io/istio',
    imagePullPolicy: '',
    imagePullSecrets: [],
    istioNamespace: 'istio-system',
    istiod: { enableAnalysis: false },
    logAsJson: false,
    logging: { level: 'default:info' },
    meshID: '',
    meshNetworks: {},
    mountMtlsCerts: false,
    multiCluster: { clusterName: '' },
    nativeNftables: false,
    network: '',
    networkPolicy: { enabled: false },
    omitSidecarInjectorConfigMap: false,
    operatorManageWebhooks: false,
    pilotCertProvider: 'istiod',
    priorityClassName: '',
    proxy: {
      autoInject: 'enabled',
      clusterDomain: 'cluster.local',
      componentLogLevel: 'misc:error',
      excludeIPRanges: '',
      excludeInboundPorts: '',
      excludeOutboundPorts: '',
      image: 'proxyv2',
      includeIPRanges: '*',
      includeInboundPorts: '*',
      includeOutboundPorts: '',
      logLevel: 'warning',
      outlierLogPath: '',
      privileged: false,
      readinessFailureThreshold: 4,
      readinessInitialDelaySeconds: 0,
      readinessPeriodSeconds: 15,
      resources: {
        limits: { cpu: '2000m', memory: '1024Mi' },
        requests: { cpu: '100m', memory: '128Mi' },
      },
      seccompProfile: {},
      startupProbe: { enabled: true, failureThreshold: 600 },
      statusPort: 15020,
      tracer: 'none',
    },
    proxy_init: { forceApplyIptables: false, image: 'proxyv2' },
    remotePilotAddress: '',
    resourceScope: 'all',
    sds: { token: { aud: 'istio-ca' } },
    sts: { servicePort: 0 },
    tag: ISTIO_VERSION,
    variant: '',
    waypoint: {
      affinity: {},
      nodeSelector: {},
      resources: {
        limits: { cpu: '2', memory: '1Gi' },
        requests: { cpu: '100m', memory: '128Mi' },
      },
      tolerations: [],
      topologySpreadConstraints: [],
    },
  },
  pilot: { cni: { enabled: false, provider: 'default' }, env: {} },
  revision: '',
  sidecarInjectorWebhook: {
    alwaysInjectSelector: [],
    defaultTemplates: [],
    enableNamespacesByDefault: false,
    injectedAnnotations: {},
    neverInjectSelector: [],
    reinvocationPolicy: 'Never',
    rewriteAppHTTPProbe: true,
    templates: {},
  },
};

/**
 * Istio `mesh.DefaultProxyConfig()` (pkg/config/mesh/mesh.go, 1.31 line) as protobuf JSON: the
 * defaults `protoToJSON` strips from `PROXY_CONFIG`. `interceptionMode` is the enum zero `REDIRECT`.
 */
export const ISTIO_DEFAULT_PROXY_CONFIG: JsonObject = {
  configPath: './etc/istio/proxy',
  binaryPath: '/usr/local/bin/envoy',
  serviceCluster: 'istio-proxy',
  drainDuration: '45s',
  discoveryAddress: 'istiod.istio-system.svc:15012',
  proxyAdminPort: 15000,
  controlPlaneAuthPolicy: 'MUTUAL_TLS',
  statNameLength: 189,
  interceptionMode: 'REDIRECT',
  statusPort: 15020,
  terminationDrainDuration: '5s',
};

/**
 * The mesh config the injector sees: Istio `mesh.DefaultMeshConfig()` (pkg/config/mesh/mesh.go at
 * istio/istio 86c9f01f) with the istiod chart's mesh (`templates/configmap.yaml`, default profile:
 * `defaultConfig.discoveryAddress`, `defaultProviders.metrics: [prometheus]`, `enablePrometheusMerge`,
 * `rootNamespace`, `trustDomain`) applied on top, as protobuf JSON (camelCase keys, durations as
 * strings such as `"45s"`, enums by name).
 */
export const ISTIO_MESH_DEFAULTS: JsonObject = {
  enableTracing: true,
  accessLogFile: '',
  accessLogEncoding: 'TEXT',
  accessLogFormat: '',
  enableEnvoyAccessLogService: false,
  protocolDetectionTimeout: '0s',
  trustDomain: 'cluster.local',
  trustDomainAliases: [],
  enableAutoMtls: true,
  outboundTrafficPolicy: { mode: 'ALLOW_ANY' },
  inboundTrafficPolicy: { mode: 'PASSTHROUGH' },
  localityLbSetting: { enabled: true },
  certificates: [],
  defaultConfig: { ...ISTIO_DEFAULT_PROXY_CONFIG },
  rootNamespace: 'istio-system',
  proxyListenPort: 15001,
  proxyInboundListenPort: 15006,
  connectTimeout: '10s',
  defaultServiceExportTo: ['*'],
  defaultVirtualServiceExportTo: ['*'],
  defaultDestinationRuleExportTo: ['*'],
  dnsRefreshRate: '60s',
  serviceSettings: [],
  enablePrometheusMerge: true,
  defaultProviders: { metrics: ['prometheus'] },
  extensionProviders: [
    { name: 'prometheus', prometheus: {} },
    { name: 'stackdriver', stackdriver: {} },
    { name: 'envoy', envoyFileAccessLog: { path: '/dev/stdout' } },
  ],
};

function cloneJson<T extends Json>(v: T): T {
  return structuredClone(v);
}

/**
 * Deep-merges `override` onto `base` (neither is modified): objects are merged key by key, arrays and
 * scalars replace, and an explicit `null` in `override` is kept as `null` (Istio's `omitNil` in the
 * sidecar template relies on it, e.g. `global.proxy.resources.limits.cpu: null`). Used to put
 * `spec.istio.values` / `spec.istio.meshConfig` on top of {@link ISTIO_CHART_VALUES} /
 * {@link ISTIO_MESH_DEFAULTS}; mirrors Helm's values coalescing except that Helm deletes null keys.
 */
export function mergeValues(base: JsonObject, override: JsonObject | null | undefined): JsonObject {
  const out: JsonObject = cloneJson(base);
  if (!override) return out;
  for (const [key, value] of Object.entries(override)) {
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    if (isJsonObject(value) && isJsonObject(current)) setOwn(out, key, mergeValues(current, value));
    else setOwn(out, key, cloneJson(value));
  }
  return out;
}
