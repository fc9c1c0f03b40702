/**
 * The OSM family's decision: OSM `mustInject` and the injector webhook's `namespaceSelector`
 * (pkg/injector/webhook.go; FSM's is the same with the `flomesh.io/` prefix), after the shared
 * `hostNetwork` and `ignoredNamespaces` rules.
 */
import type { DecisionStep } from '../../model.ts';
import { quoteData } from '../../results/quote.ts';
import { InjectError } from '../../results/errors.ts';
import type { DriverDecideInput, DriverDecision, DriverVerdict } from '../../contract/driver.ts';
import type { OsmSettings } from './config.ts';
import { keys } from './flavor.ts';

/** A sidecar-injection (or metrics) value: `enabled|yes|true` → true, `disabled|no|false` → false, case-insensitive; else undefined. */
export function readSwitch(value: string): boolean | undefined {
  const v = value.toLowerCase();
  if (v === 'enabled' || v === 'yes' || v === 'true') return true;
  if (v === 'disabled' || v === 'no' || v === 'false') return false;
  return undefined;
}

/**
 * Decides for one pod template, first hit wins:
 * 1. namespace `kube-system`, `kube-public` or the control-plane namespace → skip (`control-plane-namespace`,
 *    `system-namespace`);
 * 2. the webhook's namespaceSelector: the namespace must have the label `<prefix>/monitored-by: <meshName>`
 *    (`namespace-not-monitored`), no `<prefix>/ignore` label (`namespace-ignored`) and no `control-plane`
 *    label (`namespace-control-plane-label`); these read namespace labels (`namespaceBased`: a warning when
 *    the namespace is unknown);
 * 3. `<prefix>/sidecar-injection` on the pod, else on the namespace: pod enabled → inject
 *    (`pod-annotation-enabled`); pod disabled → skip (`pod-annotation-disabled`); namespace enabled → inject
 *    (`namespace-annotation-enabled`), namespace disabled → skip (`namespace-annotation-disabled`).
 * Nothing decided: the shared selectors and `policy` decide; OSM injects nothing without the annotation,
 * so the driver's config resolves `policy` to `disabled` unless the user set it.
 * @throws InjectError for a sidecar-injection value other than the six accepted ones, on the pod or the
 *   namespace (OSM rejects the pod's admission)
 */
export function decideOsmFamily(input: DriverDecideInput<OsmSettings>): DriverDecision {
  const trace: DecisionStep[] = [];
  const steps: OsmSteps = {
    verdict: (rule, saw, v) => {
      trace.push({ rule, saw, outcome: 'decided' });
      return { verdict: v, warnings: [], trace };
    },
    pass: (rule, saw) => void trace.push({ rule, saw, outcome: 'pass' }),
  };
  const decided =
    decideByNamespace(input, steps) ?? decideByMonitoredBy(input, steps) ?? decideByAnnotation(input, steps);
  if (decided) return decided;
  const f = input.settings.flavor;
  return {
    undecided: `no ${keys(f).injection} annotation on the pod or the namespace (${f.title} injects only when one says enabled)`,
    warnings: [],
    trace,
  };
}

/** How a step of `decideOsmFamily` records itself in the trace: a verdict that ends the decision, or a pass. */
interface OsmSteps {
  verdict: (rule: string, saw: string, v: DriverVerdict) => DriverDecision;
  pass: (rule: string, saw: string) => void;
}

/** Step 1 of `decideOsmFamily`: the control-plane and system namespaces are never injected. */
function decideByNamespace(
  input: DriverDecideInput<OsmSettings>,
  { verdict, pass }: OsmSteps,
): DriverDecision | undefined {
  const s = input.settings;
  const f = s.flavor;
  const ns = input.namespace;
  if (ns === s.namespace) {
    return verdict(`${f.mesh}.namespace`, `namespace ${ns} is the control-plane namespace`, {
      inject: false,
      reason: 'control-plane-namespace',
      detail: `namespace ${ns} is ${f.title}'s control-plane namespace (spec.${f.mesh}.namespace): never injected`,
    });
  }
  if (ns === 'kube-system' || ns === 'kube-public') {
    return verdict(`${f.mesh}.namespace`, `namespace ${ns} is a system namespace`, {
      inject: false,
      reason: 'system-namespace',
      detail: `namespace ${ns} is never injected by ${f.title}`,
    });
  }
  pass(`${f.mesh}.namespace`, `namespace ${ns} is neither kube-system, kube-public nor ${s.namespace}`);
  return undefined;
}

