/**
 * Kuma's decision (kumahq/kuma `needToInject` and `isInjectionException`,
 * pkg/plugins/runtime/k8s/webhooks/injector/precheck.go at 348b6528): the injector's exception labels skip a
 * pod; then the `kuma.io/sidecar-injection` label of the pod decides, else the label of its namespace; with
 * neither Kuma injects nothing. Kuma reads labels only: the same key as an annotation is ignored (Kuma logs a
 * deprecation warning; here a warning result).
 */
import type { DecisionStep } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import type { DriverDecideInput, DriverDecision } from '../../contract/driver.ts';
import { readBool, SIDECAR_INJECTION } from './annotations.ts';
import type { KumaSettings } from './config.ts';

/**
 * Every reason code `decideKuma` returns, with what it means (for reports and `explain`) and whether it is the
 * workload's own opt-out (what `check.forbidOptOut` fails on).
 */
export const KUMA_REASON_INFO: Readonly<Record<string, { description: string; optOut: boolean }>> = {
  'exception-label': {
    description:
      "a pod label matches Kuma's injector exceptions.labels (kuma-cp skips such pods, e.g. OpenShift deployer pods)",
    optOut: false,
  },
  'pod-label-enabled': {
    description: "the pod template's kuma.io/sidecar-injection label turns injection on",
    optOut: false,
  },
  'pod-label-disabled': {
    description: "the pod template's kuma.io/sidecar-injection label turns injection off",
    optOut: true,
  },
  'namespace-label-enabled': {
    description: "the namespace's kuma.io/sidecar-injection label turns injection on for its pods",
    optOut: false,
  },
  'namespace-label-disabled': {
    description: "the namespace's kuma.io/sidecar-injection label turns injection off for its pods",
    optOut: true,
  },
};

/** Every reason code `decideKuma` returns (the keys of {@link KUMA_REASON_INFO}). */
export const KUMA_REASONS: readonly string[] = Object.keys(KUMA_REASON_INFO);

/** The injection label's value read as Kuma does (`GetEnabled`), with the place for an error. */
function labelValue(labels: Record<string, string> | undefined, where: 'pod' | string): boolean | undefined {
  try {
    const r = readBool(labels, SIDECAR_INJECTION, false);
    return r.exists ? r.value : undefined;
  } catch (e) {
    const message = `${where} label ${(e as Error).message.replace(/^annotation /, '')}`;
    throw new InjectError(message, where === 'pod' ? { field: `metadata.labels[${SIDECAR_INJECTION}]` } : {});
  }
}

/**
 * Kuma's decision for one pod template, first hit wins (reason codes in parentheses):
 * 1. a label of the injector's `exceptions.labels` (value `*` or equal) → skip (`exception-label`);
 * 2. pod label `kuma.io/sidecar-injection`: enabled/true/yes → inject (`pod-label-enabled`),
 *    disabled/false/no → skip (`pod-label-disabled`);
 * 3. then the shared never/always selectors, and the namespace label as the namespace's default in place of
 *    `policy` (`namespace-label-enabled`, `namespace-label-disabled`);
 * 4. nothing: `policy` (defaulted to `disabled` by the `sharedDefaults` trait: Kuma injects nothing unasked, unless set).
 * @throws InjectError for a label value Kuma cannot read (Kuma refuses the pod's admission)
 */
export function decideKuma(input: DriverDecideInput<KumaSettings>): DriverDecision {
  const trace: DecisionStep[] = [];
  const warnings: string[] = [];
  const labels = input.podMeta.labels ?? {};
  for (const [k, v] of Object.entries(input.settings.injector.exceptions.labels)) {
    if (Object.hasOwn(labels, k) && (v === '*' || v === labels[k])) {
      const detail = `pod label ${k}: ${labels[k]} matches the injector's exceptions.labels (${k}: ${v})`;
      trace.push({ rule: 'kuma.exceptions', saw: detail, outcome: 'decided' });
      return { verdict: { inject: false, reason: 'exception-label', detail }, warnings, trace };
    }
  }
  trace.push({ rule: 'kuma.exceptions', saw: 'no exception label', outcome: 'pass' });
  if (input.podMeta.annotations?.[SIDECAR_INJECTION] !== undefined) {
    warnings.push(
      `${SIDECAR_INJECTION} is an annotation of the pod template: Kuma reads it only as a label, so it is ignored (move it to metadata.labels)`,
    );
  }
  const pod = labelValue(input.podMeta.labels, 'pod');
  if (pod !== undefined) {
    const detail = `pod label ${SIDECAR_INJECTION} is "${labels[SIDECAR_INJECTION]}"`;
    trace.push({ rule: 'kuma.sidecar-injection-label', saw: detail, outcome: 'decided' });
    return {
      verdict: { inject: pod, reason: pod ? 'pod-label-enabled' : 'pod-label-disabled', detail },
      warnings,
      trace,
    };
  }
  trace.push({ rule: 'kuma.sidecar-injection-label', saw: `no pod label ${SIDECAR_INJECTION}`, outcome: 'pass' });
  const ns = labelValue(input.namespaceInfo?.labels, `namespace ${input.namespace}`);
  if (ns !== undefined) {
    const detail = `namespace ${input.namespace} label ${SIDECAR_INJECTION} is "${input.namespaceInfo!.labels[SIDECAR_INJECTION]}"`;
    trace.push({ rule: 'kuma.namespace-sidecar-injection-label', saw: detail, outcome: 'note' });
    return {
      fallback: { inject: ns, reason: ns ? 'namespace-label-enabled' : 'namespace-label-disabled', detail },
      undecided: `no ${SIDECAR_INJECTION} label on the pod template decides`,
      warnings,
      trace,
    };
  }
  const known = input.namespaceInfo
    ? `namespace ${input.namespace} has none`
    : `namespace ${input.namespace} is unknown`;
  trace.push({
    rule: 'kuma.namespace-sidecar-injection-label',
    saw: `no namespace label ${SIDECAR_INJECTION} (${known})`,
    outcome: 'pass',
  });
  return { undecided: `no ${SIDECAR_INJECTION} label on the pod template or its namespace decides`, warnings, trace };
}
