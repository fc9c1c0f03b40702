import type { Config } from '../config/types.ts';
import type { NamespaceInfo, PodTemplate } from '../model.ts';

/** The workload that owns a pod template (Istio's `TypeMeta` + `DeploymentMeta`). */
export interface WorkloadRef {
  apiVersion: string;
  kind: string;
  /** `metadata.name` of the workload (for a Pod: the pod name, possibly empty when only generateName is set). */
  name: string;
  /** Effective namespace: `metadata.namespace`, else `spec.defaultNamespace`. */
  namespace: string;
  /** True when `metadata.namespace` was absent and the namespace is the configured default. */
  namespaceDefaulted: boolean;
}

/** Input of one injection: a pod template plus everything a driver may read. */
export interface InjectRequest {
  /** The pod template as found in the input; a private deep copy the driver may mutate. */
  pod: PodTemplate;
  workload: WorkloadRef;
  /** The workload's namespace, when known (a `Namespace` object in the list or `spec.namespaces`). */
  namespace?: NamespaceInfo;
  config: Config;
}

/** Output of one injection. */
export interface InjectResponse {
  /** The complete injected pod template. */
  pod: PodTemplate;
  /** Short description for results and the result annotation, e.g. `istio, revision default`. */
  summary: string;
  /** Non-fatal findings (e.g. Istio's `dnsPolicy` precondition). */
  warnings: string[];
}

/**
 * A mesh driver (a "sidecar class"). `inject` is pure: it returns a new pod template or throws an
 * `InjectError` (invalid annotation, template failure) that the engine turns into an error result.
 */
export interface MeshDriver {
  readonly name: string;
  inject(req: InjectRequest): InjectResponse;
  /**
   * The annotation that shows this mesh already injected the pod template (e.g. `sidecar.istio.io/status`),
   * or undefined. Used to warn when a workload that is now skipped still carries a sidecar.
   */
  previousInjection?(pod: PodTemplate): string | undefined;
}
