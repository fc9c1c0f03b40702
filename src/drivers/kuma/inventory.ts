/**
 * What a Kuma injection left in a pod template, read from Kuma's own markers (Kuma keeps no record of what it
 * added; its webhook spots its injection by the kuma-sidecar container, `needToInject`): the containers
 * (`kuma-sidecar`, `kuma-init`, `kuma-validation`), the volumes Kuma creates, and the annotations only an
 * injection writes. Annotations and the label whose value may be the user's own are left to `./uninject.ts`,
 * which compares them with what the injection would have written.
 */
import { isJsonObject } from '../../json.ts';
import type { JsonObject, PodTemplate } from '../../model.ts';
import type { Inventory } from '../../contract/driver.ts';
import {
  CNCF_NETWORKS,
  INIT_CONTAINER,
  KUMA_CNI,
  SIDECAR_CONTAINER,
  SIDECAR_INJECTED,
  TP_CONFIG,
  VALIDATION_CONTAINER,
  VOLUME_INIT_TMP,
  VOLUME_SIDECAR_TMP,
  VOLUME_SPIRE,
  VOLUME_TP_BASE,
  VOLUME_TP_CUSTOM,
} from './annotations.ts';

/** The names Kuma's injection gives the containers, init containers and volumes it adds. */
export const KUMA_NAMES = {
  containers: [SIDECAR_CONTAINER],
  initContainers: [INIT_CONTAINER, VALIDATION_CONTAINER, SIDECAR_CONTAINER],
  volumes: [VOLUME_INIT_TMP, VOLUME_SIDECAR_TMP, VOLUME_SPIRE, VOLUME_TP_BASE, VOLUME_TP_CUSTOM],
} as const;
const INIT_CONTAINERS: readonly string[] = KUMA_NAMES.initContainers;
const VOLUMES: readonly string[] = KUMA_NAMES.volumes;

function names(spec: JsonObject, field: string): string[] {
  const v = spec[field];
  return (Array.isArray(v) ? v.filter(isJsonObject) : [])
    .map((c) => c.name)
    .filter((n): n is string => typeof n === 'string');
}

/**
 * The Kuma driver's `inventory`: undefined when the pod template lacks `kuma.io/sidecar-injected`, the mark
 * every Kuma injection writes (a `kuma-sidecar` without it is the user's own, or added by hand: injecting refuses
 * it, src/drivers/kit/taken-names.ts, rather than taking it for Kuma's); else what the generic removal takes away.
 * `statusAnnotation` is `kuma.io/sidecar-injected`.
 */
export function kumaInventory(pod: PodTemplate): Inventory | undefined {
  const annotations = pod.metadata.annotations ?? {};
  const containers = names(pod.spec, 'containers').filter((n) => n === SIDECAR_CONTAINER);
  const initContainers = names(pod.spec, 'initContainers').filter((n) => INIT_CONTAINERS.includes(n));
  if (!Object.hasOwn(annotations, SIDECAR_INJECTED)) return undefined;
  return {
    statusAnnotation: SIDECAR_INJECTED,
    containers,
    initContainers,
    volumes: names(pod.spec, 'volumes').filter((n) => VOLUMES.includes(n)),
    imagePullSecrets: [],
    annotations: [TP_CONFIG, ...(annotations[CNCF_NETWORKS] === KUMA_CNI ? [CNCF_NETWORKS] : [])],
    labels: [],
  };
}
