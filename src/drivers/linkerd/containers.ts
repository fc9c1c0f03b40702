/**
 * The containers and volumes `linkerd inject --manual` adds, built from the per-pod values: a TypeScript
 * rendering of the chart partials (charts/partials/templates/_proxy.tpl, _proxy-init.tpl,
 * _network-validator.tpl, _debug.tpl, _volumes.tpl, _resources.tpl, _capabilities.tpl at linkerd2 b24cd40).
 * Keys come in the order Kubernetes' Go serialisation writes them (sorted), like the CLI's output; empty
 * strings are left out, as the typed Go structs drop them.
 */
import type { Json, JsonObject } from '../../model.ts';
import {
  DEBUG_CONTAINER,
  END_ENTITY_VOLUME,
  INIT_CONTAINER,
  PROXY_CONTAINER,
  TOKEN_VOLUME,
  VALIDATOR_CONTAINER,
} from './annotations.ts';
import { VALIDATOR_SECURITY_CONTEXT, type ImageValues, type LinkerdValues, type ResourceValues } from './values.ts';

/** What the pod contributes to the proxy's rendering (Linkerd `injectPodSpec`). */
export interface PodFacts {
  /** securityContext.capabilities of the first app container, copied to the proxy (PSP compliance). */
  capabilities?: { add: string[]; drop: string[] };
  /** The first app container's mount of the service account token, copied to the proxy and init container. */
  saMount?: { name: string; mountPath: string; readOnly: boolean };
  /** Control-plane namespace (`linkerd`). */
  controlPlaneNamespace: string;
}

const fieldRef = (path: string): JsonObject => ({ fieldRef: { fieldPath: path } });
const env = (name: string, value: string): JsonObject => (value === '' ? { name } : { name, value });

/** `<name>:<version | linkerdVersion>`. */
function imageRef(image: ImageValues, v: LinkerdValues): string {
  return `${image.name}:${image.version || v.linkerdVersion}`;
}

/** `partials.resources`: limits/requests with the non-empty entries, or undefined when nothing is set. */
export function renderResources(r: ResourceValues): JsonObject | undefined {
  const pick = (which: 'limit' | 'request'): JsonObject | undefined => {
    const out: JsonObject = {};
    for (const k of ['cpu', 'ephemeral-storage', 'memory'] as const) if (r[k][which] !== '') out[k] = r[k][which];
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const limits = pick('limit');
  const requests = pick('request');
  if (!limits && !requests) return undefined;
  return { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) };
}

/** Go's `snakecase` (sprig/xstrings `ToSnakeCase`) for the `proxy.inbound`/`outbound` parameter names. */
export function snakeCase(s: string): string {
  return (
    s
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      // `([A-Z]+)([A-Z][a-z])` → `$1_$2`, written with a lookahead: the same result in linear time.
      .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1_')
      .replace(/[-\s]+/g, '_')
      .toLowerCase()
  );
}

