/**
 * The per-workload stages: read the workload, decide, find the previous injection, inject or uninject, and write the outcome.
 */
import type { Config } from '../model.ts';
import type { ActiveMesh, InjectResponse, Inventory, WorkloadRef } from '../contract/driver.ts';

import type { Decision, Json, PodTemplate } from '../model.ts';
import type { SourceItem } from '../krm/source.ts';
import { InjectError } from '../results/errors.ts';
import { resourceResult } from '../results/result.ts';
import { decide, namespaceLabels } from '../selection/policy.ts';
import { lookupWorkloadKind } from '../workloads/kinds.ts';
import { uninjectPod } from '../patch/uninject.ts';
import { sourceTextsToWrite, withOriginalRecord } from '../patch/status-record.ts';
import { nodeAt, pairText, replacedTexts } from '../edit/source-texts.ts';
import { seqIndentOf } from '../edit/rewrite.ts';
import {
  checkFiniteNumbers,
  checkWorkload,
  getPodOwnMeta,
  getPodTemplate,
  holdsPodTemplate,
  isProblem,
  podPaths,
} from '../workloads/pod-template.ts';
import { cloneJson, getIn, hasKeys, isJsonObject } from '../json.ts';
import { withoutRunCharge } from '../render/budget.ts';
import { planSwitches, withoutPlans } from '../render/plans.ts';

import { type Outcome, type ProcessOutput, type RunContext, type Workload, obj, str } from './context.ts';
import { describe, resourceId } from './identity.ts';
import { annotate, isLocalConfig, resultFor, writeChange } from './annotate.ts';
import { FAILED, orElse, orFailure, quietly } from './failures.ts';

