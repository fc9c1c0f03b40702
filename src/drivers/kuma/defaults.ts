/**
 * kuma-cp's defaults for the fields the injector reads, and the transparent proxy's `DefaultConfig()`, as
 * JSON documents with Go's json names (kumahq/kuma at 348b6528: pkg/config/app/kuma-cp/kuma-cp.defaults.yaml,
 * `DefaultKubernetesRuntimeConfig` in pkg/config/plugins/runtime/k8s/config.go, `DefaultConfig` in
 * pkg/transparentproxy/config/config.go). A configuration document is loaded over these
 * (`loadOver`, ./config.ts), as `kuma-cp run` loads its file over `kuma_cp.DefaultConfig()`.
 */
import type { JsonObject } from '../../model.ts';

const probe = (initialDelaySeconds: number, successThreshold: number) => ({
  initialDelaySeconds,
  timeoutSeconds: 3,
  periodSeconds: 5,
  successThreshold,
  failureThreshold: 12,
});

/** The kuma-cp configuration defaults the injector depends on. */
export const KUMA_CP_DEFAULTS: JsonObject = {
  store: { kubernetes: { systemNamespace: 'kuma-system' } },
  dpServer: { port: 5678 },
  bootstrapServer: { params: { adminPort: 9901, envoyAdminUnixSocket: true, readinessPort: 9902 } },
  runtime: {
    kubernetes: {
      controlPlaneServiceName: 'kuma-control-plane',
      injector: {
        cniEnabled: false,
        applicationProbeProxyPort: 9001,
        containerPatches: [],
        sidecarContainer: {
          image: 'kuma/kuma-dp:latest',
          uid: 5678,
          gid: 5678,
          drainTime: '30s',
          envVars: {},
          redirectPortInbound: 15006,
          redirectPortOutbound: 15001,
          ipFamilyMode: 'dualstack',
          waitForDataplaneReady: false,
          readinessProbe: probe(1, 1),
          livenessProbe: { ...probe(60, 0), successThreshold: 0 },
          startupProbe: { ...probe(1, 0), successThreshold: 0 },
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '0', memory: '512Mi' } },
        },
        initContainer: {
          image: 'kuma/kuma-init:latest',
          resources: { requests: { cpu: '20m', memory: '20M' }, limits: { cpu: '0', memory: '50M' } },
        },
        validationContainer: {
          resources: { requests: { cpu: '20m', memory: '20M' }, limits: { cpu: '0', memory: '50M' } },
        },
        sidecarTraffic: {
          excludeInboundPorts: [],
          excludeOutboundPorts: [],
          excludeInboundIPs: [],
          excludeOutboundIPs: [],
        },
        exceptions: { labels: { 'openshift.io/build.name': '*', 'openshift.io/deployer-pod-for.name': '*' } },
        caCertFile: '',
        builtinDNS: { enabled: true, port: 15053 },
        transparentProxyConfigMap: 'kuma-transparent-proxy-config',
        otelPipeEnabled: true,
        spire: { enabled: false, mountPath: '/run/spire/sockets', socketFileName: 'socket' },
      },
    },
  },
};

/** The transparent proxy's `DefaultConfig()`, the fields it marshals (Go json names; `sleepBetweenRetries` as Go writes it). */
export const TPROXY_DEFAULTS: JsonObject = {
  kumaDPUser: '',
  redirect: {
    inbound: {
      enabled: true,
      port: 15006,
      includePorts: [],
      excludePorts: [],
      excludePortsForUIDs: [],
      excludePortsForIPs: [],
      insertRedirectInsteadOfAppend: false,
    },
    outbound: {
      enabled: true,
      port: 15001,
      includePorts: [],
      excludePorts: [],
      excludePortsForUIDs: [],
      excludePortsForIPs: [],
      insertRedirectInsteadOfAppend: false,
    },
    dns: {
      enabled: false,
      port: 15053,
      captureAll: false,
      skipConntrackZoneSplit: false,
      resolvConfigPath: '/etc/resolv.conf',
    },
    vnet: { networks: [] },
  },
  dropInvalidPackets: false,
  verbose: false,
  dryRun: false,
  log: { enabled: false, level: 7 },
  wait: 5,
  waitInterval: 0,
  retry: { maxRetries: 4, sleepBetweenRetries: '2s' },
  storeFirewalld: false,
  iptablesExecutables: {},
  comments: { disabled: false },
  ipFamilyMode: 'dualstack',
  cniMode: false,
};
