import type { NativeSidecarsAuto } from '../../contract/driver.ts';
import { ISTIO_VERSION } from './defaults.ts';

/**
 * `spec.nativeSidecars: auto` for Istio: istiod's `ENABLE_NATIVE_SIDECARS` is a boolean defaulting to false up to
 * 1.26, and from 1.27 `true|false|auto`, defaulting to `auto`, which turns native sidecars on when every node's
 * kubelet runs Kubernetes >= 1.33 (`DetectNativeSidecar`, pkg/kube/inject/webhook.go). The Istio version is
 * `spec.istio.version`, else the built-in chart's (`ISTIO_VERSION`); a version that cannot be read counts as the
 * built-in one.
 */
export function istioNativeSidecarsAuto(raw: Record<string, unknown>): NativeSidecarsAuto {
  const given = typeof raw.version === 'string' && raw.version !== '' ? raw.version : undefined;
  const version = given ?? ISTIO_VERSION;
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  const [major, minor] = m ? [Number(m[1]), Number(m[2])] : [1, 31];
  const label = `Istio ${version}${given ? '' : ' (built-in)'}`;
  if (major > 1 || (major === 1 && minor >= 27)) {
    return {
      minKube: '1.33',
      because: `${label}: ENABLE_NATIVE_SIDECARS=auto (the default from 1.27) injects native sidecars when the nodes run Kubernetes >= 1.33`,
    };
  }
  return { because: `${label}: ENABLE_NATIVE_SIDECARS defaults to false before 1.27` };
}
