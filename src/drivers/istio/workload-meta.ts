import type { Json, PodTemplate } from '../../model.ts';
import type { WorkloadRef } from '../driver.ts';
import { isJsonObject } from '../../json.ts';

/** Istio `DeploymentMeta`: the owning workload's name and namespace. */
export interface DeployMeta {
  Name: string;
  Namespace: string;
}

/** Istio `TypeMeta` of the owning workload (for `ISTIO_META_OWNER`). */
export interface TypeMeta {
  APIVersion: string;
  Kind: string;
}

const CRONJOB_JOB_NAME = /^(.+)-\d{8,10}$/;

function text(v: Json | undefined): string {
  return typeof v === 'string' ? v : '';
}

/**
 * Istio `kube.GetDeployMetaFromPod` (pkg/kube/util.go) for a bare Pod: the pod's name and `v1/Pod`,
 * unless `generateName` is set and a `controller: true` owner reference exists; then the owner, with
 * the heuristics ReplicaSet `<name>-<pod-template-hash>` → Deployment `<name>`, ReplicaSet with
 * `rollouts-pod-template-hash` → Rollout (`v1alpha1`), ReplicationController with a `deploymentconfig`
 * label → DeploymentConfig (`v1`), Job `<name>-<8..10 digits>` → CronJob `<name>` (`batch/v1`).
 */
export function podDeployMeta(pod: PodTemplate, namespace: string): { deployMeta: DeployMeta; typeMeta: TypeMeta } {
  const meta = pod.metadata;
  const labels = meta.labels ?? {};
  const deployMeta: DeployMeta = { Name: text(meta.name), Namespace: namespace };
  const typeMeta: TypeMeta = { APIVersion: 'v1', Kind: 'Pod' };
  const controller =
    text(meta.generateName) !== ''
      ? (meta.ownerReferences ?? []).find((r) => isJsonObject(r) && r.controller === true)
      : undefined;
  if (controller) {
    const ownerName = text(controller.name);
    typeMeta.APIVersion = text(controller.apiVersion);
    typeMeta.Kind = text(controller.kind);
    deployMeta.Name = ownerName;
    const hash = labels['pod-template-hash'] ?? '';
    const rolloutHash = labels['rollouts-pod-template-hash'] ?? '';
    if (typeMeta.Kind === 'ReplicaSet' && hash !== '' && ownerName.endsWith(hash)) {
      deployMeta.Name = ownerName.endsWith(`-${hash}`) ? ownerName.slice(0, -hash.length - 1) : ownerName;
      typeMeta.Kind = 'Deployment';
    } else if (typeMeta.Kind === 'ReplicaSet' && rolloutHash !== '' && ownerName.endsWith(rolloutHash)) {
      deployMeta.Name = ownerName.endsWith(`-${rolloutHash}`) ? ownerName.slice(0, -rolloutHash.length - 1) : ownerName;
      typeMeta.Kind = 'Rollout';
      typeMeta.APIVersion = 'v1alpha1';
    } else if (typeMeta.Kind === 'ReplicationController' && (labels.deploymentconfig ?? '') !== '') {
      deployMeta.Name = labels.deploymentconfig ?? '';
      typeMeta.Kind = 'DeploymentConfig';
      typeMeta.APIVersion = 'v1';
    } else if (typeMeta.Kind === 'Job') {
      const m = CRONJOB_JOB_NAME.exec(ownerName);
      if (m) {
        deployMeta.Name = m[1] ?? ownerName;
        typeMeta.Kind = 'CronJob';
        typeMeta.APIVersion = 'batch/v1';
      }
    }
  }
  if (deployMeta.Name === '') deployMeta.Name = text(meta.name);
  return { deployMeta, typeMeta };
}

/**
 * DeploymentMeta and TypeMeta of a pod template's workload, as kube-inject computes them: for kind
 * `Pod`, {@link podDeployMeta}; for any other kind, the workload object's own name, namespace,
 * apiVersion and kind (pkg/kube/inject/inject.go `IntoObject`).
 */
export function deployMetaOf(pod: PodTemplate, workload: WorkloadRef): { deployMeta: DeployMeta; typeMeta: TypeMeta } {
  if (workload.kind === 'Pod') return podDeployMeta(pod, workload.namespace);
  return {
    deployMeta: { Name: workload.name, Namespace: workload.namespace },
    typeMeta: { APIVersion: workload.apiVersion, Kind: workload.kind },
  };
}

/** `ISTIO_META_OWNER`: `kubernetes://apis/<apiVersion>/namespaces/<ns|default>/<lower(kind)>s/<name>`. */
export function ownerUri(typeMeta: TypeMeta, deployMeta: DeployMeta): string {
  const ns = deployMeta.Namespace || 'default';
  return `kubernetes://apis/${typeMeta.APIVersion}/namespaces/${ns}/${typeMeta.Kind.toLowerCase()}s/${deployMeta.Name}`;
}
