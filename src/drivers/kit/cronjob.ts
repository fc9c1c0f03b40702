/**
 * The CronJob trait of the driver kit: `istioctl kube-inject` reads and writes a built-in CronJob's labels and
 * annotations at `spec.jobTemplate.metadata`, not on the pod template (`IntoObject`, pkg/kube/inject/inject.go;
 * golden `cronjob.yaml.injected`). A driver that injects as that tool does takes these traits; the decision is
 * still made on the pod's own metadata (src/contract/driver.ts `DriverTraits.podMetadataPath`).
 */
import type { DriverTraits } from '../../contract/driver.ts';
import type { WorkloadKind } from '../../workloads/kinds.ts';

/** Where the tool reads and writes a built-in CronJob's pod metadata: `spec.jobTemplate.metadata`. */
export const CRONJOB_JOB_TEMPLATE_METADATA: readonly string[] = ['spec', 'jobTemplate', 'metadata'];

/**
 * `podMetadataPath` of a driver that reads a CronJob as `istioctl kube-inject` does:
 * `spec.jobTemplate.metadata` for the built-in CronJob; undefined (the pod template's own metadata) for every
 * other kind, a CronJob declared in `spec.workloadKinds` included.
 */
export function jobTemplatePodMetadata(kind: WorkloadKind): readonly string[] | undefined {
  return kind.kind === 'CronJob' && !kind.declared ? CRONJOB_JOB_TEMPLATE_METADATA : undefined;
}

/**
 * The CronJob trait as `DriverTraits` fields: `podMetadataPath` ({@link jobTemplatePodMetadata}) and the
 * decision note where that reading would decide otherwise (`<reader> reads <path> instead and would
 * inject|skip it: <detail>`).
 * @param reader who reads the CronJob that way, as the note names it (e.g. `istioctl kube-inject`)
 */
export function jobTemplateTraits(
  reader: string,
): Required<Pick<DriverTraits, 'podMetadataPath' | 'otherReadingNote'>> {
  return {
    podMetadataPath: jobTemplatePodMetadata,
    otherReadingNote: (path, wouldInject, detail) =>
      `${reader} reads ${path} instead and would ${wouldInject ? 'inject' : 'skip'} it: ${detail}`,
  };
}
