/**
 * The Linkerd driver's `uninject` hook: after the generic removal of the inventory (Linkerd's containers,
 * volumes and `linkerd.io/*` keys, as `linkerd uninject` removes them: pkg/inject/uninject.go), removes the
 * `config.linkerd.io/*` override annotations that this configuration's injection writes: each key of
 * `spec.linkerd.overrideAnnotations`, and `config.linkerd.io/enable-debug-sidecar: "true"` with
 * `spec.linkerd.debugSidecar`, when the pod carries exactly the configured value. The injection writes such a
 * key only where the pod lacks it (./inject.ts), so re-injecting the result with this configuration writes it
 * again with the same value. `linkerd uninject` keeps every `config.*` annotation, as this hook does with a
 * configuration that writes none (the Linkerd uninject corpus).
 */
import type { PodTemplate } from '../../model.ts';
import type { Inventory, UninjectContext } from '../../contract/driver.ts';
import type { LinkerdSettings } from './config.ts';
import { A, INJECT_ANNOTATION, LINKERD_PREFIX } from './annotations.ts';

/** The annotations the injection with `settings` writes on a pod that lacks them (key → value). */
export function configuredAnnotations(settings: LinkerdSettings): Record<string, string> {
  return { ...settings.overrideAnnotations, ...(settings.debugSidecar ? { [A.enableDebugSidecar]: 'true' } : {}) };
}

/** See the module comment. Pure: returns a new pod when something is removed, else `pod` itself. */
export function uninjectLinkerd(
  pod: PodTemplate,
  _inv: Inventory,
  settings: LinkerdSettings,
  _ctx: UninjectContext,
): PodTemplate {
  const annotations = pod.metadata.annotations;
  if (!annotations) return pod;
  const drop = Object.entries(configuredAnnotations(settings))
    .filter(([k, v]) => annotations[k] === v)
    .map(([k]) => k);
  if (drop.length === 0) return pod;
  const kept = { ...annotations };
  for (const k of drop) delete kept[k];
  const { annotations: _, ...rest } = pod.metadata;
  return { ...pod, metadata: Object.keys(kept).length === 0 ? rest : { ...rest, annotations: kept } };
}

/**
 * The pod-template keys a Linkerd uninject removes and its injection may have found in place
 * (`MeshDriver.recordKeys`): `linkerd.io/*` labels and annotations other than the opt-in `linkerd.io/inject`,
 * and the annotations this configuration writes. The shared status record keeps the user's values of them.
 */
export function recordedLinkerdKey(kind: 'labels' | 'annotations', key: string, settings: LinkerdSettings): boolean {
  if (key.startsWith(LINKERD_PREFIX)) return key !== INJECT_ANNOTATION;
  return kind === 'annotations' && Object.hasOwn(configuredAnnotations(settings), key);
}
