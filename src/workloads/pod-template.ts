import type { Json, JsonObject, PodMeta, PodTemplate } from '../model.ts';
import type { WorkloadKind } from './kinds.ts';

function getIn(value: Json, path: readonly string[]): Json | undefined {
  let cur: Json | undefined = value;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Where a kind keeps the pod metadata and pod spec. */
export function podPaths(wk: WorkloadKind): { meta: readonly string[]; spec: readonly string[] } {
  return {
    meta: wk.metaPath ?? [...wk.templatePath, 'metadata'],
    spec: [...wk.templatePath, 'spec'],
  };
}

/** A problem reading the pod template: the KRM field path and what is wrong. */
export interface PodTemplateProblem {
  field: string;
  message: string;
}

/**
 * Reads the pod template of a workload (the one accessor of the kinds table). Returns a deep copy, or a
 * problem naming the field when the template or its spec is missing or not a mapping (Istio:
 * `spec.template is required value`).
 */
export function getPodTemplate(resource: Json, wk: WorkloadKind): PodTemplate | PodTemplateProblem {
  const paths = podPaths(wk);
  const spec = getIn(resource, paths.spec);
  if (!isObject(spec)) {
    return { field: paths.spec.join('.'), message: `${paths.spec.join('.')} is required and must be a mapping` };
  }
  const meta = getIn(resource, paths.meta);
  if (meta !== undefined && meta !== null && !isObject(meta)) {
    return { field: paths.meta.join('.'), message: `${paths.meta.join('.')} must be a mapping` };
  }
  return structuredClone({ metadata: (meta ?? {}) as PodMeta, spec });
}

/** Whether a value returned by `getPodTemplate` is a problem. */
export function isProblem(v: PodTemplate | PodTemplateProblem): v is PodTemplateProblem {
  return 'message' in v;
}

function setIn(root: Json, path: readonly string[], value: Json): Json {
  if (path.length === 0) return value;
  const base: JsonObject = isObject(root) ? { ...root } : {};
  base[path[0]!] = setIn(base[path[0]!] ?? null, path.slice(1), value);
  return base;
}

/**
 * The resource with its pod template replaced (a new value; the input is not mutated). An empty pod
 * metadata that was absent in the input stays absent.
 */
export function withPodTemplate(resource: Json, wk: WorkloadKind, pod: PodTemplate): Json {
  const paths = podPaths(wk);
  let out = resource;
  if (getIn(resource, paths.meta) !== undefined || Object.keys(pod.metadata).length > 0) out = setIn(out, paths.meta, pod.metadata as Json);
  return setIn(out, paths.spec, pod.spec);
}

/** The resource with `metadata.annotations[key] = value` (a new value; the input is not mutated). */
export function withAnnotation(resource: Json, key: string, value: string): Json {
  const annotations = getIn(resource, ['metadata', 'annotations']);
  return setIn(resource, ['metadata', 'annotations'], { ...(isObject(annotations) ? annotations : {}), [key]: value });
}
