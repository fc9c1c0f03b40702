/**
 * The Linkerd driver: decides with Linkerd's `linkerd.io/inject` annotation on the pod template or its
 * namespace (`./decide.ts`, the kit's pod → namespace skeleton; reason codes in `./reasons.ts`), injects like
 * `linkerd inject` (annotations only) or `linkerd inject --manual` (the proxy, its init container and volumes;
 * `./inject.ts`, `./containers.ts`), annotates Namespace and Service objects as the CLI does (`./objects.ts`),
 * reads back what Linkerd put into a pod from Linkerd's own markers (`./inventory.ts`) and undoes it
 * (`./uninject.ts`). Config section `spec.linkerd` (`./config.ts`, `./config.schema.json`).
 */
import { defineDriver, type MeshDriver } from '../../contract/driver.ts';
import { linkerdNativeSidecarsAuto, loadLinkerdConfig, type LinkerdSettings } from './config.ts';
import { decideLinkerd } from './decide.ts';
import { LINKERD_REASON_INFO, LINKERD_REASONS } from './reasons.ts';
import { injectLinkerdPod } from './inject.ts';
import { linkerdInventory } from './inventory.ts';
import { annotateLinkerdResource, linkerdResourceInventory } from './objects.ts';
import { recordedLinkerdKey, uninjectLinkerd } from './uninject.ts';

export type { LinkerdSettings } from './config.ts';
export { LINKERD_REASON_INFO, LINKERD_REASONS } from './reasons.ts';

/**
 * The `linkerd` mesh driver. `inject` throws `InjectError` for Linkerd's refusals (host network, another
 * sidecar, no service account token, a control-plane component without `manual`); a kind `linkerd inject` does
 * not handle is skipped by the decision (`unsupported-kind`) and passes through unchanged, as the CLI does.
 * Uninject is the generic removal of the inventory plus `./uninject.ts` (the override annotations this
 * configuration writes).
 */
export const linkerdDriver: MeshDriver<LinkerdSettings> = defineDriver<LinkerdSettings>({
  name: 'linkerd',
  reasons: LINKERD_REASONS,
  reasonInfo: LINKERD_REASON_INFO,
  traits: {
    hostNetwork: 'driver', // Linkerd refuses host-network pods with an error (./inject.ts)
    // The namespace's linkerd.io/inject is the decision's fallback, in place of the policy (the default trait).
    sharedDefaults: (settings) => ({ nativeSidecars: settings.values.proxy.nativeSidecar }), // chart default true
    platformFields: ['values'], // the chart values the proxy is rendered from (its image, its resources)
  },
  help: {
    config: 'linkerd: {manual: true, values: {...}}         # linkerd-control-plane chart values',
    optIn: 'Linkerd linkerd.io/inject',
    nativeSidecarsAuto: 'Linkerd: from 1.29',
  },
  loadConfig: loadLinkerdConfig,
  decide: decideLinkerd,
  inject(req) {
    const { pod, warnings } = injectLinkerdPod(req);
    return { pod, summary: summary(req.settings), warnings };
  },
  inventory: linkerdInventory,
  uninject: uninjectLinkerd,
  recordKeys: recordedLinkerdKey,
  annotateResource: annotateLinkerdResource,
  resourceInventory: linkerdResourceInventory,
  nativeSidecarsAuto: linkerdNativeSidecarsAuto,
});

/** `linkerd, manual, proxy edge-26.8.3` / `linkerd, annotations only`. */
function summary(s: LinkerdSettings): string {
  return s.manual
    ? `linkerd, manual, proxy ${s.values.proxy.image.version || s.values.linkerdVersion}`
    : 'linkerd, annotations only';
}
