import type { IstioSettings } from './config.ts';
import type { LabelSelector } from '../../model.ts';
import { matchesSelector } from '../../selection/label-selector.ts';
import { NS_NAME_LABEL } from '../../selection/policy.ts';

/** Pod/namespace label that opts in or out (`label.SidecarInject`, istio/api). */
export const INJECT_LABEL = 'sidecar.istio.io/inject';
/** Namespace label of the default revision's webhooks. */
export const NS_INJECTION_LABEL = 'istio-injection';
/** Revision label on a namespace or pod. */
export const REV_LABEL = 'istio.io/rev';
/** Namespaces the chart's `auto.sidecar-injector.istio.io` webhook excludes (hard-coded in mutatingwebhook.yaml). */
export const AUTO_WEBHOOK_EXCLUDED = ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage'];

/** Webhook outcome codes (Istio driver decision reasons). */
export type WebhookReason = 'webhook-namespace-label' | 'webhook-object-label' | 'webhook-namespace-default';

/** One webhook of Istio's MutatingWebhookConfiguration(s), reduced to its selectors. */
export interface IstioWebhook {
  /** `<configuration>/<webhook name>`, e.g. `istio-sidecar-injector/rev.namespace.sidecar-injector.istio.io`. */
  name: string;
  /** The revision whose injector the webhook calls (`default` for the default revision). */
  revision: string;
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  reason: WebhookReason;
  /** Human description of what selects a pod through this webhook. */
  describe: string;
}

/** Outcome of webhook routing: the first webhook whose selectors match, or why none did. */
export type WebhookRoute =
  | { matched: true; webhook: IstioWebhook; detail: string }
  | { matched: false; detail: string };

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];
const injectNotFalse = (): Requirement => ({ key: INJECT_LABEL, operator: 'NotIn', values: ['false'] });
const dne = (key: string): Requirement => ({ key, operator: 'DoesNotExist' });
const isIn = (key: string, values: string[]): Requirement => ({ key, operator: 'In', values });

/** The revision name webhooks use: `settings.revision`, or `default` when empty. */
export function effectiveRevision(settings: Pick<IstioSettings, 'revision'>): string {
  return settings.revision === '' ? 'default' : settings.revision;
}

/** True when the default-revision webhooks (`namespace.`, `object.`, `auto.`) route to one of the served revisions. */
export function servesDefaultRevision(settings: WebhookSettings): boolean {
  return servedRevisions(settings).some(servesDefault);
}

/** One revision a render serves: its name as `istio.io/rev` reads it (`default` for `''`) and its tags. */
export interface ServedRevision {
  /** `settings.revision`, or the name under `spec.istio.revisions` (`''` for the default revision). */
  revision: string;
  tags: string[];
}

/** What webhook routing reads of the settings: the revision and tags, or several revisions (`spec.istio.revisions`). */
export type WebhookSettings = Pick<IstioSettings, 'revision' | 'revisionTags' | 'enableNamespacesByDefault'> & {
  served?: readonly ServedRevision[];
};

/** The revisions a render serves: `settings.served` (`spec.istio.revisions`), else the one revision with its tags. */
export function servedRevisions(settings: WebhookSettings): readonly ServedRevision[] {
  return settings.served ?? [{ revision: settings.revision, tags: settings.revisionTags }];
}

const servesDefault = (r: ServedRevision) => effectiveRevision(r) === 'default' || r.tags.includes('default');

/**
 * Builds the webhooks Istio installs for revision R = `revision || "default"` and each revision tag, from
 * `manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml` and `revision-tags-mwc.yaml`
 * (istio-injection.md §3):
 * - per R and per tag T: `rev.namespace` (namespace `istio.io/rev In [R|T]`, no `istio-injection`; pod
 *   `sidecar.istio.io/inject NotIn [false]`) and `rev.object` (namespace without both labels; pod
 *   `istio.io/rev In [R|T]` and inject label not `false`);
 * - when R is the default revision or a tag is named `default`: `namespace.` (`istio-injection In [enabled]`),
 *   `object.` (pod `sidecar.istio.io/inject In [true]`, no pod `istio.io/rev`), and, with
 *   `enableNamespacesByDefault`, `auto.` (unlabelled namespaces outside the four system namespaces, pods without
 *   either label). That `auto.` is emitted only with the default webhooks is an inference from the chart.
 */
