import type {
  Config,
  ConfigIssue,
  DecisionReason,
  DecisionStep,
  JsonObject,
  LabelSelector,
  NamespaceInfo,
  PodTemplate,
  ResourceId,
  ServiceInfo,
} from '../model.ts';

/** The workload that owns a pod template (Istio's `TypeMeta` + `DeploymentMeta`). */
export interface WorkloadRef {
  apiVersion: string;
  kind: string;
  /** `metadata.name` of the workload (for a Pod: the pod name, possibly empty when only generateName is set). */
  name: string;
  /** Effective namespace: `metadata.namespace`, else the default namespace. */
  namespace: string;
  /** True when `metadata.namespace` was absent and the namespace is the configured default. */
  namespaceDefaulted: boolean;
}

/**
 * What the config loader hands a driver for its section `spec.<name>` (or the `<name>.*` keys of the
 * ConfigMap form, collected into an object of strings).
 */
export interface DriverConfigInput {
  /** The raw section, already checked against the driver's `configSchema` (fields with schema issues removed). */
  raw: Record<string, unknown>;
  /** Field path of the section for messages: `spec.istio`, or `data` for the ConfigMap form. */
  path: string;
  /** True for the ConfigMap form: every value is a string (`"true"`, `"a,b"`) and must be converted. */
  fromConfigMap: boolean;
  /**
   * The shared settings as the user wrote them (a field is undefined when not set; `nativeSidecars: auto`
   * already read as a boolean), for a driver whose own configuration also carries them and must agree (Istio
   * writes them into its values; Linkerd's `proxy.nativeSidecar`). Where the user set none, the driver's
   * `traits.sharedDefaults` give them.
   */
  explicit: SharedSettings;
}

/**
 * The settings of the shared decision steps a driver may default (`DriverTraits.sharedDefaults`) or read as the
 * user wrote them (`DriverConfigInput.explicit`); each field is optional (undefined: not set).
 */
export interface SharedSettings {
  policy?: 'enabled' | 'disabled' | undefined;
  neverInjectSelector?: LabelSelector[] | undefined;
  alwaysInjectSelector?: LabelSelector[] | undefined;
  /** `spec.nativeSidecars`. */
  nativeSidecars?: boolean | undefined;
}

/** What a driver's `loadConfig` returns: its typed settings, or the problems found (every one, at once). */
export interface DriverConfigResult<S> {
  settings: S;
  issues: ConfigIssue[];
  warnings: string[];
}

/** Everything a driver's decision may read for one workload. */
export interface DriverDecideInput<S> {
  /** `metadata` of the pod template as the cluster's admission webhook sees it (the pod's own metadata). */
  podMeta: PodTemplate['metadata'];
  /** Effective namespace and what is known of it (undefined when it is neither in the input nor in config). */
  namespace: string;
  namespaceInfo?: NamespaceInfo;
  /** Namespace labels as a webhook sees them: the known labels plus `kubernetes.io/metadata.name`. */
  namespaceLabels: Record<string, string>;
  /** `spec.hostNetwork === true` of the pod template. */
  hostNetwork: boolean;
  /** The workload's kind (`Deployment`, `Rollout`, ...); absent when the caller does not know it (any kind). */
  kind?: string;
  /** `spec` of the pod template (read-only; e.g. Linkerd's refusals look at `automountServiceAccountToken`). */
  podSpec: PodTemplate['spec'];
  config: Config;
  settings: S;
}

/** A verdict of a driver's own opt-in/opt-out rules. */
export interface DriverVerdict {
  inject: boolean;
  reason: DecisionReason;
  detail: string;
  /** False when the skip is not what the user asked for (shown as a warning); default true. */
  intended?: boolean;
  /**
   * True when the verdict rests on the namespace's labels or annotations (a namespace opt-in/opt-out, a
   * webhook's namespaceSelector): when those are unknown, the skip becomes a warning and the run reports the
   * unknown namespace once.
   */
  namespaceBased?: boolean;
}

/**
 * The outcome of a driver's decision step. `verdict` decides (explicit pod or namespace opt-in/opt-out,
 * or a mesh-level gate such as Istio's webhook routing or OSM's `monitored-by`); without it the shared
 * never/always selectors and the policy decide, with `fallback` (when the driver found one) taken as the
 * driver's `traits.fallback` says.
 */
