/**
 * The pipeline for one input: for every resource, in order, the recipe of the mode (`RECIPES`, lists of named
 * steps): inject and check `readWorkload → decide → previous → inject → write` (`write`: `annotate →
 * emitChanged → resultFor`), uninject `readWorkload → uninject → write` (a skipped workload still injected goes
 * through `uninjectWorkload` with `spec.removeWhenSkipped`), then the run-level results (unknown namespaces).
 * Mesh-neutral: everything mesh-specific is behind the `ActiveMesh` (src/contract/driver.ts).
 */
import type { Config, KindPolicy } from './config/types.ts';
import type {
  ActiveMesh,
  InjectResponse,
  Inventory,
  PackageResource,
  PackageWorkload,
  ResourceMeta,
  WorkloadRef,
} from './contract/driver.ts';
import type { WorkloadRecord } from './reports/check.ts';

export type { WorkloadRecord } from './reports/check.ts';
import type {
  Decision,
  Json,
  JsonObject,
  KrmResult,
  NamespaceInfo,
  PodMeta,
  PodTemplate,
  ResourceId,
  ServiceInfo,
} from './model.ts';
import type { ParsedSource, SourceItem } from './krm/source.ts';
import { errorTags, InjectError, MeshInjectError } from './results/errors.ts';
import { generalResult, prefixedTags, resourceResult } from './results/result.ts';
import { decide, namespaceLabels, NS_NAME_LABEL } from './selection/policy.ts';
import { completionOf, lookupWorkloadKind, type WorkloadKind } from './workloads/kinds.ts';
import { emitChangedEdits } from './krm/rewrite.ts';
import type { Edit } from './yaml/flow-edit.ts';
import { duplicateMessage, fingerprintOf, identityOf, IdentityTable } from './krm/identity.ts';
import { uninjectPod } from './patch/uninject.ts';
import { withOriginalRecord } from './patch/status-record.ts';
import {
  checkWorkload,
  getPodOwnMeta,
  getPodTemplate,
  holdsPodTemplate,
  isProblem,
  podPaths,
  withAnnotation,
  withoutAnnotation,
  withPodTemplate,
} from './workloads/pod-template.ts';
import { cloneJson, isJsonObject, setOwn } from './json.ts';
import { planSwitches, withoutPlans } from './render/plans.ts';

/** The annotation meshinject writes on every considered workload (switch off with `spec.resultAnnotations: false`). */
export const RESULT_ANNOTATION = 'meshinject.dev/injection';

/** What processing the resources produced: replaced resources by position, and the results. */
export interface ProcessOutput {
  /** New source text of each changed resource, by `SourceItem.position`. */
  changed: Map<number, string>;
  /** The edits of the input text that give each changed resource's new text, by position (`ChangedResource.edits`; for `meshinject diff`). */
  edits: Map<number, readonly Edit[]>;
  /** One result per workload (plus its warnings), then the run-level results. */
  results: KrmResult[];
  /** Every decided workload in order: its decision (with the trace) and the sidecar it already carried. */
  workloads: WorkloadRecord[];
  /** Every workload as written, and the resources of the kinds the driver reads across the package (`packageKinds`). */
  pkg: { workloads: PackageWorkload[]; resources: PackageResource[] };
}

/** Shared state when several inputs are one run (`runInputs`). */
export interface SharedRun {
  /** The namespace table of all inputs (`collectNamespaces` over every input). */
  namespaces: Map<string, NamespaceInfo>;
  /** The Services of all inputs by namespace (`collectServices`). */
  services?: Map<string, ServiceInfo[]>;
  /** Unknown namespaces a decision needed, counted over all inputs; the caller reports them once (`unknownNamespaceResults`). */
  unknownNamespaces: Map<string, number>;
  /** Called after each resource is processed (progress on a terminal). */
  onItem?: () => void;
  /** The resource identities seen over all inputs (`checkIdentity`); each input gets its own table when absent. */
  identities?: IdentityTable;
}

function obj(v: Json | undefined): JsonObject | undefined {
  return isJsonObject(v) ? v : undefined;
}

