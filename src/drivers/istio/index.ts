/**
 * The Istio driver: decides with Istio's own rules (`./decide.ts`, webhook routing in `./webhook.ts`), injects
 * Istio's sidecar into pod templates the way `istioctl kube-inject` does (templates rendered by `./render.ts`,
 * Go post-processing ported in `./inject.ts` and its modules), and reads back what it injected from the
 * `sidecar.istio.io/status` annotation (not taken on trust: `untrustedStatusItem`), and undoes it for uninject
 * (`./uninject.ts`). Config section `spec.istio` (`./config.ts`, `./config.schema.json`).
 */
import type { JsonObject } from '../../model.ts';
import type { MeshDriver } from '../driver.ts';
import { loadIstioConfig, type IstioSettings } from './config.ts';
import { withInjectorConfigMap } from './configmap-source.ts';
import { decideIstio } from './decide.ts';
import { injectIstioPod, injectionSummary } from './inject.ts';
import { parseInjectionStatus, STATUS_ANNOTATION, untrustedStatusError, untrustedStatusItem } from './status.ts';
import { uninjectIstio } from './uninject.ts';
import { istioNativeSidecarsAuto } from './native-auto.ts';
import { OVERRIDES_ANNOTATION, parseOverrides } from './overrides.ts';

export type { IstioSettings } from './config.ts';

/** The `istio` mesh driver. `inject` throws `InjectError` for invalid annotations and template failures. */
export const istioDriver: MeshDriver<IstioSettings> = {
  name: 'istio',
  reasons: ['label-true', 'label-false', 'annotation-true', 'annotation-false', 'webhook-not-selected', 'webhook-namespace-label', 'webhook-object-label', 'webhook-namespace-default'],
  loadConfig: loadIstioConfig,
  fromInput: withInjectorConfigMap,
  decide: decideIstio,
  inject(req) {
    const { pod, warnings, sources } = injectIstioPod(req);
    const summary = injectionSummary(req.settings);
    return { pod, summary: sources ? `${summary}; ${sources}` : summary, warnings };
  },
  inventory(pod) {
    const raw = pod.metadata.annotations?.[STATUS_ANNOTATION];
    if (raw === undefined) return undefined;
    const status = parseInjectionStatus(raw);
    // A container the template patched (grpc-simple, grpc-agent patch the app's) is one whose original
    // `proxy.istio.io/overrides` records; uninject puts that back and proves it by re-injection (./uninject.ts).
    const recorded = status ? parseOverrides(pod.metadata.annotations?.[OVERRIDES_ANNOTATION]) : undefined;
    const names = (list: readonly JsonObject[]) => list.map((c) => String(c.name));
    const untrusted = status && recorded
      ? untrustedStatusItem(status, pod.metadata.annotations, { containers: names(recorded.containers), initContainers: names(recorded.initContainers) })
      : undefined;
    if (untrusted) throw untrustedStatusError(untrusted);
    return {
      statusAnnotation: STATUS_ANNOTATION,
      containers: status?.containers ?? [],
      initContainers: status?.initContainers ?? [],
      volumes: status?.volumes ?? [],
      imagePullSecrets: status?.imagePullSecrets ?? [],
    };
  },
  uninject: uninjectIstio,
  nativeSidecarsAuto: istioNativeSidecarsAuto,
};
