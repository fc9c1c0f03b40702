/**
 * The sidecar driver interface: everything mesh-specific sits behind it (OSM's "sidecar class" model,
 * `pkg/injector/driver` `Driver.Patch` + `Register`/`InstallDriver`; peers.md §2.2; driver-model.md). The
 * core (reading and writing, workload kinds, namespace selection, never/always selectors, policy, results)
 * never names a mesh; a driver folder never reaches into another driver.
 */
import type { WorkloadKind } from '../workloads/kinds.ts';
import type {
  Config,
  ConfigIssue,
  DecisionReason,
  DecisionStep,
  Json,
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

/**
 * A mesh driver ("sidecar class"). Every method is pure. `S` is the driver's typed settings, produced by
 * `loadConfig` from `spec.<name>` and handed back to `decide` and `inject`.
 */
export interface MeshDriver<S = unknown> {
  /** `spec.mesh` value selecting the driver, and the key of its config section (`spec.<name>`). */
  readonly name: string;
  /**
   * Every reason code the driver's `decide` can return (kebab-case, stable: results, CI reports and
   * `explain` use them as rule ids). The golden tests check each appears in a golden case.
   */
  readonly reasons: readonly string[];
  /**
   * What each of `reasons` means, as data: its description (SARIF rule descriptions, reports) and whether it is
   * the workload (or its namespace) opting out on its own (`spec.check.forbidOptOut` fails those). A reason
   * without an entry is shown by its code and is not an opt-out.
   */
  readonly reasonInfo?: Readonly<Record<string, ReasonInfo>>;
  /** How the driver differs from the defaults of the shared steps (see `DriverTraits`); absent: every default. */
  readonly traits?: DriverTraits<S>;
  /** Command-line flags of the driver and the fields of its section they set (the CLI builds its parser from them). */
  readonly flags?: DriverFlags;
  /** The driver's lines in `meshinject --help`. */
  readonly help?: DriverHelp;
  /** Validates and defaults the driver's config section (schema fragment: `src/drivers/<name>/config.schema.json`). */
  loadConfig(input: DriverConfigInput): DriverConfigResult<S>;
  /**
   * The driver's own opt-in/opt-out rules, after the shared namespace rules and before the shared
   * never/always selectors and policy. Throws `InjectError` for a value the mesh would refuse (an error result).
   */
  decide(input: DriverDecideInput<S>): DriverDecision;
  /** Injects the sidecar. Throws `InjectError` (invalid annotation, template failure): an error result. */
  inject(req: InjectRequest<S>): InjectResponse;
  /**
   * What this driver injected into the pod template (from its status annotation), or undefined if nothing.
   * Throws `InjectError` (naming the annotation and the item) when the record lists something that does not
   * look injected, e.g. the user's own container: the record is not taken on trust (an error result).
   */
  inventory(pod: PodTemplate): Inventory | undefined;
  /**
   * Optional: removes what the generic removal of the inventory (containers, init containers, volumes,
   * image pull secrets, annotations, labels) cannot, e.g. changes to app containers or probes the injection
   * made. Called by uninject (src/patch/uninject.ts) with the pod after the generic removal; `context.injected`
   * is the pod before it (the removed sidecar's env may hold what the injection replaced). Pure. Throws
   * `InjectError` when the injection cannot be undone faithfully (an error result; the workload is unchanged).
   */
  uninject?(pod: PodTemplate, inventory: Inventory, settings: S, context: UninjectContext): PodTemplate;
  /**
   * Optional: completes the settings from the input's ConfigMaps, once per run before any workload: files of a
   * kpt package arrive only as resources (the custom driver's templates in local-config ConfigMaps), and an
   * input may hold the mesh's own configuration (Istio's `istio-sidecar-injector` ConfigMap).
   * `configMaps(names)` gives the input's ConfigMaps named one of `names` (`metadata.name`; a few others may
   * come too, those whose name is only known once composed, so the driver still checks each name): only these
   * are composed before the workloads, a large input's other resources one at a time afterwards. Pure;
   * `notes` become info results of the run.
   * @throws MeshInjectError (BAD_CONFIG) naming the missing or invalid resource: the run fails with that error
   */
  fromInput?(
    settings: S,
    configMaps: (names: readonly string[]) => readonly JsonObject[],
  ): { settings: S; notes: string[] };
  /**
   * Optional: annotations for a resource that is not a workload (Linkerd: `Namespace` and `Service`, as
   * `linkerd inject` annotates them), or undefined to leave it alone. Pure; existing keys are the driver's to keep.
   */
  annotateResource?(resource: ResourceMeta, config: Config, settings: S): ObjectAnnotation | undefined;
  /**
   * Optional: the annotation and label keys this mesh put on a resource that is not a workload (the
   * counterpart of `annotateResource`, for uninject), or undefined when there are none.
   */
  resourceInventory?(resource: ResourceMeta): { annotations: string[]; labels: string[] } | undefined;
  /**
   * Optional: true for a pod-template label or annotation key this driver's injection may write (set, or
   * keep when present) and its uninject may remove. The shared status record (`../patch/status-record.ts`) keeps the
   * value such a key had before the injection, so that uninject puts the user's value back instead of
   * removing it. Drivers whose own record keeps previous values need none. Pure.
   */
  recordKeys?(kind: 'labels' | 'annotations', key: string, settings: S): boolean;
  /**
   * True when the injection rewrites app probes and the mesh's own record keeps the port number a named
   * probe port (`port: http`) resolved to, not the name (Istio's `ISTIO_KUBE_APP_PROBERS`): the shared status
   * record then keeps the name. Default false.
   */
  readonly recordsProbePorts?: boolean;
  /**
   * Optional, for drivers that support native sidecars: what `spec.nativeSidecars: auto` means for the mesh
   * version this config describes (`raw` is the section `spec.<name>` as for `loadConfig`): from which
   * Kubernetes version (`minKube`, `major.minor`) the mesh's own injector turns native sidecars on, or no
   * `minKube` when this mesh version never does by itself; `because` says why, for the run's info result.
   * Without this hook `auto` means classic sidecars.
   */
  nativeSidecarsAuto?(raw: Record<string, unknown>): NativeSidecarsAuto;
  /**
   * Optional: tags of a workload as it leaves the run (its pod template as written, its namespace's labels), by
   * short key; each becomes the result tag `meshinject.dev/<key>` and shows in `explain` and the CI reports (e.g.
   * Istio's data-plane mode, `{dataplane: 'ambient'}`). Pure.
   */
  workloadTags?(view: WorkloadView, settings: S): Record<string, string>;
  /**
   * Optional: the kinds of resources that are not workloads which `packageFindings` reads (`kind` as written,
   * e.g. `Namespace`, `AuthorizationPolicy`); only these are kept for it.
   */
  readonly packageKinds?: readonly string[];
  /**
   * Optional: findings about the package as a whole, once per run after every workload (a policy that selects
   * pods where it has no effect, a reference to a resource the package lacks). Pure.
   */
  packageFindings?(pkg: PackageView, settings: S): PackageFinding[];
  /** What each rule of `packageFindings` means (SARIF rule descriptions, reports). */
  readonly findingInfo?: Readonly<Record<string, ReasonInfo>>;
  /**
   * Optional: `meshinject migrate --to TARGET` (the targets, e.g. Istio's `ambient`, `sidecar`, and the options the
   * driver reads, e.g. `waypoint`): the package's resources changed for the given namespaces, in the mesh's
   * documented order. Pure.
   */
  readonly migration?: {
    targets: readonly string[];
    /** @returns the changes, or the message of a request the driver cannot serve (a usage error) */
    plan(req: MigrationRequest, settings: S): MigrationPlan | { error: string };
  };
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

/** A driver's reading of `spec.nativeSidecars: auto` (`MeshDriver.nativeSidecarsAuto`). */
export interface NativeSidecarsAuto {
  /** Kubernetes `major.minor` from which the mesh injects native sidecars by itself; absent: never by itself. */
  minKube?: string;
  /** e.g. `Istio 1.31: ENABLE_NATIVE_SIDECARS=auto (the default from 1.27) ...`. */
  because: string;
}

/** A reason code of a driver's decision, as data (`MeshDriver.reasonInfo`). */
export interface ReasonInfo {
  /** One line saying what decided, e.g. `the pod label sidecar.istio.io/inject is "false"`. */
  description: string;
  /** True when the workload or its namespace opts out on its own (`spec.check.forbidOptOut`). Default false. */
  optOut?: boolean;
}

/**
 * How a driver differs from the defaults of the shared steps, in one object of data (`S`: the driver's
 * settings). Every trait is optional; `traitsOf` fills in the defaults (`TRAIT_DEFAULTS`): read and write the
 * pod template's own metadata, as the cluster's admission webhook sees the pod; skip `hostNetwork` pods; a
 * decision's `fallback` in place of the policy; the core's defaults for the shared settings.
 */
export interface DriverTraits<S = unknown> {
  /**
   * Where the driver reads and writes the pod template's labels and annotations for a kind, when not the pod
   * template's own `metadata` (the default). Istio's `istioctl kube-inject` uses a CronJob's
   * `spec.jobTemplate.metadata` (`IntoObject`, pkg/kube/inject/inject.go). The decision is still made on the
   * pod's own metadata; `otherReadingNote` says where this reading would decide otherwise.
   */
  podMetadataPath?(kind: WorkloadKind): readonly string[] | undefined;
  /**
   * The note appended to a decision's detail when reading `path` (from `podMetadataPath`) would decide
   * otherwise: `wouldInject` and `detail` are that other decision's. Default: a note naming the driver.
   */
  otherReadingNote?(path: string, wouldInject: boolean, detail: string): string;
  /**
   * `skip` (default): the shared step skips `hostNetwork` pods (`host-network`); `driver`: the driver decides on
   * them itself (Linkerd refuses them with an error result).
   */
  hostNetwork?: 'skip' | 'driver';
  /**
   * How the shared steps take a decision's `fallback` (`DriverDecision.fallback`):
   * - `instead-of-policy` (default): after the never/always selectors, it decides in place of `config.policy`
   *   (a namespace-wide default that a pod's own opt-in/opt-out or a selector overrides: Linkerd's namespace
   *   `linkerd.io/inject`, Kuma's namespace `kuma.io/sidecar-injection`);
   * - `with-policy`: it is what selected the pod, and the selectors and the policy still decide: each of their
   *   details names it, and an enabled policy's outcome takes its reason (Istio's injection webhook under
   *   `selection: webhook`: the webhook that selected the pod is the real reason).
   */
  fallback?: 'instead-of-policy' | 'with-policy';
  /**
   * The driver's defaults for the shared settings the user left unset, in place of the core's (`policy:
   * enabled`, no selectors, classic sidecars): data (OSM, FSM and Kuma inject nothing unasked: `{policy:
   * 'disabled'}`), or read from the driver's loaded settings where the mesh's own configuration carries them
   * (Istio's values: `global.proxy.autoInject`, `sidecarInjectorWebhook.never/alwaysInjectSelector`; Linkerd's
   * `proxy.nativeSidecar`). What the user wrote always wins (see `DriverConfigInput.explicit`).
   */
  sharedDefaults?: SharedSettings | ((settings: S) => SharedSettings);
  /**
   * Fields of the driver's section (`spec.<name>`) that decide what is injected (templates, the values they
   * render, patches on the injected containers): under `--platform-config` they stay as the platform's layers
   * have them, and a tenant layer that sets or changes one is an error (src/config/platform-word.ts).
   * Absent: none.
   */
  platformFields?: readonly string[];
}

/** `DriverTraits` with every default filled in (`traitsOf`): what the shared steps read. */
export interface ResolvedTraits {
  podMetadataPath(kind: WorkloadKind): readonly string[] | undefined;
  otherReadingNote(path: string, wouldInject: boolean, detail: string): string;
  hostNetwork: 'skip' | 'driver';
  fallback: 'instead-of-policy' | 'with-policy';
}

/** The defaults of `DriverTraits`, in one place (`otherReadingNote`'s names the driver: see `traitsOf`). */
export const TRAIT_DEFAULTS: Readonly<Omit<ResolvedTraits, 'otherReadingNote'>> & { sharedDefaults: SharedSettings } = {
  podMetadataPath: () => undefined,
  hostNetwork: 'skip',
  fallback: 'instead-of-policy',
  sharedDefaults: {},
};

/** A driver's traits with the defaults (`TRAIT_DEFAULTS`) filled in. */
export function traitsOf(driver: {
  readonly name: string;
  readonly traits?: Omit<DriverTraits, 'sharedDefaults'> | undefined;
}): ResolvedTraits {
  const t = driver.traits ?? {};
  return {
    podMetadataPath: t.podMetadataPath ?? TRAIT_DEFAULTS.podMetadataPath,
    otherReadingNote:
      t.otherReadingNote ??
      ((path, inject, detail) =>
        `the ${driver.name} driver reads ${path} instead and would ${inject ? 'inject' : 'skip'} it: ${detail}`),
    hostNetwork: t.hostNetwork ?? TRAIT_DEFAULTS.hostNetwork,
    fallback: t.fallback ?? TRAIT_DEFAULTS.fallback,
  };
}

/** The driver's defaults for the shared settings (`DriverTraits.sharedDefaults`) under its loaded `settings`. */
export function sharedDefaultsOf<S>(driver: MeshDriver<S>, settings: S): SharedSettings {
  const d = driver.traits?.sharedDefaults ?? TRAIT_DEFAULTS.sharedDefaults;
  return typeof d === 'function' ? d(settings) : d;
}

/** A command-line option of a driver (istioctl's `--revision`, `--valuesFile`): always takes a value. */
export interface DriverFlag {
  /** The option without `--`, e.g. `valuesFile`. */
  name: string;
  /** The value's name in help (`REV`, `FILE`). */
  arg: string;
  /** The value names a file: the CLI reads it (within `--max-input-bytes`) and hands its text. */
  file?: boolean;
  /** One line for `--help`. */
  help: string;
}

/** A flag's value as the CLI hands it to the driver: the text (a file flag: the file's content) and its name for messages. */
export interface FlagValue {
  /** `--revision` or, for a file flag, `--valuesFile values.json`. */
  name: string;
  text: string;
}

/** A field of a driver's section set from outside the functionConfig (a flag): it wins over the functionConfig. */
export interface SectionOverride {
  /** The field of `spec.<driver>`, e.g. `revision`. */
  field: string;
  value: Json;
  /** Where the value came from, for messages: `--revision`, `--valuesFile values.json`. */
  from: string;
  /**
   * How the ConfigMap form holds it (`data['<driver>.<field>']`): `text` (a string, as is) or `json` (JSON text);
   * absent: only a SidecarInjection can (a ConfigMap functionConfig is then an error naming the flag).
   */
  configMap?: 'text' | 'json';
}

/** A driver's command-line flags and how their values become config overrides. */
export interface DriverFlags {
  /** The options, in `--help` order. */
  readonly options: readonly DriverFlag[];
  /**
   * The overrides of the given flags (`values` by option name, only those given), in a stable order, one per
   * field (a later flag for the same field wins, as the driver documents).
   * @returns the overrides, or the message of the first value that cannot be used (naming the flag and file)
   */
  overrides(
    values: Readonly<Record<string, FlagValue>>,
  ): { ok: true; overrides: SectionOverride[] } | { ok: false; message: string };
}

/** A driver's lines in `meshinject --help` (each without a trailing newline). */
export interface DriverHelp {
  /** Its config section as a YAML sketch with comments, `<name>: ...` (lines may be more; `--help` indents them under `spec:`). */
  config?: string;
  /** Its own opt-in/opt-out, e.g. `Istio sidecar.istio.io/inject`. */
  optIn?: string;
  /** What its flags are, for "Flags (...) win", e.g. `--revision, the istioctl file flags`. */
  flags?: string;
  /** What `nativeSidecars: auto` means for it, e.g. `Linkerd: from 1.29` (see `nativeSidecarsAuto`). */
  nativeSidecarsAuto?: string;
}

/** What a driver's `uninject` hook may read besides the pod: the pod as injected, and the workload's context. */
export interface UninjectContext {
  /** The pod template as found in the input (before the generic removal); read-only. */
  injected: PodTemplate;
  workload: WorkloadRef;
  namespace?: NamespaceInfo;
  config: Config;
}

/**
 * A driver bound to its loaded settings: what the pipeline calls. Built by `bindDriver`, so that the
 * settings' type stays private to the driver.
 */
export interface ActiveMesh {
  readonly name: string;
  decide(input: Omit<DriverDecideInput<never>, 'settings'>): DriverDecision;
  inject(req: Omit<InjectRequest, 'settings'>): InjectResponse;
  inventory(pod: PodTemplate): Inventory | undefined;
  /** The driver's `uninject` hook bound to its settings, when it has one. */
  uninject?(pod: PodTemplate, inventory: Inventory, context: UninjectContext): PodTemplate;
  /**
   * The driver rebound to the settings its `fromInput` completes from the input's ConfigMaps, with its notes;
   * itself and no notes when it has no such hook (then the ConfigMaps are not composed).
   */
  fromInput(configMaps: (names: readonly string[]) => readonly JsonObject[]): { mesh: ActiveMesh; notes: string[] };
  annotateResource?(resource: ResourceMeta, config: Config): ObjectAnnotation | undefined;
  resourceInventory?(resource: ResourceMeta): { annotations: string[]; labels: string[] } | undefined;
  recordKeys?(kind: 'labels' | 'annotations', key: string): boolean;
  readonly recordsProbePorts?: boolean;
  /** The driver's reason data (`MeshDriver.reasonInfo`; `{}` when it declares none). */
  readonly reasonInfo: Readonly<Record<string, ReasonInfo>>;
  /** The driver's traits with their defaults (`traitsOf`). */
  readonly traits: ResolvedTraits;
  /** The driver's `workloadTags` bound to its settings, when it has one. */
  workloadTags?(view: WorkloadView): Record<string, string>;
  /** The driver's `packageKinds` (`[]` when it has none). */
  readonly packageKinds: readonly string[];
  /** The driver's `packageFindings` bound to its settings, when it has one. */
  packageFindings?(pkg: PackageView): PackageFinding[];
  /** The driver's `findingInfo` (`{}` when it declares none). */
  readonly findingInfo: Readonly<Record<string, ReasonInfo>>;
  /** The driver's `migration` bound to its settings, when it has one. */
  readonly migration?: { targets: readonly string[]; plan(req: MigrationRequest): MigrationPlan | { error: string } };
}

/** A driver as the registry lists it (an identity that checks the settings type `S` across its members). */
export function defineDriver<S>(driver: MeshDriver<S>): MeshDriver<S> {
  return driver;
}

/** Binds a driver to its settings (see `ActiveMesh`). */
export function bindDriver<S>(driver: MeshDriver<S>, settings: S): ActiveMesh {
  const annotate = driver.annotateResource?.bind(driver);
  return {
    name: driver.name,
    decide: (input) => driver.decide({ ...input, settings }),
    inject: (req) => driver.inject({ ...req, settings }),
    inventory: (pod) => driver.inventory(pod),
    ...(driver.uninject
      ? {
          uninject: (pod: PodTemplate, inventory: Inventory, context: UninjectContext) =>
            driver.uninject!(pod, inventory, settings, context),
        }
      : {}),
    fromInput(configMaps) {
      if (!driver.fromInput) return { mesh: this, notes: [] };
      const r = driver.fromInput(settings, configMaps);
      return { mesh: bindDriver(driver, r.settings), notes: r.notes };
    },
    ...(annotate
      ? { annotateResource: (resource: ResourceMeta, config: Config) => annotate(resource, config, settings) }
      : {}),
    ...(driver.resourceInventory ? { resourceInventory: driver.resourceInventory.bind(driver) } : {}),
    ...(driver.recordKeys
      ? { recordKeys: (kind: 'labels' | 'annotations', key: string) => driver.recordKeys!(kind, key, settings) }
      : {}),
    ...(driver.recordsProbePorts ? { recordsProbePorts: true } : {}),
    reasonInfo: driver.reasonInfo ?? {},
    traits: traitsOf(driver),
    ...(driver.workloadTags ? { workloadTags: (view: WorkloadView) => driver.workloadTags!(view, settings) } : {}),
    packageKinds: driver.packageKinds ?? [],
    ...(driver.packageFindings
      ? { packageFindings: (pkg: PackageView) => driver.packageFindings!(pkg, settings) }
      : {}),
    findingInfo: driver.findingInfo ?? {},
    ...(driver.migration
      ? {
          migration: {
            targets: driver.migration.targets,
            plan: (req: MigrationRequest) => driver.migration!.plan(req, settings),
          },
        }
      : {}),
  };
}