function str(v: Json | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function stringMap(v: Json | undefined): Record<string, string> {
  const o = obj(v);
  const out: Record<string, string> = {};
  if (o) for (const [k, x] of Object.entries(o)) if (x !== null && typeof x !== 'object') setOwn(out, k, String(x));
  return out;
}

/**
 * The namespaces known to this run: `Namespace` objects in the list win over `spec.namespaces` entries of
 * the same name, with a warning naming both (pushed to `results`).
 */
export function collectNamespaces(
  items: readonly SourceItem[],
  config: Config,
  results: KrmResult[] = [],
): Map<string, NamespaceInfo> {
  const out = new Map<string, NamespaceInfo>();
  const fromConfig = new Set<string>();
  for (const n of config.namespaces) {
    out.set(n.name, n);
    fromConfig.add(n.name);
  }
  for (const it of items) {
    if (it.kind !== 'Namespace') continue;
    const v = obj(it.value);
    if (!v || v.kind !== 'Namespace' || str(v.apiVersion) !== 'v1') continue;
    const meta = obj(v.metadata);
    const name = str(meta?.name);
    if (!name) continue;
    if (fromConfig.has(name)) {
      results.push(
        generalResult(
          'warning',
          `Namespace ${name} is both an object in the input and an entry of spec.namespaces: the input's Namespace object is used, the spec.namespaces entry is ignored`,
          'spec.namespaces',
        ),
      );
      fromConfig.delete(name);
    }
    out.set(name, { name, labels: stringMap(meta?.labels), annotations: stringMap(meta?.annotations) });
  }
  return out;
}

/**
 * The `Service` objects (`v1`) of the input by namespace (a Service without `metadata.namespace` is in
 * `config.defaultNamespace`), in input order, for `InjectRequest.services`.
 */
export function collectServices(items: readonly SourceItem[], config: Config): Map<string, ServiceInfo[]> {
  const out = new Map<string, ServiceInfo[]>();
  for (const it of items) {
    if (it.kind !== 'Service') continue;
    const v = obj(it.value);
    if (!v || v.kind !== 'Service' || str(v.apiVersion) !== 'v1') continue;
    const meta = obj(v.metadata);
    const name = str(meta?.name) ?? '';
    const namespace = str(meta?.namespace) || config.defaultNamespace;
    const service = {
      name,
      namespace,
      labels: stringMap(meta?.labels),
      annotations: stringMap(meta?.annotations),
      selector: stringMap(obj(v.spec)?.selector),
    };
    out.set(namespace, [...(out.get(namespace) ?? []), service]);
  }
  return out;
}

/**
 * Identity of a resource for results. The file comes from kpt/kustomize's
 * `internal.config.kubernetes.io/{path,index}` (or the legacy `config.kubernetes.io/*`), else, for a plain
 * YAML stream, from the input name and document position.
 */
export function resourceId(item: SourceItem, source: ParsedSource, inputName: string | undefined): ResourceId {
  const v = obj(item.value) ?? {};
  const meta = obj(v.metadata) ?? {};
  const ann = stringMap(meta.annotations);
  const id: ResourceId = {
    apiVersion: str(v.apiVersion) ?? '',
    kind: str(v.kind) ?? '',
    name: str(meta.name) ?? str(meta.generateName) ?? '',
  };
  const ns = str(meta.namespace);
  if (ns) id.namespace = ns;
  const path = ann['internal.config.kubernetes.io/path'] ?? ann['config.kubernetes.io/path'];
  const index = ann['internal.config.kubernetes.io/index'] ?? ann['config.kubernetes.io/index'];
  if (path !== undefined) {
    id.filePath = path;
    id.fileIndex = index !== undefined && /^\d+$/.test(index) ? Number(index) : 0;
  } else if (source.form === 'stream' && inputName !== undefined) {
    id.filePath = inputName;
    id.fileIndex = item.topPosition;
  }
  return id;
}

/**
 * Where a resource is, for a person: the kpt/kustomize path annotation and index when present, else the input
 * and the document number (1-based) of a stream, or the item of a ResourceList or List.
 */
function placeOf(item: SourceItem, source: ParsedSource, inputName: string | undefined): string {
  const ann = stringMap(obj(obj(item.value)?.metadata)?.annotations);
  const path = ann['internal.config.kubernetes.io/path'] ?? ann['config.kubernetes.io/path'];
  const file = inputName ?? 'stdin';
  const entry =
    source.form === 'stream'
      ? `${file} document ${item.topPosition + 1}${item.position !== item.topPosition ? ' (in a List)' : ''}`
      : `${file} items[${item.position}]`;
  if (path === undefined) return entry;
  const index = ann['internal.config.kubernetes.io/index'] ?? ann['config.kubernetes.io/index'] ?? '0';
  return `${path} (index ${index}; ${entry})`;
}

/**
 * One identity, one resource (`src/krm/identity.ts`): a second resource of an identity already seen in the run
 * gets an error result naming both places (a warning when the two are identical). Local config is not output and
 * is not checked.
 */
function checkIdentity(item: SourceItem, ctx: RunContext): void {
  const v = obj(item.value);
  if (!v || isLocalConfig(v)) return;
  const id = identityOf(v, ctx.config.defaultNamespace);
  if (!id) return;
  // An identity that occurs once in the run is never compared: no fingerprint (the table knows which repeat).
  const now = {
    place: placeOf(item, ctx.source, ctx.inputName),
    fingerprint: ctx.identities.needsFingerprint(id) ? fingerprintOf(v) : '',
  };
  const first = ctx.identities.see(id, now);
  if (!first) return;
  const { severity, message } = duplicateMessage(id, first, now);
  ctx.results.push(
    resourceResult(severity, message, resourceId(item, ctx.source, ctx.inputName), {
      tags: { 'meshinject.dev/reason': 'duplicate-resource' },
    }),
  );
}

function describe(id: ResourceId): string {
  return `${id.kind} "${id.namespace ? `${id.namespace}/` : ''}${id.name}"`;
}

function isLocalConfig(v: JsonObject): boolean {
  const ann = stringMap(obj(v.metadata)?.annotations);
  return ann['config.kubernetes.io/local-config'] === 'true';
}

/**
 * The input's ConfigMaps named one of `names`, for `ActiveMesh.fromInput` (kpt package files such as
 * templates, a mesh's own config), and those whose name is only known once composed. Chosen by the kind and
 * name as written (`SourceItem.kind`, `name`), so the input's other resources stay uncomposed until processed,
 * one at a time.
 */
function inputConfigMaps(items: readonly SourceItem[], names: readonly string[]): JsonObject[] {
  return items
    .filter((it) => it.kind === 'ConfigMap' && (it.name === undefined || names.includes(it.name)))
    .map((it) => obj(it.value))
    .filter((v): v is JsonObject => v !== undefined);
}

/** The annotation value meshinject writes for a decision: `injected (<driver summary>)` / `skipped (host-network)`. */
export function resultAnnotationValue(decision: Decision, summary?: string): string {
  return decision.inject ? `injected (${summary ?? ''})` : `skipped (${decision.reason})`;
}

/** Reason code of a workload that uninject found nothing to remove from. */
export const NOT_INJECTED = 'not-injected';
/** Reason code of a workload uninjected by `spec.mode: uninject`. */
export const MODE_UNINJECT = 'mode-uninject';

/**
 * What was done to a workload: `injected` (the driver's response), `uninjected` (the pod without the
 * injection and a description of what was removed), or `skipped` (unchanged).
 */
type Outcome =
  | { action: 'injected'; pod: PodTemplate; summary: string }
  | { action: 'uninjected'; pod: PodTemplate; removed: string }
  | { action: 'skipped' };

/** A workload as the pipeline sees it: its identity, kind, pod template and where it is decided. */
interface Workload {
  item: SourceItem;
  id: ResourceId;
  wk: WorkloadKind;
  /** The pod template as the driver injects it (its metadata from the driver's `podMetadataPath`, when it has one). */
  pod: PodTemplate;
  /** The pod's own metadata, which the cluster's webhook decides on. */
  webhookMeta: PodMeta;
  ref: WorkloadRef;
}

/** Everything one run shares across workloads. */
interface RunContext {
  source: ParsedSource;
  config: Config;
  mesh: ActiveMesh;
  inputName: string | undefined;
  namespaces: Map<string, NamespaceInfo>;
  /** The input's Services by namespace (`collectServices`). */
  services: Map<string, ServiceInfo[]>;
  results: KrmResult[];
  /** Unknown namespaces whose labels a decision needed, with how many workloads. */
  unknownNamespaces: Map<string, number>;
  /** Where `writeChange` records each changed resource's edits (`ProcessOutput.edits`). */
  edits: Map<number, readonly Edit[]>;
  /** Identities seen so far (`checkIdentity`). */
  identities: IdentityTable;
}

/** Step 1: a workload of the input, or undefined (not a workload, local config, or an error result pushed). */
function readWorkload(item: SourceItem, ctx: RunContext): Workload | undefined {
  const v = obj(item.value);
  if (!v || isLocalConfig(v)) return undefined;
  const found = lookupWorkloadKind(str(v.apiVersion) ?? '', str(v.kind) ?? '', ctx.config.workloadKinds);
  if (!found || !holdsPodTemplate(item.value, found)) return undefined;
  // A driver may read and write the pod metadata elsewhere for a kind (its `podMetadataPath` trait).
  const metaPath = ctx.mesh.traits.podMetadataPath(found);
  const wk = metaPath ? { ...found, metaPath } : found; // keeps runsToCompletion
  const id = resourceId(item, ctx.source, ctx.inputName);
  const problems = checkWorkload(item.value, wk);
  const pod = problems.length === 0 ? getPodTemplate(item.value, wk) : undefined;
  if (pod === undefined || isProblem(pod)) {
    for (const p of pod ? [pod] : problems)
      ctx.results.push(resourceResult('error', `${describe(id)}: ${p.message}`, id, { field: p.field }));
    return undefined;
  }
  const nsDeclared = str(obj(v.metadata)?.namespace);
  const ref: WorkloadRef = {
    apiVersion: id.apiVersion,
    kind: id.kind,
    name: str(obj(v.metadata)?.name) ?? '',
    namespace: nsDeclared ?? ctx.config.defaultNamespace,
    namespaceDefaulted: nsDeclared === undefined,
  };
  return { item, id, wk, pod, webhookMeta: getPodOwnMeta(item.value, wk), ref };
}

/**
 * Step 2: the decision, from what the cluster's webhook sees (the pod's own metadata). Where the driver reads
 * elsewhere (its `podMetadataPath` trait: Istio's kube-inject reads a CronJob's `spec.jobTemplate.metadata`) and
 * would decide otherwise, the decision's detail says so (its `otherReadingNote`).
 */
function decideWorkload(w: Workload, ctx: RunContext): Decision {
  const namespaceInfo = ctx.namespaces.get(w.ref.namespace);
  const base = {
    podSpec: w.pod.spec,
    kind: w.wk.kind,
    namespace: w.ref.namespace,
    ...(namespaceInfo ? { namespaceInfo } : {}),
    config: ctx.config,
    mesh: ctx.mesh,
  };
  const decision = decide({ ...base, podMeta: w.webhookMeta });
  if (w.wk.metaPath) {
    const other = decideQuietly({ ...base, podMeta: w.pod.metadata });
    if (other && other.inject !== decision.inject) {
      const path = w.wk.metaPath.join('.');
      const note = ctx.mesh.traits.otherReadingNote(path, other.inject, other.detail);
      decision.detail += ` (${note})`;
    }
  }
  if (decision.unknownNamespace !== undefined) {
    ctx.unknownNamespaces.set(
      decision.unknownNamespace,
      (ctx.unknownNamespaces.get(decision.unknownNamespace) ?? 0) + 1,
    );
  }
  return decision;
}

/** A decision made only to compare; a driver error there is not the workload's error. */
function decideQuietly(input: Parameters<typeof decide>[0]): Decision | undefined {
  try {
    return decide(input);
  } catch (e) {
    if (e instanceof MeshInjectError) return undefined;
    throw e;
  }
}

/** A driver error as the workload's error result (field path from the resource root); other errors propagate. */
function driverFailure(w: Workload, ctx: RunContext, e: unknown): 'failed' {
  if (!(e instanceof MeshInjectError)) throw e;
  ctx.results.push(
    resourceResult('error', `${describe(w.id)}: ${e.message}`, w.id, {
      ...(e.field ? { field: resourceField(w.wk, e.field) } : {}),
      tags: errorTags(e.code),
    }),
  );
  return 'failed';
}

/**
 * Step 3: the injected pod template, or `skipped`; a driver error becomes an error result. A skipped
 * workload that still carries this mesh's injection is uninjected with `spec.removeWhenSkipped`, else warned
 * about when `warnStillInjected` (a check reports it once instead, as an `unwanted-sidecar` finding).
 * `config` is the run's, or for `spec.kindPolicies: native` the run's with native sidecars on.
 */
function injectWorkload(
  w: Workload,
  decision: Decision,
  ctx: RunContext,
  warnStillInjected: boolean,
  config: Config = ctx.config,
): Outcome | 'failed' {
  if (!decision.inject) {
    if (ctx.config.removeWhenSkipped) return uninjectWorkload(w, ctx);
    let previous;
    try {
      previous = ctx.mesh.inventory(w.pod);
    } catch (e) {
      return driverFailure(w, ctx, e);
    }
    if (previous && warnStillInjected) {
      ctx.results.push(
        resourceResult(
          'warning',
          `skipped, but the pod template is already injected (${previous.statusAnnotation}): the sidecar stays; set spec.removeWhenSkipped: true to remove it, or re-enable injection`,
          w.id,
        ),
      );
    }
    return { action: 'skipped' };
  }
  const namespace = ctx.namespaces.get(w.ref.namespace);
  const injectedBefore = carriesInjection(ctx.mesh, w.pod);
  const once = () => {
    if (!injectedBefore) refuseEmptyContainers(w.pod);
    const services = ctx.services.get(w.ref.namespace) ?? [];
    const res: InjectResponse = ctx.mesh.inject({
      // the driver's own copy (InjectRequest.pod): w.pod stays the pod as found, for the record and a second try
      pod: cloneJson(w.pod),
      workload: w.ref,
      ...(namespace ? { namespace } : {}),
      services,
      config,
      ...(decision.tags ? { decisionTags: decision.tags } : {}),
    });
    const recordKeys = ctx.mesh.recordKeys?.bind(ctx.mesh);
    const needs = {
      ...(recordKeys ? { recordKeys } : {}),
      recordsProbePorts: ctx.mesh.recordsProbePorts === true,
      // what uninject will give back, so that the record keeps what it would not (status-record.ts `replaced`)
      uninject: (pod: PodTemplate) =>
        uninjectPod(ctx.mesh, pod, { workload: w.ref, ...(namespace ? { namespace } : {}), config: ctx.config })?.pod,
    };
    return { res, pod: withOriginalRecord(w.pod, res.pod, needs, injectedBefore) };
  };
  let done: ReturnType<typeof once>;
  try {
    done = once();
  } catch (e) {
    try {
      done = againWithoutPlans(e, once);
    } catch (e2) {
      return driverFailure(w, ctx, e2);
    }
  }
  for (const warning of done.res.warnings) ctx.results.push(resourceResult('warning', warning, w.id));
  return { action: 'injected', pod: done.pod, summary: done.res.summary };
}

/**
 * A workload's injection that failed (`failure`), done again without sidecar plans (`withoutPlans`); throws
 * `failure` itself when plans were off.
 *
 * With plans on, parts of a planned render are shared between workloads and frozen (../json.ts `share`):
 * a driver that changes one in place, rather than its own copy (`owned`), throws, and the injection it
 * would have made without plans is the right one. Under plan verification (the test suite's preload,
 * `MESHINJECT_VERIFY_PLANS=1`) a failure that the second try does not repeat is a defect of the planned
 * path (such a write, or a plan that differs from a full render), and throws an internal error naming it.
 * @throws the second try's error, or `failure` (see above)
 */
function againWithoutPlans<T>(failure: unknown, once: () => T): T {
  const plans = planSwitches();
  if (!plans.enabled) throw failure;
  const done = withoutPlans(once);
  if (plans.verify) {
    throw new Error(
      `the injection failed with plans and succeeded without them (a driver that changes a shared part in place takes it with owned() first): ${(failure as Error)?.message ?? String(failure)}`,
    );
  }
  return done;
}

/**
 * Whether `pod` carries this mesh's injection already (its `inventory` finds one, or refuses a record it
 * cannot trust: the injection itself judges that record, e.g. against the templates it runs).
 */
function carriesInjection(mesh: ActiveMesh, pod: PodTemplate): boolean {
  try {
    return mesh.inventory(pod) !== undefined;
  } catch (e) {
    if (e instanceof MeshInjectError) return true;
    throw e;
  }
}

/**
 * A pod template with `containers: []` is not injected: the pod would hold the proxy alone, which
 * the API server rejects (a pod needs an app container; issue #21 §7). Not asked of a pod injected already
 * (a re-run keeps what the first run wrote: a gateway whose only container was the proxy, now native).
 * @throws InjectError naming `spec.containers`
 */
function refuseEmptyContainers(pod: PodTemplate): void {
  const cs = pod.spec.containers;
  if (!Array.isArray(cs) || cs.length > 0) return;
  throw new InjectError(
    `the pod template's container list is empty (containers: []): injecting would leave a pod whose only container is the sidecar, which the API server rejects; add the application's container`,
    { field: 'spec.containers' },
  );
}

/**
 * Step 3 of uninject (`spec.mode: uninject`, or a skipped workload with `spec.removeWhenSkipped`): the pod
 * template without what the driver injected (src/patch/uninject.ts), `skipped` when it finds nothing; a
 * driver error (an untrustworthy status record, an edit it cannot undo faithfully) becomes an error result.
 */
function uninjectWorkload(w: Workload, ctx: RunContext): Outcome | 'failed' {
  const namespace = ctx.namespaces.get(w.ref.namespace);
  try {
    const done = uninjectPod(ctx.mesh, w.pod, {
      workload: w.ref,
      ...(namespace ? { namespace } : {}),
      config: ctx.config,
    });
    if (!done) return { action: 'skipped' };
    const inv = done.inventory;
    const lists: [string, readonly string[]][] = [
      ['containers', inv.containers],
      ['init containers', inv.initContainers],
      ['volumes', inv.volumes],
      ['image pull secrets', inv.imagePullSecrets],
    ];
    const parts = lists.filter(([, names]) => names.length > 0).map(([what, names]) => `${what} ${names.join(', ')}`);
    return {
      action: 'uninjected',
      pod: done.pod,
      removed: `removed ${[...parts, `the annotation ${inv.statusAnnotation}`].join('; ')}`,
    };
  } catch (e) {
    return driverFailure(w, ctx, e);
  }
}

/**
 * A driver's field path (relative to the pod template: `metadata.annotations[...]`, `spec.containers[0]`)
 * as a path from the resource root (`spec.template.metadata.annotations[...]`). `metaPath` is where the
 * metadata the driver read lives (default: where it injects, `podPaths(wk).meta`).
 */
function resourceField(wk: WorkloadKind, field: string, metaPath = podPaths(wk).meta): string {
  const paths = { meta: metaPath, spec: podPaths(wk).spec };
  const [head, rest] = field.startsWith('metadata')
    ? [paths.meta, field.slice('metadata'.length)]
    : field.startsWith('spec')
      ? [paths.spec, field.slice('spec'.length)]
      : [[], `.${field}`];
  const prefix = head.join('.');
  return prefix === '' ? field : `${prefix}${rest}`;
}

/**
 * Step 4: the resource as it should be written: the new pod template, the result annotation, which
 * records the workload's state so that a second run writes the same: `injected (<driver summary>)`,
 * `skipped (<reason>)` (also when `removeWhenSkipped` just removed the sidecar), and in uninject mode
 * `uninjected (istio)` for every workload; and for an injected workload the configured
 * `injectedWorkloadAnnotations` of its kind (removed from an uninjected one where they hold the configured
 * value). `decision` is undefined in uninject mode.
 */
function annotate(w: Workload, decision: Decision | undefined, outcome: Outcome, ctx: RunContext): Json {
  const config = ctx.config;
  let desired: Json =
    outcome.action === 'skipped'
      ? w.item.value
      : withPodTemplate(w.item.value, w.wk, outcome.pod, { dropEmptyMetadata: outcome.action === 'uninjected' });
  if (config.resultAnnotations) {
    const value = decision
      ? resultAnnotationValue(decision, outcome.action === 'injected' ? outcome.summary : undefined)
      : `uninjected (${ctx.mesh.name})`;
    desired = withAnnotation(desired, RESULT_ANNOTATION, value);
  }
  const byKind = config.injectedWorkloadAnnotations ?? {};
  const extra = Object.hasOwn(byKind, w.wk.kind) ? byKind[w.wk.kind]! : {};
  for (const [key, value] of Object.entries(extra)) {
    // Uninject removes what injection wrote: the configured value only (re-injection writes it again).
    if (outcome.action === 'injected') desired = withAnnotation(desired, key, value);
    else if (outcome.action === 'uninjected') desired = withoutAnnotation(desired, key, value);
  }
  return desired;
}

/**
 * Step 6: the one result of a workload (info: injected, uninjected, or skipped as configured; warning:
 * skipped unexpectedly). `decision` is undefined in uninject mode.
 */
function resultFor(
  w: Workload,
  decision: Decision | undefined,
  outcome: Outcome,
  mesh: ActiveMesh,
  driverTags: Record<string, string>,
): KrmResult {
  const reason = decision?.reason ?? (outcome.action === 'uninjected' ? MODE_UNINJECT : NOT_INJECTED);
  const severity =
    !decision || decision.inject || decision.intended || outcome.action === 'uninjected' ? 'info' : 'warning';
  const why = decision ? `${decision.reason}): ${decision.detail}` : undefined;
  const message =
    outcome.action === 'injected'
      ? `injected (${outcome.summary}): ${decision!.detail}`
      : outcome.action === 'uninjected'
        ? `uninjected (${mesh.name}): ${why ? `skipped (${why}; ` : ''}${outcome.removed}`
        : why
          ? `skipped (${why}`
          : `skipped (${NOT_INJECTED}): nothing ${mesh.name} injected was found`;
  return resourceResult(severity, message, w.id, {
    tags: { 'meshinject.dev/outcome': outcome.action, 'meshinject.dev/reason': reason, ...prefixedTags(driverTags) },
  });
}

/**
 * Writes a changed resource's new text into `changed` (nothing when its text already reads as `desired`).
 * Where the change cannot be written faithfully (`emitChanged` refuses with `UNFAITHFUL_EDIT`), the
 * resource stays as it was and gets an error result naming the construct and its line (issue #8: refuse
 * with an error result, never guess).
 *
 * @returns whether the change was written (or needed no text change)
 */
function writeChange(item: SourceItem, ctx: RunContext, desired: Json, changed: Map<number, string>): boolean {
  try {
    const done = emitChangedEdits(item, ctx.source, desired);
    if (done !== undefined) {
      changed.set(item.position, done.text);
      ctx.edits.set(item.position, done.edits);
    }
    return true;
  } catch (e) {
    if (!(e instanceof MeshInjectError) || e.code !== 'UNFAITHFUL_EDIT') throw e;
    ctx.results.push(
      resourceResult('error', e.message, resourceId(item, ctx.source, ctx.inputName), { tags: errorTags(e.code) }),
    );
    return false;
  }
}

/** A resource that is neither a workload nor local config, as a driver's `annotateResource`/`resourceInventory` reads it. */
function otherResource(
  item: SourceItem,
  ctx: RunContext,
): { v: JsonObject; meta: JsonObject; res: ResourceMeta } | undefined {
  const v = obj(item.value);
  if (!v || isLocalConfig(v)) return undefined;
  if (lookupWorkloadKind(str(v.apiVersion) ?? '', str(v.kind) ?? '', ctx.config.workloadKinds)) return undefined; // a workload with an error result
  const meta = obj(v.metadata) ?? {};
  return {
    v,
    meta,
    res: {
      apiVersion: str(v.apiVersion) ?? '',
      kind: str(v.kind) ?? '',
      name: str(meta.name) ?? '',
      namespace: str(meta.namespace) ?? '',
      labels: stringMap(meta.labels),
      annotations: stringMap(meta.annotations),
    },
  };
}

/**
 * A resource that is not a workload, when the driver annotates such resources (`MeshDriver.annotateResource`:
 * Linkerd's Namespace and Service annotations): the annotations are added and an info result says so.
 */
function annotateResource(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void {
  const found = ctx.mesh.annotateResource ? otherResource(item, ctx) : undefined;
  if (!found) return;
  const add = ctx.mesh.annotateResource!(found.res, ctx.config);
  if (!add) return;
  let desired: Json = item.value;
  for (const [k, val] of Object.entries(add.annotations)) desired = withAnnotation(desired, k, val);
  if (!writeChange(item, ctx, desired, changed)) return;
  const id = resourceId(item, ctx.source, ctx.inputName);
  ctx.results.push(
    resourceResult(
      'info',
      `annotated (${ctx.mesh.name}): ${Object.entries(add.annotations)
        .map(([k, x]) => `${k}=${x}`)
        .join(', ')}: ${add.summary}`,
      id,
      { tags: { 'meshinject.dev/outcome': 'annotated', 'meshinject.dev/reason': 'driver-annotation' } },
    ),
  );
}

/**
 * Uninject of a resource that is not a workload (`MeshDriver.resourceInventory`: Linkerd's Namespace and Service
 * annotations): the keys are removed (a map left empty is dropped) and an info result says so.
 */
function unannotateResource(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void {
  const found = ctx.mesh.resourceInventory ? otherResource(item, ctx) : undefined;
  if (!found) return;
  const { v, meta } = found;
  const inv = ctx.mesh.resourceInventory!(found.res);
  if (!inv || inv.annotations.length + inv.labels.length === 0) return;
  const newMeta: JsonObject = { ...meta };
  for (const [field, keys] of [
    ['annotations', inv.annotations],
    ['labels', inv.labels],
  ] as const) {
    const m = obj(meta[field]);
    if (!m || keys.length === 0) continue;
    const kept: JsonObject = {};
    for (const [k, x] of Object.entries(m)) if (!keys.includes(k)) setOwn(kept, k, x);
    if (Object.keys(kept).length === 0) delete newMeta[field];
    else newMeta[field] = kept;
  }
  if (!writeChange(item, ctx, { ...v, metadata: newMeta }, changed)) return;
  const id = resourceId(item, ctx.source, ctx.inputName);
  const removed = [...inv.annotations.map((k) => `annotation ${k}`), ...inv.labels.map((k) => `label ${k}`)].join(', ');
  ctx.results.push(
    resourceResult('info', `uninjected (${ctx.mesh.name}): removed ${removed}`, id, {
      tags: { 'meshinject.dev/outcome': 'uninjected', 'meshinject.dev/reason': MODE_UNINJECT },
    }),
  );
}

/**
 * Run-level results: each unknown namespace a decision needed, once; a warning, or an error under
 * `spec.unknownNamespaces: error` (`Config.unknownNamespaces`), which fails the run (exit 1, nothing written).
 */
export function unknownNamespaceResults(
  unknownNamespaces: ReadonlyMap<string, number>,
  setting: Config['unknownNamespaces'],
): KrmResult[] {
  const error = setting === 'error';
  const fix = error
    ? '; add it to spec.namespaces with its labels, or set spec.unknownNamespaces: warn or assume-selected'
    : '';
  return [...unknownNamespaces].map(([ns, count]) =>
    generalResult(
      error ? 'error' : 'warning',
      `namespace ${ns} is neither a Namespace object in the input nor listed in spec.namespaces; its labels are unknown, only ${NS_NAME_LABEL}=${ns} was used (${count} workload${count === 1 ? '' : 's'} skipped on that basis)${fix}`,
    ),
  );
}

/** What the steps of one workload's recipe have found so far. */
interface Flow {
  w: Workload;
  decision?: Decision;
  /** `spec.kindPolicies` for the workload's kind (`inject` when absent). */
  policy?: KindPolicy;
  previous?: Inventory;
  outcome?: Outcome | 'failed';
}

/** A named step of a recipe: reads and extends the flow; false stops the recipe (its result is pushed). */
interface Step {
  readonly name: string;
  run(f: Flow, ctx: RunContext, out: ProcessOutput): boolean;
}

/** `decideWorkload` (an error result stops), then the decision's warnings. */
const DECIDE: Step = {
  name: 'decide',
  run(f, ctx) {
    const decision = decideOrReport(f.w, ctx);
    if (!decision) return false;
    f.decision = decision;
    for (const warning of decision.warnings ?? []) ctx.results.push(resourceResult('warning', warning, f.w.id));
    return true;
  },
};

/** `spec.kindPolicies`: the kind's policy; `skip` turns an injection into a skip. */
const KIND_POLICY: Step = {
  name: 'kind-policy',
  run(f, ctx) {
    const policy = ctx.config.kindPolicies?.[f.w.wk.kind] ?? 'inject';
    f.policy = policy;
    if (policy === 'skip' && f.decision!.inject) f.decision = kindPolicySkip(f.decision!, f.w.wk.kind);
    return true;
  },
};

/**
 * A classic sidecar where the kind wants a native one (`kindPolicies: native`): skipped with a warning; on a kind
 * whose pods run to completion (Job, CronJob): a warning that they never complete.
 */
const CLASSIC_SIDECAR: Step = {
  name: 'classic-sidecar',
  run(f, ctx) {
    const outcome = f.outcome;
    if (outcome === undefined || outcome === 'failed' || outcome.action !== 'injected') return true;
    const classic = classicSidecars(f.w.pod, outcome.pod, ctx);
    const completion = completionOf(f.w.wk, outcome.pod);
    if (classic.length > 0 && f.policy === 'native') {
      f.decision = kindPolicySkip(
        f.decision!,
        f.w.wk.kind,
        `${ctx.mesh.name} injects a classic sidecar here (container ${classic.join(', ')}), not a native one`,
      );
      f.outcome = { action: 'skipped' };
    } else if (classic.length > 0 && completion)
      ctx.results.push(resourceResult('warning', neverCompletes(f.w.wk.kind, classic, completion), f.w.id));
    return true;
  },
};

/** What the input's pod template already carries from this mesh (for check and explain). */
const PREVIOUS: Step = {
  name: 'previous',
  run(f, ctx) {
    const previous = previousInventory(f.w, ctx);
    if (previous) f.previous = previous;
    return true;
  },
};

/**
 * `injectWorkload` (native sidecars on for `kindPolicies: native`); `warnStillInjected`: warn about a skipped
 * workload that still carries a sidecar.
 */
function injectStep(warnStillInjected: boolean): Step {
  return {
    name: 'inject',
    run(f, ctx) {
      const config = f.policy === 'native' ? { ...ctx.config, nativeSidecars: true } : ctx.config;
      f.outcome = injectWorkload(f.w, f.decision!, ctx, warnStillInjected, config);
      return true;
    },
  };
}

/** `uninjectWorkload` (an error result stops). */
const UNINJECT: Step = { name: 'uninject', run: (f, ctx) => (f.outcome = uninjectWorkload(f.w, ctx)) !== 'failed' };

/** `annotate → emitChanged → resultFor` (`writeOutcome`), then the workload's record for check and explain. */
const WRITE_AND_RECORD: Step = {
  name: 'write',
  run(f, ctx, out) {
    const done = f.outcome !== 'failed' ? writeOutcome(f.w, f.decision, f.outcome!, ctx, out) : undefined;
    const tags = done?.tags ?? {};
    out.workloads.push({
      position: f.w.item.position,
      id: f.w.id,
      namespace: f.w.ref.namespace,
      decision: f.decision!,
      ...(f.previous ? { previous: f.previous } : {}),
      ok: done?.written === true,
      ...(Object.keys(tags).length ? { tags } : {}),
    });
    return true;
  },
};

/** `annotate → emitChanged → resultFor` of an uninjected workload (no decision, no record). */
const WRITE: Step = {
  name: 'write',
  run: (f, ctx, out) => (writeOutcome(f.w, undefined, f.outcome as Outcome, ctx, out), true),
};

/** A mode's recipe: the steps of a workload after `readWorkload`, and what is done to any other resource. */
interface Recipe {
  readonly workload: readonly Step[];
  other(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void;
}

/** The recipe of each `spec.mode` (`check` also for `meshinject check`): lists of named steps. */
const RECIPES: Readonly<Record<'inject' | 'uninject' | 'check', Recipe>> = {
  inject: {
    workload: [DECIDE, KIND_POLICY, PREVIOUS, injectStep(true), CLASSIC_SIDECAR, WRITE_AND_RECORD],
    other: annotateOther,
  },
  check: {
    workload: [DECIDE, KIND_POLICY, PREVIOUS, injectStep(false), CLASSIC_SIDECAR, WRITE_AND_RECORD],
    other: annotateOther,
  },
  uninject: { workload: [UNINJECT, WRITE], other: unannotateResource },
};

/** The driver's annotations on a resource that is not a workload, when it has any (`annotateResource`). */
function annotateOther(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void {
  if (ctx.mesh.annotateResource) annotateResource(item, ctx, changed);
}

/**
 * One resource, as the recipe of its mode (`RECIPES`): a workload goes `readWorkload` then the recipe's steps in
 * order, until one stops; another resource gets the recipe's `other`.
 */
function processItem(item: SourceItem, ctx: RunContext, out: ProcessOutput): void {
  const recipe = RECIPES[ctx.config.mode ?? 'inject'];
  const w = readWorkload(item, ctx);
  if (!w) {
    keepForPackage(item, ctx, out);
    return recipe.other(item, ctx, out.changed);
  }
  const flow: Flow = { w };
  for (const step of recipe.workload) if (!step.run(flow, ctx, out)) return;
}

/** A resource of a kind the driver reads across the package (`packageKinds`), kept for `packageFindings` (local config left out). */
function keepForPackage(item: SourceItem, ctx: RunContext, out: ProcessOutput): void {
  if (!ctx.mesh.packageFindings) return;
  const v = obj(item.value);
  const kind = str(v?.kind);
  if (v && kind !== undefined && ctx.mesh.packageKinds.includes(kind) && !isLocalConfig(v))
    out.pkg.resources.push({ id: resourceId(item, ctx.source, ctx.inputName), value: v });
}

/**
 * Names of the classic sidecars in the injected pod: regular containers (`spec.containers`) the injection added,
 * and those the driver's record of the injected pod (`inventory`) lists, so that a second run on injected
 * output, which adds nothing, still names them; none for a native sidecar (in `initContainers`).
 */
function classicSidecars(before: PodTemplate, after: PodTemplate, ctx: RunContext): string[] {
  const names = (p: PodTemplate) =>
    (Array.isArray(p.spec.containers) ? p.spec.containers : []).map((c) => (isJsonObject(c) ? String(c.name) : ''));
  const had = new Set(names(before));
  let recorded: readonly string[] = [];
  try {
    recorded = ctx.mesh.inventory(after)?.containers ?? [];
  } catch (e) {
    if (!(e instanceof MeshInjectError)) throw e;
  }
  return names(after).filter((n) => !had.has(n) || recorded.includes(n));
}

/**
 * A decision turned into a skip by `spec.kindPolicies` (reason `kind-policy`): `skip` for the kind (intended, an
 * info result), or `native` where only a classic sidecar could be injected (`why`; not intended: a warning).
 */
function kindPolicySkip(decision: Decision, kind: string, why?: string): Decision {
  const detail =
    why === undefined ? `spec.kindPolicies.${kind} is skip` : `spec.kindPolicies.${kind} is native, but ${why}`;
  return {
    ...decision,
    inject: false,
    reason: 'kind-policy',
    detail,
    intended: why === undefined,
    trace: [...decision.trace, { rule: 'kind-policy', saw: detail, outcome: 'decided' }],
  };
}

/**
 * The warning for a pod that runs to completion given a classic sidecar, with what to do (linkerd2#5188, #7425):
 * a Job or CronJob (`{kind}`), or any kind whose pod template has `restartPolicy: Never` or `OnFailure`
 * (`{restartPolicy}`, e.g. a Helm test hook Pod).
 */
function neverCompletes(
  kind: string,
  containers: readonly string[],
  why: { kind: string } | { restartPolicy: string },
): string {
  const harm =
    'restartPolicy' in why
      ? `which keeps running after the other containers exit: the pod (restartPolicy: ${why.restartPolicy}) never completes`
      : `which keeps running after the job's containers exit: the ${kind === 'CronJob' ? "CronJob's Jobs never complete" : 'Job never completes'}`;
  return (
    `${kind} gets a classic sidecar (container ${containers.join(', ')}), ${harm}; ` +
    `inject native sidecars (spec.nativeSidecars: true or auto, Kubernetes >= 1.29; or spec.kindPolicies.${kind}: native), or leave ${kind}s out (spec.kindPolicies.${kind}: skip)`
  );
}

/** Step 2 with its failure: the decision, or undefined after pushing the driver's error as the workload's result. */
function decideOrReport(w: Workload, ctx: RunContext): Decision | undefined {
  try {
    return decideWorkload(w, ctx);
  } catch (e) {
    if (!(e instanceof MeshInjectError)) throw e;
    const field = e.field ? resourceField(w.wk, e.field, [...w.wk.templatePath, 'metadata']) : undefined;
    ctx.results.push(
      resourceResult('error', `${describe(w.id)}: ${e.message}`, w.id, {
        ...(field ? { field } : {}),
        tags: errorTags(e.code),
      }),
    );
    return undefined;
  }
}

/** What the input's pod template already carries from this mesh; an untrustworthy record is reported by `injectWorkload`. */
function previousInventory(w: Workload, ctx: RunContext): Inventory | undefined {
  try {
    return ctx.mesh.inventory(w.pod);
  } catch (e) {
    if (!(e instanceof MeshInjectError)) throw e;
    return undefined;
  }
}

/**
 * Steps 4 to 6: `annotate`, `emitChanged` (through `writeChange`) and `resultFor`. Returns whether the
 * change was written (a change that cannot be written faithfully is an error result instead) and the workload's
 * driver tags as written (`DriverDecision.tags`, then `ActiveMesh.workloadTags`), which its result carries; with
 * a driver that reads the package (`packageFindings`), the workload as written is kept in `out.pkg`.
 */
function writeOutcome(
  w: Workload,
  decision: Decision | undefined,
  outcome: Outcome,
  ctx: RunContext,
  out: ProcessOutput,
): { written: boolean; tags: Record<string, string> } {
  const desired = annotate(w, decision, outcome, ctx);
  const written = desired === w.item.value || writeChange(w.item, ctx, desired, out.changed);
  const asWritten = written
    ? { value: desired, pod: outcome.action === 'skipped' ? w.pod : outcome.pod }
    : { value: w.item.value, pod: w.pod };
  const podLabels = getPodOwnMeta(asWritten.value, w.wk).labels ?? {};
  const tags = { ...(decision?.tags ?? {}), ...workloadTagsOf(w, asWritten.pod, podLabels, ctx) };
  if (written) ctx.results.push(resultFor(w, decision, outcome, ctx.mesh, tags));
  if (ctx.mesh.packageFindings) {
    out.pkg.workloads.push({
      id: w.id,
      namespace: w.ref.namespace,
      podLabels,
      injected: carriesInjection(ctx.mesh, asWritten.pod),
      tags,
    });
  }
  return { written, tags };
}

/** The driver's tags of a workload as written (`ActiveMesh.workloadTags`), `{}` when it has none. */
function workloadTagsOf(
  w: Workload,
  pod: PodTemplate,
  podLabels: Record<string, string>,
  ctx: RunContext,
): Record<string, string> {
  if (!ctx.mesh.workloadTags) return {};
  const info = ctx.namespaces.get(w.ref.namespace);
  return ctx.mesh.workloadTags({
    pod,
    podLabels,
    namespace: w.ref.namespace,
    namespaceLabels: namespaceLabels(w.ref.namespace, info),
    namespaceKnown: info !== undefined,
  });
}

/**
 * Decides and injects every workload of the input. Returns the new source text of each changed resource
 * (only the differing lines rewritten) and the results: one per workload (plus its warnings), then the
 * run-level ones. A workload whose injection fails gets an error result and is left unchanged. No I/O; each
 * resource's syntax tree and data (`item.node`, `item.value`) are released once processed, so afterwards only
 * the items' source ranges are valid.
 *
 * @param source the parsed input
 * @param config the validated core config
 * @param mesh the selected driver bound to its settings (`loadConfig(...).mesh`)
 * @param inputName the input's name for `file.path` of plain streams (CLI file argument)
 * @param shared when several inputs are one run: their namespace table, and where unknown namespaces are
 *   counted (the run-level results are then left to the caller)
 */
export function processItems(
  source: ParsedSource,
  config: Config,
  boundMesh: ActiveMesh,
  inputName?: string,
  shared?: SharedRun,
): ProcessOutput {
  const results: KrmResult[] = [];
  let mesh: ActiveMesh;
  try {
    const adapted = boundMesh.fromInput((names) => inputConfigMaps(source.items, names));
    mesh = adapted.mesh;
    for (const note of adapted.notes) results.push(generalResult('info', note));
  } catch (e) {
    if (!(e instanceof MeshInjectError) || e.code !== 'BAD_CONFIG') throw e;
    return {
      changed: new Map(),
      edits: new Map(),
      results: [generalResult('error', e.message, e.field)],
      workloads: [],
      pkg: { workloads: [], resources: [] },
    };
  }
  const ctx: RunContext = {
    source,
    config,
    mesh,
    inputName,
    results,
    namespaces: shared?.namespaces ?? collectNamespaces(source.items, config, results),
    services: shared?.services ?? collectServices(source.items, config),
    unknownNamespaces: shared?.unknownNamespaces ?? new Map(),
    edits: new Map(),
    identities: shared?.identities ?? new IdentityTable(),
  };
  const out: ProcessOutput = {
    changed: new Map(),
    edits: ctx.edits,
    results,
    workloads: [],
    pkg: { workloads: [], resources: [] },
  };
  for (const item of source.items) {
    item.load();
    checkIdentity(item, ctx);
    processItem(item, ctx, out);
    // Only the source range is needed to write the output, and a large input then never holds every
    // resource's syntax tree at once (peak memory).
    item.release();
    shared?.onItem?.();
  }
  if (!shared) results.push(...unknownNamespaceResults(ctx.unknownNamespaces, config.unknownNamespaces));
  return out;
}
