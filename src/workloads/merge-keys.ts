/**
 * The one table of strategic-merge keys: for each list field of a pod template (and of the object
 * metadata around it), the field that identifies an entry of the list. These are the `patchMergeKey`
 * struct tags of k8s.io/api `core/v1/types.go` and `meta/v1/types.go` (with `patchStrategy:"merge"`), as
 * `kubectl patch --type strategic` and Istio's injector (`StrategicMergePatch` of the rendered template)
 * apply them.
 *
 * Two users read it:
 * - the strategic merge (`src/patch/strategic-merge.ts`), which merges list entries with the same key;
 * - the text editors (`src/edit/text-edit.ts`, `flow-edit.ts`, `document-edit.ts`) and the read-back
 *   check (`src/edit/read-back.ts`), which match an old list entry with its new version by the same key, so that the
 *   text of an entry is kept where the merge kept the entry.
 *
 * A list field that is not here has no merge key: Kubernetes replaces it whole (`tolerations`, `args`,
 * `command`, `envFrom`, `readinessGates`, `hostIPs`...).
 */
export const MERGE_KEYS = Object.freeze({
  // corev1.PodSpec
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  schedulingGates: 'name',
  resourceClaims: 'name',
  // corev1.Container
  ports: 'containerPort',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  // metav1.ObjectMeta
  ownerReferences: 'uid',
});

/** `MERGE_KEYS` looked up by a field name read from input (a name not in the table reads undefined). */
const BY_FIELD: Readonly<Record<string, string>> = MERGE_KEYS;

/**
 * The merge key of a list field (`volumeMounts` → `mountPath`), or undefined for a field Kubernetes
 * replaces whole or that is not a field of a pod template (`MERGE_KEYS`). Own properties only: a field
 * named `constructor` or `__proto__` has none.
 */
export function mergeKeyOf(field: string | undefined): string | undefined {
  return field !== undefined && Object.hasOwn(MERGE_KEYS, field) ? BY_FIELD[field] : undefined;
}
