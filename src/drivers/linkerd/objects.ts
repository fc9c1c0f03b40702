/**
 * What `linkerd inject` does to resources without a pod template (cli/cmd/inject.go `transform`,
 * pkg/inject/inject.go `AnnotateNamespace` / `AnnotateService`): a `Namespace` gets
 * `linkerd.io/inject: enabled` plus the override annotations; a `Service` gets the
 * `config.linkerd.io/opaque-ports` override, when one is configured. Everything else is left alone.
 */
import type { Config } from '../../model.ts';
import { matchesSelector } from '../../selection/label-selector.ts';
import type { ObjectAnnotation, ResourceMeta } from '../../contract/driver.ts';
import { A, INJECT_ANNOTATION } from './annotations.ts';
import type { LinkerdSettings } from './config.ts';
import { linkerdAnnotationKeys, linkerdLabelKeys } from './inventory.ts';

/**
 * The Linkerd driver's `annotateResource`. A Namespace is annotated only when the shared namespace rules
 * would consider its workloads (not in `ignoredNamespaces`, selected by `namespaceSelector`), when
 * `annotateNamespaces` is on, when `policy` is `enabled` (then the annotation changes no decision of this or a
 * later run: the namespace default equals the policy; under `policy: disabled` it would opt the whole
 * namespace in), and when it does not say `linkerd.io/inject: disabled` (which `linkerd inject` would
 * overwrite with `enabled`; meshinject keeps the user's opt-out). Existing keys are not overwritten.
 * @returns the annotations to add and a description for the result, or undefined to leave the resource alone
 */
export function annotateLinkerdResource(
  res: ResourceMeta,
  config: Config,
  settings: LinkerdSettings,
): ObjectAnnotation | undefined {
  const add = (wanted: Record<string, string>, summary: string): ObjectAnnotation | undefined => {
    const annotations: Record<string, string> = {};
    for (const [k, v] of Object.entries(wanted))
      if (!Object.hasOwn(res.annotations, k))
        Object.defineProperty(annotations, k, { value: v, enumerable: true, writable: true, configurable: true });
    return Object.keys(annotations).length > 0 ? { annotations, summary } : undefined;
  };
  if (res.kind === 'Namespace' && res.apiVersion === 'v1') {
    if (
      !settings.annotateNamespaces ||
      config.policy !== 'enabled' ||
      res.annotations[INJECT_ANNOTATION] === 'disabled'
    )
      return undefined;
    if (config.ignoredNamespaces.includes(res.name)) return undefined;
    if (
      config.namespaceSelector &&
      !matchesSelector(config.namespaceSelector, { ...res.labels, 'kubernetes.io/metadata.name': res.name })
    )
      return undefined;
    return add(
      { ...settings.overrideAnnotations, [INJECT_ANNOTATION]: res.annotations[INJECT_ANNOTATION] ?? 'enabled' },
      `${INJECT_ANNOTATION} for the workloads of namespace ${res.name}`,
    );
  }
  if (res.kind === 'Service' && res.apiVersion === 'v1') {
    const ports = settings.overrideAnnotations[A.opaquePorts];
    return ports === undefined ? undefined : add({ [A.opaquePorts]: ports }, `opaque ports ${ports}`);
  }
  return undefined;
}

/**
 * The Linkerd driver's `resourceInventory`: the `linkerd.io/*` annotations (except `linkerd.io/inject:
 * disabled`) and labels of a Namespace or Service, which `linkerd uninject` removes (`uninjectObjectMeta`,
 * pkg/inject/uninject.go); `config.linkerd.io/*` keys stay. Undefined for other kinds or when there are none.
 */
export function linkerdResourceInventory(res: ResourceMeta): { annotations: string[]; labels: string[] } | undefined {
  if (res.apiVersion !== 'v1' || (res.kind !== 'Namespace' && res.kind !== 'Service')) return undefined;
  const meta = { labels: res.labels, annotations: res.annotations };
  const inv = { annotations: linkerdAnnotationKeys(meta), labels: linkerdLabelKeys(meta) };
  return inv.annotations.length + inv.labels.length > 0 ? inv : undefined;
}
