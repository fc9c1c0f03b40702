/**
 * The schemas the strategic merge (`strategic-merge.ts`) merges by: which fields are structs and which lists merge
 * by which key, for `corev1.Pod` and `corev1.PodTemplateSpec`. The merge keys come from the one table `MERGE_KEYS`
 * (`src/workloads/merge-keys.ts`: the `patchMergeKey` struct tags of `k8s.io/api`).
 */
import { MERGE_KEYS } from '../workloads/merge-keys.ts';

/** What the strategic merge knows about one field: a struct (fields), or a list (merge key, item schema). */
export interface PatchSchema {
  /** Sub-schemas of an object's fields. */
  fields?: Readonly<Record<string, PatchSchema>>;
  /** For a list: merge its elements by this key (patchStrategy `merge` + patchMergeKey). */
  mergeKey?: string;
  /** For a list of scalars: patchStrategy `merge` (union). */
  mergeScalars?: boolean;
  /** For a map field: patchStrategy `replace` (the patch map replaces the original). */
  replace?: boolean;
  /** Schema of a list's elements. */
  items?: PatchSchema;
}

/**
 * The schema of field `k` of an object of schema `schema`, or undefined when it names none. Own fields only: a data key
 * named like an `Object.prototype` member (`__proto__`, `constructor`) is a field the schema does not know.
 */
export function fieldSchema(schema: PatchSchema | undefined, k: string): PatchSchema | undefined {
  const fields = schema?.fields;
  return fields !== undefined && Object.hasOwn(fields, k) ? fields[k] : undefined;
}

const CONTAINER: PatchSchema = {
  fields: {
    ports: { mergeKey: MERGE_KEYS.ports },
    env: { mergeKey: MERGE_KEYS.env },
    volumeMounts: { mergeKey: MERGE_KEYS.volumeMounts },
    volumeDevices: { mergeKey: MERGE_KEYS.volumeDevices },
  },
};

/** `corev1.PodSpec` merge keys. */
export const POD_SPEC_SCHEMA: PatchSchema = {
  fields: {
    volumes: { mergeKey: MERGE_KEYS.volumes },
    initContainers: { mergeKey: MERGE_KEYS.initContainers, items: CONTAINER },
    containers: { mergeKey: MERGE_KEYS.containers, items: CONTAINER },
    ephemeralContainers: { mergeKey: MERGE_KEYS.ephemeralContainers, items: CONTAINER },
    imagePullSecrets: { mergeKey: MERGE_KEYS.imagePullSecrets },
    hostAliases: { mergeKey: MERGE_KEYS.hostAliases },
    topologySpreadConstraints: { mergeKey: MERGE_KEYS.topologySpreadConstraints },
    schedulingGates: { mergeKey: MERGE_KEYS.schedulingGates },
    resourceClaims: { mergeKey: MERGE_KEYS.resourceClaims },
  },
};

/** `metav1.ObjectMeta` merge keys. */
export const OBJECT_META_SCHEMA: PatchSchema = {
  fields: {
    ownerReferences: { mergeKey: MERGE_KEYS.ownerReferences },
    finalizers: { mergeScalars: true },
  },
};

/** Schema of a `corev1.Pod` or a `corev1.PodTemplateSpec` (`metadata` + `spec`). */
export const POD_SCHEMA: PatchSchema = {
  fields: { metadata: OBJECT_META_SCHEMA, spec: POD_SPEC_SCHEMA },
};

/** Schema that knows no field: every list is replaced, every map merged (JSON-merge-like with directives). */
export const EMPTY_SCHEMA: PatchSchema = {};
