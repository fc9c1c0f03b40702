/**
 * Final container order of an injected pod. Istio `reorderPod` (pkg/kube/inject/webhook.go; §7 of
 * istio-injection.md).
 */
import type { JsonObject } from '../../model.ts';
import {
  containersOf,
  ENABLE_CORE_DUMP_CONTAINER,
  INIT_CONTAINER,
  modifyContainers,
  PROXY_CONTAINER,
  setContainers,
  VALIDATION_CONTAINER,
} from './pod-fields.ts';

/** Annotation naming init containers that must start before a native-sidecar proxy (comma list). */
export const INIT_CONTAINERS_BEFORE_PROXY = 'sidecar.istio.io/init-containers-before-proxy';

/**
 * Istio `reorderPod`, in place:
 * - `containers`: `istio-proxy` last, or first when `holdApplication` (holdApplicationUntilProxyStarts from the
 *   pod's effective ProxyConfig or `values.global.proxy`);
 * - native sidecars (`istio-proxy` among init containers): `istio-init`, `istio-validation`, the containers named
 *   in `sidecar.istio.io/init-containers-before-proxy`, `istio-proxy`, `enable-core-dump`, then the rest;
 * - otherwise: `istio-validation` first, then the user's init containers, `istio-init`, `enable-core-dump` last.
 */
export function reorderPod(spec: JsonObject, annotations: Record<string, string>, holdApplication: boolean): void {
  const containers = containersOf(spec, 'containers');
  if (containers.length > 0) {
    setContainers(
      spec,
      'containers',
      modifyContainers(containers, PROXY_CONTAINER, holdApplication ? 'first' : 'last'),
    );
  }
  let init = containersOf(spec, 'initContainers');
  if (init.length === 0) return;
  if (init.some((c) => c.name === PROXY_CONTAINER)) {
    const before: string[] = [];
    for (const n of (annotations[INIT_CONTAINERS_BEFORE_PROXY] ?? '').split(',')) {
      if (n !== '' && !before.includes(n)) before.push(n);
    }
    init = modifyContainers(init, ENABLE_CORE_DUMP_CONTAINER, 'first');
    init = modifyContainers(init, PROXY_CONTAINER, 'first');
    for (const name of [...before].reverse()) init = modifyContainers(init, name, 'first');
    init = modifyContainers(init, VALIDATION_CONTAINER, 'first');
    init = modifyContainers(init, INIT_CONTAINER, 'first');
  } else {
    init = modifyContainers(init, VALIDATION_CONTAINER, 'first');
    init = modifyContainers(init, INIT_CONTAINER, 'last');
    init = modifyContainers(init, ENABLE_CORE_DUMP_CONTAINER, 'last');
  }
  spec.initContainers = init;
}