export interface DriverDecision {
  verdict?: DriverVerdict;
  /**
   * What the driver's rules say when nothing on the pod decided: a namespace-wide opt-in or opt-out (Linkerd's
   * namespace `linkerd.io/inject`, Kuma's namespace label), or what selected the pod (Istio's injection
   * webhook). The shared steps use it per `DriverTraits.fallback`.
   */
  fallback?: { inject: boolean; reason: DecisionReason; detail: string };
  /** What the driver looked at when nothing decided, e.g. `no sidecar.istio.io/inject label or annotation decides`. */
  undecided?: string;
  warnings: string[];
  trace: DecisionStep[];
  /**
   * What the driver's rules found out about the workload, as short keys and values (e.g. which control-plane
   * revision serves it: `{revision: 'canary'}`): each becomes the result tag `meshinject.dev/<key>`, and the
   * decision hands them to `inject` (`InjectRequest.decisionTags`). Keys: kebab-case, not `outcome`,
   * `reason`, `check` or `error`.
   */
  tags?: Record<string, string>;
}

/** Input of one injection: a pod template plus everything a driver may read. */
export interface InjectRequest<S = unknown> {
  /** The pod template as found in the input; a private deep copy the driver may mutate. */
  pod: PodTemplate;
  workload: WorkloadRef;
  /** The workload's namespace, when known (a `Namespace` object in the list or `spec.namespaces`). */
  namespace?: NamespaceInfo;
  /** The `Service` objects of the input in the workload's namespace (Kuma: a Service that marks its pods zone proxies). */
  services?: readonly ServiceInfo[];
  config: Config;
  settings: S;
  /** The tags of the decision that chose to inject (`DriverDecision.tags`), when the driver's decide set any. */
  decisionTags?: Readonly<Record<string, string>>;
}

/**
 * A workload as it leaves the run (`MeshDriver.workloadTags`): its pod template as written (injected,
 * uninjected or unchanged), the pod's own labels as written, and its namespace's labels as a webhook sees
 * them (plus `kubernetes.io/metadata.name`).
 */
export interface WorkloadView {
  /** The pod template as written, in the driver's reading (`DriverTraits.podMetadataPath`). */
  pod: PodTemplate;
  /** The pod's own labels as written (what a node agent or a webhook sees on the pod). */
  podLabels: Record<string, string>;
  namespace: string;
  namespaceLabels: Record<string, string>;
  /** Whether the namespace is known (a `Namespace` object in the input or `spec.namespaces`). */
  namespaceKnown: boolean;
}

/** A resource of the package a driver asked for (`MeshDriver.packageKinds`), as `packageFindings` reads it. */
export interface PackageResource {
  id: ResourceId;
  /** The resource as read (plain JSON; read-only). */
  value: JsonObject;
}

/** A workload of the package as decided and written, for `MeshDriver.packageFindings`. */
export interface PackageWorkload {
  id: ResourceId;
  /** Effective namespace. */
  namespace: string;
  /** The pod's own labels as written. */
  podLabels: Record<string, string>;
  /** True when the pod template as written carries this mesh's injection. */
  injected: boolean;
  /** Its result tags from the driver (`DriverDecision.tags`, `workloadTags`), by short key. */
  tags: Record<string, string>;
}

/** Everything `MeshDriver.packageFindings` reads: the whole run's namespaces, workloads and the asked-for resources. */
export interface PackageView {
  namespaces: ReadonlyMap<string, NamespaceInfo>;
  workloads: readonly PackageWorkload[];
  resources: readonly PackageResource[];
  config: Config;
}

/**
 * A finding about the package as a whole (`MeshDriver.packageFindings`): a stable rule id (kebab-case, described
 * in `MeshDriver.findingInfo`), the resource it is about and the field, and what to change. In a check it is an
 * error (tag `meshinject.dev/check`); in an injection a warning.
 */
