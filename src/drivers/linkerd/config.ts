/**
 * The Linkerd driver's config section: `spec.linkerd` of a SidecarInjection, or the `linkerd.*` keys of the
 * ConfigMap form (schema fragment: `./config.schema.json`). `values` are the linkerd-control-plane Helm
 * values, merged onto the chart defaults the way Helm does (`./values.ts`).
 */
import { parseDocument } from 'yaml';
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { quoteValue } from '../../config/schema-issues.ts';
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import type { DriverConfigInput, DriverConfigResult, NativeSidecarsAuto } from '../../contract/driver.ts';
import { INJECT_ANNOTATION, isConfigKey, unknownConfigKeyWarnings } from './annotations.ts';
import { coalesceValues, LINKERD_CHART_VALUES, readValues, type LinkerdValues } from './values.ts';

/** Linkerd-specific settings (`spec.linkerd`), validated and defaulted. */
export interface LinkerdSettings {
  /** `linkerd inject --manual`: write the proxy into the pod template; false: only the annotations the webhook reads. */
  manual: boolean;
  /** Value of `linkerd.io/created-by` on manually injected pods (default `meshinject`). */
  createdBy: string;
  /** `--enable-debug-sidecar`: annotate `config.linkerd.io/enable-debug-sidecar: "true"` (and add `linkerd-debug` with `manual`). */
  debugSidecar: boolean;
  /** Namespace of the Linkerd control plane (`linkerd inject -L`, default `linkerd`). */
  controlPlaneNamespace: string;
  /** Annotate `Namespace` objects of the input with `linkerd.io/inject: enabled`, as `linkerd inject` does (default true). */
  annotateNamespaces: boolean;
  /** The typed Helm values (chart defaults + `spec.linkerd.values`; `proxy.nativeSidecar` resolved with `spec.nativeSidecars`). */
  values: LinkerdValues;
  /**
   * Annotations `linkerd inject` writes for its proxy flags (`getOverrideAnnotations`, cli/cmd/inject.go): added to
   * every injected pod template that does not set the key itself, to `Namespace` objects, and (opaque ports only)
   * to `Service` objects.
   */
  overrideAnnotations: Record<string, string>;
}

/** `spec.linkerd` as the schema fragment admits it. */
interface RawLinkerd {
  manual?: boolean | string;
  createdBy?: string;
  debugSidecar?: boolean | string;
  controlPlaneNamespace?: string;
  annotateNamespaces?: boolean | string;
  values?: JsonObject | string;
  overrideAnnotations?: Record<string, string>;
}

const asBool = (v: boolean | string | undefined): boolean | undefined =>
  v === undefined ? undefined : v === true || v === 'true';

/**
 * Loads `spec.linkerd` (Linkerd driver `loadConfig`). Defaults: manual false, createdBy `meshinject`,
 * debugSidecar false, controlPlaneNamespace `linkerd`, annotateNamespaces true, values = the chart defaults,
 * overrideAnnotations `{}`.
 *
 * Checks: `values` must parse (a string is the `values` YAML of a cluster's `linkerd-config` ConfigMap,
 * pasted as is) and have the chart's types; with `manual: true` `values.identityTrustAnchorsPEM` is
 * required (the chart's `required` check: the proxy cannot get an identity without it); override annotation
 * keys must be `linkerd.io/inject` or `config.*linkerd.io/` keys (an unknown config key is a warning naming
 * the nearest one). Native sidecars: an explicit `spec.nativeSidecars` wins over `values.proxy.nativeSidecar`
 * (a warning when both are set and differ); otherwise the values decide (chart default true) and the
 * resolved setting is returned for `Config.nativeSidecars`.
 */
