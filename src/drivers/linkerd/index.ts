/**
 * The Linkerd driver: decides with Linkerd's `linkerd.io/inject` annotation on the pod template or its
 * namespace (`./decide.ts`), injects like `linkerd inject` (annotations only) or `linkerd inject --manual`
 * (the proxy, its init container and volumes; `./inject.ts`, `./containers.ts`), annotates Namespace and
 * Service objects as the CLI does (`./objects.ts`), and reads back what Linkerd put into a pod from Linkerd's
 * own markers (`./inventory.ts`). Config section `spec.linkerd` (`./config.ts`, `./config.schema.json`).
 */
import { defineDriver, type MeshDriver, type ReasonInfo } from '../../contract/driver.ts';
import { linkerdNativeSidecarsAuto, loadLinkerdConfig, type LinkerdSettings } from './config.ts';
import { decideLinkerd } from './decide.ts';
import { injectLinkerdPod } from './inject.ts';
import { linkerdInventory } from './inventory.ts';
import { annotateLinkerdResource, linkerdResourceInventory } from './objects.ts';
import { recordedLinkerdKey, uninjectLinkerd } from './uninject.ts';

export type { LinkerdSettings } from './config.ts';

/** The reasons of Linkerd's decision (`./decide.ts`): the `linkerd.io/inject` annotation of the pod or its namespace. */
export const LINKERD_REASONS: Readonly<Record<string, ReasonInfo>> = {
  'unsupported-kind': {
    description:
      'linkerd inject does not handle the workload kind (Argo Rollout, DeploymentConfig, ...) and passes it through unchanged',
  },
  'pod-annotation-enabled': { description: 'the pod annotation linkerd.io/inject is "enabled"' },
  'pod-annotation-ingress': {
    description: 'the pod annotation linkerd.io/inject is "ingress" (injected in ingress mode)',
  },
  'pod-annotation-disabled': { description: 'the pod annotation linkerd.io/inject is "disabled"', optOut: true },
  'namespace-annotation-enabled': { description: 'the namespace annotation linkerd.io/inject is "enabled"' },
  'namespace-annotation-ingress': {
    description: 'the namespace annotation linkerd.io/inject is "ingress" (injected in ingress mode)',
  },
  'namespace-annotation-disabled': {
    description: 'the namespace annotation linkerd.io/inject is "disabled"',
    optOut: true,
  },
};

/**
 * The `linkerd` mesh driver. `inject` throws `InjectError` for Linkerd's refusals (host network, another
 * sidecar, no service account token, a control-plane component without `manual`); a kind `linkerd inject` does
 * not handle is skipped by the decision (`unsupported-kind`) and passes through unchanged, as the CLI does.
 * Uninject is the generic removal of the inventory plus `./uninject.ts` (the override annotations this
 * configuration writes).
 */
export const linkerdDriver: MeshDriver<LinkerdSettings> = defineDriver<LinkerdSettings>({
  name: 'linkerd',
  reasons: Object.keys(LINKERD_REASONS),
  reasonInfo: LINKERD_REASONS,
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
