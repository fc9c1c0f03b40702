import type { ActiveMesh } from '../contract/driver.ts';
import type {
  Config,
  Decision,
  DecisionReason,
  DecisionStep,
  NamespaceInfo,
  PodMeta,
  PodTemplate,
  SharedDecisionReason,
} from '../model.ts';
import { formatSelector, isEmptySelector, matchesSelector } from './label-selector.ts';

/** The reason codes of the shared rules (`SharedDecisionReason`), in decision order. */
export const SHARED_REASONS: readonly SharedDecisionReason[] = [
  'host-network',
  'ignored-namespace',
  'namespace-not-selected',
  'never-inject-selector',
  'always-inject-selector',
  'policy-enabled',
  'policy-disabled',
];

/** Label the API server puts on every namespace (Kubernetes >= 1.21); webhooks and selectors see it. */
export const NS_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Everything the injection decision reads for one workload. */
export interface DecideInput {
  /** `metadata` of the pod template as the admission webhook sees it (the pod's own labels/annotations). */
  podMeta: PodMeta;
  /** `spec` of the pod template (`hostNetwork`; drivers may read more). */
  podSpec: PodTemplate['spec'];
  /** The workload's kind, handed to the driver (`DriverDecideInput.kind`); absent: not known. */
  kind?: string;
  /** Effective namespace of the workload (`metadata.namespace`, else the default namespace). */
  namespace: string;
  /** The namespace's labels/annotations when known (a `Namespace` object in the input or `spec.namespaces`). */
  namespaceInfo?: NamespaceInfo;
  config: Config;
  /** The selected driver, for its own opt-in/opt-out rules. */
  mesh: ActiveMesh;
}

/**
 * Decides whether one workload's pod template gets a sidecar. Shared rules first, then the driver's, then
 * the shared selectors and policy (first hit wins; every step is recorded in `trace`):
 * 1. `hostNetwork` → no (`host-network`; not intended: a warning, meshes skip such pods), unless the driver
 *    handles host-network pods itself (trait `hostNetwork: 'driver'`: Linkerd refuses them with an error).
 * 2. namespace in `config.ignoredNamespaces` → no (`ignored-namespace`).
 * 3. `config.namespaceSelector` not matching the namespace labels (plus `kubernetes.io/metadata.name`) → no
 *    (`namespace-not-selected`); an absent selector selects every namespace.
 * 4. the driver's own rules (`MeshDriver.decide`: Istio's webhook routing and `sidecar.istio.io/inject`,
 *    Linkerd's `linkerd.io/inject`, OSM's `monitored-by` and `sidecar-injection`, ...).
 * 5. `neverInjectSelector` (`never-inject-selector`), then `alwaysInjectSelector` (`always-inject-selector`);
 *    empty selectors are ignored, as Istio does.
 * 6. `config.policy` (`policy-enabled` / `policy-disabled`). A driver decision's `fallback` is taken as its
 *    `fallback` trait says: `instead-of-policy` (default; Linkerd's namespace `linkerd.io/inject`) decides in
 *    place of the policy; `with-policy` (Istio's selecting webhook) replaces the reason of `policy-enabled` and
 *    is named in the details of steps 5 and 6.
 * This is Istio's `injectRequired` order (pkg/kube/inject/inject.go): an explicit pod opt-in/opt-out wins
 * over the never/always selectors.
 *
 * `intended` is true when the outcome is what the configuration asks for. It is false for `hostNetwork`, and
 * for namespace-based skips where the namespace is unknown (no labels to go by: `unknownNamespace` names it,
 * and the run reports it once), so that those surface as warnings rather than info. With
 * `config.unknownNamespaces: assume-selected` such a namespace passes `namespaceSelector` and the driver's
 * namespace-based skips (a step `unknown-namespace` in the trace), so the later rules decide.
 *
 * @throws InjectError when the driver finds a value its mesh would refuse (an error result for the workload)
 *
 * Long by design: ported recipe (Istio `injectRequired`, one step per rule in its order; splitting it would hide the precedence).
 */
