import type { JsonObject, LabelSelector, NamespaceInfo } from '../model.ts';

/** The name of a mesh driver ("sidecar class"): `spec.mesh`, one of the registry's names (src/drivers/registry.ts). */
export type MeshName = string;

/** What `spec.kindPolicies` says for one workload kind. */
export type KindPolicy = 'inject' | 'native' | 'skip';

/** A workload kind declared in config: where its pod template lives. */
export interface ExtraWorkloadKind {
  /** `kind` to match. */
  kind: string;
  /** Optional `apiVersion` to match (any when absent). */
  apiVersion?: string;
  /** Path of the pod template (a `PodTemplateSpec`), e.g. `["spec", "template"]`. */
  templatePath: string[];
}

/**
 * The validated, defaulted, mesh-neutral configuration of one run. The selected driver's own settings
 * (`spec.<mesh>`) are loaded by the driver and stay private to it (`ActiveMesh`, src/drivers/driver.ts).
 */
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
  /**
   * Annotations to write on every injected workload, by the resource's `kind` (absent or `{}`: none): opt-in hints
   * for deployment tools, e.g. `{Job: {'kustomize.toolkit.fluxcd.io/force': 'enabled'}}` so that Flux
   * recreates a Job whose immutable pod template changed (krm-ecosystem.md §5.1).
   */
  injectedWorkloadAnnotations?: Record<string, Record<string, string>>;
  /**
   * Per workload kind (the resource's kind): `inject` (as every other kind), `native` (inject only as a native
   * sidecar; where the driver would add a classic one, the workload is skipped with a warning), `skip` (never
   * inject). Absent or `{}`: every kind `inject`. Jobs and CronJobs with a classic sidecar never complete
   * (linkerd2#5188, #7425), so they get a warning under `inject`.
   */
  kindPolicies?: Record<string, KindPolicy>;
  /** Extra workload kinds and their pod template paths. */
  workloadKinds: ExtraWorkloadKind[];
  /**
   * `inject` (default): decide and inject; `uninject`: remove what the driver injected from every workload.
   * Always set by the loader; optional so that hand-built configs (tests, tools) default to inject.
   */
  mode?: 'inject' | 'uninject' | 'check';
  /** Inject mode: a workload that is now skipped but still carries this mesh's injection is uninjected (default false: a warning). */
  removeWhenSkipped?: boolean;
  /** `spec.templateBudget`: lowered template budgets (src/render/budget.ts; the schema caps each at its ceiling). */
  templateBudget?: TemplateBudgetSetting;
}

/**
 * Template budgets a config sets (src/render/budget.ts `TemplateBudgets`): steps and output characters of one
 * render and of a run. Absent fields keep their defaults; none may exceed its ceiling.
 */
export interface TemplateBudgetSetting {
  steps?: number;
  outputSize?: number;
  runSteps?: number;
  runOutputSize?: number;
}
