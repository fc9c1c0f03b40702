/**
 * The containers Kuma's injector builds in code (kumahq/kuma at 348b6528: `DataplaneProxyFactory.NewContainer`
 * and `sidecarEnvVars` in pkg/plugins/runtime/k8s/containers/factory.go; `NewSidecarContainer`,
 * `NewVolumeMounts`, `NewInitContainer`, `NewValidationContainer` in
 * pkg/plugins/runtime/k8s/webhooks/injector/injector.go): kuma-sidecar (kuma-dp), kuma-init (installs the
 * transparent proxy's iptables rules) and kuma-validation (checks them in CNI mode). Fields Go leaves out
 * when zero are left out here too.
 */
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { parseDuration } from '../go-parse.ts';
import {
  APP_PROBE_PROXY_PORT,
  DRAIN_TIME,
  ENVOY_ADMIN_PORT,
  ENVOY_COMPONENT_LOG_LEVEL,
  ENVOY_LOG_LEVEL,
  GATEWAY,
  INIT_CONTAINER,
  readBool,
  readMap,
  readUint32,
  SIDECAR_CONCURRENCY,
  SIDECAR_CONTAINER,
  SIDECAR_ENV_VARS,
  SPIRE_SUPPORT,
  TOKEN_VOLUME,
  TP_CONFIGMAP_NAME,
  VALIDATION_CONTAINER,
  VOLUME_INIT_TMP,
  VOLUME_SIDECAR_TMP,
  VOLUME_SPIRE,
  VOLUME_TP_BASE,
  VOLUME_TP_CUSTOM,
} from './annotations.ts';
import type { CpuMemory, KumaSettings, ProbeTimings } from './config.ts';
import { formatGoDuration, milliValue } from './units.ts';

type Annotations = Record<string, string>;

const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const TP_BASE = '/tmp/transparent-proxy/base';
const TP_CUSTOM = '/tmp/transparent-proxy/custom';
const mountSidecarTmp = (): JsonObject => ({ name: VOLUME_SIDECAR_TMP, mountPath: '/tmp' });
const mountTpBase = (): JsonObject => ({ name: VOLUME_TP_BASE, mountPath: TP_BASE, readOnly: true });
const mountTpCustom = (): JsonObject => ({ name: VOLUME_TP_CUSTOM, mountPath: TP_CUSTOM, readOnly: true });

/** Whether SPIRE support is on for the pod (`k8s.kuma.io/spire-support`, default `spire.enabled`). */
export function spireEnabled(annotations: Annotations, s: KumaSettings): boolean {
  return readBool(annotations, SPIRE_SUPPORT, s.injector.spire.enabled).value;
}

/** A probe object as Go marshals `kube_core.Probe`: zero numbers left out. */
function probe(port: number, t: ProbeTimings, successThreshold: number): JsonObject {
  const out: JsonObject = { httpGet: { path: '/ready', port } };
  const nums: Array<[string, number]> = [
    ['initialDelaySeconds', t.initialDelaySeconds],
    ['timeoutSeconds', t.timeoutSeconds],
    ['periodSeconds', t.periodSeconds],
    ['successThreshold', successThreshold],
    ['failureThreshold', t.failureThreshold],
  ];
  for (const [k, v] of nums) if (v !== 0) out[k] = v;
  return out;
}

/** `limits` of a Kuma-built container: memory, and cpu unless it is zero (Kuma `initContainerLimits`, `sidecarLimits`). */
function limits(l: CpuMemory, extra: JsonObject = {}): JsonObject {
  return { ...(milliValue(l.cpu) !== 0 ? { cpu: l.cpu } : {}), memory: l.memory, ...extra };
}

/** Envoy concurrency: the annotation, else the CPU limit in whole CPUs (at least 2), 0 without a CPU limit. */
function concurrency(annotations: Annotations, s: KumaSettings): number {
  const a = readUint32(annotations, SIDECAR_CONCURRENCY, 0);
  if (a.exists) return a.value;
  const milli = milliValue(s.injector.sidecarContainer.resources.limits.cpu);
  return milli === 0 ? 0 : Math.max(Math.floor(milli / 1000), 2);
}

const fieldRef = (name: string, fieldPath: string): JsonObject => ({
  name,
  valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } },
});
const plain = (name: string, value: string): JsonObject => (value === '' ? { name } : { name, value });

/** The application probe proxy port kuma-sidecar is told (`SetApplicationProbeProxyPortAnnotation`). */
function sidecarProbeProxyPort(annotations: Annotations, def: number): number {
  const a = readUint32(annotations, APP_PROBE_PROXY_PORT, 0);
  if (Object.hasOwn(annotations, GATEWAY)) {
    if (a.exists && a.value > 0)
      throw new InjectError(
        `unable to set ${APP_PROBE_PROXY_PORT}: application probe proxies probes can't be enabled in gateway mode`,
        { field: `metadata.annotations[${APP_PROBE_PROXY_PORT}]` },
      );
    return 0;
  }
  return a.exists ? a.value : def;
}

