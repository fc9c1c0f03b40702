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
import { decidePodThenNamespace, type KeyReading } from '../kit/namespace-decision.ts';
import { readBool, SIDECAR_INJECTION } from './annotations.ts';
import type { KumaSettings } from './config.ts';

/** The injection label's value read as Kuma does (`GetEnabled`), with the place for an error. */
function labelValue(labels: Record<string, string> | null | undefined, where: 'pod' | string): boolean | undefined {
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
 *    `policy` (`namespace-label-enabled`, `namespace-label-disabled`); steps 2-3 are the kit's
 *    `decidePodThenNamespace` (../kit/namespace-decision.ts);
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
  // Read as Kuma's `GetEnabled` (an unreadable value throws); the namespace's only when the pod's does not decide.
  const reading = (
    from: Record<string, string> | null | undefined,
    where: 'pod' | 'namespace',
  ): KeyReading | undefined => {
    const value = labelValue(from, where === 'pod' ? 'pod' : `namespace ${input.namespace}`);
    if (value === undefined) return undefined;
    const raw = from?.[SIDECAR_INJECTION] ?? '';
    return { raw, inject: value, reason: `${where}-label-${value ? 'enabled' : 'disabled'}` };
  };
  return decidePodThenNamespace({
    key: SIDECAR_INJECTION,
    source: 'label',
    rules: { pod: 'kuma.sidecar-injection-label', namespace: 'kuma.namespace-sidecar-injection-label' },
    pod: () => reading(input.podMeta.labels, 'pod'),
    namespace: () => reading(input.namespaceInfo?.labels, 'namespace'),
    namespaceName: input.namespace,
    namespaceKnown: input.namespaceInfo !== undefined,
    trace,
    warnings,
  });
}