export function loadLinkerdConfig(input: DriverConfigInput): DriverConfigResult<LinkerdSettings> {
  const raw = input.raw as RawLinkerd;
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const at = (key: string) => `${input.path}.${key}`;
  const userValues = parseValues(raw.values, at('values'), issues);
  const values = readValues(coalesceValues(LINKERD_CHART_VALUES, userValues), at('values'), issues);
  const manual = asBool(raw.manual) ?? false;

  const explicitNative = input.explicit.nativeSidecars;
  const userNative = isJsonObject(userValues.proxy) ? userValues.proxy.nativeSidecar : undefined;
  if (explicitNative !== undefined) {
    if (typeof userNative === 'boolean' && userNative !== explicitNative) {
      warnings.push(
        `${input.fromConfigMap ? 'data' : 'spec'}.nativeSidecars (${explicitNative}) overrides ${at('values')}.proxy.nativeSidecar (${userNative})`,
      );
    }
    values.proxy.nativeSidecar = explicitNative;
  }
  if (manual && values.identityTrustAnchorsPEM.trim() === '') {
    issues.push({
      path: at('values.identityTrustAnchorsPEM'),
      message: `${at('values.identityTrustAnchorsPEM')} is required with ${at('manual')}: true (the proxy's identity trust anchors; a cluster's are in ConfigMap linkerd-identity-trust-roots, key ca-bundle.crt)`,
    });
  }
  const overrideAnnotations = raw.overrideAnnotations ?? {};
  for (const [k, v] of Object.entries(overrideAnnotations)) {
    if (k === INJECT_ANNOTATION) {
      if (!['enabled', 'ingress', 'disabled'].includes(v))
        issues.push({
          path: `${at('overrideAnnotations')}[${k}]`,
          message: `${at('overrideAnnotations')}[${k}] must be enabled, ingress or disabled; got ${quoteValue(v)}`,
        });
    } else if (!isConfigKey(k)) {
      issues.push({
        path: `${at('overrideAnnotations')}[${k}]`,
        message: `${at('overrideAnnotations')}: ${k} is not a Linkerd override annotation (linkerd.io/inject or config.linkerd.io/*)`,
      });
    }
  }
  warnings.push(...unknownConfigKeyWarnings(overrideAnnotations, `${at('overrideAnnotations')}:`));
  return {
    settings: {
      manual,
      createdBy: raw.createdBy ?? 'meshinject',
      debugSidecar: asBool(raw.debugSidecar) ?? false,
      controlPlaneNamespace: raw.controlPlaneNamespace ?? 'linkerd',
      annotateNamespaces: asBool(raw.annotateNamespaces) ?? true,
      values,
      overrideAnnotations,
    },
    issues,
    warnings,
  };
}

/**
 * `spec.linkerd.values`: an object as is, or a string holding YAML (or JSON), e.g. the `values` key of the
 * cluster's `linkerd-config` ConfigMap. Empty text is `{}`. Pushes an issue and returns `{}` when it does
 * not parse to an object.
 */
/**
 * `spec.nativeSidecars: auto` for Linkerd: the chart's `proxy.nativeSidecar` (GA and default true since linkerd2
 * PR #15267, May 2026, which requires Kubernetes >= 1.29: the proxy injector then adds a native sidecar), unless
 * `values.proxy.nativeSidecar` says false. Values that cannot be read count as the chart's (their problem is
 * reported by `loadLinkerdConfig`).
 */
export function linkerdNativeSidecarsAuto(raw: Record<string, unknown>): NativeSidecarsAuto {
  const user = parseValues(raw.values as JsonObject | string | undefined, 'values', []);
  const values = readValues(coalesceValues(LINKERD_CHART_VALUES, user), 'values', []);
  const userNative = isJsonObject(user.proxy) ? user.proxy.nativeSidecar : undefined;
  if (!values.proxy.nativeSidecar)
    return { because: `Linkerd ${values.linkerdVersion}: values.proxy.nativeSidecar is false` };
  // A release before the default changed (edge before 26.5, any stable-2.x) injects classic sidecars unless told.
  const edge = /^edge-(\d+)\.(\d+)\./.exec(values.linkerdVersion);
  const older =
    /^stable-/.test(values.linkerdVersion) || (edge !== null && Number(edge[1]) * 100 + Number(edge[2]) < 2605);
  if (older && userNative !== true)
    return {
      because: `Linkerd ${values.linkerdVersion}: proxy.nativeSidecar defaults to false before the edge releases of May 2026 (linkerd2 #15267)`,
    };
  return {
    minKube: '1.29',
    because: `Linkerd ${values.linkerdVersion}: proxy.nativeSidecar is true (the chart default since linkerd2 #15267, May 2026), for Kubernetes >= 1.29`,
  };
}

function parseValues(input: JsonObject | string | undefined, path: string, issues: ConfigIssue[]): JsonObject {
  if (input === undefined) return {};
  if (typeof input !== 'string') return input;
  let parsed: Json | undefined;
  try {
    const doc = parseDocument(input, { prettyErrors: false });
    const [error] = doc.errors;
    if (error) throw error;
    parsed = JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null)) as Json;
  } catch (e) {
    issues.push({
      path,
      message: `${path} is a string but not valid YAML: ${String((e as Error).message).split('\n')[0]}`,
    });
    return {};
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isJsonObject(parsed)) {
    issues.push({
      path,
      message: `${path} must hold a YAML object (the chart values); got ${Array.isArray(parsed) ? 'a list' : typeof parsed}`,
    });
    return {};
  }
  return parsed;
}
