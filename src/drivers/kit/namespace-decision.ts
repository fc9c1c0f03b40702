/**
 * The pod → namespace decision skeleton of the driver kit: one opt-in key read on the pod template, else on its
 * namespace. The pod's value is a `verdict`; the namespace's is the decision's `fallback` (a namespace-wide
 * default in place of `policy`, below the shared never/always selectors: the default `fallback` trait of
 * src/contract/driver.ts); with neither, the decision is undecided. Linkerd's `linkerd.io/inject` annotation
 * (`Report.disabledByAnnotation`, pkg/inject/report.go) and Kuma's `kuma.io/sidecar-injection` label
 * (`needToInject`, pkg/plugins/runtime/k8s/webhooks/injector/precheck.go) decide this way.
 */
import type { DecisionStep } from '../../model.ts';
import type { DriverDecision } from '../../contract/driver.ts';

/** What the key says where it is set: the value as written, and the inject/skip and reason code it reads as. */
export interface KeyReading {
  /** The value as written, quoted in the decision's detail. */
  raw: string;
  inject: boolean;
  reason: string;
}

/** The input of {@link decidePodThenNamespace}. */
export interface PodThenNamespace {
  /** The opt-in key, e.g. `linkerd.io/inject`. */
  key: string;
  /** Where the key is read, on the pod template and the namespace alike. */
  source: 'label' | 'annotation';
  /** The trace rule names of the two steps, e.g. `{pod: 'kuma.sidecar-injection-label', namespace: ...}`. */
  rules: { pod: string; namespace: string };
  /**
   * Reads the pod template's value: undefined when the pod does not set the key; may throw (a value the mesh
   * refuses). Called first.
   */
  pod: () => KeyReading | undefined;
  /**
   * Reads the namespace's value: undefined when the namespace does not set the key or is unknown; may throw.
   * Called only when the pod's value does not decide, so a namespace value is not read (nor refused) then.
   */
  namespace: () => KeyReading | undefined;
  /** The effective namespace's name. */
  namespaceName: string;
  /** True when the namespace is known (a `Namespace` in the input or `spec.namespaces`). */
  namespaceKnown: boolean;
  /** The trace so far (the driver's earlier steps); the skeleton appends its steps. */
  trace: DecisionStep[];
  /** The warnings so far; returned as they are. */
  warnings: string[];
}

/**
 * The pod's value decides (`verdict`, trace outcome `decided`); else the namespace's value is the `fallback`
 * (trace outcome `note`, `undecided` naming the pod template); else nothing decides (`undecided` naming both).
 * Details: `pod <source> <key> is "<raw>"`, `namespace <name> <source> <key> is "<raw>"`.
 */
export function decidePodThenNamespace(input: PodThenNamespace): DriverDecision {
  const { key, source, rules, trace, warnings } = input;
  const ns = input.namespaceName;
  const pod = input.pod();
  if (pod) {
    const detail = `pod ${source} ${key} is "${pod.raw}"`;
    trace.push({ rule: rules.pod, saw: detail, outcome: 'decided' });
    return { verdict: { inject: pod.inject, reason: pod.reason, detail }, warnings, trace };
  }
  trace.push({ rule: rules.pod, saw: `no pod ${source} ${key}`, outcome: 'pass' });
  const nsReading = input.namespace();
  if (nsReading) {
    const detail = `namespace ${ns} ${source} ${key} is "${nsReading.raw}"`;
    trace.push({ rule: rules.namespace, saw: detail, outcome: 'note' });
    return {
      fallback: { inject: nsReading.inject, reason: nsReading.reason, detail },
      undecided: `no ${key} ${source} on the pod template decides`,
      warnings,
      trace,
    };
  }
  const known = input.namespaceKnown ? `namespace ${ns} has none` : `namespace ${ns} is unknown`;
  trace.push({ rule: rules.namespace, saw: `no namespace ${source} ${key} (${known})`, outcome: 'pass' });
  return { undecided: `no ${key} ${source} on the pod template or its namespace decides`, warnings, trace };
}