export function buildIstioWebhooks(settings: WebhookSettings): IstioWebhook[] {
  const hooks = servedRevisions(settings).flatMap(revisionWebhooks);
  const holder = servedRevisions(settings).find(servesDefault);
  if (holder) hooks.push(...defaultWebhooks(holder, settings.enableNamespacesByDefault));
  return hooks;
}

/**
 * The `rev.namespace` and `rev.object` webhooks of one served revision and of each of its tags (Istio's
 * mutatingwebhook.yaml, revision-tags-mwc.yaml). With several revisions (`spec.istio.revisions`) each revision has
 * its own MutatingWebhookConfiguration, as `istioctl install --revision` makes them; their selectors exclude each
 * other (`istio.io/rev In [R]`).
 */
function revisionWebhooks(served: ServedRevision): IstioWebhook[] {
  const revision = effectiveRevision(served);
  const revConfig = served.revision === '' ? 'istio-sidecar-injector' : `istio-sidecar-injector-${served.revision}`;
  const hooks: IstioWebhook[] = [];
  const targets = [{ rev: revision, config: revConfig, via: '' }];
  for (const tag of served.tags) {
    if (tag !== revision)
      targets.push({ rev: tag, config: `istio-revision-tag-${tag}`, via: ` (revision tag of ${revision})` });
  }
  for (const { rev, config, via } of targets) {
    hooks.push({
      name: `${config}/rev.namespace.sidecar-injector.istio.io`,
      revision,
      namespaceSelector: { matchExpressions: [isIn(REV_LABEL, [rev]), dne(NS_INJECTION_LABEL)] },
      objectSelector: { matchExpressions: [injectNotFalse()] },
      reason: 'webhook-namespace-label',
      describe: `namespace label ${REV_LABEL}=${rev}${via}`,
    });
    hooks.push({
      name: `${config}/rev.object.sidecar-injector.istio.io`,
      revision,
      namespaceSelector: { matchExpressions: [dne(REV_LABEL), dne(NS_INJECTION_LABEL)] },
      objectSelector: { matchExpressions: [injectNotFalse(), isIn(REV_LABEL, [rev])] },
      reason: 'webhook-object-label',
      describe: `pod label ${REV_LABEL}=${rev}${via}`,
    });
  }
  return hooks;
}

/** The default webhooks (`namespace.`, `object.`, with `enableNamespacesByDefault` `auto.`), served by `holder`. */
function defaultWebhooks(holder: ServedRevision, enableNamespacesByDefault: boolean): IstioWebhook[] {
  const hooks: IstioWebhook[] = [];
  const revision = effectiveRevision(holder);
  const revConfig = holder.revision === '' ? 'istio-sidecar-injector' : `istio-sidecar-injector-${holder.revision}`;
  const config = revision === 'default' ? revConfig : 'istio-revision-tag-default';
  hooks.push({
    name: `${config}/namespace.sidecar-injector.istio.io`,
    revision,
    namespaceSelector: { matchExpressions: [isIn(NS_INJECTION_LABEL, ['enabled'])] },
    objectSelector: { matchExpressions: [injectNotFalse()] },
    reason: 'webhook-namespace-label',
    describe: `namespace label ${NS_INJECTION_LABEL}=enabled`,
  });
  hooks.push({
    name: `${config}/object.sidecar-injector.istio.io`,
    revision,
    namespaceSelector: { matchExpressions: [dne(NS_INJECTION_LABEL), dne(REV_LABEL)] },
    objectSelector: { matchExpressions: [isIn(INJECT_LABEL, ['true']), dne(REV_LABEL)] },
    reason: 'webhook-object-label',
    describe: `pod label ${INJECT_LABEL}=true`,
  });
  if (enableNamespacesByDefault) {
    hooks.push({
      name: `${config}/auto.sidecar-injector.istio.io`,
      revision,
      namespaceSelector: {
        matchExpressions: [
          dne(NS_INJECTION_LABEL),
          dne(REV_LABEL),
          { key: NS_NAME_LABEL, operator: 'NotIn', values: AUTO_WEBHOOK_EXCLUDED },
        ],
      },
      objectSelector: { matchExpressions: [dne(INJECT_LABEL), dne(REV_LABEL)] },
      reason: 'webhook-namespace-default',
      describe: 'enableNamespacesByDefault (namespace and pod carry no injection labels)',
    });
  }
  return hooks;
}

