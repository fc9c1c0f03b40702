/**
 * What the stages of the pipeline (src/pipeline.ts) share: the run context, a workload as the stages see it, what was done to it, and the output of processing.
 */
import type { Config } from '../model.ts';
import type { ActiveMesh, PackageResource, PackageWorkload, WorkloadRef } from '../contract/driver.ts';
import type { WorkloadRecord } from '../check/findings.ts';

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
} from '../model.ts';
import type { ParsedSource, SourceItem } from '../krm/source.ts';
import type { WorkloadKind } from '../workloads/kinds.ts';
import type { Edit } from '../krm/write.ts';
import type { SourceTexts } from '../edit/text-edit.ts';
import type { IdentityTable } from '../krm/identity.ts';
import type { RenderRun } from '../render/run-state.ts';
import { isJsonObject, setOwn } from '../json.ts';

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
  /**
   * The run's rendering state (budgets, plan switches and caches; src/render/run-state.ts), in force while the
   * resources are processed; each input gets a run of its own, under its config's budgets, when absent.
   */
  run?: RenderRun;
}

export function obj(v: Json | undefined): JsonObject | undefined {
  return isJsonObject(v) ? v : undefined;
}

export function str(v: Json | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function stringMap(v: Json | undefined): Record<string, string> {
  const o = obj(v);
  const out: Record<string, string> = {};
  if (o) for (const [k, x] of Object.entries(o)) if (x !== null && typeof x !== 'object') setOwn(out, k, String(x));
  return out;
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
export type Outcome =
  | { action: 'injected'; pod: PodTemplate; summary: string }
  | {
      action: 'uninjected';
      pod: PodTemplate;
      removed: string;
      /** Source texts to write back (the companion record's `texts`, by resource path; src/edit/text-edit.ts). */
      texts?: SourceTexts;
    }
  | { action: 'skipped' };

/** A workload as the pipeline sees it: its identity, kind, pod template and where it is decided. */
export interface Workload {
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
export interface RunContext {
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
