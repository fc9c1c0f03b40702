import type { ActiveMesh, ResourceMeta } from '../contract/driver.ts';

import type { Decision, Json, JsonObject, KrmResult } from '../model.ts';
import type { SourceItem } from '../krm/source.ts';
import { prefixedTags, resourceResult } from '../results/result.ts';
import { lookupWorkloadKind, type WorkloadKind } from '../workloads/kinds.ts';
import { emitChangedEdits } from '../edit/rewrite.ts';
import type { SourceTexts } from '../edit/text-edit.ts';
import { podPaths, withAnnotation, withoutAnnotation, withPodTemplate } from '../workloads/pod-template.ts';
import { setOwn } from '../json.ts';

import {
  MODE_UNINJECT,
  NOT_INJECTED,
  type Outcome,
  type ProcessOutput,
  RESULT_ANNOTATION,
  type RunContext,
  type Workload,
  obj,
  resultAnnotationValue,
  str,
  stringMap,
} from './context.ts';
import { resourceId } from './identity.ts';
import { FAILED, orFailure } from './failures.ts';

export function isLocalConfig(v: JsonObject): boolean {
  const ann = stringMap(obj(v.metadata)?.annotations);
  return ann['config.kubernetes.io/local-config'] === 'true';
}

/**
 * The input's ConfigMaps named one of `names`, for `ActiveMesh.fromInput` (kpt package files such as
 * templates, a mesh's own config), and those whose name is only known once composed. Chosen by the kind and
 * name as written (`SourceItem.kind`, `name`), so the input's other resources stay uncomposed until processed,
 * one at a time.
 */
export function inputConfigMaps(items: readonly SourceItem[], names: readonly string[]): JsonObject[] {
  return items
    .filter((it) => it.kind === 'ConfigMap' && (it.name === undefined || names.includes(it.name)))
    .map((it) => obj(it.value))
    .filter((v): v is JsonObject => v !== undefined);
}

/**
 * Whether uninject leaves the pod template's metadata out when it is empty: yes (the injection made it), but where
 * the record gives back its text as an empty flow map (`metadata: {}`, which the injection filled: the metadata
 * stays, as `{}`, for that text to read as). A null one (`metadata:` with no value) is left out, and its text,
 * which reads as absent, written in its place (src/pipeline/workload.ts `podSourceTexts`).
 */
function dropsEmptyMetadata(w: Workload, outcome: Outcome): boolean {
  if (outcome.action !== 'uninjected') return false;
  const text = outcome.texts?.get(JSON.stringify(podPaths(w.wk).meta));
  return text === undefined || !/^ *\{/.test(text);
}

/**
 * Step 4: the resource as it should be written: the new pod template, the result annotation, which
 * records the workload's state so that a second run writes the same: `injected (<driver summary>)`,
 * `skipped (<reason>)` (also when `removeWhenSkipped` just removed the sidecar), and in uninject mode
 * `uninjected (istio)` for every workload; and for an injected workload the configured
 * `injectedWorkloadAnnotations` of its kind (removed from an uninjected one where they hold the configured
 * value). `decision` is undefined in uninject mode.
 */
export function annotate(w: Workload, decision: Decision | undefined, outcome: Outcome, ctx: RunContext): Json {
  const config = ctx.config;
  let desired: Json =
    outcome.action === 'skipped'
      ? w.item.value
      : withPodTemplate(w.item.value, w.wk, outcome.pod, { dropEmptyMetadata: dropsEmptyMetadata(w, outcome) });
  if (config.resultAnnotations) {
    const value = decision
      ? resultAnnotationValue(decision, outcome.action === 'injected' ? outcome.summary : undefined)
      : `uninjected (${ctx.mesh.name})`;
    desired = withAnnotation(desired, RESULT_ANNOTATION, value);
  }
  const byKind = config.injectedWorkloadAnnotations ?? {};
  const extra = (Object.hasOwn(byKind, w.wk.kind) ? byKind[w.wk.kind] : undefined) ?? {};
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
export function resultFor(
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
      ? `injected (${outcome.summary}): ${decision?.detail}`
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
 * with an error result, never guess). `texts`: source texts uninject writes back (`emitChangedEdits`).
 *
 * @returns whether the change was written (or needed no text change)
 */
export function writeChange(
  item: SourceItem,
  ctx: RunContext,
  desired: Json,
  changed: Map<number, string>,
  texts?: SourceTexts,
): boolean {
  const done = orFailure(ctx.results, { stage: 'write', item, ctx }, () =>
    emitChangedEdits(item, ctx.source, desired, texts),
  );
  if (done === FAILED) return false;
  if (done !== undefined) {
    changed.set(item.position, done.text);
    ctx.edits.set(item.position, done.edits);
  }
  return true;
}

/** A resource that is neither a workload nor local config, as a driver's `annotateResource`/`resourceInventory` reads it. */
export function otherResource(
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
export function annotateResource(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void {
  const annotateWith = ctx.mesh.annotateResource;
  const found = annotateWith ? otherResource(item, ctx) : undefined;
  if (!annotateWith || !found) return;
  const add = annotateWith(found.res, ctx.config);
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
export function unannotateResource(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void {
  const inventoryOf = ctx.mesh.resourceInventory;
  const found = inventoryOf ? otherResource(item, ctx) : undefined;
  if (!inventoryOf || !found) return;
  const { v, meta } = found;
  const inv = inventoryOf(found.res);
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

/** The driver's annotations on a resource that is not a workload, when it has any (`annotateResource`). */
export function annotateOther(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void {
  if (ctx.mesh.annotateResource) annotateResource(item, ctx, changed);
}

/**
 * A driver's field path (relative to the pod template: `metadata.annotations[...]`, `spec.containers[0]`)
 * as a path from the resource root (`spec.template.metadata.annotations[...]`). `metaPath` is where the
 * metadata the driver read lives (default: where it injects, `podPaths(wk).meta`).
 */
export function resourceField(wk: WorkloadKind, field: string, metaPath = podPaths(wk).meta): string {
  const paths = { meta: metaPath, spec: podPaths(wk).spec };
  const [head, rest] = field.startsWith('metadata')
    ? [paths.meta, field.slice('metadata'.length)]
    : field.startsWith('spec')
      ? [paths.spec, field.slice('spec'.length)]
      : [[], `.${field}`];
  const prefix = head.join('.');
  return prefix === '' ? field : `${prefix}${rest}`;
}

/** A resource of a kind the driver reads across the package (`packageKinds`), kept for `packageFindings` (local config left out). */
export function keepForPackage(item: SourceItem, ctx: RunContext, out: ProcessOutput): void {
  if (!ctx.mesh.packageFindings) return;
  const v = obj(item.value);
  const kind = str(v?.kind);
  if (v && kind !== undefined && ctx.mesh.packageKinds.includes(kind) && !isLocalConfig(v))
    out.pkg.resources.push({ id: resourceId(item, ctx.source, ctx.inputName), value: v });
}