/** kuma-sidecar's env, sorted by name (Kuma `sidecarEnvVars`): defaults, then `envVars` of the config, then the annotation's. */
function sidecarEnv(mesh: string, annotations: Annotations, s: KumaSettings): JsonObject[] {
  const sc = s.injector.sidecarContainer;
  const drainRaw = annotations[DRAIN_TIME];
  const parsed = drainRaw === undefined ? undefined : parseDuration(drainRaw);
  // Kuma `GetDurationWithDefault` returns Go's error as it is (`time: invalid duration "x"`).
  if (parsed && !parsed.ok)
    throw new InjectError(`annotation "${DRAIN_TIME}": ${parsed.error}`, {
      field: `metadata.annotations[${DRAIN_TIME}]`,
    });
  const drain = parsed ? Number(parsed.value) : sc.drainTime;
  const env = new Map<string, JsonObject>();
  const put = (e: JsonObject) => env.set(e.name as string, e);
  put(fieldRef('POD_NAME', 'metadata.name'));
  put(fieldRef('POD_NAMESPACE', 'metadata.namespace'));
  put(fieldRef('INSTANCE_IP', 'status.podIP'));
  put(plain('KUMA_CONTROL_PLANE_URL', s.controlPlaneUrl));
  put(plain('KUMA_DATAPLANE_MESH', mesh));
  put(plain('KUMA_DATAPLANE_DRAIN_TIME', formatGoDuration(drain)));
  put(plain('KUMA_DATAPLANE_RUNTIME_TOKEN_PATH', `${TOKEN_PATH}/token`));
  put(plain('KUMA_CONTROL_PLANE_CA_CERT', s.caCert));
  put(plain('KUMA_DNS_ENABLED', String(s.injector.builtinDNS.enabled)));
  if (s.injector.builtinDNS.enabled) put(plain('KUMA_DNS_PROXY_PORT', String(s.injector.builtinDNS.port)));
  const logLevel = Object.hasOwn(annotations, ENVOY_LOG_LEVEL) ? annotations[ENVOY_LOG_LEVEL] : undefined;
  if (logLevel !== undefined) put(plain('KUMA_DATAPLANE_RUNTIME_ENVOY_LOG_LEVEL', logLevel));
  const componentLogLevel = Object.hasOwn(annotations, ENVOY_COMPONENT_LOG_LEVEL)
    ? annotations[ENVOY_COMPONENT_LOG_LEVEL]
    : undefined;
  if (componentLogLevel !== undefined)
    put(plain('KUMA_DATAPLANE_RUNTIME_ENVOY_COMPONENT_LOG_LEVEL', componentLogLevel));
  if (s.injector.otelPipeEnabled) put(fieldRef('HOST_IP', 'status.hostIP'));
  else put(plain('KUMA_DATAPLANE_RUNTIME_OTEL_PIPE_ENABLED', 'false'));
  if (spireEnabled(annotations, s)) put(plain('KUMA_DATAPLANE_RUNTIME_SPIRE_SUPPORTED', 'true'));
  put(
    plain(
      'KUMA_APPLICATION_PROBE_PROXY_PORT',
      String(sidecarProbeProxyPort(annotations, s.injector.applicationProbeProxyPort)),
    ),
  );
  for (const [k, v] of Object.entries(sc.envVars)) put(plain(k, v));
  for (const [k, v] of Object.entries(readMap(annotations, SIDECAR_ENV_VARS))) put(plain(k, v));
  return [...env.values()].sort((a, b) =>
    (a.name as string) < (b.name as string) ? -1 : (a.name as string) > (b.name as string) ? 1 : 0,
  );
}

