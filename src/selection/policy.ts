import type { Config } from '../config/types.ts';
import type { Decision, DecisionReason, NamespaceInfo, PodMeta } from '../model.ts';
import { formatSelector, isEmptySelector, matchesSelector } from './label-selector.ts';
import { INJECT_LABEL, NS_NAME_LABEL, routeIstioWebhook } from './webhook.ts';

/** Everything the injection decision reads for one workload. */
export interface DecideInput {
  /** `metadata` of the pod template (not of the workload): its labels/annotations decide. */
  podMeta: PodMeta;
  /** `spec.hostNetwork` of the pod template. */
  hostNetwork: boolean;
  /** Effective namespace of the workload (`metadata.namespace`, else `config.defaultNamespace`). */
  namespace: string;
  /** The namespace's labels/annotations when known (a `Namespace` object in the input or `spec.namespaces`). */
  namespaceInfo?: NamespaceInfo;
  config: Config;
}

/**
 * Decides whether one workload's pod template gets a sidecar. Order (first hit wins):
 * 1. `hostNetwork` → no (`host-network`; not intended: a warning, Istio skips such pods silently).
 * 2. namespace in `config.ignoredNamespaces` → no (`ignored-namespace`).
 * 3. `config.namespaceSelector` not matching the namespace labels (plus `kubernetes.io/metadata.name`) → no
 *    (`namespace-not-selected`); an absent selector selects every namespace.
 * 4. `config.istio.selection === 'webhook'`: Istio's MutatingWebhookConfiguration routing (`./webhook.ts`);
 *    no matching webhook → no (`webhook-not-selected`).
 * 5. Istio `injectRequired` (pkg/kube/inject/inject.go) on the pod template metadata: label
 *    `sidecar.istio.io/inject` (over the annotation of the same name), then `neverInjectSelector`,
 *    `alwaysInjectSelector` (empty selectors ignored, as Istio does), then `config.policy`.
 *
 * Value rules for `sidecar.istio.io/inject` (see `readInjectValue`): Istio 1.13-1.26 semantics by default,
 * Istio >= 1.27 with `config.istio.strictInjectValues`.
 *
 * `intended` is true when the outcome is what the configuration asks for: every injection, explicit opt-outs
 * (label/annotation), the never-selector, policy `disabled`, ignored namespaces, a namespace the selector or the
 * webhooks do not select. It is false for `hostNetwork`, and for namespace-based skips where the namespace is
 * unknown (no labels to go by; a warning says so), so that those surface as warnings rather than info.
 */
export function decide(input: DecideInput): Decision {
  const { config, namespace } = input;
  const warnings: string[] = [];
  const done = (inject: boolean, reason: DecisionReason, detail: string, intended = true): Decision =>
    ({ inject, reason, detail, intended, warnings });

  if (input.hostNetwork) {
    return done(false, 'host-network', 'spec.hostNetwork is true: pods on the host network are never injected', false);
  }
  if (config.ignoredNamespaces.includes(namespace)) {
    return done(false, 'ignored-namespace', `namespace ${namespace} is in ignoredNamespaces`);
  }
  const nsLabels = namespaceLabels(namespace, input.namespaceInfo);
  const unknownNs = input.namespaceInfo === undefined;
  const unknownNote = `namespace ${namespace} is neither a Namespace object in the input nor listed in spec.namespaces; its labels are unknown, only ${NS_NAME_LABEL}=${namespace} was used`;
  if (config.namespaceSelector && !matchesSelector(config.namespaceSelector, nsLabels)) {
    if (unknownNs) warnings.push(unknownNote);
    return done(false, 'namespace-not-selected',
      `namespace ${namespace} does not match namespaceSelector (${formatSelector(config.namespaceSelector)})`, !unknownNs);
  }

  let routedBy: { reason: DecisionReason; detail: string } | undefined;
  if (config.istio.selection === 'webhook') {
    const route = routeIstioWebhook(config.istio, namespace, nsLabels, input.podMeta.labels ?? {});
    if (!route.matched) {
      if (unknownNs) warnings.push(unknownNote);
      return done(false, 'webhook-not-selected', `no injection webhook selects it: ${route.detail}`, !unknownNs);
    }
    routedBy = { reason: route.webhook.reason, detail: route.detail };
  }

  const pod = decidePodLevel(input, warnings);
  if (routedBy && pod.reason === 'policy-enabled') return done(true, routedBy.reason, `${routedBy.detail}; ${pod.detail}`);
  return done(pod.inject, pod.reason, routedBy ? `${pod.detail}; ${routedBy.detail}` : pod.detail);
}