export interface PackageFinding {
  rule: string;
  id: ResourceId;
  /** Field path from the resource root, e.g. `metadata.labels`. */
  field?: string;
  message: string;
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
 * What a driver injected into a pod template, as its status annotation records it: the names of the
 * containers, init containers, volumes and image pull secrets it added, and the annotation that records
 * it. Used to warn about (or remove) a sidecar on a workload that is now skipped, and by uninject.
 */
export interface Inventory {
  /** The status annotation that records the injection, e.g. `sidecar.istio.io/status`. */
  statusAnnotation: string;
  containers: string[];
  initContainers: string[];
  volumes: string[];
  imagePullSecrets: string[];
  /** Pod annotation keys the injection added (the status annotation itself included), when the driver knows them. */
  annotations?: string[];
  /** Pod label keys the injection added, when the driver knows them. */
  labels?: string[];
  /**
   * Driver-private record read from the status annotation (e.g. the original probes, or annotation values
   * the injection overwrote), handed back to the driver's `uninject`, which runs after the generic removal
   * has taken the status annotation away.
   */
  detail?: JsonObject;
}

/** A resource that is not a workload, as `MeshDriver.annotateResource` sees it. */
export interface ResourceMeta {
  apiVersion: string;
  kind: string;
  name: string;
  /** `metadata.namespace`, or `''` when absent. */
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Annotations a driver adds to a resource that is not a workload, and a description for its result. */
export interface ObjectAnnotation {
  annotations: Record<string, string>;
  /** e.g. `linkerd.io/inject for the workloads of namespace shop`. */
  summary: string;
}

/** What a driver's `uninject` hook may read besides the pod: the pod as injected, and the workload's context. */
export interface UninjectContext {
  /**
   * The pod template as found in the input (before the generic removal); read-only, and deep-frozen by uninject
   * (src/patch/uninject.ts `uninjectPod`, which hands `inventory` the same copy): a write throws a TypeError.
   */
  injected: PodTemplate;
  workload: WorkloadRef;
  namespace?: NamespaceInfo;
  config: Config;
  /**
   * Only in the inject-time check (src/pipeline/workload.ts): the injection that gave `injected`, as the
   * driver was asked for it (`request`: the pod template before the injection, unchanged, and the rest of the
   * request but the settings) and what it returned (`pod`, before meshinject's own record was added). A hook
   * that injects again to learn what the injection writes may take `pod` instead of rendering, where its own
   * request would be the same one (the same pod template as JSON, config, namespace and settings): injection
   * is pure, so that render would give `pod` again. Read-only; it may hold parts shared between workloads.
   */
  injection?: { request: Omit<InjectRequest, 'settings'>; pod: PodTemplate };
}

/** A resource of a package to migrate: its identity, value, and, for a workload, the same without this mesh's injection. */
export interface MigrationResource extends PackageResource {
  /** For a workload: the path of its pod template, and the whole resource uninjected (when it carries this mesh's injection). */
  workload?: { templatePath: readonly string[]; uninjected?: JsonObject };
}

/** What `meshinject migrate` asks of a driver (`MeshDriver.migration`). */
export interface MigrationRequest {
  /** `--to`. */
  to: string;
  /** `--namespace`, in the order given (at least one). */
  namespaces: readonly string[];
  /** The driver's options given (`--waypoint NAME` → `{waypoint: 'NAME'}`). */
  options: Readonly<Record<string, string>>;
  resources: readonly MigrationResource[];
  config: Config;
}

/** A driver's migration of a package: changed resources (by index), new resources (after an index), and what it says. */
export interface MigrationPlan {
  /** New value of `resources[index]`, or null to remove it. */
  changes: ReadonlyArray<{ index: number; value: JsonObject | null; summary: string }>;
  /** New resources, each written after `resources[after]` in that resource's file. */
  additions: ReadonlyArray<{ after: number; value: JsonObject; summary: string }>;
  /** Findings: what the migration cannot do and the user must (`info` when it is only said, `warning` to act on). */
  notes: ReadonlyArray<PackageFinding & { severity: 'info' | 'warning' }>;
}

/** A reason code of a driver's decision, as data (`MeshDriver.reasonInfo`). */
export interface ReasonInfo {
  /** One line saying what decided, e.g. `the pod label sidecar.istio.io/inject is "false"`. */
  description: string;
  /** True when the workload or its namespace opts out on its own (`spec.check.forbidOptOut`). Default false. */
  optOut?: boolean;
}
