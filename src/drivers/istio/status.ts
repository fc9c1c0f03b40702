/**
 * The `sidecar.istio.io/status` annotation: what an injection added, used to strip it on re-injection.
 * Istio `getInjectionStatus`, `injectionStatus`, `parseStatus` (pkg/kube/inject/webhook.go, inject.go).
 */
import type { JsonObject } from '../../model.ts';
import { containersOf, isObject } from './pod-util.ts';

/** Annotation recording a previous injection. */
export const STATUS_ANNOTATION = 'sidecar.istio.io/status';

/** Names recorded by a previous injection (empty lists when the status has none). */
export interface InjectionStatus {
  initContainers: string[];
  containers: string[];
  volumes: string[];
  imagePullSecrets: string[];
  revision: string;
}

function names(list: unknown): string[] | null {
  if (!Array.isArray(list)) return null;
  const out = list.filter(isObject).map((x) => (typeof x.name === 'string' ? x.name : ''));
  return out.length > 0 ? out : null;
}

/**
 * The status annotation value for the rendered template pod `templateSpec` (all selected templates merged
 * into an empty pod), exactly as Go's `json.Marshal(SidecarInjectionStatus)` writes it: fields
 * initContainers, containers, volumes, imagePullSecrets (each `null` when empty), revision (`default` when
 * `revision` is empty). Example: `{"initContainers":["istio-init"],"containers":["istio-proxy"],...,"revision":"default"}`.
 */
export function injectionStatusValue(templateSpec: JsonObject, revision: string): string {
  return JSON.stringify({
    initContainers: names(containersOf(templateSpec, 'initContainers')),
    containers: names(containersOf(templateSpec, 'containers')),
    volumes: names(templateSpec.volumes),
    imagePullSecrets: names(templateSpec.imagePullSecrets),
    revision: revision === '' ? 'default' : revision,
  });
}

function stringList(v: unknown): string[] | undefined {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return undefined;
  return v as string[];
}

/**
 * Parses a status annotation value; `undefined` when absent or not valid status JSON (Go's `json.Unmarshal`
 * into `SidecarInjectionStatus` failing, which Istio treats as "not injected").
 */
export function parseInjectionStatus(value: string | undefined): InjectionStatus | undefined {
  if (value === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!isObject(v as JsonObject)) return undefined;
  const o = v as Record<string, unknown>;
  const initContainers = stringList(o.initContainers);
  const containers = stringList(o.containers);
  const volumes = stringList(o.volumes);
  const imagePullSecrets = stringList(o.imagePullSecrets);
  if (!initContainers || !containers || !volumes || !imagePullSecrets) return undefined;
  if (o.revision !== undefined && typeof o.revision !== 'string') return undefined;
  return { initContainers, containers, volumes, imagePullSecrets, revision: (o.revision as string | undefined) ?? '' };
}
