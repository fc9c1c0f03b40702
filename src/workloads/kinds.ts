import type { ExtraWorkloadKind, PodTemplate } from '../model.ts';

/**
 * A workload kind and where its pod template (`PodTemplateSpec`: `metadata` + `spec`) lives. The table gives no
 * `metaPath`: a driver whose reading differs sets it (trait `podMetadataPath`, src/contract/driver.ts).
 */
export interface WorkloadKind {
  kind: string;
  /** `apiVersion` group prefixes this entry applies to; empty = any apiVersion (Istio matches by kind alone). */
  groups: readonly string[];
  /** Path of the pod template; `[]` means the object itself is the pod (kind Pod). */
  templatePath: readonly string[];
  /**
   * Where the pod template's labels and annotations are read and written, when not
   * `[...templatePath, 'metadata']`: set by the pipeline from the driver's `podMetadataPath` trait (Istio reads
   * and writes a CronJob's `spec.jobTemplate.metadata`, kube-inject `IntoObject`, pkg/kube/inject/inject.go).
   */
  metaPath?: readonly string[];
  /** True for a kind declared in `spec.workloadKinds` (not the built-in table). */
  declared?: boolean;
  /**
   * A field that, present without a pod template, makes the resource reference another workload's pod
   * template instead of holding one: such a resource is not a workload here and passes through unchanged
   * (Argo Rollouts `spec.workloadRef`: the referenced Deployment is injected on its own).
   */
  referencePath?: readonly string[];
  /**
   * True for kinds whose pods run to completion (Job, CronJob): a classic sidecar keeps such a pod running
   * after its containers exit, so it never completes (linkerd2#5188; the pipeline warns).
   */
  runsToCompletion?: boolean;
}

/**
 * The one table of workload kinds. Istio registers Pod, ReplicationController, Deployment, DaemonSet,
 * ReplicaSet, StatefulSet, Job, CronJob and DeploymentConfig by kind alone (`injectScheme`,
 * pkg/kube/inject/inject.go); meshinject adds Argo Rollout and PodTemplate. `kind: List` is handled by the
 * I/O layer (its items are resources of their own).
 */
export const WORKLOAD_KINDS: readonly WorkloadKind[] = [
  { kind: 'Pod', groups: [], templatePath: [] },
  { kind: 'Deployment', groups: [], templatePath: ['spec', 'template'] },
  { kind: 'StatefulSet', groups: [], templatePath: ['spec', 'template'] },
  { kind: 'DaemonSet', groups: [], templatePath: ['spec', 'template'] },
  { kind: 'ReplicaSet', groups: [], templatePath: ['spec', 'template'] },
  { kind: 'ReplicationController', groups: [], templatePath: ['spec', 'template'] },
  { kind: 'Job', groups: [], templatePath: ['spec', 'template'], runsToCompletion: true },
  { kind: 'CronJob', groups: [], templatePath: ['spec', 'jobTemplate', 'spec', 'template'], runsToCompletion: true },
  { kind: 'DeploymentConfig', groups: [], templatePath: ['spec', 'template'] },
  {
    kind: 'Rollout',
    groups: ['argoproj.io'],
    templatePath: ['spec', 'template'],
    referencePath: ['spec', 'workloadRef'],
  },
  { kind: 'PodTemplate', groups: [], templatePath: ['template'] },
];

/**
 * Why a workload's pods run to completion, or undefined when they run until stopped: the kind (Job, CronJob:
 * `runsToCompletion` in the table), else the pod template's `spec.restartPolicy` `Never` or `OnFailure` (a Pod
 * such as a Helm test hook, `helm.sh/hook: test`, which Helm waits on until it completes). A classic sidecar
 * keeps such a pod running after its containers exit (linkerd2#5188, #7425). Returns `{kind}` for a kind that
 * runs to completion, `{restartPolicy}` for a pod template that does.
 */
export function completionOf(
  wk: WorkloadKind,
  pod: PodTemplate,
): { kind: string } | { restartPolicy: string } | undefined {
  if (wk.runsToCompletion) return { kind: wk.kind };
  const policy = pod.spec.restartPolicy;
  return policy === 'Never' || policy === 'OnFailure' ? { restartPolicy: policy } : undefined;
}

/** The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → `''`). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * Finds the workload kind for a resource: first the kinds declared in config (`spec.workloadKinds`, which
 * may override a built-in path), then the built-in table. Returns undefined for non-workloads.
 */
export function lookupWorkloadKind(
  apiVersion: string,
  kind: string,
  extra: readonly ExtraWorkloadKind[] = [],
): WorkloadKind | undefined {
  for (const e of extra) {
    if (e.kind === kind && (e.apiVersion === undefined || e.apiVersion === apiVersion)) {
      return { kind, groups: [], templatePath: e.templatePath, declared: true };
    }
  }
  const group = groupOf(apiVersion);
  return WORKLOAD_KINDS.find((w) => w.kind === kind && (w.groups.length === 0 || w.groups.includes(group)));
}
