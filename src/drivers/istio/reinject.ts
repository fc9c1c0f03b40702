/**
 * Istio's uninject injects the uninjected pod template again to learn which labels and annotations the
 * injection writes (src/drivers/istio/uninject.ts): that re-injection, and the reuse of the injection the
 * inject-time check has just made when it is the same request (issue #37, issue #40).
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import type { UninjectContext } from '../../contract/driver.ts';
import type { IstioSettings } from './config.ts';
import { InjectError, MeshInjectError } from '../../results/errors.ts';
import { injectIstioPod } from './inject.ts';
import { planSwitches } from '../../render/plans.ts';
import { ORIGINAL_ANNOTATION } from '../../patch/status-record.ts';
import { isJsonObject, jsonEqual, setOwn } from '../../json.ts';

/**
 * `probe` injected again with this configuration, in the workload and namespace of `ctx`.
 * @throws InjectError naming the failing field when the injection fails
 */
export function reinject(probe: PodTemplate, settings: IstioSettings, ctx: UninjectContext): PodTemplate {
  // A fast path, switched with the sidecar plans (`MESHINJECT_PLANS=0`: rendered, as the output with fast paths off).
  const plans = planSwitches();
  const reused = plans.enabled ? sameInjection(probe, ctx) : undefined;
  if (reused && !plans.verify) return reused;
  let again: PodTemplate;
  try {
    again = injectIstioPod({
      pod: probe,
      workload: ctx.workload,
      ...(ctx.namespace ? { namespace: ctx.namespace } : {}),
      config: ctx.config,
      settings,
    }).pod;
  } catch (e) {
    if (!(e instanceof MeshInjectError)) throw e;
    throw new InjectError(
      `cannot uninject faithfully: re-injecting the uninjected pod to check the injected labels and annotations failed: ${e.message}`,
      { field: e.field },
    );
  }
  // Under plan verification (the test suite's preload, `MESHINJECT_VERIFY_PLANS=1`) a reuse is rendered too.
  if (reused && !(jsonEqual(again.spec, reused.spec) && jsonEqual(metadataOf(again), metadataOf(reused))))
    throw new Error(`uninject's check reused an injection that a render does not give (${ctx.workload.name})`);
  return again;
}

/**
 * The pod template the injection in `ctx.injection` returned, when re-injecting `probe` is that same request:
 * `probe` equal to its pod template (as JSON; an empty labels or annotations map as none), and the same config,
 * workload and namespace objects. The settings are the caller's to match (the Istio driver's `uninject` keeps
 * `ctx.injection` only when the revision's settings are the injection's). Injection is pure, so a render would
 * give it again (issue #37: the inject-time check uninjects every injected workload, and so rendered each one
 * twice). Undefined otherwise.
 */
function sameInjection(probe: PodTemplate, ctx: UninjectContext): PodTemplate | undefined {
  const made = ctx.injection;
  if (!made) return undefined;
  const req = made.request;
  const same =
    req.config === ctx.config &&
    req.workload === ctx.workload &&
    req.namespace === ctx.namespace &&
    jsonEqual(probe.spec, req.pod.spec) &&
    sameMetadata(probe.metadata, req.pod.metadata);
  return same ? made.pod : undefined;
}

/**
 * `jsonEqual(metadataOf(a), metadataOf(b))` of two pod templates' metadata, without building either ({@link metadataOf}:
 * the record's annotation and an empty labels or annotations map left out; keys in any order): the same question,
 * answered key by key (issue #40: the two copies were a fifth of the reuse's test). Exported for its property test
 * (test/core/record-check-shortcuts.test.ts, which holds it to `metadataOf`).
 */
export function sameMetadata(a: PodTemplate['metadata'], b: PodTemplate['metadata']): boolean {
  let n = 0;
  for (const k of Object.keys(a)) {
    const v = a[k];
    if (!readByInjection(k, v)) continue;
    n++;
    const w = Object.hasOwn(b, k) ? b[k] : undefined;
    if (!readByInjection(k, w)) return false;
    const same = k === 'annotations' ? sameWithoutRecord(v, w) : jsonEqual(v, w);
    if (!same) return false;
  }
  let m = 0;
  for (const k of Object.keys(b)) if (readByInjection(k, b[k])) m++;
  return n === m;
}

/** Whether {@link metadataOf} keeps metadata field `k` holding `v`. */
function readByInjection(k: string, v: Json | undefined): boolean {
  if (v === undefined) return false;
  if ((k !== 'labels' && k !== 'annotations') || !isJsonObject(v)) return true;
  for (const key of Object.keys(v)) if (k === 'labels' || key !== ORIGINAL_ANNOTATION) return true;
  return false;
}

/** `jsonEqual` of two annotation values as {@link metadataOf} leaves them: maps without the record's annotation. */
function sameWithoutRecord(v: Json | undefined, w: Json | undefined): boolean {
  if (!isJsonObject(v) || !isJsonObject(w)) return jsonEqual(v, w);
  let n = 0;
  for (const k of Object.keys(v)) {
    if (k === ORIGINAL_ANNOTATION) continue;
    n++;
    if (!Object.hasOwn(w, k) || !jsonEqual(v[k], w[k])) return false;
  }
  let m = 0;
  for (const k of Object.keys(w)) if (k !== ORIGINAL_ANNOTATION) m++;
  return n === m;
}

/**
 * A pod template's metadata as JSON as injection reads it: without meshinject's own record
 * ({@link ORIGINAL_ANNOTATION}, which the check adds before it uninjects and no Istio template reads), and a labels or
 * annotations map that is empty left out. `{field: value}`, a new object (its maps are `pod`'s but the annotations').
 */
export function metadataOf(pod: PodTemplate): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(pod.metadata)) {
    let value = v;
    if (k === 'annotations' && isJsonObject(v) && Object.hasOwn(v, ORIGINAL_ANNOTATION)) {
      // A loop, not `{ [ORIGINAL_ANNOTATION]: _, ...rest }`: a rest with a computed key takes a slow path (#40).
      const rest: JsonObject = {};
      for (const key of Object.keys(v)) if (key !== ORIGINAL_ANNOTATION) setOwn(rest, key, v[key] as Json);
      value = rest;
    }
    const empty = (k === 'labels' || k === 'annotations') && isJsonObject(value) && Object.keys(value).length === 0;
    if (value !== undefined && !empty) setOwn(out, k, value);
  }
  return out;
}
