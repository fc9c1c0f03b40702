/**
 * The reason codes of the Istio driver's decision (`./decide.ts`, webhook routing `./webhook.ts`), as data: each
 * code's description (reports, SARIF rule descriptions, `explain`) and whether it is an opt-out
 * (`spec.check.forbidOptOut`).
 */
import type { ReasonInfo } from '../../contract/driver.ts';

/** The reasons of Istio's decision (`./decide.ts`, `./webhook.ts`). */
export const ISTIO_REASON_INFO: Readonly<Record<string, ReasonInfo>> = {
  'label-true': { description: 'the pod label sidecar.istio.io/inject is "true"' },
  'label-false': { description: 'the pod label sidecar.istio.io/inject is "false"', optOut: true },
  'annotation-true': { description: 'the pod annotation sidecar.istio.io/inject is "true"' },
  'annotation-false': { description: 'the pod annotation sidecar.istio.io/inject is "false"', optOut: true },
  'webhook-not-selected': { description: 'no Istio injection webhook selects the pod' },
  'webhook-namespace-label': { description: 'an Istio webhook selects the namespace label' },
  'webhook-object-label': { description: 'an Istio webhook selects the pod label' },
  'webhook-namespace-default': { description: 'the default Istio webhook selects the namespace' },
  'ambient-enrolled': {
    description: 'spec.istio.ambient is prefer and the labels enrol the pod in ambient (istio.io/dataplane-mode)',
  },
};

/** Every reason code of Istio's decision (the keys of {@link ISTIO_REASON_INFO}). */
export const ISTIO_REASONS: readonly string[] = Object.keys(ISTIO_REASON_INFO);
