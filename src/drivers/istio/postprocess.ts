/**
 * Go post-processing of an injected pod that the templates cannot do: cluster/network env, prometheus merge,
 * probe rewrite, metadata (network label, status annotation), container order. Istio `postProcessPod`,
 * `overwriteClusterInfo`, `applyMetadata` (pkg/kube/inject/webhook.go, inject.go; istio-injection.md §5).
 */
import type { JsonObject, PodTemplate } from '../../model.ts';
import { applyPrometheusMerge, applySecurePrometheusAnnotation } from './prometheus.ts';
import { applyRewrite } from './probes.ts';
import { reorderPod } from './reorder.ts';
import { injectionStatusValue, STATUS_ANNOTATION } from './status.ts';
import { annotationsOf, envOf, labelsOf, ownedSidecar, ownPodFrame } from './pod-fields.ts';

/** Label carrying the pod's network (read before injection, written after). */
export const NETWORK_LABEL = 'topology.istio.io/network';

/** Everything post-processing needs besides the pod. */
export interface PostProcessParams {
  /** Proxy env overrides (`ISTIO_META_CLUSTER_ID`, `ISTIO_META_NETWORK`) computed by {@link clusterEnvs}. */
  proxyEnvs: Record<string, string>;
  /**
   * The mesh config as configured (`IstioSettings.meshConfig`); only `enablePrometheusMerge` is read, which the
   * pod's `proxy.istio.io/config` (a `defaultConfig` overlay) cannot change, so no per-pod copy is made.
   */
  meshConfig: JsonObject;
  /** `meshConfig.defaultConfig.statusPort` (15020 by default). */
  statusPort: number;
  /** `values.sidecarInjectorWebhook.rewriteAppHTTPProbe`. */
  rewriteProbes: boolean;
  /** holdApplicationUntilProxyStarts from the effective ProxyConfig or values (proxy container first). */
  holdApplication: boolean;
  /** Spec of the rendered template pod (for the status annotation). */
  templateSpec: JsonObject;
  /** Revision for the status annotation (`''` = default). */
  revision: string;
}

/**
 * The cluster/network env the injector forces onto the proxy (Istio `RunTemplate`): `ISTIO_META_CLUSTER_ID`
 * from `values.global.multiCluster.clusterName`, `ISTIO_META_NETWORK` from `values.global.network`, overridden
 * by the pod label `topology.istio.io/network`; empty values are left out.
 */
export function clusterEnvs(
  values: JsonObject,
  labels: Record<string, string> | null | undefined,
): Record<string, string> {
  const global = (values.global ?? {}) as JsonObject;
  const mc = (global.multiCluster ?? {}) as JsonObject;
  const cluster = typeof mc.clusterName === 'string' ? mc.clusterName : '';
  let network = typeof global.network === 'string' ? global.network : '';
  const label = labels?.[NETWORK_LABEL];
  if (label !== undefined) network = label;
  const out: Record<string, string> = {};
  if (cluster !== '') out.ISTIO_META_CLUSTER_ID = cluster;
  if (network !== '') out.ISTIO_META_NETWORK = network;
  return out;
}

/**
 * Istio `overwriteClusterInfo` / `updateClusterEnvs`: removes the proxy env entries named in `proxyEnvs` and
 * re-appends them at the end, sorted by name, as plain values.
 */
export function overwriteClusterInfo(pod: PodTemplate, proxyEnvs: Record<string, string>): void {
  const entries = Object.entries(proxyEnvs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const sidecar = entries.length === 0 ? undefined : ownedSidecar(pod.spec);
  if (!sidecar) return;
  const env = envOf(sidecar).filter((e) => typeof e.name !== 'string' || !(e.name in proxyEnvs));
  for (const [name, value] of entries) env.push({ name, value });
  sidecar.env = env;
}

/**
 * Istio `applyMetadata`: the `topology.istio.io/network` label when a network is set, and the
 * `sidecar.istio.io/status` annotation for the rendered template pod.
 */
export function applyMetadata(pod: PodTemplate, p: PostProcessParams): void {
  const nw = p.proxyEnvs.ISTIO_META_NETWORK;
  if (nw !== undefined) labelsOf(pod)[NETWORK_LABEL] = nw;
  annotationsOf(pod)[STATUS_ANNOTATION] = injectionStatusValue(p.templateSpec, p.revision);
}

/**
 * Istio `postProcessPod`, in place: {@link overwriteClusterInfo}, prometheus merge and secure port, probe
 * rewrite, {@link applyMetadata}, {@link reorderPod}.
 * @throws InjectError for invalid prometheus scrape targets
 */
export function postProcessPod(pod: PodTemplate, p: PostProcessParams): void {
  // The steps below change the pod's frame in place; parts of a planned render in it are shared (`owned`).
  ownPodFrame(pod);
  overwriteClusterInfo(pod, p.proxyEnvs);
  applyPrometheusMerge(pod, p.meshConfig, p.statusPort);
  applySecurePrometheusAnnotation(pod);
  applyRewrite(pod, p.statusPort, p.rewriteProbes);
  applyMetadata(pod, p);
  reorderPod(pod.spec, pod.metadata.annotations ?? {}, p.holdApplication);
}
