/**
 * The `InjectionFuncmap` members Istio 1.30 added (pkg/kube/inject/template.go at tag 1.30.0, unchanged at
 * 1.31.0-rc.0): `omitNil` and `otelResourceAttributes`, on the Go template engine's values. Written from their Go
 * behaviour; the Handlebars ports of the built-in templates live in `./template-functions.ts`.
 */
import { holdsPlan, noPlanFor, planText } from '../../render/plan-values.ts';
import { setOwn } from '../../json.ts';
import { spendWork } from '../../render/budget.ts';
import { MAP_ANY, NIL, SLICE_ANY, STRING, Value, dynamic } from '../../render/gotemplate/value.ts';

/** A JSON map as Go's `map[string]any` (not an array, not a boxed Value, not a plan placeholder). */
function isPlainMap(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && !(x instanceof Value) && !planText(x);
}

/** The element an `interface {}` slot holds, unboxed to its JSON form when it is a map or slice of `any`. */
function unbox(x: unknown): unknown {
  if (x instanceof Value && (x.t === MAP_ANY || x.t === SLICE_ANY) && x.v !== null) return x.v;
  return x;
}

/** Whether `x` is Go's nil interface (JSON `null`, an absent element, or a boxed nil interface). */
function isNilElem(x: unknown): boolean {
  return x === null || x === undefined || (x instanceof Value && x.t.kind === 'interface' && x.v === null);
}

/** Whether omitting nils would change `x` (Go's first pass, `omitNilInternal`'s `changed`). */
function hasNil(x: unknown): boolean {
  spendWork(1);
  if (isNilElem(x)) return true;
  const u = unbox(x);
  if (Array.isArray(u) && !planText(u)) return u.some(hasNil);
  if (isPlainMap(u)) return Object.values(u).some(hasNil);
  return false;
}

/**
 * Go `omitNil` on one element: nil → `undefined` (dropped); a `map[string]any` or `[]any` holding a nil anywhere
 * below is copied without the nils, and becomes `undefined` when nothing is left; anything else (including an
 * empty map without nils, a typed nil map, `map[string]string`) is kept as it is.
 */
function omitNilElem(x: unknown): unknown {
  spendWork(1);
  if (isNilElem(x)) return undefined;
  if (!hasNil(x)) return x;
  const u = unbox(x);
  if (Array.isArray(u)) {
    const out = u.map(omitNilElem).filter((e) => e !== undefined);
    return out.length === 0 ? undefined : out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(u as Record<string, unknown>)) {
    const f = omitNilElem(v);
    if (f !== undefined) setOwn(out, k, f);
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * Istio `omitNil(v any) any` (1.30+): recursively removes nil values from `map[string]any` and `[]any`; a map or
 * slice that had nils and is left empty becomes nil (and is itself dropped from its parent). Values without a nil
 * come back unchanged. Example: `{limits: null, requests: {cpu: 10m, memory: null}}` → `{requests: {cpu: 10m}}`.
 */
export function goOmitNil(v: Value): Value {
  if (v.t.kind === 'invalid' || (v.t.kind === 'interface' && v.v === null)) return NIL;
  if ((v.t !== MAP_ANY && v.t !== SLICE_ANY) || v.v === null) return v;
  const out = omitNilElem(v.v);
  return out === undefined ? NIL : out === v.v ? v : dynamic(out);
}

const OTEL = 'resource.opentelemetry.io/';

/** Istio `parseImageTagDigest`: `[registry[:port]/]name[:tag][@digest]` → tag and digest (each may be ""). */
function tagAndDigest(image: string): { tag: string; digest: string } {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : '';
  const ref = at >= 0 ? image.slice(0, at) : image;
  const colon = ref.lastIndexOf(':');
  return { tag: colon > ref.lastIndexOf('/') ? ref.slice(colon + 1) : '', digest };
}

/** Whether the mesh config has an `opentelemetry` extension provider with `serviceAttributeEnrichment: OTEL_SEMANTIC_CONVENTIONS`. */
export function meshEnrichesOtel(mesh: unknown): boolean {
  const providers = isPlainMap(mesh) ? mesh.extensionProviders : undefined;
  if (!Array.isArray(providers)) return false;
  return providers.some((p) => {
    const otel = isPlainMap(p) ? p.opentelemetry : undefined;
    return isPlainMap(otel) && otel.serviceAttributeEnrichment === 'OTEL_SEMANTIC_CONVENTIONS';
  });
}

/** `m[key]` of a Go `map[string]string` representation when present and not empty. */
function nonEmpty(m: unknown, key: string): string {
  const v = isPlainMap(m) ? m[key] : undefined;
  return typeof v === 'string' ? v : '';
}

/**
 * Istio `otelResourceAttributes(mc, annotations, labels, namespace, containers)` (1.30+): `""` unless an OpenTelemetry
 * provider of the mesh config enriches with OTel semantic conventions; else comma-joined
 * `service.namespace=` (annotation `resource.opentelemetry.io/service.namespace`, else the namespace argument if not
 * empty), `service.version=` (annotation, else label `app.kubernetes.io/version`, else — with exactly one container —
 * its image's `tag@digest`, digest or tag) and `service.instance.id=` (annotation, else
 * `<namespace>.$(POD_NAME).<first container>` from the namespace argument); an attribute with no source is left out.
 */
export function goOtelResourceAttributes(mc: Value, annos: Value, labels: Value, ns: Value, containers: Value): Value {
  if (!meshEnrichesOtel(mc.v)) return new Value(STRING, '');
  const namespace = ns.v as string;
  const list = (containers.v as Array<Record<string, unknown>> | null) ?? [];
  const attrs: string[] = [];
  const svcNs = nonEmpty(annos.v, `${OTEL}service.namespace`) || namespace;
  if (svcNs !== '') attrs.push(`service.namespace=${svcNs}`);
  let version = nonEmpty(annos.v, `${OTEL}service.version`) || nonEmpty(labels.v, 'app.kubernetes.io/version');
  if (version === '' && list.length === 1) {
    const { tag, digest } = tagAndDigest(String(list[0]?.image ?? ''));
    version = tag !== '' && digest !== '' ? `${tag}@${digest}` : digest || tag;
  }
  if (version !== '') attrs.push(`service.version=${version}`);
  const instance = nonEmpty(annos.v, `${OTEL}service.instance.id`);
  if (instance !== '') attrs.push(`service.instance.id=${instance}`);
  else if (list.length > 0) attrs.push(`service.instance.id=${namespace}.$(POD_NAME).${String(list[0]?.name ?? '')}`);
  return new Value(STRING, attrs.join(','));
}

/**
 * Sidecar-plan rule of `otelResourceAttributes`: without OTel semantic-convention enrichment in the mesh config the
 * result is `""` whatever the pod holds, so the plan goes on; otherwise (or when the mesh config itself is plan data)
 * the plan stops, naming the pod fields the attribute text is built from.
 */
export function otelPlanRule(a: Value[], real: (...a: Value[]) => Value): Value {
  if (holdsPlan(a[0]?.v)) throw noPlanFor([a[0]?.v], 'reads the mesh config as');
  if (meshEnrichesOtel(a[0]?.v))
    throw noPlanFor(
      a.map((x) => x.v),
      'builds OTEL_RESOURCE_ATTRIBUTES from',
    );
  return real(...a);
}
