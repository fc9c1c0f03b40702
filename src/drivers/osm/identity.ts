/**
 * Offline proxy identity. OSM's webhook mints a random proxy UUID per pod (`uuid.New()`), labels the pod
 * with it, issues a bootstrap certificate with CN `<uuid>.sidecar.<service account>.<namespace>` and stores
 * the bootstrap config in the Secret `<prefix><uuid>` (pkg/injector/patch.go). None of that can be done
 * offline: meshinject derives a stable UUID per workload and leaves the Secret to the cluster.
 */
import { sha1 } from '@noble/hashes/legacy.js';
import type { WorkloadRef } from '../../contract/driver.ts';

/** RFC 4122 URL namespace `6ba7b811-9dad-11d1-80b4-00c04fd430c8`, as bytes. */
const URL_NAMESPACE = Uint8Array.from([
  0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
]);

/**
 * A name-based version-5 UUID (RFC 4122 §4.3, RFC 9562 §5.5): SHA-1 of the namespace bytes and the UTF-8
 * name, truncated to 16 bytes, version 5 and variant `10`. SHA-1 comes from `@noble/hashes` (pure JS): the
 * `uuid` package's Node build loads `node:crypto`, which costs every run ~15 ms of start-up.
 */
function uuidV5(name: string, namespace: Uint8Array): string {
  const nameBytes = new TextEncoder().encode(name);
  const input = new Uint8Array(namespace.length + nameBytes.length);
  input.set(namespace);
  input.set(nameBytes, namespace.length);
  const h = sha1(input).slice(0, 16);
  // The version (5) and variant bits of RFC 4122; a SHA-1 digest has 20 bytes, so both exist.
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(h, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The proxy UUID of a workload: the version-5 UUID, in the RFC 4122 URL namespace, of
 * `meshinject.dev/<mesh>/<meshName>/<namespace>/<kind>/<name>`. Stable across runs and machines; reads no
 * time or randomness. Every replica of the workload shares it.
 * @param name the workload's name (a Pod's `generateName` when it has no name)
 */
export function proxyUuid(mesh: string, meshName: string, workload: WorkloadRef, name: string): string {
  return uuidV5(`meshinject.dev/${mesh}/${meshName}/${workload.namespace}/${workload.kind}/${name}`, URL_NAMESPACE);
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
