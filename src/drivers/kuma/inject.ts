/**
 * Kuma's injection of one pod template (kumahq/kuma `InjectKuma`, `preCheck` and `injectKuma`,
 * pkg/plugins/runtime/k8s/webhooks/injector/{injector,precheck}.go at 348b6528). A pod template that already
 * carries Kuma's injection is uninjected first (`./uninject.ts`), so that a second run writes the same.
 */
import { isJsonObject } from '../../json.ts';
import type { JsonObject, NamespaceInfo, PodTemplate, ServiceInfo } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import type { InjectRequest, InjectResponse } from '../../contract/driver.ts';
import {
  APP_PROBE_PROXY_PORT,
  CNCF_NETWORKS,
  DEFAULT_CONTAINER,
  ENVOY_ADMIN_PORT,
  IGNORE_ANNOTATION,
  INIT_FIRST,
  KUMA_CNI,
  MESH_LABEL,
  readBool,
  readUint32,
  SIDECAR_INJECTED,
  TP_CONFIG,
  TP_CONFIGMAP_NAME,
  VOLUME_INIT_TMP,
  VOLUME_SIDECAR_TMP,
  VOLUME_SPIRE,
  VOLUME_TP_BASE,
  VOLUME_TP_CUSTOM,
  ZONE_PROXY_TYPE_LABEL,
} from './annotations.ts';
import type { KumaSettings } from './config.ts';
import { initContainer, sidecarContainer, spireEnabled, validationContainer } from './containers.ts';
import { KUMA_NAMES, kumaInventory } from './inventory.ts';
import { refuseTakenNames } from '../kit/taken-names.ts';
import { applyPatches, podPatches } from './patches.ts';
import { realProbePorts, setupAppProbeProxies } from './probes.ts';
import { appProbeProxyPort, configForKubernetes, excludeInbound, marshalTproxyConfig } from './tproxy.ts';
import { removeKumaInjection } from './uninject.ts';

function list(spec: JsonObject, field: string): JsonObject[] {
  const v = spec[field];
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

/** The pod's Mesh (Kuma `MeshOfByLabel`): the pod's `kuma.io/mesh` label, else its namespace's, else `default`. */
export function meshOf(pod: PodTemplate, namespace: NamespaceInfo | undefined): { mesh: string; explicit: boolean } {
  const own = pod.metadata.labels?.[MESH_LABEL];
  if (own) return { mesh: own, explicit: true };
  const ns = namespace?.labels[MESH_LABEL];
  if (ns) return { mesh: ns, explicit: true };
  return { mesh: 'default', explicit: false };
}

/**
 * Whether a Service of the pod's namespace marks it a zone proxy (Kuma `hasZoneProxyService`, precheck.go): a
 * Service with a non-empty `spec.selector` that matches the pod's labels, not ignored (`kuma.io/ignore` enabled;
 * a value Kuma cannot read counts as not ignored, as `Ignored()` drops the error), with a non-empty label
 * `k8s.kuma.io/zone-proxy-type`.
 */
function selectedByZoneProxyService(pod: PodTemplate, services: readonly ServiceInfo[]): boolean {
  const labels = pod.metadata.labels ?? {};
  const ignored = (svc: ServiceInfo) => {
    try {
      return readBool(svc.annotations, IGNORE_ANNOTATION, false).value;
    } catch {
      return false;
    }
  };
  return services.some(
    (svc) =>
      Object.keys(svc.selector).length > 0 &&
      !ignored(svc) &&
      Object.entries(svc.selector).every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v) &&
      (svc.labels[ZONE_PROXY_TYPE_LABEL] ?? '') !== '',
  );
}

/**
 * Kuma's `preCheck` after the decision: the Mesh must exist (when `spec.kuma.meshes` is given), except for a
 * zone proxy pod whose mesh is explicit (a pod or namespace `kuma.io/mesh` label): one with the label
 * `k8s.kuma.io/zone-proxy-type`, or one a zone-proxy Service of the input selects (`selectedByZoneProxyService`);
 * no app container may run as the sidecar's UID. Returns the mesh and the warnings (an init container with the
 * sidecar's UID).
 * @throws InjectError with Kuma's message
 */