function containersOf(spec: JsonObject, field: string): JsonObject[] {
  const v = spec[field];
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

/**
 * kuma-sidecar's volume mounts (Kuma `NewVolumeMounts`): its tmp and the transparent proxy config, then the
 * token volume the annotation names (and nothing more), else the SPIRE socket and the service account token
 * mount of the first app container that has one (a manifest without it gets none; the API server adds it
 * before webhooks run).
 * @throws InjectError when the token volume annotation names a volume the pod does not have
 */
function sidecarMounts(pod: PodTemplate, annotations: Annotations, s: KumaSettings): JsonObject[] {
  const out = [mountSidecarTmp(), mountTpBase()];
  if (annotations[TP_CONFIGMAP_NAME]) out.push(mountTpCustom());
  const tokenVolume = annotations[TOKEN_VOLUME];
  if (tokenVolume !== undefined) {
    if (!containersOf(pod.spec, 'volumes').some((v) => v.name === tokenVolume)) {
      throw new InjectError(
        `volume (${tokenVolume}) specified for ${TOKEN_VOLUME} but volume does not exist in pod spec`,
        { field: `metadata.annotations[${TOKEN_VOLUME}]` },
      );
    }
    return [...out, { name: tokenVolume, mountPath: TOKEN_PATH, readOnly: true }];
  }
  if (spireEnabled(annotations, s))
    out.push({ name: VOLUME_SPIRE, mountPath: s.injector.spire.mountPath, readOnly: true });
  for (const c of containersOf(pod.spec, 'containers')) {
    const m = containersOf(c, 'volumeMounts').find((x) => x.mountPath === TOKEN_PATH);
    if (m) return [...out, structuredClone(m)];
  }
  return out;
}

/**
 * kuma-sidecar for `pod` in `mesh` (with a startup probe as a native sidecar), before container patches and
 * the native-sidecar `restartPolicy` and `lifecycle` (Kuma `NewSidecarContainer`). `pod` is read only.
 * @throws InjectError for an annotation Kuma cannot read
 */
export function sidecarContainer(pod: PodTemplate, mesh: string, s: KumaSettings, native: boolean): JsonObject {
  const annotations = pod.metadata.annotations ?? {};
  const sc = s.injector.sidecarContainer;
  const admin = readUint32(annotations, ENVOY_ADMIN_PORT, 0).value || s.adminPort;
  const probePort = s.envoyAdminUnixSocket ? s.readinessPort : admin;
  const cpus = concurrency(annotations, s);
  const wait = readBool(annotations, 'kuma.io/wait-for-dataplane-ready', sc.waitForDataplaneReady).value;
  const args = [
    'run',
    '--log-level=info',
    ...(cpus > 0 ? [`--concurrency=${cpus}`] : []),
    `--transparent-proxy-config=${TP_BASE}/config.yaml`,
  ];
  if (annotations[TP_CONFIGMAP_NAME]) args.push(`--transparent-proxy-config=${TP_CUSTOM}/config.yaml`);
  const c: JsonObject = {
    name: SIDECAR_CONTAINER,
    image: sc.image,
    imagePullPolicy: 'IfNotPresent',
    args,
    env: sidecarEnv(mesh, annotations, s),
    securityContext: {
      runAsUser: sc.uid,
      runAsGroup: sc.gid,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    },
    livenessProbe: probe(probePort, sc.livenessProbe, 1),
    readinessProbe: probe(probePort, sc.readinessProbe, sc.readinessProbe.successThreshold),
    ...(native ? { startupProbe: probe(probePort, sc.startupProbe, 1) } : {}),
    resources:
      pod.spec.resources !== undefined
        ? {}
        : {
            requests: {
              cpu: sc.resources.requests.cpu,
              memory: sc.resources.requests.memory,
              'ephemeral-storage': '50M',
            },
            limits: limits(sc.resources.limits, { 'ephemeral-storage': '1G' }),
          },
    volumeMounts: sidecarMounts(pod, annotations, s),
  };
  if (wait)
    c.lifecycle = {
      postStart: { exec: { command: ['kuma-dp', 'wait', '--url', `http://localhost:${probePort}/ready`] } },
    };
  return c;
}

/** kuma-init (Kuma `NewInitContainer`): runs `kumactl install transparent-proxy` as root with NET_ADMIN and NET_RAW. */
export function initContainer(annotations: Annotations, s: KumaSettings): JsonObject {
  const mounts: Json[] = [{ name: VOLUME_INIT_TMP, mountPath: '/tmp' }, mountTpBase()];
  const args = [`--config=${TP_BASE}/config.yaml`];
  if (annotations[TP_CONFIGMAP_NAME]) {
    mounts.push(mountTpCustom());
    args.push(`--config=${TP_CUSTOM}/config.yaml`);
  }
  const r = s.injector.initContainer.resources;
  return {
    name: INIT_CONTAINER,
    image: s.injector.initContainer.image,
    imagePullPolicy: 'IfNotPresent',
    command: ['/usr/bin/kumactl', 'install', 'transparent-proxy'],
    args,
    env: [{ name: 'XTABLES_LOCKFILE', value: '/tmp/xtables.lock' }],
    securityContext: {
      runAsUser: 0,
      runAsGroup: 0,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
      readOnlyRootFilesystem: true,
    },
    resources: { requests: { cpu: r.requests.cpu, memory: r.requests.memory }, limits: limits(r.limits) },
    volumeMounts: mounts,
  };
}

/** kuma-validation (Kuma `NewValidationContainer`): in CNI mode, checks the rules the CNI plugin installed. */
export function validationContainer(annotations: Annotations, s: KumaSettings): JsonObject {
  const mounts: Json[] = [mountSidecarTmp(), mountTpBase()];
  const args = ['--config-file=/tmp/.kumactl', `--transparent-proxy-config=${TP_BASE}/config.yaml`];
  if (annotations[TP_CONFIGMAP_NAME]) {
    mounts.push(mountTpCustom());
    args.push(`--transparent-proxy-config=${TP_CUSTOM}/config.yaml`);
  }
  const r = s.injector.validationContainer.resources;
  const sc = s.injector.sidecarContainer;
  return {
    name: VALIDATION_CONTAINER,
    image: s.injector.initContainer.image,
    imagePullPolicy: 'IfNotPresent',
    command: ['/usr/bin/kumactl', 'install', 'transparent-proxy-validator'],
    args,
    securityContext: {
      runAsUser: sc.uid,
      runAsGroup: sc.gid,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    },
    resources: { requests: { cpu: r.requests.cpu, memory: r.requests.memory }, limits: limits(r.limits) },
    volumeMounts: mounts,
  };
}
