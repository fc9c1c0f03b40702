/**
 * The linkerd-control-plane Helm values the injection reads: the chart defaults (values.yaml of linkerd2
 * b24cd40, the part the proxy patch renders), Helm's merge of user values onto them, and the typed view the
 * rest of the driver works on. The field names are the chart's (json tags of pkg/charts/linkerd2/values.go).
 */
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { quoteValue } from '../../config/schema-issues.ts';
import { getIn, isJsonObject, setOwn } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import { decodeJsonInt, type GoIntType } from '../go-parse-decode.ts';

/**
 * The Linkerd release the defaults stand for: the newest tag of linkerd/linkerd2 at the commit the chart
 * defaults were read from (b24cd40, 2026-08-21). It is the proxy image tag unless `proxy.image.version` is set.
 */
export const DEFAULT_LINKERD_VERSION = 'edge-26.8.3';

/** The network validator's securityContext: the chart default, and the partial's own fallback when it is emptied. */
export const VALIDATOR_SECURITY_CONTEXT: JsonObject = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  readOnlyRootFilesystem: true,
  runAsGroup: 65534,
  runAsNonRoot: true,
  runAsUser: 65534,
  seccompProfile: { type: 'RuntimeDefault' },
};

/** The chart defaults the patch reads (charts/linkerd-control-plane/values.yaml). */
export const LINKERD_CHART_VALUES: JsonObject = {
  clusterDomain: 'cluster.local',
  clusterNetworks: '10.0.0.0/8,100.64.0.0/10,172.16.0.0/12,192.168.0.0/16,fd00::/8',
  imagePullPolicy: 'IfNotPresent',
  linkerdVersion: DEFAULT_LINKERD_VERSION,
  disableIPv6: true,
  cniEnabled: false,
  identityTrustAnchorsPEM: '',
  identityTrustDomain: '',
  proxy: {
    enableExternalProfiles: false,
    outboundConnectTimeout: '1000ms',
    inboundConnectTimeout: '100ms',
    outboundDiscoveryCacheUnusedTimeout: '5s',
    inboundDiscoveryCacheUnusedTimeout: '90s',
    disableOutboundProtocolDetectTimeout: false,
    disableInboundProtocolDetectTimeout: false,
    image: { name: 'cr.l5d.io/linkerd/proxy', pullPolicy: '', version: '' },
    enableShutdownEndpoint: false,
    logLevel: 'warn,linkerd=info,hickory=error',
    logFormat: 'plain',
    logHTTPHeaders: 'off',
    ports: { admin: 4191, control: 4190, inbound: 4143, outbound: 4140 },
    cores: null,
    runtime: { workers: { maximumCPURatio: null, minimum: 1 } },
    resources: {
      cpu: { limit: '', request: '' },
      memory: { limit: '', request: '' },
      'ephemeral-storage': { limit: '', request: '' },
    },
    uid: 2102,
    gid: -1,
    securityContext: {},
    waitBeforeExitSeconds: 0,
    await: true,
    requireIdentityOnInboundPorts: '',
    opaquePorts: '25,587,3306,4444,5432,6379,9300,11211',
    shutdownGracePeriod: '',
    defaultInboundPolicy: 'all-unauthenticated',
    accessLog: '',
    isIngress: false,
    isGateway: false,
    nativeSidecar: true,
    livenessProbe: { initialDelaySeconds: 10, timeoutSeconds: 1 },
    readinessProbe: { initialDelaySeconds: 2, timeoutSeconds: 1 },
    startupProbe: { initialDelaySeconds: 0, periodSeconds: 1, failureThreshold: 120 },
    control: { streams: { initialTimeout: '3s', idleTimeout: '5m', lifetime: '1h' } },
    metrics: { hostnameLabels: false },
    tracing: { enabled: false },
    additionalEnv: [],
    experimentalEnv: [],
    inbound: { server: { http2: { keepAliveInterval: '10s', keepAliveTimeout: '3s' } } },
    outbound: { server: { http2: { keepAliveInterval: '10s', keepAliveTimeout: '3s' } } },
  },
  proxyInit: {
    iptablesMode: 'nft',
    ignoreInboundPorts: '4567,4568',
    ignoreOutboundPorts: '4567,4568',
    skipSubnets: '',
    logLevel: '',
    logFormat: '',
    closeWaitTimeoutSecs: 0,
    privileged: false,
    runAsRoot: false,
    runAsUser: 65534,
    runAsGroup: 65534,
    xtMountPath: { mountPath: '/run', name: 'linkerd-proxy-init-xtables-lock' },
  },
  networkValidator: {
    logLevel: 'debug',
    logFormat: 'plain',
    connectAddr: '',
    listenAddr: '',
    timeout: '10s',
    enableSecurityContext: true,
    securityContext: structuredClone(VALIDATOR_SECURITY_CONTEXT),
  },
  debugContainer: { image: { name: 'cr.l5d.io/linkerd/debug', pullPolicy: '', version: '' } },
  identity: { serviceAccountTokenProjection: true },
};

