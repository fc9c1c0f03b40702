/**
 * The Linkerd driver's own decision rules: the `linkerd.io/inject` annotation of the pod template, else of
 * its namespace (the proxy injector's truth table, `Report.disabledByAnnotation`, pkg/inject/report.go).
 * `linkerd inject` itself ignores the namespace (it cannot read it offline); meshinject knows namespaces from
 * `Namespace` objects in the input and `spec.namespaces`.
 */
import type { DecisionStep } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import type { DriverDecideInput, DriverDecision } from '../../contract/driver.ts';
import { decidePodThenNamespace, type KeyReading } from '../kit/namespace-decision.ts';
import { INJECT_ANNOTATION, LINKERD_KINDS } from './annotations.ts';
import type { LinkerdSettings } from './config.ts';

const VALID = ['enabled', 'ingress', 'disabled'];

/**
 * Linkerd's decision for one pod template (reason codes in parentheses):
 * 0. a workload kind `linkerd inject` does not handle (Argo Rollout, DeploymentConfig, PodTemplate, a kind of
 *    `spec.workloadKinds`) → skip, the resource passes through unchanged (`unsupported-kind`): `linkerd inject`
 *    reports it `<kind> "<name>" skipped` and writes it as it was (`Report.UnsupportedResource`,
 *    pkg/inject/report.go: no pod template it knows, so nothing to inject or annotate);
 * 1. a namespace `linkerd.io/inject` value other than enabled, ingress, disabled or "" → InjectError
 *    (Linkerd: `invalid_inject_annotation_at_ns`); the same for the pod (`invalid_inject_annotation_at_workload`);
 * 2. pod annotation `linkerd.io/inject`: `enabled` → inject (`pod-annotation-enabled`), `ingress` → inject in
 *    ingress mode (`pod-annotation-ingress`), `disabled` → skip (`pod-annotation-disabled`);
 * 3. otherwise the shared never/always selectors, then the namespace annotation as the namespace's default in
 *    place of `policy` (the decision's `fallback`, default trait): the same values → `namespace-annotation-enabled`,
 *    `namespace-annotation-ingress`, `namespace-annotation-disabled`; steps 2-3 are the kit's
 *    `decidePodThenNamespace` (../kit/namespace-decision.ts);
 * no namespace annotation → the policy (`policy-enabled` is what `linkerd inject` does; `policy: disabled` is
 * what the proxy injector does for pods nobody opted in). The namespace acts as a default, below the
 * selectors, so that annotating a Namespace `enabled` (as `linkerd inject` does) never changes a decision
 * under `policy: enabled`: a second run decides as the first.
 * Linkerd reads annotations only; a `linkerd.io/inject` label is not an opt-in.
 * @throws InjectError for an invalid value, with the field `metadata.annotations[linkerd.io/inject]`
 */
export function decideLinkerd(input: DriverDecideInput<LinkerdSettings>): DriverDecision {
  const trace: DecisionStep[] = [];
  if (input.kind !== undefined && !Object.hasOwn(LINKERD_KINDS, input.kind)) {
    const detail =
      `linkerd inject does not handle kind ${input.kind} (it handles ${Object.keys(LINKERD_KINDS).join(', ')}) and passes it through unchanged, reporting it ` +
      `${input.kind.toLowerCase()} skipped; annotate its pod template with ${INJECT_ANNOTATION}: enabled if Linkerd's proxy injector should inject its pods`;
    trace.push({ rule: 'linkerd.kind', saw: `kind ${input.kind}`, outcome: 'decided' });
    return { verdict: { inject: false, reason: 'unsupported-kind', detail }, warnings: [], trace };
  }
  const pod = input.podMeta.annotations?.[INJECT_ANNOTATION] ?? '';
  const nsName = input.namespace;
  const ns = input.namespaceInfo?.annotations[INJECT_ANNOTATION] ?? '';
  if (ns !== '' && !VALID.includes(ns)) {
    throw new InjectError(
      `invalid value for annotation "${INJECT_ANNOTATION}" at namespace ${nsName}: "${ns}" (valid: ${VALID.join(', ')})`,
    );
  }
  if (pod !== '' && !VALID.includes(pod)) {
    throw new InjectError(
      `invalid value for annotation "${INJECT_ANNOTATION}" at workload: "${pod}" (valid: ${VALID.join(', ')})`,
      { field: `metadata.annotations[${INJECT_ANNOTATION}]` },
    );
  }
  // "" is unset; enabled and ingress inject, disabled skips (reason `<where>-annotation-<value>`).
  const reading = (raw: string, where: 'pod' | 'namespace'): KeyReading | undefined =>
    raw === '' ? undefined : { raw, inject: raw !== 'disabled', reason: `${where}-annotation-${raw}` };
  return decidePodThenNamespace({
    key: INJECT_ANNOTATION,
    source: 'annotation',
    rules: { pod: 'linkerd.inject-annotation', namespace: 'linkerd.namespace-inject-annotation' },
    pod: () => reading(pod, 'pod'),
    namespace: () => reading(ns, 'namespace'),
    namespaceName: nsName,
    namespaceKnown: input.namespaceInfo !== undefined,
    trace,
    warnings: [],
  });
}
