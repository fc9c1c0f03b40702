import type { Document } from 'yaml';
import type { Json, JsonObject, PodMeta, PodTemplate } from '../model.ts';
import { syncIn } from '../yaml/sync.ts';
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

/**
 * Writes a pod template back into the resource Document with the smallest edit (see `syncIn`).
 * An empty metadata that was absent in the source stays absent. Returns whether anything changed.
 */
export function setPodTemplate(doc: Document, resource: Json, wk: WorkloadKind, pod: PodTemplate): boolean {
  const paths = podPaths(wk);
  let changed = false;
  const hadMeta = getIn(resource, paths.meta) !== undefined;
  if (hadMeta || Object.keys(pod.metadata).length > 0) changed = syncIn(doc, paths.meta, pod.metadata as Json) || changed;
  changed = syncIn(doc, paths.spec, pod.spec) || changed;
  return changed;
}
