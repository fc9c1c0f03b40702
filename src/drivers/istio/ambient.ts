/**
 * Istio's ambient data plane as a manifest shows it: which pods the CNI node agent enrols in ambient (ztunnel),
 * and a workload's data-plane mode (`sidecar`, `ambient`, `none`).
 *
 * Sources: istio/istio `cni/README.md` ("ambient is enabled if": the namespace or pod label
 * `istio.io/dataplane-mode` is `ambient`, the pod has no `sidecar.istio.io/status`, the pod's own
 * `istio.io/dataplane-mode` is not `none`), the default `ambient.enablementSelectors` of
 * `manifests/charts/istio-cni/values.yaml` and `CompiledEnablementSelectors.Matches`
 * (`cni/pkg/util/enablement_selector.go`: a pod with a sidecar is opted out, "ztunnel and sidecar for a single
 * pod is currently not supported"), Istio 1.28.
 */
import type { PodTemplate } from '../../model.ts';
import { STATUS_ANNOTATION } from './status.ts';

/** Namespace or pod label that enrols pods in ambient (`ambient`) or keeps a pod out (`none`; label.IoIstioDataplaneMode). */
export const DATAPLANE_LABEL = 'istio.io/dataplane-mode';
/** Label on a namespace, Service or pod naming the waypoint `Gateway` that serves it (`none`: no waypoint). */
export const USE_WAYPOINT_LABEL = 'istio.io/use-waypoint';
/** Label naming the namespace of that waypoint, when not the resource's own. */
export const USE_WAYPOINT_NAMESPACE_LABEL = 'istio.io/use-waypoint-namespace';
/** `gatewayClassName` of a waypoint (`constants.WaypointGatewayClassName`, pkg/config/constants/constants.go). */
export const WAYPOINT_CLASS = 'istio-waypoint';

/** A workload's data plane: its own sidecar, ztunnel (ambient), or neither. */
export type DataplaneMode = 'sidecar' | 'ambient' | 'none';

/** True when a namespace's labels enrol its pods in ambient (`istio.io/dataplane-mode=ambient`). */
export function namespaceEnrolled(namespaceLabels: Readonly<Record<string, string>>): boolean {
  return namespaceLabels[DATAPLANE_LABEL] === 'ambient';
}

/**
 * True when the labels alone enrol a pod in ambient, as the CNI's default enablement selectors match them: the
 * pod labelled `istio.io/dataplane-mode=ambient`, or its namespace labelled so and the pod's own label not
 * `none`. Whether the pod has a sidecar is not looked at here (see `dataplaneOf`).
 */
export function labelsEnrol(
  podLabels: Readonly<Record<string, string>>,
  namespaceLabels: Readonly<Record<string, string>>,
): boolean {
  const own = podLabels[DATAPLANE_LABEL];
  return own === 'ambient' || (own !== 'none' && namespaceEnrolled(namespaceLabels));
}

/**
 * Why the labels enrol a pod in ambient (for a decision's detail), or undefined when they do not
 * (`labelsEnrol`). `namespace` is the pod's namespace.
 */
export function enrolmentDetail(
  podLabels: Readonly<Record<string, string>>,
  namespace: string,
  namespaceLabels: Readonly<Record<string, string>>,
): string | undefined {
  if (podLabels[DATAPLANE_LABEL] === 'ambient') return `the pod is labelled ${DATAPLANE_LABEL}=ambient`;
  if (!labelsEnrol(podLabels, namespaceLabels)) return undefined;
  return `namespace ${namespace} is labelled ${DATAPLANE_LABEL}=ambient and the pod is not labelled ${DATAPLANE_LABEL}=none`;
}

/** True when the pod template carries Istio's sidecar injection record (`sidecar.istio.io/status`). */
export function hasSidecar(pod: PodTemplate): boolean {
  return Object.hasOwn(pod.metadata.annotations ?? {}, STATUS_ANNOTATION);
}

/**
 * A workload's data-plane mode as written: `sidecar` when its pod template carries Istio's injection record
 * (the sidecar takes precedence: ztunnel skips such a pod), else `ambient` when the labels enrol it
 * (`labelsEnrol`), else `none`.
 */
export function dataplaneOf(
  pod: PodTemplate,
  podLabels: Readonly<Record<string, string>>,
  namespaceLabels: Readonly<Record<string, string>>,
): DataplaneMode {
  if (hasSidecar(pod)) return 'sidecar';
  return labelsEnrol(podLabels, namespaceLabels) ? 'ambient' : 'none';
}