function preCheck(
  pod: PodTemplate,
  namespace: NamespaceInfo | undefined,
  services: readonly ServiceInfo[],
  s: KumaSettings,
): { mesh: string; warnings: string[] } {
  const { mesh, explicit } = meshOf(pod, namespace);
  if (s.meshes && !Object.hasOwn(s.meshes, mesh)) {
    const zoneProxy =
      explicit &&
      ((pod.metadata.labels?.[ZONE_PROXY_TYPE_LABEL] ?? '') !== '' || selectedByZoneProxyService(pod, services));
    if (!zoneProxy) {
      throw new InjectError(
        `meshes.kuma.io "${mesh}" not found (spec.kuma.meshes has ${
          Object.keys(s.meshes)
            .map((m) => JSON.stringify(m))
            .join(', ') || 'none'
        })`,
      );
    }
  }
  const uid = s.injector.sidecarContainer.uid;
  const runsAs = (c: JsonObject) => isJsonObject(c.securityContext) && c.securityContext.runAsUser === uid;
  const warnings = list(pod.spec, 'initContainers')
    .filter(runsAs)
    .map(
      (c) =>
        `init container ${c.name} runs as the sidecar's UID ${uid}: its traffic is not redirected through kuma-sidecar`,
    );
  const same = list(pod.spec, 'containers')
    .filter(runsAs)
    .map((c) => String(c.name));
  if (same.length > 0)
    throw new InjectError(
      `containers using same UID as sidecar is unsupported: [${same.map((n) => JSON.stringify(n)).join(' ')}]`,
    );
  return { mesh, warnings };
}

/** Annotations Kuma reads as booleans, where it logs `yes`/`no` as deprecated (`booleanAnnotations`, precheck.go). */
const BOOLEAN_ANNOTATIONS = [
  'traffic.kuma.io/drop-invalid-packets',
  'traffic.kuma.io/iptables-logs',
  'kuma.io/wait-for-dataplane-ready',
  'kuma.io/gateway',
  'kuma.io/sidecar-injected',
  'kuma.io/transparent-proxying',
  'kuma.io/ignore',
  'kuma.io/init-first',
];

/** The warnings Kuma logs for a pod's annotations: deprecated `yes`/`no` values, transparent proxying turned off (ignored on Kubernetes). */
function annotationWarnings(annotations: Record<string, string>): string[] {
  const out: string[] = [];
  for (const k of BOOLEAN_ANNOTATIONS) {
    const v = annotations[k];
    if (v === 'yes' || v === 'no')
      out.push(`annotation ${k}: "${v}" is deprecated, use "${v === 'yes' ? 'true' : 'false'}"`);
  }
  const tp = annotations['kuma.io/transparent-proxying'];
  if (tp === 'false' || tp === 'no' || tp === 'disabled')
    out.push(
      'annotation kuma.io/transparent-proxying: disabling transparent proxying is not supported on Kubernetes; Kuma ignores it',
    );
  return out;
}

/** The volumes Kuma appends, in its order. */
function kumaVolumes(annotations: Record<string, string>, spire: boolean): JsonObject[] {
  const out: JsonObject[] = [
    { name: VOLUME_INIT_TMP, emptyDir: { sizeLimit: '10M' } },
    { name: VOLUME_SIDECAR_TMP, emptyDir: { sizeLimit: '10M' } },
  ];
  if (spire) out.push({ name: VOLUME_SPIRE, csi: { driver: 'csi.spiffe.io', readOnly: true } });
  out.push({
    name: VOLUME_TP_BASE,
    downwardAPI: { items: [{ path: 'config.yaml', fieldRef: { fieldPath: `metadata.annotations['${TP_CONFIG}']` } }] },
  });
  const tpConfigMap = annotations[TP_CONFIGMAP_NAME];
  if (tpConfigMap) out.push({ name: VOLUME_TP_CUSTOM, configMap: { name: tpConfigMap } });
  return out;
}

/** The transparent proxy config of the pod, with the readiness port and (probe proxy off) the probe ports excluded from inbound. */
function podTproxyConfig(pod: PodTemplate, s: KumaSettings): JsonObject {
  const annotations = pod.metadata.annotations ?? {};
  const cfg = configForKubernetes(s.tproxyBase, s.injector, annotations);
  if (s.envoyAdminUnixSocket && s.readinessPort !== 0) excludeInbound(cfg, [s.readinessPort]);
  if (appProbeProxyPort(annotations, s.injector.applicationProbeProxyPort) === 0)
    excludeInbound(cfg, realProbePorts(pod.spec));
  return cfg;
}

