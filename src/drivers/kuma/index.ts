/**
 * The Kuma driver (kumahq/kuma, the CNCF service mesh): injects as kuma-cp's sidecar injector webhook does
 * (pkg/plugins/runtime/k8s/webhooks/injector at 348b6528), offline. The folder, part by part:
 * - `./config.schema.json`, `./config.ts`, `./defaults.ts`: the section `spec.kuma` and how it is read (the
 *   kuma-cp configuration document over kuma-cp's defaults, plus what the webhook reads from the cluster);
 * - `./decide.ts`: the decision (`kuma.io/sidecar-injection` label on the pod, else its namespace; the kit's
 *   `decidePodThenNamespace`), `./reasons.ts` its reason codes (`KUMA_REASONS`);
 * - `./inject.ts`: the precheck (Mesh exists, no container with the sidecar's UID) and the injection, built
 *   from `./containers.ts` (kuma-sidecar, kuma-init, kuma-validation), `./tproxy.ts` (the transparent proxy
 *   config annotation), `./probes.ts` (virtual probes) and `./patches.ts` (ContainerPatch);
 * - `./input.ts`: the cluster's ConfigMaps (kuma-cp's configuration, the transparent proxy's) found in the input;
 * - `./inventory.ts`, `./uninject.ts`: what an injection left, read from Kuma's markers, and how it is undone.
 */
import { defineDriver, type DriverHelp, type DriverTraits, type MeshDriver } from '../../contract/driver.ts';
import { loadKumaConfig, type KumaSettings } from './config.ts';
import { decideKuma } from './decide.ts';
import { KUMA_REASON_INFO, KUMA_REASONS } from './reasons.ts';
import { injectKuma } from './inject.ts';
import { withKumaConfigMaps } from './input.ts';
import { kumaInventory } from './inventory.ts';
import { uninjectKuma } from './uninject.ts';

export type { KumaSettings } from './config.ts';
export { KUMA_REASON_INFO, KUMA_REASONS } from './reasons.ts';

/**
 * The driver's traits (`MeshDriver.traits`): the defaults but one. Kuma's webhook mutates Pods, so the driver
 * reads and writes the pod template's own metadata for every kind; a `hostNetwork` pod gets the shared skip; the
 * namespace's `kuma.io/sidecar-injection` label is the decision's fallback, in place of the policy. The policy
 * defaults to disabled: Kuma injects nothing unasked.
 */
export const KUMA_TRAITS: DriverTraits<KumaSettings> = {
  sharedDefaults: { policy: 'disabled' },
  // kuma-cp's injector settings (the sidecar's image, its resources) and the patches on the injected containers.
  platformFields: ['controlPlaneConfig', 'containerPatches'],
};

/** Kuma's lines for `meshinject --help`: its config section and its opt-in key. Kuma adds no CLI flags. */
export const KUMA_HELP: DriverHelp = {
  config:
    'kuma: {controlPlaneConfig: "...", controlPlane: {url, caCert}, meshes: {default: {}}}   # kuma-cp config pasted as is',
  optIn: 'Kuma kuma.io/sidecar-injection (label)',
};

/** The `kuma` mesh driver: its reasons with their descriptions and opt-outs (`KUMA_REASON_INFO`), default traits. */
export const kumaDriver: MeshDriver<KumaSettings> = defineDriver<KumaSettings>({
  name: 'kuma',
  reasons: KUMA_REASONS,
  reasonInfo: KUMA_REASON_INFO,
  traits: KUMA_TRAITS,
  help: KUMA_HELP,
  loadConfig: loadKumaConfig,
  fromInput: withKumaConfigMaps,
  decide: decideKuma,
  inject: injectKuma,
  inventory: kumaInventory,
  uninject: uninjectKuma,
});