/**
 * Helm's coalescing of user values onto chart values: objects merge key by key, any other value replaces,
 * and a `null` user value deletes the chart's key (Helm's way to remove a default, e.g. `proxy.inbound.server: null`).
 * Returns a new object; neither input is changed.
 */
export function coalesceValues(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = structuredClone(base);
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else if (isJsonObject(v) && Object.hasOwn(out, k) && isJsonObject(out[k]))
      setOwn(out, k, coalesceValues(out[k] as JsonObject, v));
    else setOwn(out, k, structuredClone(v));
  }
  return out;
}

/** A container image as the chart describes it. */
export interface ImageValues {
  name: string;
  /** Tag; `''` means `linkerdVersion`. */
  version: string;
  /** `''` means the top-level `imagePullPolicy`. */
  pullPolicy: string;
}

/** CPU, memory and ephemeral-storage requests and limits (Kubernetes quantities as strings; `''` = unset). */
export type ResourceValues = Record<'cpu' | 'memory' | 'ephemeral-storage', { request: string; limit: string }>;

/** `proxy.*` values (the subset the patch renders), plus what the injection derives from the pod. */
export interface ProxyValues {
  image: ImageValues;
  ports: { admin: number; control: number; inbound: number; outbound: number };
  logLevel: string;
  logFormat: string;
  logHTTPHeaders: string;
  enableShutdownEndpoint: boolean;
  enableExternalProfiles: boolean;
  outboundConnectTimeout: string;
  inboundConnectTimeout: string;
  outboundDiscoveryCacheUnusedTimeout: string;
  inboundDiscoveryCacheUnusedTimeout: string;
  disableOutboundProtocolDetectTimeout: boolean;
  disableInboundProtocolDetectTimeout: boolean;
  /** Deprecated fixed core count (`proxy.cores`); `undefined` when unset. */
  cores?: number;
  workers: { minimum?: number; maximum?: number; maximumCPURatio?: number };
  resources: ResourceValues;
  uid: number;
  /** `-1` means no `runAsGroup`. */
  gid: number;
  /** Replaces the proxy's default securityContext when non-empty. */
  securityContext: JsonObject;
  waitBeforeExitSeconds: number;
  await: boolean;
  requireIdentityOnInboundPorts: string;
  requireTLSOnInboundPorts: string;
  opaquePorts: string;
  shutdownGracePeriod: string;
  defaultInboundPolicy: string;
  accessLog: string;
  isIngress: boolean;
  isGateway: boolean;
  nativeSidecar: boolean;
  livenessProbe: { initialDelaySeconds: number; timeoutSeconds: number };
  readinessProbe: { initialDelaySeconds: number; timeoutSeconds: number };
  startupProbe: { initialDelaySeconds: number; periodSeconds: number; failureThreshold: number };
  streams: { initialTimeout: string; idleTimeout: string; lifetime: string };
  hostnameLabels: boolean;
  additionalEnv: JsonObject[];
  experimentalEnv: JsonObject[];
  /** `proxy.inbound` / `proxy.outbound`: scope → protocol → parameter → value. */
  inbound: JsonObject;
  outbound: JsonObject;
  /** Derived per pod: comma-separated container and probe ports (`getPodInboundPorts`). */
  podInboundPorts: string;
}

/** `proxyInit.*` values. */
export interface ProxyInitValues {
  iptablesMode: string;
  ignoreInboundPorts: string;
  ignoreOutboundPorts: string;
  skipSubnets: string;
  logLevel: string;
  logFormat: string;
  closeWaitTimeoutSecs: number;
  privileged: boolean;
  runAsRoot: boolean;
  runAsUser: number;
  runAsGroup: number;
  xtMountPath: { mountPath: string; name: string };
}

/** The typed values of one injection. */
export interface LinkerdValues {
  linkerdVersion: string;
  clusterDomain: string;
  clusterNetworks: string;
  identityTrustDomain: string;
  identityTrustAnchorsPEM: string;
  imagePullPolicy: string;
  disableIPv6: boolean;
  cniEnabled: boolean;
  serviceAccountTokenProjection: boolean;
  proxy: ProxyValues;
  proxyInit: ProxyInitValues;
  networkValidator: {
    logLevel: string;
    logFormat: string;
    connectAddr: string;
    listenAddr: string;
    timeout: string;
    enableSecurityContext: boolean;
    securityContext: JsonObject;
  };
  debugImage: ImageValues;
}

