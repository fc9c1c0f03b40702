/**
 * Uninject for Kuma: after the generic removal of the inventory (`./inventory.ts`), puts back the probes Kuma
 * rewrote to its probe proxy and removes the annotations and the label whose values the injection wrote when
 * they hold exactly what the injection would write without them: `kuma.io/application-probe-proxy-port`,
 * `kuma.io/envoy-admin-port`, `kubectl.kubernetes.io/default-container` and the `kuma.io/mesh` label. A
 * user's own value that differs is kept; one equal to the injection's is removed (the pod behaves the same
 * either way). A named probe port comes back as its number (Kuma resolves it and keeps no record).
 */
import { cloneJson, isJsonObject } from '../../json.ts';
import type { JsonObject, NamespaceInfo, PodTemplate } from '../../model.ts';
import { removeInventory } from '../../patch/uninject.ts';
import type { Inventory, UninjectContext } from '../../contract/driver.ts';
import { APP_PROBE_PROXY_PORT, DEFAULT_CONTAINER, ENVOY_ADMIN_PORT, GATEWAY, MESH_LABEL } from './annotations.ts';
import type { KumaSettings } from './config.ts';
import { restoreAppProbes } from './probes.ts';

function dropIf(
  meta: PodTemplate['metadata'],
  field: 'annotations' | 'labels',
  key: string,
  value: string | undefined,
): void {
  const map = meta[field];
  if (!map || value === undefined || map[key] !== value) return;
  const { [key]: _gone, ...rest } = map;
  void _gone;
  if (Object.keys(rest).length > 0) meta[field] = rest;
  else delete meta[field];
}

/** The probe proxy port value the injection writes for a pod with `annotations` and no port annotation of its own. */
function injectedProbePort(annotations: Record<string, string>, s: KumaSettings): string {
  return Object.hasOwn(annotations, GATEWAY) ? '0' : String(s.injector.applicationProbeProxyPort);
}

/**
 * The Kuma driver's `uninject` hook: `pod` is the pod after the generic removal, `injected` the pod as found.
 * Returns a new pod.
 */
export function restoreKumaPod(
  pod: PodTemplate,
  s: KumaSettings,
  injected: PodTemplate,
  namespace: NamespaceInfo | undefined,
): PodTemplate {
  const out = cloneJson(pod);
  const port = Number(injected.metadata.annotations?.[APP_PROBE_PROXY_PORT] ?? '0');
  if (Number.isInteger(port)) restoreAppProbes(out.spec, port);
  const annotations = out.metadata.annotations ?? {};
  dropIf(out.metadata, 'annotations', APP_PROBE_PROXY_PORT, injectedProbePort(annotations, s));
  dropIf(out.metadata, 'annotations', ENVOY_ADMIN_PORT, String(s.adminPort));
  const containers = Array.isArray(out.spec.containers) ? out.spec.containers.filter(isJsonObject) : [];
  if (containers.length === 1)
    dropIf(out.metadata, 'annotations', DEFAULT_CONTAINER, String((containers[0] as JsonObject).name));
  dropIf(out.metadata, 'labels', MESH_LABEL, namespace?.labels[MESH_LABEL] || 'default');
  return out;
}

/** Removes a previous Kuma injection from `pod` entirely (before re-injection): generic removal, then {@link restoreKumaPod}. */
export function removeKumaInjection(
  pod: PodTemplate,
  inventory: Inventory,
  s: KumaSettings,
  namespace: NamespaceInfo | undefined,
): PodTemplate {
  return restoreKumaPod(removeInventory(pod, inventory), s, pod, namespace);
}

/** The driver hook (`MeshDriver.uninject`). */
export function uninjectKuma(
  pod: PodTemplate,
  _inventory: Inventory,
  s: KumaSettings,
  context: UninjectContext,
): PodTemplate {
  return restoreKumaPod(pod, s, context.injected, context.namespace);
}