/**
 * Injects Kuma into `pod` (mutated and returned) for `mesh`, as `injectKuma` does: annotations, volumes,
 * kuma-sidecar (a native sidecar with `nativeSidecars`, else the first container), kuma-init (or
 * kuma-validation in CNI mode, none for a gateway there), container patches, virtual probes.
 */
function injectInto(pod: PodTemplate, mesh: string, native: boolean, s: KumaSettings): PodTemplate {
  const meta = pod.metadata;
  const annotations = { ...(meta.annotations ?? {}) };
  const containers = list(pod.spec, 'containers');
  const [only] = containers;
  if (containers.length === 1 && only !== undefined && !Object.hasOwn(annotations, DEFAULT_CONTAINER))
    annotations[DEFAULT_CONTAINER] = String(only.name);
  meta.annotations = annotations;
  const patches = podPatches(annotations, s);
  const sidecar = applyPatches(sidecarContainer(pod, mesh, s, native), patches.sidecar);
  const spire = spireEnabled(annotations, s);
  const cfg = podTproxyConfig(pod, s);
  annotations[SIDECAR_INJECTED] = 'true';
  annotations[TP_CONFIG] = marshalTproxyConfig(cfg);
  if (cfg.cniMode === true) annotations[CNCF_NETWORKS] = KUMA_CNI;
  annotations[APP_PROBE_PROXY_PORT] = String(appProbeProxyPort(annotations, s.injector.applicationProbeProxyPort));
  annotations[ENVOY_ADMIN_PORT] = String(s.adminPort);
  pod.spec.volumes = [...list(pod.spec, 'volumes'), ...kumaVolumes(annotations, spire)];
  meta.labels = { ...(meta.labels ?? {}), [MESH_LABEL]: mesh };
  const inbound = ((cfg.redirect as JsonObject).inbound as JsonObject).enabled === true;
  const init =
    cfg.cniMode !== true
      ? applyPatches(initContainer(annotations, s), patches.init)
      : inbound
        ? applyPatches(validationContainer(annotations, s), patches.init)
        : undefined;
  const initFirst = readBool(annotations, INIT_FIRST, false).value;
  const prepend: JsonObject[] = [];
  const append: JsonObject[] = [];
  if (init) (initFirst || native ? prepend : append).push(init);
  if (native) {
    prepend.push({
      ...sidecar,
      restartPolicy: 'Always',
      lifecycle: { preStop: { exec: { command: ['killall', '-USR2', 'kuma-dp'] } } },
    });
  } else {
    pod.spec.containers = [sidecar, ...containers];
  }
  const inits = [...prepend, ...list(pod.spec, 'initContainers'), ...append];
  if (inits.length > 0) pod.spec.initContainers = inits;
  setupAppProbeProxies(pod.spec, readUint32(annotations, APP_PROBE_PROXY_PORT, 0).value);
  return pod;
}

/**
 * The Kuma driver's `inject`: precheck, then the injection (after removing a previous one).
 * @throws InjectError for what Kuma refuses (a missing Mesh or ContainerPatch, a container with the sidecar's
 *   UID, an unreadable annotation, a probe on the probe proxy port) and for a container, init container or
 *   volume named like Kuma's in a pod without `kuma.io/sidecar-injected`
 */
export function injectKuma(req: InjectRequest<KumaSettings>): InjectResponse {
  const s = req.settings;
  let pod = req.pod;
  const previous = kumaInventory(pod);
  if (previous) pod = removeKumaInjection(pod, previous, s, req.namespace);
  else refuseTakenNames(pod, KUMA_NAMES, SIDECAR_INJECTED, 'Kuma');
  const { mesh, warnings } = preCheck(pod, req.namespace, req.services ?? [], s);
  warnings.push(...annotationWarnings(pod.metadata.annotations ?? {}));
  const injected = injectInto(pod, mesh, req.config.nativeSidecars, s);
  return {
    pod: injected,
    summary: `kuma, mesh ${mesh}${req.config.nativeSidecars ? ', native sidecar' : ''}`,
    warnings,
  };
}