/**
 * Reads the typed values from merged values (`coalesceValues(LINKERD_CHART_VALUES, user)`), checking each
 * field's type. A wrong type is an issue naming `<path>.<field>` (and the default is used). Values the
 * driver cannot render faithfully are issues too: `proxy.tracing.enabled: true` (tracing is not implemented).
 * @param path field path of the values for messages, e.g. `spec.linkerd.values`
 *
 * Long by design: table (one typed read per chart value).
 */
export function readValues(merged: JsonObject, path: string, issues: ConfigIssue[]): LinkerdValues {
  const get = (keys: string): Json | undefined => getIn(merged, keys.split('.'));
  const fallback = (keys: string): Json | undefined => getIn(LINKERD_CHART_VALUES, keys.split('.'));
  const bad = (keys: string, expected: string, v: Json | undefined): void => {
    issues.push({ path: `${path}.${keys}`, message: `${path}.${keys} must be ${expected}; got ${quoteValue(v)}` });
  };
  const str = (keys: string): string => {
    const v = get(keys);
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v); // Helm renders scalars as text
    bad(keys, 'a string', v);
    return String(fallback(keys) ?? '');
  };
  // encoding/json into the Go type of the field (pkg/charts/linkerd2/values.go), then the range the driver needs.
  const int = (keys: string, type: GoIntType, min = -Infinity, max = Infinity): number => {
    const v = get(keys);
    const d = v === undefined ? undefined : decodeJsonInt(v, type, keys);
    if (d !== undefined && !d.ok) {
      issues.push({ path: `${path}.${keys}`, message: `${path}.${keys}: ${d.error}` });
      return fallback(keys) as number;
    }
    if (d !== undefined && d.value >= min && d.value <= max) return d.value;
    bad(keys, `an integer${min > -Infinity ? ` from ${min}` : ''}${max < Infinity ? ` to ${max}` : ''}`, v);
    return fallback(keys) as number;
  };
  const optNum = (keys: string): number | undefined => {
    const v = get(keys);
    if (v === undefined || v === null || v === '' || v === 0) return undefined;
    if (typeof v === 'number' && v > 0) return v;
    bad(keys, 'a positive number or null', v);
    return undefined;
  };
  const bool = (keys: string): boolean => {
    const v = get(keys);
    if (typeof v === 'boolean') return v;
    if (v === undefined || v === null) return false;
    bad(keys, 'true or false', v);
    return fallback(keys) === true;
  };
  const obj = (keys: string): JsonObject => {
    const v = get(keys);
    if (v === undefined || v === null) return {};
    if (isJsonObject(v)) return v;
    bad(keys, 'an object', v);
    return {};
  };
  const envList = (keys: string): JsonObject[] => {
    const v = get(keys);
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every((e) => isJsonObject(e) && typeof e.name === 'string')) return v as JsonObject[];
    bad(keys, 'a list of EnvVar objects (each with a name)', v);
    return [];
  };
  const image = (keys: string): ImageValues => ({
    name: str(`${keys}.name`),
    version: str(`${keys}.version`),
    pullPolicy: str(`${keys}.pullPolicy`),
  });
  const res = (kind: string) => ({
    request: str(`proxy.resources.${kind}.request`),
    limit: str(`proxy.resources.${kind}.limit`),
  });
  const port = (keys: string) => int(keys, 'int32', 0, 65535);

  if (bool('proxy.tracing.enabled')) {
    issues.push({
      path: `${path}.proxy.tracing.enabled`,
      message: `${path}.proxy.tracing.enabled: proxy tracing is not supported by the linkerd driver; set it to false`,
    });
  }
  const cores = optNum('proxy.cores');
  const minimum = optNum('proxy.runtime.workers.minimum');
  const maximum = optNum('proxy.runtime.workers.maximum');
  const ratio = optNum('proxy.runtime.workers.maximumCPURatio');
  return {
    linkerdVersion: str('linkerdVersion'),
    clusterDomain: str('clusterDomain'),
    clusterNetworks: str('clusterNetworks'),
    identityTrustDomain: str('identityTrustDomain'),
    identityTrustAnchorsPEM: str('identityTrustAnchorsPEM'),
    imagePullPolicy: str('imagePullPolicy'),
    disableIPv6: bool('disableIPv6'),
    cniEnabled: bool('cniEnabled'),
    serviceAccountTokenProjection: bool('identity.serviceAccountTokenProjection'),
    proxy: {
      image: image('proxy.image'),
      ports: {
        admin: port('proxy.ports.admin'),
        control: port('proxy.ports.control'),
        inbound: port('proxy.ports.inbound'),
        outbound: port('proxy.ports.outbound'),
      },
      logLevel: str('proxy.logLevel'),
      logFormat: str('proxy.logFormat'),
      logHTTPHeaders: str('proxy.logHTTPHeaders'),
      enableShutdownEndpoint: bool('proxy.enableShutdownEndpoint'),
      enableExternalProfiles: bool('proxy.enableExternalProfiles'),
      outboundConnectTimeout: str('proxy.outboundConnectTimeout'),
      inboundConnectTimeout: str('proxy.inboundConnectTimeout'),
      outboundDiscoveryCacheUnusedTimeout: str('proxy.outboundDiscoveryCacheUnusedTimeout'),
      inboundDiscoveryCacheUnusedTimeout: str('proxy.inboundDiscoveryCacheUnusedTimeout'),
      disableOutboundProtocolDetectTimeout: bool('proxy.disableOutboundProtocolDetectTimeout'),
      disableInboundProtocolDetectTimeout: bool('proxy.disableInboundProtocolDetectTimeout'),
      ...(cores !== undefined ? { cores } : {}),
      workers: {
        ...(minimum !== undefined ? { minimum } : {}),
        ...(maximum !== undefined ? { maximum } : {}),
        ...(ratio !== undefined ? { maximumCPURatio: ratio } : {}),
      },
      resources: { cpu: res('cpu'), memory: res('memory'), 'ephemeral-storage': res('ephemeral-storage') },
      uid: int('proxy.uid', 'int64'),
      gid: int('proxy.gid', 'int64'),
      securityContext: obj('proxy.securityContext'),
      waitBeforeExitSeconds: int('proxy.waitBeforeExitSeconds', 'uint64'),
      await: bool('proxy.await'),
      requireIdentityOnInboundPorts: str('proxy.requireIdentityOnInboundPorts'),
      requireTLSOnInboundPorts: str('proxy.requireTLSOnInboundPorts'),
      opaquePorts: str('proxy.opaquePorts'),
      shutdownGracePeriod: str('proxy.shutdownGracePeriod'),
      defaultInboundPolicy: str('proxy.defaultInboundPolicy'),
      accessLog: str('proxy.accessLog'),
      isIngress: bool('proxy.isIngress'),
      isGateway: bool('proxy.isGateway'),
      nativeSidecar: bool('proxy.nativeSidecar'),
      livenessProbe: {
        initialDelaySeconds: int('proxy.livenessProbe.initialDelaySeconds', 'uint'),
        timeoutSeconds: int('proxy.livenessProbe.timeoutSeconds', 'uint'),
      },
      readinessProbe: {
        initialDelaySeconds: int('proxy.readinessProbe.initialDelaySeconds', 'uint'),
        timeoutSeconds: int('proxy.readinessProbe.timeoutSeconds', 'uint'),
      },
      startupProbe: {
        initialDelaySeconds: int('proxy.startupProbe.initialDelaySeconds', 'uint'),
        periodSeconds: int('proxy.startupProbe.periodSeconds', 'uint'),
        failureThreshold: int('proxy.startupProbe.failureThreshold', 'uint'),
      },
      streams: {
        initialTimeout: str('proxy.control.streams.initialTimeout'),
        idleTimeout: str('proxy.control.streams.idleTimeout'),
        lifetime: str('proxy.control.streams.lifetime'),
      },
      hostnameLabels: bool('proxy.metrics.hostnameLabels'),
      additionalEnv: envList('proxy.additionalEnv'),
      experimentalEnv: envList('proxy.experimentalEnv'),
      inbound: obj('proxy.inbound'),
      outbound: obj('proxy.outbound'),
      podInboundPorts: '',
    },
    proxyInit: {
      iptablesMode: str('proxyInit.iptablesMode'),
      ignoreInboundPorts: str('proxyInit.ignoreInboundPorts'),
      ignoreOutboundPorts: str('proxyInit.ignoreOutboundPorts'),
      skipSubnets: str('proxyInit.skipSubnets'),
      logLevel: str('proxyInit.logLevel'),
      logFormat: str('proxyInit.logFormat'),
      closeWaitTimeoutSecs: int('proxyInit.closeWaitTimeoutSecs', 'int64', 0),
      privileged: bool('proxyInit.privileged'),
      runAsRoot: bool('proxyInit.runAsRoot'),
      runAsUser: int('proxyInit.runAsUser', 'int64', 0),
      runAsGroup: int('proxyInit.runAsGroup', 'int64', 0),
      xtMountPath: { mountPath: str('proxyInit.xtMountPath.mountPath'), name: str('proxyInit.xtMountPath.name') },
    },
    networkValidator: {
      logLevel: str('networkValidator.logLevel'),
      logFormat: str('networkValidator.logFormat'),
      connectAddr: str('networkValidator.connectAddr'),
      listenAddr: str('networkValidator.listenAddr'),
      timeout: str('networkValidator.timeout'),
      enableSecurityContext: get('networkValidator.enableSecurityContext') !== false,
      securityContext: obj('networkValidator.securityContext'),
    },
    debugImage: image('debugContainer.image'),
  };
}