/** Step 1: a workload of the input, or undefined (not a workload, local config, or an error result pushed). */
export function readWorkload(item: SourceItem, ctx: RunContext): Workload | undefined {
  const v = obj(item.value);
  if (!v || isLocalConfig(v)) return undefined;
  const found = lookupWorkloadKind(str(v.apiVersion) ?? '', str(v.kind) ?? '', ctx.config.workloadKinds);
  if (!found || !holdsPodTemplate(item.value, found)) return undefined;
  // A driver may read and write the pod metadata elsewhere for a kind (its `podMetadataPath` trait).
  const metaPath = ctx.mesh.traits.podMetadataPath(found);
  const wk = metaPath ? { ...found, metaPath } : found; // keeps runsToCompletion
  const id = resourceId(item, ctx.source, ctx.inputName);
  const problems = checkWorkload(item.value, wk);
  const nonFinite = item.reader === 'block' ? undefined : checkFiniteNumbers(item.value);
  if (nonFinite) problems.push(nonFinite);
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
export function decideWorkload(w: Workload, ctx: RunContext): Decision {
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
export function decideQuietly(input: Parameters<typeof decide>[0]): Decision | undefined {
  return quietly(() => decide(input), undefined);
}

/**
 * Step 3: the injected pod template, or `skipped`; a driver error becomes an error result. A skipped
 * workload that still carries this mesh's injection is uninjected with `spec.removeWhenSkipped`, else warned
 * about when `warnStillInjected` (a check reports it once instead, as an `unwanted-sidecar` finding).
 * `config` is the run's, or for `spec.kindPolicies: native` the run's with native sidecars on.
 */
export function injectWorkload(
  w: Workload,
  decision: Decision,
  ctx: RunContext,
  warnStillInjected: boolean,
  config: Config = ctx.config,
): Outcome | typeof FAILED {
  if (!decision.inject) {
    if (ctx.config.removeWhenSkipped) return uninjectWorkload(w, ctx);
    const previous = orFailure(ctx.results, { stage: 'inject', w }, () => ctx.mesh.inventory(w.pod));
    if (previous === FAILED) return FAILED;
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
    const request = {
      pod: w.pod,
      workload: w.ref,
      ...(namespace ? { namespace } : {}),
      services,
      config,
      ...(decision.tags ? { decisionTags: decision.tags } : {}),
    };
    // the driver's own copy (InjectRequest.pod): w.pod stays the pod as found, for the record and a second try
    const res: InjectResponse = ctx.mesh.inject({ ...request, pod: cloneJson(w.pod) });
    const recordKeys = ctx.mesh.recordKeys?.bind(ctx.mesh);
    const needs = {
      ...(recordKeys ? { recordKeys } : {}),
      recordsProbePorts: ctx.mesh.recordsProbePorts === true,
      // what uninject will give back, so that the record keeps what it would not (status-record.ts `replaced`);
      // its renders repeat injection's and count against the per-render budget only: the run budget counts
      // what the workloads' injection renders, as before the check (test/render/template-budgets.test.ts).
      // `injection`: a hook that would render this same injection again takes its result instead (issue #37);
      // `readOnly`: the record only compares the result, which is not copied out of uninject's frozen view (#40).
      uninject: (pod: PodTemplate) =>
        withoutRunCharge(
          () =>
            uninjectPod(
              ctx.mesh,
              pod,
              {
                workload: w.ref,
                ...(namespace ? { namespace } : {}),
                config: ctx.config,
                injection: { request, pod: res.pod },
              },
              true,
            )?.pod,
        ),
      texts: (before: PodTemplate, after: PodTemplate) => podSourceTexts(w, ctx, before, after),
    };
    return { res, pod: withOriginalRecord(w.pod, res.pod, needs, injectedBefore) };
  };
  const done = orFailure(ctx.results, { stage: 'inject', w }, () => orElse(once, (e) => againWithoutPlans(e, once)));
  if (done === FAILED) return FAILED;
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
export function againWithoutPlans<T>(failure: unknown, once: () => T): T {
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
export function carriesInjection(mesh: ActiveMesh, pod: PodTemplate): boolean {
  return quietly(() => mesh.inventory(pod) !== undefined, true);
}

/**
 * A pod template with `containers: []` is not injected: the pod would hold the proxy alone, which
 * the API server rejects (a pod needs an app container; issue #21 §7). Not asked of a pod injected already
 * (a re-run keeps what the first run wrote: a gateway whose only container was the proxy, now native).
 * @throws InjectError naming `spec.containers`
 */
export function refuseEmptyContainers(pod: PodTemplate): void {
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
export function uninjectWorkload(w: Workload, ctx: RunContext): Outcome | typeof FAILED {
  const namespace = ctx.namespaces.get(w.ref.namespace);
  return orFailure(ctx.results, { stage: 'uninject', w }, (): Outcome => {
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
    const texts = sourceTextsToWrite(w.pod, done.pod, ctx.mesh.recordKeys?.bind(ctx.mesh));
    return {
      action: 'uninjected',
      pod: done.pod,
      removed: `removed ${[...parts, `the annotation ${inv.statusAnnotation}`].join('; ')}`,
      ...(texts.length > 0
        ? { texts: new Map(texts.map(([p, text]) => [JSON.stringify(resourcePath(w, p)), text])) }
        : {}),
    };
  });
}

/** A path from the pod template's root (`metadata` or `spec` first) as a path from the workload's root. */
function resourcePath(w: Workload, path: ReadonlyArray<string | number>): Array<string | number> {
  const [part, ...rest] = path;
  const paths = podPaths(w.wk);
  return [...(part === 'metadata' ? paths.meta : paths.spec), ...rest];
}

/**
 * The source texts of what the injection of `w` replaced or removed (src/edit/source-texts.ts), by path from the
 * pod template's root, for the companion record: `before` is the pod template as found (`w.pod`, read from the
 * workload's text), `after` as injected.
 */
function podSourceTexts(
  w: Workload,
  ctx: RunContext,
  before: PodTemplate,
  after: PodTemplate,
): Array<[Array<string | number>, string]> {
  const out: Array<[Array<string | number>, string]> = [];
  const style = lazySeqIndent(w, ctx);
  const paths = podPaths(w.wk);
  // The pod's `metadata` written with no value (null: absent), or as a flow map empty (`{}`) or holding a null the
  // injection fills (`{labels: }`), is kept whole: uninject leaves an emptied metadata out and writes no null (a
  // null means absent to the text editor), and writes this text back in its place instead. (A block map's filled
  // null is kept by `replacedTexts` below; a flow map is not walked into.) A block map, the common case, is not
  // looked at further.
  const metaNode = nodeAt(w.item.node, paths.meta);
  const meta = metaNode?.t === 'map' && !metaNode.flow ? undefined : getIn(w.item.value, paths.meta);
  const filled = (m: Json): boolean =>
    isJsonObject(m) &&
    (!hasKeys(m) || Object.keys(m).some((k) => m[k] === null && (after.metadata[k] ?? null) !== null));
  if (meta === null ? hasKeys(after.metadata) : metaNode?.t === 'map' && metaNode.flow && filled(meta ?? null)) {
    const text = pairText(ctx.source.text, nodeAt(w.item.node, paths.meta.slice(0, -1)), paths.meta.at(-1));
    if (text !== undefined) out.push([['metadata'], text]);
  }
  for (const part of ['metadata', 'spec'] as const) {
    const node = part === 'metadata' ? metaNode : nodeAt(w.item.node, paths.spec);
    if (!node) continue;
    const [b, a] = part === 'metadata' ? [before.metadata as Json, after.metadata as Json] : [before.spec, after.spec];
    replacedTexts(ctx.source.text, node, b, a, style, [part], out);
  }
  return out;
}

/**
 * The text editor's list indentation for `w` (`seqIndentOf` its text), found the first time it is read: the
 * source texts compare a node's text with a fresh emit only where the injection replaced a node whole, which most
 * workloads have none of (issue #40: finding it was a fifth of the record's source texts).
 */
function lazySeqIndent(w: Workload, ctx: RunContext): { readonly seqIndent: 'compact' | 'wide' } {
  return new LazySeqIndent(w, ctx);
}

/**
 * {@link lazySeqIndent}'s style: a class, so that its getter is on the prototype (an object literal with a getter
 * is built on a slow path, once per workload: issue #40, a sixth of the record's source texts).
 */
class LazySeqIndent {
  #found: 'compact' | 'wide' | undefined;
  readonly #w: Workload;
  readonly #text: string;
  constructor(w: Workload, ctx: RunContext) {
    this.#w = w;
    this.#text = ctx.source.text;
  }
  get seqIndent(): 'compact' | 'wide' {
    if (this.#found === undefined) {
      const w = this.#w;
      const meta = (w.item.value as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata;
      this.#found = seqIndentOf(this.#text.slice(w.item.start, w.item.end), meta?.annotations);
    }
    return this.#found;
  }
}

/**
 * Names of the classic sidecars in the injected pod: regular containers (`spec.containers`) the injection added,
 * and those the driver's record of the injected pod (`inventory`) lists, so that a second run on injected
 * output, which adds nothing, still names them; none for a native sidecar (in `initContainers`).
 */
export function classicSidecars(before: PodTemplate, after: PodTemplate, ctx: RunContext): string[] {
  const names = (p: PodTemplate) =>
    (Array.isArray(p.spec.containers) ? p.spec.containers : []).map((c) => (isJsonObject(c) ? String(c.name) : ''));
  const had = new Set(names(before));
  const recorded: readonly string[] = quietly(() => ctx.mesh.inventory(after)?.containers ?? [], []);
  return names(after).filter((n) => !had.has(n) || recorded.includes(n));
}

/**
 * A decision turned into a skip by `spec.kindPolicies` (reason `kind-policy`): `skip` for the kind (intended, an
 * info result), or `native` where only a classic sidecar could be injected (`why`; not intended: a warning).
 */
export function kindPolicySkip(decision: Decision, kind: string, why?: string): Decision {
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
export function neverCompletes(
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
export function decideOrReport(w: Workload, ctx: RunContext): Decision | undefined {
  const decision = orFailure(ctx.results, { stage: 'decide', w }, () => decideWorkload(w, ctx));
  return decision === FAILED ? undefined : decision;
}

/** What the input's pod template already carries from this mesh; an untrustworthy record is reported by `injectWorkload`. */
export function previousInventory(w: Workload, ctx: RunContext): Inventory | undefined {
  return quietly(() => ctx.mesh.inventory(w.pod), undefined);
}

/**
 * Steps 4 to 6: `annotate`, `emitChanged` (through `writeChange`) and `resultFor`. Returns whether the
 * change was written (a change that cannot be written faithfully is an error result instead) and the workload's
 * driver tags as written (`DriverDecision.tags`, then `ActiveMesh.workloadTags`), which its result carries; with
 * a driver that reads the package (`packageFindings`), the workload as written is kept in `out.pkg`.
 */
export function writeOutcome(
  w: Workload,
  decision: Decision | undefined,
  outcome: Outcome,
  ctx: RunContext,
  out: ProcessOutput,
): { written: boolean; tags: Record<string, string> } {
  const desired = annotate(w, decision, outcome, ctx);
  const texts = outcome.action === 'uninjected' ? outcome.texts : undefined;
  const written = desired === w.item.value || writeChange(w.item, ctx, desired, out.changed, texts);
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
export function workloadTagsOf(
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
