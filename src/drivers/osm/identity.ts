/**
 * Offline proxy identity. OSM's webhook mints a random proxy UUID per pod (`uuid.New()`), labels the pod
 * with it, issues a bootstrap certificate with CN `<uuid>.sidecar.<service account>.<namespace>` and stores
 * the bootstrap config in the Secret `<prefix><uuid>` (pkg/injector/patch.go). None of that can be done
 * offline: meshinject derives a stable UUID per workload and leaves the Secret to the cluster.
 */
import { v5 as uuidv5 } from 'uuid';
import type { WorkloadRef } from '../driver.ts';

/**
 * The proxy UUID of a workload: a name-based (version 5, SHA-1) UUID in the RFC 4122 URL namespace of
 * `meshinject.dev/<mesh>/<meshName>/<namespace>/<kind>/<name>`. Stable across runs and machines; reads no
 * time or randomness. Every replica of the workload shares it.
 * @param name the workload's name (a Pod's `generateName` when it has no name)
 */
export function proxyUuid(mesh: string, meshName: string, workload: WorkloadRef, name: string): string {
  return uuidv5(`meshinject.dev/${mesh}/${meshName}/${workload.namespace}/${workload.kind}/${name}`, uuidv5.URL);
}

/**
 * The service account a pod runs as when the webhook sees it: `spec.serviceAccountName`, else the
 * deprecated `spec.serviceAccount`, else `default` (the ServiceAccount admission plugin fills it in before
 * mutating webhooks run).
 */
export function serviceAccountOf(spec: Record<string, unknown>): string {
  const name = spec.serviceAccountName ?? spec.serviceAccount;
  return typeof name === 'string' && name !== '' ? name : 'default';
}
