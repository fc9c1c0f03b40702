/**
 * Merging a rendered template's fragment into the pods of an Istio injection (`injectIstioPod`, inject.ts): the
 * template pod and the merged pod (Istio `injectPod`'s two `applyOverlayYAML`/strategic merges, pkg/kube/inject/
 * inject.go), with the checks a planned render answers once per plan.
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { strategicMerge, strategicMergeInto, strategicMergeTrusted } from '../../patch/strategic-merge.ts';
import { POD_SCHEMA } from '../../patch/patch-schema.ts';
import { fillsDroppingNulls, fillsTrust, plainDroppingNulls } from '../../patch/trusted-patch.ts';
import { type TrustedPatch, trustedPatch } from '../../patch/trusted-patch.ts';
import { nullsDeleteNothing } from '../../patch/null-deletes.ts';
import { filledFrom, planSwitches } from '../../render/plans.ts';
import { holdsToken } from '../../render/plan-values.ts';
import { copyUnshared, isJsonObject } from '../../json.ts';
import type { RenderedFragment } from './render.ts';

function asPod(o: JsonObject): PodTemplate {
  return {
    metadata: (isJsonObject(o.metadata) ? o.metadata : {}) as PodTemplate['metadata'],
    spec: isJsonObject(o.spec) ? o.spec : {},
  };
}

/**
 * `pod` with `fragment` strategic-merged in. With `checked` (the fragment passed `trustedPatch`), values new
 * to the pod are taken without checks; `copy: false` gives them away uncopied (the fragment must not be used
 * again by anyone who mutates). `owned`: the caller owns `pod` (a fresh `cloneJson`, held by no one else), which
 * is then merged into in place instead of copied first.
 */
export function mergeInto(
  pod: PodTemplate,
  fragment: JsonObject,
  checked: TrustedPatch | undefined,
  copy: boolean,
  owned = false,
): PodTemplate {
  const base = { metadata: pod.metadata as JsonObject, spec: pod.spec };
  if (owned) return asPod(strategicMergeInto(base, fragment, POD_SCHEMA, checked, copy));
  return asPod(
    checked ? strategicMergeTrusted(base, checked, POD_SCHEMA, copy) : strategicMerge(base, fragment, POD_SCHEMA),
  );
}

/**
 * The fragment of a template not checked as a whole (`checkedFragment`: it holds a null) as a trusted patch for the
 * merge into `pod`, when that gives what the general merge of `fragment` gives; else undefined (the general merge).
 * `clean` is the template pod's trusted patch (`trustedIntoEmpty`): `plainDroppingNulls(fragment)`, so `fragment` is
 * plain and `clean` is it without its nulls. Where the merge into `pod` deletes nothing for a null of `fragment`
 * (`nullsDeleteNothing`), the general merge stores, for each value new to `pod`, its null-free copy
 * (`plainWithoutNulls`: each collection copied but a shared one, which is replaced by its memoised null-free
 * shared copy); `clean` holds the same values (the same shared ones), and `copy` gives the pod its own copies
 * (`copyUnshared`). Without `copy` the pod holds the template pod's unshared collections themselves; the caller
 * passes it only when that changes nothing it reads, see `injectIstioPod`.
 */
export function nullFreeFor(
  pod: PodTemplate,
  fragment: JsonObject,
  clean: TrustedPatch | undefined,
  copy: boolean,
): TrustedPatch | undefined {
  if (clean === undefined) return undefined;
  if (!nullsDeleteNothing({ metadata: pod.metadata as JsonObject, spec: pod.spec }, fragment, POD_SCHEMA))
    return undefined;
  return copy ? { trusted: copyUnshared(clean.trusted) } : clean;
}

export function fragmentOf(rendered: { metadata?: unknown; spec?: unknown }): JsonObject {
  const f: JsonObject = {};
  if (isJsonObject(rendered.metadata as Json)) f.metadata = rendered.metadata as JsonObject;
  if (isJsonObject(rendered.spec as Json)) f.spec = rendered.spec as JsonObject;
  return f;
}

/**
 * `trustedPatch(fragment, POD_SCHEMA)` of a template's result (`fragment` is `fragmentOf(rendered)`). For a
 * planned render it is answered once per plan where the plan's output decides it for every fill
 * (`fillsTrust`; e.g. Istio's sidecar template writes `emptyDir:` with no value, a null, so no fill of it
 * is trusted); with plan verification on (`MESHINJECT_VERIFY_PLANS=1`, the test suite) the plan's answer is
 * checked against the fragment's own.
 * @throws Error when verification finds the plan's answer wrong (a defect, reported, not hidden)
 */
export function checkedFragment(rendered: RenderedFragment, fragment: JsonObject): TrustedPatch | undefined {
  const template = filledFrom(rendered);
  const trust = isJsonObject(template) ? fillsTrust(template, POD_SCHEMA, holdsToken) : 'each';
  if (trust === 'each') return trustedPatch(fragment, POD_SCHEMA);
  if (planSwitches().verify && (trustedPatch(fragment, POD_SCHEMA) !== undefined) !== (trust === 'all')) {
    throw new Error(
      `a planned template result was judged by its plan (${trust === 'all' ? 'trusted' : 'not trusted'}), and the plain-data check of the result itself disagrees`,
    );
  }
  return trust === 'all' ? { trusted: fragment } : undefined;
}

/**
 * `plainDroppingNulls(fragment, POD_SCHEMA)` for the fragment of a planned render, by the edits its plan's output
 * makes in every fill (`fillsDroppingNulls`: the maps on the way to a null, walking nothing else); undefined (the
 * general walk) for a full render or a plan whose fills it cannot answer. With plan verification on
 * (`MESHINJECT_VERIFY_PLANS=1`, the test suite) each answer is checked against the general walk's.
 * @throws Error from the function returned when verification finds the answers differ (a defect, reported)
 */
export function plannedNullDrop(rendered: RenderedFragment): ((fragment: JsonObject) => Json | undefined) | undefined {
  const template = filledFrom(rendered);
  const drop = isJsonObject(template) ? fillsDroppingNulls(template, POD_SCHEMA, holdsToken) : undefined;
  if (drop === undefined || !planSwitches().verify) return drop;
  return (fragment) => {
    const planned = drop(fragment);
    if (JSON.stringify(planned) !== JSON.stringify(plainDroppingNulls(fragment, POD_SCHEMA))) {
      throw new Error("a planned template result's nulls were dropped by its plan, and the general walk disagrees");
    }
    return planned;
  };
}