/** Step 2 of `decideOsmFamily`: the webhook's namespaceSelector (monitored-by, ignore and control-plane labels). */
function decideByMonitoredBy(
  input: DriverDecideInput<OsmSettings>,
  { verdict, pass }: OsmSteps,
): DriverDecision | undefined {
  const s = input.settings;
  const f = s.flavor;
  const k = keys(f);
  const ns = input.namespace;
  const labels = input.namespaceLabels;
  const unknown = input.namespaceInfo === undefined ? ' (namespace labels unknown)' : '';
  const monitored = labels[k.monitoredBy];
  if (monitored !== s.meshName) {
    const saw =
      monitored === undefined
        ? `namespace ${ns} has no label ${k.monitoredBy}${unknown}`
        : `namespace ${ns} has ${k.monitoredBy}: ${monitored}, not ${s.meshName}`;
    return verdict(`${f.mesh}.monitored-by`, saw, {
      inject: false,
      reason: 'namespace-not-monitored',
      detail: `${saw}: the namespace is not part of mesh ${s.meshName}`,
      namespaceBased: true,
    });
  }
  if (Object.hasOwn(labels, k.ignore)) {
    return verdict(`${f.mesh}.monitored-by`, `namespace ${ns} has the label ${k.ignore}`, {
      inject: false,
      reason: 'namespace-ignored',
      detail: `namespace ${ns} has the label ${k.ignore}`,
      namespaceBased: true,
    });
  }
  if (Object.hasOwn(labels, 'control-plane')) {
    return verdict(`${f.mesh}.monitored-by`, `namespace ${ns} has the label control-plane`, {
      inject: false,
      reason: 'namespace-control-plane-label',
      detail: `namespace ${ns} has the label control-plane, which ${f.title}'s webhook excludes`,
      namespaceBased: true,
    });
  }
  pass(`${f.mesh}.monitored-by`, `namespace ${ns} has ${k.monitoredBy}: ${s.meshName}`);
  return undefined;
}

/**
 * Step 3 of `decideOsmFamily`: the sidecar-injection annotation, on the pod, else on the namespace.
 * @throws InjectError for a value other than the six accepted ones
 */
function decideByAnnotation(
  input: DriverDecideInput<OsmSettings>,
  { verdict, pass }: OsmSteps,
): DriverDecision | undefined {
  const f = input.settings.flavor;
  const k = keys(f);
  const ns = input.namespace;
  const podValue = input.podMeta.annotations?.[k.injection];
  const nsValue = input.namespaceInfo?.annotations[k.injection];
  const podSays = podValue === undefined ? undefined : readSwitch(podValue);
  if (podValue !== undefined && podSays === undefined) {
    throw new InjectError(
      `invalid value ${quoteData(podValue)} of pod annotation ${k.injection}: expected enabled, yes, true, disabled, no or false (case-insensitive); ${f.title} rejects the pod`,
      { field: `metadata.annotations[${k.injection}]`, code: 'BAD_ANNOTATION' },
    );
  }
  const nsSays = nsValue === undefined ? undefined : readSwitch(nsValue);
  if (nsValue !== undefined && nsSays === undefined) {
    throw new InjectError(
      `invalid value ${quoteData(nsValue)} of annotation ${k.injection} on Namespace ${ns}: expected enabled, yes, true, disabled, no or false (case-insensitive); ${f.title} rejects every pod of the namespace`,
      { code: 'BAD_ANNOTATION' },
    );
  }
  if (podSays !== undefined) {
    const detail = `pod annotation ${k.injection} is "${podValue}"${nsValue !== undefined ? ` (namespace says "${nsValue}")` : ''}`;
    return verdict(`${f.mesh}.sidecar-injection`, detail, {
      inject: podSays,
      reason: podSays ? 'pod-annotation-enabled' : 'pod-annotation-disabled',
      detail,
    });
  }
  if (nsSays !== undefined) {
    const detail = `namespace ${ns} annotation ${k.injection} is "${nsValue}" and the pod has none`;
    return verdict(`${f.mesh}.sidecar-injection`, detail, {
      inject: nsSays,
      reason: nsSays ? 'namespace-annotation-enabled' : 'namespace-annotation-disabled',
      detail,
      namespaceBased: true,
    });
  }
  pass(`${f.mesh}.sidecar-injection`, `no ${k.injection} annotation on the pod or namespace ${ns}`);
  return undefined;
}
