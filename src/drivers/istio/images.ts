import { getIn, isJsonObject, objectAt } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import { goSprint } from '../../render/go-values.ts';

/** Pod annotation selecting the proxy image flavour (`default`, `distroless`, `debug`, ...). */
export const PROXY_IMAGE_TYPE_ANNOTATION = 'sidecar.istio.io/proxyImageType';
/** Pod annotation replacing the whole proxy image when it contains a `/`. */
export const PROXY_IMAGE_ANNOTATION = 'sidecar.istio.io/proxyImage';

/** Image types Istio publishes as tag suffixes (`-distroless`, `-debug`); Istio `KnownImageTypes`. */
const KNOWN_IMAGE_TYPES = ['distroless', 'debug'];

function stringOr(v: Json | undefined, fallback: string): string {
  return typeof v === 'string' && v !== '' ? v : fallback;
}

/**
 * Istio `updateImageTypeIfPresent` (pkg/kube/inject/inject.go): strips a known `-distroless`/`-debug`
 * suffix from `tag`, then appends `-<imageType>` unless the type is empty (tag unchanged, suffix kept)
 * or `default` (suffix stripped, nothing appended).
 */
export function applyImageType(tag: string, imageType: string): string {
  if (imageType === '') return tag;
  let base = tag;
  for (const known of KNOWN_IMAGE_TYPES) {
    if (base.endsWith(`-${known}`)) {
      base = base.slice(0, base.length - known.length - 1);
      break;
    }
  }
  return imageType === 'default' ? base : `${base}-${imageType}`;
}

/**
 * The image type in force (Istio `ProxyImage`): `values.global.variant`, replaced by
 * `ProxyConfig.image.imageType` when the ProxyConfig has an `image` (even an empty one), replaced by
 * the `sidecar.istio.io/proxyImageType` annotation when present.
 */
function imageTypeOf(
  values: JsonObject,
  proxyConfig: JsonObject,
  annotations: Record<string, string> | undefined,
): string {
  let imageType = stringOr(objectAt(values, 'global').variant, '');
  const image = getIn(proxyConfig, ['image']);
  if (isJsonObject(image)) imageType = typeof image.imageType === 'string' ? image.imageType : '';
  const fromAnnotation = annotations?.[PROXY_IMAGE_TYPE_ANNOTATION];
  if (fromAnnotation !== undefined) imageType = fromAnnotation;
  return imageType;
}

function imageUrl(values: JsonObject, imageName: string, imageType: string): string {
  const global = objectAt(values, 'global');
  const hub = typeof global.hub === 'string' ? global.hub : '';
  const tagValue = global.tag;
  const tag = tagValue === undefined || tagValue === null ? '' : goSprint(tagValue);
  return `${hub}/${imageName}:${applyImageType(tag, imageType)}`;
}

/**
 * `.ProxyImage` of the template data (Istio `ProxyImage`): `<hub>/<global.proxy.image|proxyv2>:<tag>`
 * with the image type applied (see {@link applyImageType}). Example: hub `docker.io/istio`, tag
 * `1.31.0`, type `distroless` → `docker.io/istio/proxyv2:1.31.0-distroless`. The template still
 * prefers a value containing `/` from `sidecar.istio.io/proxyImage` or `global.proxy.image`.
 */
export function resolveProxyImage(
  values: JsonObject,
  proxyConfig: JsonObject,
  annotations?: Record<string, string>,
): string {
  const name = stringOr(objectAt(values, 'global', 'proxy').image, 'proxyv2');
  return imageUrl(values, name, imageTypeOf(values, proxyConfig, annotations));
}

/**
 * `.ProxyInitImage` of the template data (Istio `ProxyInitImage`): as {@link resolveProxyImage} with
 * `global.proxy_init.image` as the image name.
 */
export function resolveProxyInitImage(
  values: JsonObject,
  proxyConfig: JsonObject,
  annotations?: Record<string, string>,
): string {
  const name = stringOr(objectAt(values, 'global', 'proxy_init').image, 'proxyv2');
  return imageUrl(values, name, imageTypeOf(values, proxyConfig, annotations));
}
