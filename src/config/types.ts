import type { JsonObject, LabelSelector, NamespaceInfo } from '../model.ts';

/** Mesh drivers ("sidecar classes") meshinject knows. */
export type MeshName = 'istio' | 'linkerd' | 'osm' | 'fsm' | 'custom';

/** A workload kind declared in config: where its pod template lives. */
export interface ExtraWorkloadKind {
  /** `kind` to match. */
  kind: string;
  /** Optional `apiVersion` to match (any when absent). */
  apiVersion?: string;
  /** Path of the pod template (a `PodTemplateSpec`), e.g. `["spec", "template"]`. */
  templatePath: string[];
}

/** Istio-specific settings (`spec.istio`). */
export interface IstioSettings {
  /**
   * Helm values of the istiod chart as the injector sees them: the driver's built-in chart defaults with
   * `spec.istio.values` merged on top (objects deep-merged, everything else replaced).
   */
  values: JsonObject;
  /** Mesh config: Istio `DefaultMeshConfig()` with the chart's mesh and `spec.istio.meshConfig` merged on top. */
  meshConfig: JsonObject;
  /** Control-plane revision; `''` means the default revision (`istio.io/rev: default`). */
  revision: string;
  /** Revision tags pointing at `revision` (webhook selection: namespace `istio.io/rev: <tag>` selects it too). */
  revisionTags: string[];
  /** `kube-inject` (pod-level rules only, the default) or `webhook` (MutatingWebhookConfiguration routing). */
  selection: 'kube-inject' | 'webhook';
  /** Istio >= 1.27: only exact `true`/`false` count for `sidecar.istio.io/inject`; others mean "unset". */
  strictInjectValues: boolean;
  /** `openshift` takes the proxy UID/GID from the namespace's `openshift.io/sa.scc.*` annotations. */
  platform: '' | 'openshift';
  /** Istio `COMPLIANCE_POLICY` (e.g. `fips-140-3`), `''` for none. */
  compliancePolicy: string;
  /** `sidecarInjectorWebhook.enableNamespacesByDefault` for webhook selection. */
  enableNamespacesByDefault: boolean;
}

/** The validated, defaulted configuration of one run. */
export interface Config {
  mesh: MeshName;
  /** Default injection policy when nothing on the pod decides. */
  policy: 'enabled' | 'disabled';
  /** Selects namespaces by their labels; absent means every namespace. */
  namespaceSelector?: LabelSelector;
  /** Namespaces not present as objects in the list. */
  namespaces: NamespaceInfo[];
  /** Namespace for resources without `metadata.namespace` (default `default`). */
  defaultNamespace: string;
  /** Never injected (default kube-system, kube-public, kube-node-lease, local-path-storage). */
  ignoredNamespaces: string[];
  neverInjectSelector: LabelSelector[];
  alwaysInjectSelector: LabelSelector[];
  /** Put the proxy in `initContainers` with `restartPolicy: Always` (Kubernetes native sidecars). */
  nativeSidecars: boolean;
  /** Write `meshinject.dev/injection` on every considered workload (default true). */
  resultAnnotations: boolean;
  /** Extra workload kinds and their pod template paths. */
  workloadKinds: ExtraWorkloadKind[];
  istio: IstioSettings;
}
