/**
 * The Istio driver's own decision rules: webhook routing (`spec.istio.selection: webhook`) and the pod's
 * `sidecar.istio.io/inject` label or annotation (Istio `injectRequired`, pkg/kube/inject/inject.go, the steps
 * between ignored namespaces and the never/always selectors).
 */
import type { DecisionStep } from '../../model.ts';
import type { DriverDecideInput, DriverDecision } from '../../contract/driver.ts';
import type { IstioSettings } from './config.ts';
import { INJECT_LABEL, routeIstioWebhook } from './webhook.ts';
import { DATAPLANE_LABEL, enrolmentDetail } from './ambient.ts';

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

/**
 * Istio's decision for one pod template:
 * 0. with `spec.istio.ambient: prefer`, a pod the labels enrol in ambient (`./ambient.ts` `labelsEnrol`: Istio
 *    cni/README.md) → skip (`ambient-enrolled`), even one that asks for a sidecar (a warning: label it
 *    `istio.io/dataplane-mode=none` to keep its sidecar);
 * 1. with `selection: webhook`, the MutatingWebhookConfiguration routing (`./webhook.ts`): no webhook selects
 *    the pod → skip (`webhook-not-selected`; a warning when the namespace's labels are unknown); a webhook
 *    that selects it is the decision's `fallback`, which becomes the reason of a `policy-enabled` outcome
 *    (trait `fallback: 'with-policy'`), and its revision the decision's tag `revision` (with `spec.istio.revisions`,
 *    the revision that injects it);
 * 2. pod label `sidecar.istio.io/inject`, else the annotation: `true` → inject (`label-true`,
 *    `annotation-true`), `false` → skip (`label-false`, `annotation-false`); other values per
 *    `readInjectValue`.
 * Nothing decided: the shared never/always selectors and the policy decide.
 */
export function decideIstio(input: DriverDecideInput<IstioSettings>): DriverDecision {
  const { settings } = input;
  const warnings: string[] = [];
  const trace: DecisionStep[] = [];
  const labels = input.podMeta.labels ?? {};
  const annotations = input.podMeta.annotations ?? {};

  const ambient = settings.ambient === 'prefer' ? preferAmbient(input) : undefined;
  if (ambient) return ambient;

  let routedBy: DriverDecision['fallback'];
  let tags: Record<string, string> | undefined; // the revision whose webhook selects the pod
  if (settings.selection === 'webhook') {
    const route = routeIstioWebhook(settings, input.namespace, input.namespaceLabels, labels);
    if (!route.matched) {
      trace.push({ rule: 'istio.webhook', saw: route.detail, outcome: 'decided' });
      return {
        verdict: {
          inject: false,
          reason: 'webhook-not-selected',
          detail: `no injection webhook selects it: ${route.detail}`,
          namespaceBased: true,
        },
        warnings,
        trace,
      };
    }
    trace.push({ rule: 'istio.webhook', saw: route.detail, outcome: 'pass' });
    routedBy = { inject: true, reason: route.webhook.reason, detail: route.detail };
    tags = { revision: route.webhook.revision };
  }

  const hasLabel = Object.hasOwn(labels, INJECT_LABEL);
  const hasAnnotation = Object.hasOwn(annotations, INJECT_LABEL);
  if (hasLabel || hasAnnotation) {
    const source = hasLabel ? 'label' : 'annotation';
    const raw = (hasLabel ? labels[INJECT_LABEL] : annotations[INJECT_LABEL]) ?? '';
    const where = `pod ${source} ${INJECT_LABEL}`;
    const read = readInjectValue(raw, settings.strictInjectValues, where);
    if (read.warning) warnings.push(read.warning);
    if (read.value !== 'unset') {
      const shadowed =
        hasLabel && hasAnnotation && annotations[INJECT_LABEL] !== raw
          ? ` (the label takes precedence over the annotation "${annotations[INJECT_LABEL]}")`
          : '';
      const detail = `${where} is "${raw}"${shadowed}`;
      trace.push({ rule: `istio.inject-${source}`, saw: detail, outcome: 'decided' });
      return {
        verdict: {
          inject: read.value === 'true',
          reason: `${source}-${read.value}`,
          detail: routedBy ? `${detail}; ${routedBy.detail}` : detail,
        },
        warnings,
        trace,
        ...(tags ? { tags } : {}),
      };
    }
    trace.push({ rule: `istio.inject-${source}`, saw: `${where} is "${raw}" (unset)`, outcome: 'pass' });
  } else {
    trace.push({ rule: 'istio.inject-label', saw: `no ${INJECT_LABEL} label or annotation`, outcome: 'pass' });
  }
  // The webhook that selected the pod: the driver's `fallback: 'with-policy'` trait (the policy still decides).
  return {
    ...(routedBy ? { fallback: routedBy } : {}),
    undecided: `no ${INJECT_LABEL} label or annotation decides`,
    warnings,
    trace,
    ...(tags ? { tags } : {}),
  };
}

/**
 * `spec.istio.ambient: prefer`: the skip of a pod the labels enrol in ambient (reason `ambient-enrolled`), or
 * undefined when they do not. A pod that asks for a sidecar (`sidecar.istio.io/inject=true`) is skipped too, with a
 * warning saying how to keep its sidecar.
 */
function preferAmbient(input: DriverDecideInput<IstioSettings>): DriverDecision | undefined {
  const labels = input.podMeta.labels ?? {};
  const why = enrolmentDetail(labels, input.namespace, input.namespaceLabels);
  if (why === undefined) return undefined;
  // Istio injectRequired: the label, else the annotation, compared with "true" exactly (the label wins when both are set).
  const selector = labels[INJECT_LABEL] ?? input.podMeta.annotations?.[INJECT_LABEL];
  const asks = selector === 'true';
  const warnings = asks
    ? [
        `the pod asks for a sidecar (${INJECT_LABEL}=true), but ${why} and spec.istio.ambient is prefer: it is left to ztunnel; label the pod ${DATAPLANE_LABEL}=none to keep its sidecar`,
      ]
    : [];
  const detail = `${why}: ztunnel serves it (spec.istio.ambient: prefer)`;
  return {
    verdict: {
      inject: false,
      reason: 'ambient-enrolled',
      detail,
      namespaceBased: labels[DATAPLANE_LABEL] !== 'ambient',
    },
    warnings,
    trace: [{ rule: 'istio.ambient', saw: detail, outcome: 'decided' }],
  };
}
