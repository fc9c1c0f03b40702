/**
 * Linkerd's annotation and label names (pkg/k8s/labels.go at linkerd2 b24cd40) and the check of the
 * `config.linkerd.io/` / `config.alpha.linkerd.io/` / `config.beta.linkerd.io/` keys a pod template or
 * namespace carries: a key Linkerd does not read is reported with the nearest key it does read.
 */

/** Prefix of every annotation and label Linkerd writes (and `linkerd uninject` removes). */
export const LINKERD_PREFIX = 'linkerd.io/';
/** `linkerd.io/inject`: `enabled`, `ingress` or `disabled` (pod annotation, else namespace annotation). */
export const INJECT_ANNOTATION = 'linkerd.io/inject';
export const CREATED_BY_ANNOTATION = 'linkerd.io/created-by';
export const PROXY_VERSION_ANNOTATION = 'linkerd.io/proxy-version';
export const TRUST_ROOT_SHA_ANNOTATION = 'linkerd.io/trust-root-sha256';
/** Pod label of Linkerd's own control-plane components: they can only be injected with `manual: true`. */
export const CONTROL_PLANE_COMPONENT_LABEL = 'linkerd.io/control-plane-component';
export const CONTROL_PLANE_NS_LABEL = 'linkerd.io/control-plane-ns';
export const WORKLOAD_NS_LABEL = 'linkerd.io/workload-ns';

export const PROXY_CONTAINER = 'linkerd-proxy';
export const INIT_CONTAINER = 'linkerd-init';
export const VALIDATOR_CONTAINER = 'linkerd-network-validator';
export const DEBUG_CONTAINER = 'linkerd-debug';
export const END_ENTITY_VOLUME = 'linkerd-identity-end-entity';
export const XTABLES_VOLUME = 'linkerd-proxy-init-xtables-lock';
export const TOKEN_VOLUME = 'linkerd-identity-token';

/** The workload kinds `linkerd inject` handles (`getFreshWorkloadObj`, pkg/inject/inject.go) and their `linkerd.io/proxy-<kind>` label. */
export const LINKERD_KINDS: Readonly<Record<string, string | undefined>> = {
  Deployment: 'linkerd.io/proxy-deployment',
  ReplicationController: 'linkerd.io/proxy-replicationcontroller',
  ReplicaSet: 'linkerd.io/proxy-replicaset',
  Job: 'linkerd.io/proxy-job',
  DaemonSet: 'linkerd.io/proxy-daemonset',
  StatefulSet: 'linkerd.io/proxy-statefulset',
  CronJob: 'linkerd.io/proxy-cronjob',
  Pod: undefined,
};

