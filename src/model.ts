/**
 * Shared data shapes of meshinject. Everything here is plain JSON data: the core never holds class
 * instances of Kubernetes objects, only structural views of the few fields it reads.
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/**
 * `metav1.LabelSelector`: `matchLabels` AND every `matchExpressions` requirement. A type, not an interface,
 * so that a selector is JSON data (`Json`) where it is written back into values.
 */
export type LabelSelector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }>;
};

/** What meshinject knows about a namespace: from a `Namespace` object in the list or from `spec.namespaces`. */
export interface NamespaceInfo {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/**
 * A `Service` (`v1`) of the input, as a driver reads it (`InjectRequest.services`): its namespace (the default
 * namespace when it names none), labels, annotations and `spec.selector` (`{}` when absent: it selects no pod).
 */
export interface ServiceInfo {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  selector: Record<string, string>;
}

/** `metadata` of a pod template, as far as injection reads and writes it. */
export interface PodMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  ownerReferences?: JsonObject[];
  [key: string]: Json | undefined;
}

/** A pod template (`PodTemplateSpec`): `metadata` + `spec` (a `PodSpec`, kept as JSON). */
export interface PodTemplate {
  metadata: PodMeta;
  spec: JsonObject;
}

/** Identity of a resource for results: `resourceRef` plus where it came from. */
export interface ResourceId {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** `internal.config.kubernetes.io/path` (or the legacy form), or the input file for the CLI. */
  filePath?: string;
  /** `internal.config.kubernetes.io/index` (or the legacy form), or the document index in the stream. */
  fileIndex?: number;
}

/**
 * Why a workload was or was not injected: a stable, machine-readable code. The shared rules have fixed codes;
 * each driver adds its own for its opt-in/opt-out rules (Istio `label-true`, Linkerd `namespace-annotation-enabled`, ...).
 */
export type SharedDecisionReason =
  | 'host-network'
  | 'ignored-namespace'
  | 'namespace-not-selected'
  | 'never-inject-selector'
  | 'always-inject-selector'
  | 'policy-enabled'
  | 'policy-disabled';

/** A shared reason code or a driver's own (kebab-case). */
export type DecisionReason = SharedDecisionReason | (string & {});

/**
 * The outcome of the injection decision for one workload. `warnings` carries non-fatal findings (e.g. a
 * `sidecar.istio.io/inject` value Istio >= 1.27 treats as unset).
 */
export interface Decision {
  inject: boolean;
  reason: DecisionReason;
  /** Human sentence for results, e.g. `pod annotation sidecar.istio.io/inject is "false"`. */
  detail: string;
  /** The configured intent: true when skipping is what the user asked for (info, not warning). */
  intended: boolean;
  warnings: string[];
  /**
   * The namespace, when a rule that reads its labels decided while they were unknown (it is neither a
   * `Namespace` object in the input nor in `spec.namespaces`): the run reports it once.
   */
  unknownNamespace?: string;
  /** Every rule in order, what it saw, and which one decided (`meshinject explain`). */
  trace: DecisionStep[];
  /** What the driver's rules found about the workload (`DriverDecision.tags`): result tags `meshinject.dev/<key>`. */
  tags?: Record<string, string>;
}

/** One rule of a decision trace: its stable name, the value it saw, and whether it decided. */
export interface DecisionStep {
  /** e.g. `host-network`, `namespace-selector`, `istio.inject-label`, `policy`. */
  rule: string;
  /** What the rule looked at, e.g. `spec.hostNetwork is false`. */
  saw: string;
  /** `pass`: did not decide; `decided`: this rule decided (the last step); `note`: information only. */
  outcome: 'pass' | 'decided' | 'note';
}

/** KRM result severity (functions spec). */
export type Severity = 'error' | 'warning' | 'info';

/** One KRM function result (`ResourceList.results[]`). */
export interface KrmResult {
  message: string;
  severity: Severity;
  resourceRef?: { apiVersion: string; kind: string; name: string; namespace?: string };
  field?: { path: string; currentValue?: Json; proposedValue?: Json };
  file?: { path: string; index?: number };
  tags?: Record<string, string>;
}

/** One problem in the functionConfig: `path` is a field path such as `spec.<mesh>.revision` or `data.policy`. */
export interface ConfigIssue {
  path: string;
  message: string;
}

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
 * (`spec.<mesh>`) are loaded by the driver and stay private to it (`ActiveMesh`, src/contract/driver.ts).
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
  /**
   * A workload whose namespace's labels are unknown (neither a Namespace in the input nor in `namespaces`) and
   * that a namespace rule would skip: `warn` (default, also when absent) skips it with a warning; `error` makes
   * the run's unknown-namespace result an error (exit 1); `assume-selected` takes the namespace as selected by
   * `namespaceSelector` and by the driver's namespace-based verdicts, so the later rules decide (`decide`).
   */
  unknownNamespaces?: 'warn' | 'error' | 'assume-selected';
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
