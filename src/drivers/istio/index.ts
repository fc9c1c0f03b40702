/**
 * The Istio driver: injects Istio's sidecar into pod templates the way `istioctl kube-inject` does (templates
 * rendered by `render.ts`, Go post-processing ported in `inject.ts` and its modules). Pure.
 */
import type { InjectRequest, InjectResponse, MeshDriver } from '../driver.ts';
import { injectIstioPod, injectionSummary } from './inject.ts';
import { STATUS_ANNOTATION } from './status.ts';

/** The `istio` mesh driver. `inject` throws `InjectError` for invalid annotations and template failures. */
export const istioDriver: MeshDriver = {
  name: 'istio',
  inject(req: InjectRequest): InjectResponse {
    const { pod, warnings } = injectIstioPod(req);
    return { pod, summary: injectionSummary(req.config), warnings };
  },
  previousInjection(pod) {
    return pod.metadata.annotations?.[STATUS_ANNOTATION] !== undefined ? STATUS_ANNOTATION : undefined;
  },
};