/** Namespace labels as a webhook sees them: the known labels plus `kubernetes.io/metadata.name: <name>`. */
export function namespaceLabels(namespace: string, info: NamespaceInfo | undefined): Record<string, string> {
  return { ...(info?.labels ?? {}), [NS_NAME_LABEL]: namespace };
}

/** Meaning of a `sidecar.istio.io/inject` value: inject, do not inject, or let selectors/policy decide. */
export type InjectValue = 'true' | 'false' | 'unset';

/**
 * Reads a `sidecar.istio.io/inject` value. `""` is unset (no warning). Default (Istio 1.13-1.26,
 * `inject.go`): `y|yes|true|on` in any case mean true, any other non-empty value false. `strict` (Istio >= 1.27,
 * istio/istio#56737): only exact `true`/`false` count, anything else is unset. Any non-empty value other than
 * exactly `true`/`false` yields a warning (`where` names the label or annotation).
 */
export function readInjectValue(raw: string, strict: boolean, where: string): { value: InjectValue; warning?: string } {
  if (raw === 'true' || raw === 'false') return { value: raw };
  if (raw === '') return { value: 'unset' };
  if (strict) {
    return {
      value: 'unset',
      warning: `${where} is "${raw}", which Istio >= 1.27 treats as unset (only "true" and "false" count); the selectors and the policy decide instead`,
    };
  }
  const value: InjectValue = /^(y|yes|true|on)$/i.test(raw) ? 'true' : 'false';
  return {
    value,
    warning: `${where} is "${raw}": read as "${value}" (Istio < 1.27), but Istio >= 1.27 treats any value other than exactly "true"/"false" as unset; write "${value}"`,
  };
}

interface PodLevel {
  inject: boolean;
  reason: DecisionReason;
  detail: string;
}

/** Steps 3-5 of Istio `injectRequired` (after hostNetwork and ignored namespaces). Pushes value warnings. */
function decidePodLevel(input: DecideInput, warnings: string[]): PodLevel {
  const { config } = input;
  const labels = input.podMeta.labels ?? {};
  const annotations = input.podMeta.annotations ?? {};
  const hasLabel = Object.prototype.hasOwnProperty.call(labels, INJECT_LABEL);
  const hasAnnotation = Object.prototype.hasOwnProperty.call(annotations, INJECT_LABEL);
  if (hasLabel || hasAnnotation) {
    const source = hasLabel ? 'label' : 'annotation';
    const raw = hasLabel ? labels[INJECT_LABEL]! : annotations[INJECT_LABEL]!;
    const where = `pod ${source} ${INJECT_LABEL}`;
    const read = readInjectValue(raw, config.istio.strictInjectValues, where);
    if (read.warning) warnings.push(read.warning);
    if (read.value !== 'unset') {
      const shadowed = hasLabel && hasAnnotation && annotations[INJECT_LABEL] !== raw
        ? ` (the label takes precedence over the annotation "${annotations[INJECT_LABEL]}")` : '';
      return {
        inject: read.value === 'true',
        reason: `${source}-${read.value}`,
        detail: `${where} is "${raw}"${shadowed}`,
      };
    }
  }
  const never = firstMatch(config.neverInjectSelector, labels);
  if (never >= 0) {
    return { inject: false, reason: 'never-inject-selector', detail: `pod labels match neverInjectSelector[${never}] (${formatSelector(config.neverInjectSelector[never]!)})` };
  }
  const always = firstMatch(config.alwaysInjectSelector, labels);
  if (always >= 0) {
    return { inject: true, reason: 'always-inject-selector', detail: `pod labels match alwaysInjectSelector[${always}] (${formatSelector(config.alwaysInjectSelector[always]!)})` };
  }
  return config.policy === 'enabled'
    ? { inject: true, reason: 'policy-enabled', detail: `no ${INJECT_LABEL} label or annotation decides; policy is enabled` }
    : { inject: false, reason: 'policy-disabled', detail: `no ${INJECT_LABEL} label or annotation decides; policy is disabled` };
}

/** Index of the first non-empty selector matching `labels`, or -1 (Istio skips empty selectors). */
function firstMatch(selectors: Config['neverInjectSelector'], labels: Record<string, string>): number {
  return selectors.findIndex((s) => !isEmptySelector(s) && matchesSelector(s, labels));
}
