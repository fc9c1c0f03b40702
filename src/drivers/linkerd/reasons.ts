/**
 * The reason codes of the Linkerd driver's decision (`./decide.ts`), as data: each code's description (reports,
 * SARIF rule descriptions, `explain`) and whether it is an opt-out (`spec.check.forbidOptOut`).
 */
import type { ReasonInfo } from '../../contract/driver.ts';

/** The reasons of Linkerd's decision (`./decide.ts`): the `linkerd.io/inject` annotation of the pod or its namespace. */
export const LINKERD_REASON_INFO: Readonly<Record<string, ReasonInfo>> = {
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

/** Every reason code of Linkerd's decision (the keys of {@link LINKERD_REASON_INFO}). */
export const LINKERD_REASONS: readonly string[] = Object.keys(LINKERD_REASON_INFO);
