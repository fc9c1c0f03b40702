/**
 * The sidecar driver interface: everything mesh-specific sits behind it (OSM's "sidecar class" model,
 * `pkg/injector/driver` `Driver.Patch` + `Register`/`InstallDriver`; peers.md §2.2; driver-model.md). The
 * core (reading and writing, workload kinds, namespace selection, never/always selectors, policy, results)
 * never names a mesh; a driver folder never reaches into another driver.
 */
import type { WorkloadKind } from '../workloads/kinds.ts';
import type { Config, JsonObject, PodTemplate } from '../model.ts';
import type {
  DriverConfigInput,
  DriverConfigResult,
  DriverDecideInput,
  DriverDecision,
  InjectRequest,
  InjectResponse,
  Inventory,
  MigrationPlan,
  MigrationRequest,
  ObjectAnnotation,
  PackageFinding,
  PackageView,
  ReasonInfo,
  ResourceMeta,
  SharedSettings,
  UninjectContext,
  WorkloadView,
} from './driver-io.ts';
import type { DriverFlags, DriverHelp } from './flags.ts';

// The driver contract is imported from this module: its stage types and flag types are named here too.
export type {
  WorkloadRef,
  DriverConfigInput,
  SharedSettings,
  DriverConfigResult,
  DriverDecideInput,
  DriverVerdict,
  DriverDecision,
  InjectRequest,
  WorkloadView,
  PackageResource,
  PackageWorkload,
  PackageView,
  PackageFinding,
  InjectResponse,
  Inventory,
  ResourceMeta,
  ObjectAnnotation,
  UninjectContext,
  MigrationResource,
  MigrationRequest,
  MigrationPlan,
  ReasonInfo,
} from './driver-io.ts';
export type { DriverFlag, FlagValue, SectionOverride, DriverFlags, DriverHelp } from './flags.ts';

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
   * made. Called by uninject (src/patch/uninject.ts) with the pod after the generic removal, whose parts may be
   * read-only (deep-frozen: a hook copies what it changes); `context.injected` is the pod before it (the removed
   * sidecar's env may hold what the injection replaced). Pure. Throws
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

/** A driver's reading of `spec.nativeSidecars: auto` (`MeshDriver.nativeSidecarsAuto`). */
export interface NativeSidecarsAuto {
  /** Kubernetes `major.minor` from which the mesh injects native sidecars by itself; absent: never by itself. */
  minKube?: string;
  /** e.g. `Istio 1.31: ENABLE_NATIVE_SIDECARS=auto (the default from 1.27) ...`. */
  because: string;
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
  const uninject = driver.uninject?.bind(driver);
  const recordKeys = driver.recordKeys?.bind(driver);
  const workloadTags = driver.workloadTags?.bind(driver);
  const packageFindings = driver.packageFindings?.bind(driver);
  const migration = driver.migration;
  return {
    name: driver.name,
    decide: (input) => driver.decide({ ...input, settings }),
    inject: (req) => driver.inject({ ...req, settings }),
    inventory: (pod) => driver.inventory(pod),
    ...(uninject
      ? {
          uninject: (pod: PodTemplate, inventory: Inventory, context: UninjectContext) =>
            uninject(pod, inventory, settings, context),
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
    ...(recordKeys
      ? { recordKeys: (kind: 'labels' | 'annotations', key: string) => recordKeys(kind, key, settings) }
      : {}),
    ...(driver.recordsProbePorts ? { recordsProbePorts: true } : {}),
    reasonInfo: driver.reasonInfo ?? {},
    traits: traitsOf(driver),
    ...(workloadTags ? { workloadTags: (view: WorkloadView) => workloadTags(view, settings) } : {}),
    packageKinds: driver.packageKinds ?? [],
    ...(packageFindings ? { packageFindings: (pkg: PackageView) => packageFindings(pkg, settings) } : {}),
    findingInfo: driver.findingInfo ?? {},
    ...(migration
      ? {
          migration: {
            targets: migration.targets,
            plan: (req: MigrationRequest) => migration.plan(req, settings),
          },
        }
      : {}),
  };
}
