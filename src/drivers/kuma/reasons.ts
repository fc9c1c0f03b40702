/**
 * The reason codes of the Kuma driver's decision (`./decide.ts`), as data: each code's description (reports,
 * SARIF rule descriptions, `explain`) and whether it is an opt-out (`spec.check.forbidOptOut`).
 */

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