/** Go template `%v` of a scalar (`quote` in the chart). */
function goText(v: Json): string {
  return typeof v === 'string' ? v : v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The `LINKERD2_PROXY_<IN|OUT>BOUND_<SCOPE>_<PROTO>_<PARAM>` entries (maps are walked in sorted key order, as Go templates do). */
function paramEnv(v: LinkerdValues): JsonObject[] {
  const out: JsonObject[] = [];
  const sorted = (o: Json | undefined): Array<[string, Json]> =>
    o !== null && typeof o === 'object' && !Array.isArray(o)
      ? Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      : [];
  for (const [dir, scopes] of [
    ['inbound', v.proxy.inbound],
    ['outbound', v.proxy.outbound],
  ] as const) {
    for (const [scope, protos] of sorted(scopes)) {
      for (const [proto, params] of sorted(protos)) {
        for (const [param, value] of sorted(params)) {
          out.push(
            env(
              `LINKERD2_PROXY_${[dir, scope, proto, param].map((x) => snakeCase(x).toUpperCase()).join('_')}`,
              goText(value),
            ),
          );
        }
      }
    }
  }
  return out;
}

/** The `linkerd-proxy` container (`partials.proxy`). *
 * Long by design: ported recipe (Linkerd's `_proxy.tpl` partial, field by field in its order).
 */
export function proxyContainer(v: LinkerdValues, pod: PodFacts): JsonObject {
  const p = v.proxy;
  const ns = pod.controlPlaneNamespace;
  const trustDomain = v.identityTrustDomain || v.clusterDomain;
  const any = v.disableIPv6 ? '0.0.0.0' : '[::]';
  const cores: JsonObject[] =
    p.cores !== undefined
      ? [env('LINKERD2_PROXY_CORES', String(p.cores)), env('LINKERD2_PROXY_CORES_MIN', String(p.cores))]
      : [
          env('LINKERD2_PROXY_CORES', String(p.workers.minimum ?? 1)),
          env('LINKERD2_PROXY_CORES_MIN', String(p.workers.minimum ?? 1)),
          ...(p.workers.maximum ? [env('LINKERD2_PROXY_CORES_MAX', String(p.workers.maximum))] : []),
          ...(p.workers.maximumCPURatio
            ? [env('LINKERD2_PROXY_CORES_MAX_RATIO', String(p.workers.maximumCPURatio))]
            : []),
        ];
  const when = (cond: unknown, ...entries: JsonObject[]): JsonObject[] => (cond ? entries : []);
  const envList: JsonObject[] = [
    { name: '_pod_name', valueFrom: fieldRef('metadata.name') },
    { name: '_pod_ns', valueFrom: fieldRef('metadata.namespace') },
    { name: '_pod_uid', valueFrom: fieldRef('metadata.uid') },
    { name: '_pod_ip', valueFrom: fieldRef('status.podIP') },
    { name: '_pod_nodeName', valueFrom: fieldRef('spec.nodeName') },
    env('_pod_containerName', PROXY_CONTAINER),
    ...cores,
    ...when(
      p.requireIdentityOnInboundPorts,
      env('LINKERD2_PROXY_INBOUND_PORTS_REQUIRE_IDENTITY', p.requireIdentityOnInboundPorts),
    ),
    ...when(p.requireTLSOnInboundPorts, env('LINKERD2_PROXY_INBOUND_PORTS_REQUIRE_TLS', p.requireTLSOnInboundPorts)),
    env('LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED', String(p.enableShutdownEndpoint)),
    env(
      'LINKERD2_PROXY_LOG',
      `${p.logLevel}${p.logHTTPHeaders === 'insecure' ? '' : ',[{headers}]=off,[{request}]=off'}`,
    ),
    env('LINKERD2_PROXY_LOG_FORMAT', p.logFormat),
    env('LINKERD2_PROXY_DESTINATION_SVC_ADDR', `linkerd-dst-headless.${ns}.svc.${v.clusterDomain}.:8086`),
    env('LINKERD2_PROXY_DESTINATION_PROFILE_NETWORKS', v.clusterNetworks),
    env('LINKERD2_PROXY_POLICY_SVC_ADDR', `linkerd-policy.${ns}.svc.${v.clusterDomain}.:8090`),
    env('LINKERD2_PROXY_POLICY_WORKLOAD', '{"ns":"$(_pod_ns)", "pod":"$(_pod_name)"}\n'),
    env('LINKERD2_PROXY_INBOUND_DEFAULT_POLICY', p.defaultInboundPolicy),
    env('LINKERD2_PROXY_POLICY_CLUSTER_NETWORKS', v.clusterNetworks),
    env('LINKERD2_PROXY_CONTROL_STREAM_INITIAL_TIMEOUT', p.streams.initialTimeout),
    env('LINKERD2_PROXY_CONTROL_STREAM_IDLE_TIMEOUT', p.streams.idleTimeout),
    env('LINKERD2_PROXY_CONTROL_STREAM_LIFETIME', p.streams.lifetime),
    ...when(p.inboundConnectTimeout, env('LINKERD2_PROXY_INBOUND_CONNECT_TIMEOUT', p.inboundConnectTimeout)),
    ...when(p.outboundConnectTimeout, env('LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT', p.outboundConnectTimeout)),
    ...when(
      p.outboundDiscoveryCacheUnusedTimeout,
      env('LINKERD2_PROXY_OUTBOUND_DISCOVERY_IDLE_TIMEOUT', p.outboundDiscoveryCacheUnusedTimeout),
    ),
    ...when(
      p.inboundDiscoveryCacheUnusedTimeout,
      env('LINKERD2_PROXY_INBOUND_DISCOVERY_IDLE_TIMEOUT', p.inboundDiscoveryCacheUnusedTimeout),
    ),
    ...when(p.disableOutboundProtocolDetectTimeout, env('LINKERD2_PROXY_OUTBOUND_DETECT_TIMEOUT', '365d')),
    ...when(p.disableInboundProtocolDetectTimeout, env('LINKERD2_PROXY_INBOUND_DETECT_TIMEOUT', '365d')),
    env('LINKERD2_PROXY_CONTROL_LISTEN_ADDR', `${any}:${p.ports.control}`),
    env('LINKERD2_PROXY_ADMIN_LISTEN_ADDR', `${any}:${p.ports.admin}`),
    env('LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR', `127.0.0.1:${p.ports.outbound}`),
    env(
      'LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS',
      `127.0.0.1:${p.ports.outbound}${v.disableIPv6 ? '' : `,[::1]:${p.ports.outbound}`}`,
    ),
    env('LINKERD2_PROXY_INBOUND_LISTEN_ADDR', `${any}:${p.ports.inbound}`),
    { name: 'LINKERD2_PROXY_INBOUND_IPS', valueFrom: fieldRef('status.podIPs') },
    env('LINKERD2_PROXY_INBOUND_PORTS', p.podInboundPorts),
    ...when(p.isGateway, env('LINKERD2_PROXY_INBOUND_GATEWAY_SUFFIXES', `svc.${v.clusterDomain}.`)),
    ...when(p.isIngress, env('LINKERD2_PROXY_INGRESS_MODE', 'true')),
    env('LINKERD2_PROXY_DESTINATION_PROFILE_SUFFIXES', p.enableExternalProfiles ? '.' : `svc.${v.clusterDomain}.`),
    env('LINKERD2_PROXY_INBOUND_ACCEPT_KEEPALIVE', '10000ms'),
    env('LINKERD2_PROXY_OUTBOUND_CONNECT_KEEPALIVE', '10000ms'),
    env('LINKERD2_PROXY_INBOUND_ACCEPT_USER_TIMEOUT', '30s'),
    env('LINKERD2_PROXY_OUTBOUND_CONNECT_USER_TIMEOUT', '30s'),
    env('LINKERD2_PROXY_OUTBOUND_METRICS_HOSTNAME_LABELS', String(p.hostnameLabels)),
    ...paramEnv(v),
    ...when(p.opaquePorts, env('LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION', p.opaquePorts)),
    env(
      'LINKERD2_PROXY_DESTINATION_CONTEXT',
      '{"ns":"$(_pod_ns)", "nodeName":"$(_pod_nodeName)", "pod":"$(_pod_name)"}\n',
    ),
    { name: '_pod_sa', valueFrom: fieldRef('spec.serviceAccountName') },
    env('_l5d_ns', ns),
    env('_l5d_trustdomain', trustDomain),
    env('LINKERD2_PROXY_IDENTITY_DIR', '/var/run/linkerd/identity/end-entity'),
    env('LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS', `${v.identityTrustAnchorsPEM.trim()}\n`),
    env(
      'LINKERD2_PROXY_IDENTITY_TOKEN_FILE',
      v.serviceAccountTokenProjection
        ? '/var/run/secrets/tokens/linkerd-identity-token'
        : '/var/run/secrets/kubernetes.io/serviceaccount/token',
    ),
    env('LINKERD2_PROXY_IDENTITY_SVC_ADDR', `linkerd-identity-headless.${ns}.svc.${v.clusterDomain}.:8080`),
    env('LINKERD2_PROXY_IDENTITY_LOCAL_NAME', `$(_pod_sa).$(_pod_ns).serviceaccount.identity.${ns}.${trustDomain}`),
    env('LINKERD2_PROXY_IDENTITY_SVC_NAME', `linkerd-identity.${ns}.serviceaccount.identity.${ns}.${trustDomain}`),
    env(
      'LINKERD2_PROXY_DESTINATION_SVC_NAME',
      `linkerd-destination.${ns}.serviceaccount.identity.${ns}.${trustDomain}`,
    ),
    env('LINKERD2_PROXY_POLICY_SVC_NAME', `linkerd-destination.${ns}.serviceaccount.identity.${ns}.${trustDomain}`),
    ...when(p.accessLog, env('LINKERD2_PROXY_ACCESS_LOG', p.accessLog)),
    ...when(p.shutdownGracePeriod, env('LINKERD2_PROXY_SHUTDOWN_GRACE_PERIOD', p.shutdownGracePeriod)),
    ...p.additionalEnv,
    ...p.experimentalEnv,
  ];
  const admin = p.ports.admin;
  const ready = { path: '/ready', port: admin };
  const securityContext: JsonObject =
    Object.keys(p.securityContext).length > 0
      ? p.securityContext
      : {
          allowPrivilegeEscalation: false,
          ...(pod.capabilities ? { capabilities: capabilities(pod.capabilities) } : {}),
          readOnlyRootFilesystem: true,
          ...(p.gid >= 0 ? { runAsGroup: p.gid } : {}),
          runAsNonRoot: true,
          runAsUser: p.uid,
          seccompProfile: { type: 'RuntimeDefault' },
        };
  const lifecycle: JsonObject | undefined =
    !p.nativeSidecar && (p.await || p.waitBeforeExitSeconds)
      ? {
          ...(p.await
            ? {
                postStart: { exec: { command: ['/usr/lib/linkerd/linkerd-await', '--timeout=2m', `--port=${admin}`] } },
              }
            : {}),
          ...(p.waitBeforeExitSeconds
            ? { preStop: { exec: { command: ['/bin/sleep', String(p.waitBeforeExitSeconds)] } } }
            : {}),
        }
      : undefined;
  const resources = renderResources(p.resources);
  return {
    env: envList,
    image: imageRef(p.image, v),
    imagePullPolicy: p.image.pullPolicy || v.imagePullPolicy,
    ...(lifecycle ? { lifecycle } : {}),
    livenessProbe: {
      httpGet: { path: '/live', port: admin },
      initialDelaySeconds: p.livenessProbe.initialDelaySeconds,
      timeoutSeconds: p.livenessProbe.timeoutSeconds,
    },
    name: PROXY_CONTAINER,
    ports: [
      { containerPort: p.ports.inbound, name: 'linkerd-proxy' },
      { containerPort: admin, name: 'linkerd-admin' },
    ],
    readinessProbe: {
      httpGet: ready,
      initialDelaySeconds: p.readinessProbe.initialDelaySeconds,
      timeoutSeconds: p.readinessProbe.timeoutSeconds,
    },
    ...(resources ? { resources } : {}),
    ...(p.nativeSidecar ? { restartPolicy: 'Always' } : {}),
    securityContext,
    ...(p.nativeSidecar && p.await
      ? {
          startupProbe: {
            failureThreshold: p.startupProbe.failureThreshold,
            httpGet: ready,
            ...(p.startupProbe.initialDelaySeconds ? { initialDelaySeconds: p.startupProbe.initialDelaySeconds } : {}),
            periodSeconds: p.startupProbe.periodSeconds,
          },
        }
      : {}),
    terminationMessagePolicy: 'FallbackToLogsOnError',
    volumeMounts: [
      { mountPath: '/var/run/linkerd/identity/end-entity', name: END_ENTITY_VOLUME },
      ...(v.serviceAccountTokenProjection ? [{ mountPath: '/var/run/secrets/tokens', name: TOKEN_VOLUME }] : []),
      ...(pod.saMount
        ? [
            {
              mountPath: pod.saMount.mountPath,
              name: pod.saMount.name,
              ...(pod.saMount.readOnly ? { readOnly: true } : {}),
            },
          ]
        : []),
    ],
  };
}

function capabilities(c: { add: string[]; drop: string[] }): JsonObject {
  return { ...(c.add.length > 0 ? { add: c.add } : {}), ...(c.drop.length > 0 ? { drop: c.drop } : {}) };
}

/** The `linkerd-init` init container (`partials.proxy-init`). Throws a message string for an invalid `proxyInit.iptablesMode`. */
export function proxyInitContainer(v: LinkerdValues, pod: PodFacts): JsonObject {
  const i = v.proxyInit;
  const p = v.proxy;
  const mode = i.iptablesMode || 'legacy';
  if (mode !== 'nft' && mode !== 'legacy')
    throw new Error(`unsupported value "${i.iptablesMode}" for proxyInit.iptablesMode (valid: nft, legacy)`);
  if (i.closeWaitTimeoutSecs && !i.runAsRoot)
    throw new Error('proxyInit.runAsRoot must be set to use proxyInit.closeWaitTimeoutSecs');
  const args = [
    ...(mode === 'nft' ? ['--firewall-bin-path', 'iptables-nft', '--firewall-save-bin-path', 'iptables-nft-save'] : []),
    ...(v.disableIPv6 ? ['--ipv6=false'] : []),
    '--incoming-proxy-port',
    String(p.ports.inbound),
    '--outgoing-proxy-port',
    String(p.ports.outbound),
    '--proxy-uid',
    String(p.uid),
    ...(p.gid >= 0 ? ['--proxy-gid', String(p.gid)] : []),
    '--inbound-ports-to-ignore',
    `${p.ports.control},${p.ports.admin}${i.ignoreInboundPorts ? `,${i.ignoreInboundPorts}` : ''}`,
    ...(i.ignoreOutboundPorts ? ['--outbound-ports-to-ignore', i.ignoreOutboundPorts] : []),
    ...(i.closeWaitTimeoutSecs ? ['--timeout-close-wait-secs', String(i.closeWaitTimeoutSecs)] : []),
    ...(i.logFormat ? ['--log-format', i.logFormat] : []),
    ...(i.logLevel ? ['--log-level', i.logLevel] : []),
    ...(i.skipSubnets ? ['--subnets-to-ignore', i.skipSubnets] : []),
  ];
  const privileged = Boolean(i.closeWaitTimeoutSecs || i.privileged);
  const drop = (pod.capabilities?.drop ?? []).filter((d) => d !== 'NET_RAW' && d !== 'NET_ADMIN');
  const resources = renderResources(p.resources);
  const mounts: JsonObject[] = [
    ...(v.cniEnabled ? [] : [{ mountPath: i.xtMountPath.mountPath, name: i.xtMountPath.name }]),
    ...(pod.saMount
      ? [
          {
            mountPath: pod.saMount.mountPath,
            name: pod.saMount.name,
            ...(pod.saMount.readOnly ? { readOnly: true } : {}),
          },
        ]
      : []),
  ];
  return {
    args,
    command: ['/usr/lib/linkerd/linkerd2-proxy-init'],
    image: imageRef(p.image, v),
    imagePullPolicy: p.image.pullPolicy || v.imagePullPolicy,
    name: INIT_CONTAINER,
    ...(resources ? { resources } : {}),
    securityContext: {
      allowPrivilegeEscalation: privileged,
      capabilities: {
        add: ['NET_ADMIN', 'NET_RAW', ...(pod.capabilities?.add ?? [])],
        ...(drop.length > 0 ? { drop } : {}),
      },
      privileged,
      readOnlyRootFilesystem: true,
      ...(i.runAsRoot
        ? { runAsGroup: 0, runAsNonRoot: false, runAsUser: 0 }
        : {
            runAsGroup: i.runAsGroup === 0 ? 65534 : i.runAsGroup,
            runAsNonRoot: true,
            runAsUser: i.runAsUser === 0 ? 65534 : i.runAsUser,
          }),
      seccompProfile: { type: 'RuntimeDefault' },
    },
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
  };
}

/** The `linkerd-network-validator` init container of CNI mode (`partials.network-validator`). */
export function networkValidatorContainer(v: LinkerdValues): JsonObject {
  const n = v.networkValidator;
  const resources = renderResources(v.proxy.resources);
  return {
    args: [
      '--log-format',
      n.logFormat,
      '--log-level',
      n.logLevel,
      '--connect-addr',
      n.connectAddr || (v.disableIPv6 ? '1.1.1.1:20001' : '[fd00::1]:20001'),
      '--listen-addr',
      n.listenAddr || (v.disableIPv6 ? '0.0.0.0:4140' : '[::]:4140'),
      '--timeout',
      n.timeout,
    ],
    command: ['/usr/lib/linkerd/linkerd2-network-validator'],
    image: imageRef(v.proxy.image, v),
    imagePullPolicy: v.proxy.image.pullPolicy || v.imagePullPolicy,
    name: VALIDATOR_CONTAINER,
    ...(resources ? { resources } : {}),
    ...(n.enableSecurityContext
      ? {
          securityContext:
            Object.keys(n.securityContext).length > 0 ? n.securityContext : structuredClone(VALIDATOR_SECURITY_CONTEXT),
        }
      : {}),
  };
}

/** The `linkerd-debug` container (`partials.debug`). */
export function debugContainer(v: LinkerdValues): JsonObject {
  const infallible = { exec: { command: ['true'] } };
  return {
    image: imageRef(v.debugImage, v),
    imagePullPolicy: v.debugImage.pullPolicy || v.imagePullPolicy,
    livenessProbe: infallible,
    name: DEBUG_CONTAINER,
    readinessProbe: structuredClone(infallible),
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

/** The identity volumes (`partials.proxy.volumes.*`), in the order the patch appends them. */
export function identityVolumes(v: LinkerdValues): JsonObject[] {
  return [
    { emptyDir: { medium: 'Memory' }, name: END_ENTITY_VOLUME },
    ...(v.serviceAccountTokenProjection
      ? [
          {
            name: TOKEN_VOLUME,
            projected: {
              sources: [
                { serviceAccountToken: { audience: 'identity.l5d.io', expirationSeconds: 86400, path: TOKEN_VOLUME } },
              ],
            },
          },
        ]
      : []),
  ];
}