/**
 * Routes a pod the way the API server would call Istio's injection webhooks: the first webhook whose
 * namespaceSelector matches `namespaceLabels` and whose objectSelector matches `podLabels`. Webhook selectors
 * see labels only; the `sidecar.istio.io/inject` annotation is invisible here. `namespaceLabels` must already
 * hold `kubernetes.io/metadata.name`. When nothing matches, `detail` says why (first applicable cause).
 */
export function routeIstioWebhook(
  settings: WebhookSettings,
  namespace: string,
  namespaceLabels: Record<string, string>,
  podLabels: Record<string, string>,
): WebhookRoute {
  for (const webhook of buildIstioWebhooks(settings)) {
    if (
      matchesSelector(webhook.namespaceSelector, namespaceLabels) &&
      matchesSelector(webhook.objectSelector, podLabels)
    ) {
      return { matched: true, webhook, detail: `${webhook.describe} selects webhook ${webhook.name}` };
    }
  }
  return { matched: false, detail: explainNoWebhook(settings, namespace, namespaceLabels, podLabels) };
}

/** Why no webhook matched; the checks mirror the selectors of `buildIstioWebhooks`. */
function explainNoWebhook(
  settings: WebhookSettings,
  namespace: string,
  nsLabels: Record<string, string>,
  podLabels: Record<string, string>,
): string {
  const revisions = servedRevisions(settings);
  const served = revisions.flatMap((r) => [effectiveRevision(r), ...r.tags]);
  const allTags = revisions.flatMap((r) => r.tags);
  const names = revisions.map((r) => `"${effectiveRevision(r)}"`).join(', ');
  const servedText = `revision ${names}${allTags.length ? ` or ${revisions.length > 1 ? 'their' : 'its'} tags ${allTags.map((t) => `"${t}"`).join(', ')}` : ''}`;
  const noDefault = `the control plane is revision ${names} and no revision tag is "default"`;
  const podInject = podLabels[INJECT_LABEL];
  if (podInject === 'false') return `pod label ${INJECT_LABEL} is "false", which every injection webhook excludes`;
  const nsInjection = nsLabels[NS_INJECTION_LABEL];
  if (nsInjection !== undefined) {
    if (nsInjection !== 'enabled') {
      return `namespace ${namespace} has label ${NS_INJECTION_LABEL}=${nsInjection}; only "enabled" selects a webhook, any other value disables injection for the namespace`;
    }
    return `namespace ${namespace} has label ${NS_INJECTION_LABEL}=enabled, which selects the default revision, but ${noDefault}`;
  }
  const nsRev = nsLabels[REV_LABEL];
  if (nsRev !== undefined) {
    return `namespace ${namespace} has label ${REV_LABEL}=${nsRev}, which is not ${servedText}`;
  }
  const podRev = podLabels[REV_LABEL];
  if (podRev !== undefined && !served.includes(podRev)) {
    return `pod label ${REV_LABEL}=${podRev} is not ${servedText}`;
  }
  if (podInject === 'true' && !servesDefaultRevision(settings)) {
    return `pod label ${INJECT_LABEL}=true selects the default revision, but ${noDefault}`;
  }
  if (podInject !== undefined && podInject !== 'true') {
    return `pod label ${INJECT_LABEL} is "${podInject}"; the object webhook matches only "true" and the namespace has no ${NS_INJECTION_LABEL} or ${REV_LABEL} label`;
  }
  if (
    settings.enableNamespacesByDefault &&
    servesDefaultRevision(settings) &&
    AUTO_WEBHOOK_EXCLUDED.includes(namespace)
  ) {
    return `namespace ${namespace} is excluded by the auto webhook (enableNamespacesByDefault skips ${AUTO_WEBHOOK_EXCLUDED.join(', ')})`;
  }
  return (
    `namespace ${namespace} has no ${NS_INJECTION_LABEL} or ${REV_LABEL} label and the pod has no ${INJECT_LABEL}=true or ${REV_LABEL} label` +
    (servesDefaultRevision(settings) ? ' (enableNamespacesByDefault is off)' : '')
  );
}