export function decide(input: DecideInput): Decision {
  const { config, namespace } = input;
  const trace: DecisionStep[] = [];
  const warnings: string[] = [];
  const unknownNs = input.namespaceInfo === undefined;
  let tags: Record<string, string> | undefined; // the driver's (`DriverDecision.tags`), once it has decided
  const done = (
    inject: boolean,
    reason: DecisionReason,
    detail: string,
    extra: { intended?: boolean; unknownNamespace?: boolean } = {},
  ): Decision => {
    const last = trace[trace.length - 1];
    if (last) last.outcome = 'decided';
    return {
      inject,
      reason,
      detail,
      intended: extra.intended ?? true,
      warnings,
      trace,
      ...(extra.unknownNamespace && unknownNs ? { unknownNamespace: namespace } : {}),
      ...(tags ? { tags } : {}),
    };
  };
  const step = (rule: string, saw: string) => void trace.push({ rule, saw, outcome: 'pass' });

  const hostNetwork = input.podSpec.hostNetwork === true;
  const driverDecides = input.mesh.traits.hostNetwork === 'driver';
  step(
    'host-network',
    `spec.hostNetwork is ${hostNetwork}${hostNetwork && driverDecides ? ` (left to the ${input.mesh.name} driver)` : ''}`,
  );
  if (hostNetwork && !driverDecides) {
    return done(false, 'host-network', 'spec.hostNetwork is true: pods on the host network are never injected', {
      intended: false,
    });
  }
  const ignored = config.ignoredNamespaces.includes(namespace);
  step('ignored-namespaces', `namespace ${namespace} is${ignored ? '' : ' not'} in ignoredNamespaces`);
  if (ignored) return done(false, 'ignored-namespace', `namespace ${namespace} is in ignoredNamespaces`);

  const nsLabels = namespaceLabels(namespace, input.namespaceInfo);
  // spec.unknownNamespaces: assume-selected: a namespace whose labels are unknown passes every namespace rule.
  const assumed = unknownNs && config.unknownNamespaces === 'assume-selected';
  const known = unknownNs
    ? ` (labels unknown: only ${NS_NAME_LABEL}=${namespace}${assumed ? '; assumed selected: spec.unknownNamespaces' : ''})`
    : '';
  if (config.namespaceSelector) {
    const selected = assumed || matchesSelector(config.namespaceSelector, nsLabels);
    step(
      'namespace-selector',
      `namespace ${namespace}${known} ${selected ? 'matches' : 'does not match'} ${formatSelector(config.namespaceSelector)}`,
    );
    if (!selected) {
      return done(
        false,
        'namespace-not-selected',
        `namespace ${namespace} does not match namespaceSelector (${formatSelector(config.namespaceSelector)})`,
        { intended: !unknownNs, unknownNamespace: true },
      );
    }
  } else {
    step('namespace-selector', 'no namespaceSelector: every namespace is selected');
  }

  const driver = input.mesh.decide({
    podMeta: input.podMeta,
    podSpec: input.podSpec,
    ...(input.kind !== undefined ? { kind: input.kind } : {}),
    hostNetwork,
    namespace,
    ...(input.namespaceInfo ? { namespaceInfo: input.namespaceInfo } : {}),
    namespaceLabels: nsLabels,
    config,
  });
  warnings.push(...driver.warnings);
  trace.push(...driver.trace);
  if (driver.tags && Object.keys(driver.tags).length > 0) tags = driver.tags;
  const v = driver.verdict;
  if (v && assumed && v.namespaceBased === true && !v.inject) {
    step(
      'unknown-namespace',
      `namespace ${namespace}${known}: the driver's namespace rule (${v.reason}) is passed over`,
    );
  } else if (v) {
    const nsBased = v.namespaceBased === true;
    return done(v.inject, v.reason, v.detail, {
      intended: v.intended ?? (v.inject || !(nsBased && unknownNs)),
      unknownNamespace: nsBased && !v.inject,
    });
  }
  const fallback = driver.fallback;
  const withPolicy = fallback !== undefined && input.mesh.traits.fallback === 'with-policy';
  const routed = withPolicy ? `; ${fallback.detail}` : '';
  const labels = input.podMeta.labels ?? {};
  const never = firstMatch(config.neverInjectSelector, labels);
  step(
    'never-inject-selector',
    never >= 0 ? `pod labels match neverInjectSelector[${never}]` : `no neverInjectSelector matches the pod labels`,
  );
  const neverMatched = config.neverInjectSelector[never];
  if (neverMatched !== undefined) {
    return done(
      false,
      'never-inject-selector',
      `pod labels match neverInjectSelector[${never}] (${formatSelector(neverMatched)})${routed}`,
    );
  }
  const always = firstMatch(config.alwaysInjectSelector, labels);
  step(
    'always-inject-selector',
    always >= 0 ? `pod labels match alwaysInjectSelector[${always}]` : `no alwaysInjectSelector matches the pod labels`,
  );
  const alwaysMatched = config.alwaysInjectSelector[always];
  if (alwaysMatched !== undefined) {
    return done(
      true,
      'always-inject-selector',
      `pod labels match alwaysInjectSelector[${always}] (${formatSelector(alwaysMatched)})${routed}`,
    );
  }
  const why = driver.undecided ?? 'nothing on the pod decides';
  if (fallback && !withPolicy) {
    step('policy', `${fallback.detail} (in place of policy ${config.policy})`);
    return done(fallback.inject, fallback.reason, `${why}; ${fallback.detail}`);
  }
  step('policy', `policy is ${config.policy}`);
  if (config.policy === 'enabled' && withPolicy && fallback.inject) {
    return done(true, fallback.reason, `${fallback.detail}; ${why}; policy is enabled`);
  }
  return config.policy === 'enabled'
    ? done(true, 'policy-enabled', `${why}; policy is enabled`)
    : done(false, 'policy-disabled', `${why}; policy is disabled${routed}`);
}

/** Namespace labels as a webhook sees them: the known labels plus `kubernetes.io/metadata.name: <name>`. */
export function namespaceLabels(namespace: string, info: NamespaceInfo | undefined): Record<string, string> {
  return { ...(info?.labels ?? {}), [NS_NAME_LABEL]: namespace };
}

/** Index of the first non-empty selector matching `labels`, or -1 (Istio skips empty selectors). */
function firstMatch(selectors: Config['neverInjectSelector'], labels: Record<string, string>): number {
  return selectors.findIndex((s) => !isEmptySelector(s) && matchesSelector(s, labels));
}