const C = 'config.linkerd.io/';
/** Names of the `config.linkerd.io/*` override annotations, as constants the overrides read. */
export const A = {
  proxyImage: `${C}proxy-image`,
  proxyVersion: `${C}proxy-version`,
  imagePullPolicy: `${C}image-pull-policy`,
  debugImage: `${C}debug-image`,
  debugImageVersion: `${C}debug-image-version`,
  debugImagePullPolicy: `${C}debug-image-pull-policy`,
  adminPort: `${C}admin-port`,
  controlPort: `${C}control-port`,
  inboundPort: `${C}inbound-port`,
  outboundPort: `${C}outbound-port`,
  podInboundPorts: `${C}pod-inbound-ports`,
  skipInboundPorts: `${C}skip-inbound-ports`,
  skipOutboundPorts: `${C}skip-outbound-ports`,
  skipSubnets: `${C}skip-subnets`,
  opaquePorts: `${C}opaque-ports`,
  cpuRequest: `${C}proxy-cpu-request`,
  cpuLimit: `${C}proxy-cpu-limit`,
  cpuRatioLimit: `${C}proxy-cpu-ratio-limit`,
  memoryRequest: `${C}proxy-memory-request`,
  memoryLimit: `${C}proxy-memory-limit`,
  ephemeralRequest: `${C}proxy-ephemeral-storage-request`,
  ephemeralLimit: `${C}proxy-ephemeral-storage-limit`,
  uid: `${C}proxy-uid`,
  gid: `${C}proxy-gid`,
  requireIdentity: `${C}proxy-require-identity-inbound-ports`,
  defaultInboundPolicy: `${C}default-inbound-policy`,
  logLevel: `${C}proxy-log-level`,
  logFormat: `${C}proxy-log-format`,
  logHttpHeaders: `${C}proxy-log-http-headers`,
  accessLog: `${C}access-log`,
  outboundConnectTimeout: `${C}proxy-outbound-connect-timeout`,
  inboundConnectTimeout: `${C}proxy-inbound-connect-timeout`,
  outboundDiscoveryTimeout: `${C}proxy-outbound-discovery-cache-unused-timeout`,
  inboundDiscoveryTimeout: `${C}proxy-inbound-discovery-cache-unused-timeout`,
  disableOutboundDetectTimeout: `${C}proxy-disable-outbound-protocol-detect-timeout`,
  disableInboundDetectTimeout: `${C}proxy-disable-inbound-protocol-detect-timeout`,
  await: `${C}proxy-await`,
  adminShutdown: `${C}proxy-admin-shutdown`,
  shutdownGracePeriod: `${C}shutdown-grace-period`,
  closeWaitTimeout: `${C}close-wait-timeout`,
  nativeSidecar: `${C}proxy-enable-native-sidecar`,
  nativeSidecarBeta: 'config.beta.linkerd.io/proxy-enable-native-sidecar',
  nativeSidecarAlpha: 'config.alpha.linkerd.io/proxy-enable-native-sidecar',
  waitBeforeExitSeconds: 'config.alpha.linkerd.io/proxy-wait-before-exit-seconds',
  externalProfiles: `${C}enable-external-profiles`,
  hostnameLabels: `${C}proxy-metrics-hostname-labels`,
  enableGateway: `${C}enable-gateway`,
  enableDebugSidecar: `${C}enable-debug-sidecar`,
  additionalEnv: `${C}proxy-additional-env`,
  /** A namespace label the webhook's namespaceSelector reads (not an override, but a known key). */
  admissionWebhooks: `${C}admission-webhooks`,
} as const;

/** Every `config.*linkerd.io/` key Linkerd reads on a pod template or namespace. */
export const KNOWN_CONFIG_KEYS: ReadonlySet<string> = new Set(Object.values(A));

/** Whether `key` is a Linkerd proxy-config key (prefix `config.linkerd.io/`, `config.alpha.linkerd.io/` or `config.beta.linkerd.io/`). */
export function isConfigKey(key: string): boolean {
  return /^config\.(alpha\.|beta\.)?linkerd\.io\//.test(key);
}

/** Levenshtein distance (small strings only). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, sub);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** The known config key nearest to `key` (edit distance; ties: the first in declaration order). */
export function nearestConfigKey(key: string): string {
  let best = '';
  let bestD = Infinity;
  for (const k of KNOWN_CONFIG_KEYS) {
    const d = distance(key, k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

/**
 * Warnings for the `config.linkerd.io/`, `config.alpha.linkerd.io/` and `config.beta.linkerd.io/` keys of
 * `annotations` that Linkerd does not read (it ignores them silently), each naming the nearest known key.
 * `where` names the object, e.g. `pod annotation` or `namespace shop annotation`.
 */
export function unknownConfigKeyWarnings(annotations: Record<string, string>, where: string): string[] {
  const out: string[] = [];
  for (const key of Object.keys(annotations)) {
    if (!isConfigKey(key) || KNOWN_CONFIG_KEYS.has(key)) continue;
    out.push(`${where} ${key} is not a Linkerd setting and is ignored; did you mean ${nearestConfigKey(key)}?`);
  }
  return out;
}
