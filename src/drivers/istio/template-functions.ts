/**
 * Istio's own template functions (`InjectionFuncmap`, pkg/kube/inject/template.go) that are not shared with
 * other drivers: port lists, Multus networks, OpenTelemetry attributes, `protoToJSON` of the ProxyConfig,
 * `omitNil`, and `env` (which reads nothing: the default argument, as offline injection has no istiod
 * environment). Registered on the Istio driver's engine beside the shared helpers (src/render/).
 */
import type { JsonObject } from '../../model.ts';
import { setOwn } from '../../json.ts';
import { args, asRecord, str, type Helper } from '../../render/template-functions.ts';
import { proxyConfigToJSON } from './proxy-config.ts';
import type { PlanRule } from '../../render/plan-helpers.ts';
import { noPlanFor, planText, taintedPath } from '../../render/plan-values.ts';
import { defined } from '../../checked.ts';

/** Whether `v` holds a null anywhere (Istio `omitNilInternal`'s first pass). */
function holdsNull(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.some(holdsNull);
  const o = asRecord(v);
  return o ? Object.values(o).some(holdsNull) : false;
}

/**
 * Istio `omitNil` (pkg/kube/inject/template.go, 1.30+): recursively drops null values from maps and lists; a map
 * or list that had nulls and is left empty becomes null (and is dropped from its parent). A value without any null
 * comes back unchanged, even an empty map or list (as in Go).
 */
export function omitNil(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (!holdsNull(v)) return v;
  if (Array.isArray(v)) {
    const items = v.map(omitNil).filter((x) => x !== null);
    return items.length === 0 ? null : items;
  }
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(defined(asRecord(v), 'a map that holds null'))) {
    const cleaned = omitNil(val);
    if (cleaned !== null) setOwn(out, k, cleaned);
  }
  return Object.keys(out).length === 0 ? null : out;
}

/** Istio `excludeInboundPort`: appends `port` to the comma list unless it is empty, `0` or present. */
export function excludeInboundPort(port: unknown, list: unknown): string {
  const portStr = str(port).trim();
  const current = str(list);
  if (portStr === '' || portStr === '0') return current;
  const out: string[] = [];
  for (const p of current.split(',')) {
    if (p === portStr) return current;
    if (p.trim() !== '') out.push(p.trim());
  }
  out.push(portStr);
  return out.join(',');
}

/** Istio `includeInboundPorts`: every container's TCP ports (UDP and SCTP skipped), comma-joined. */
export function includeInboundPorts(containers: unknown): string {
  const parts: string[] = [];
  for (const c of Array.isArray(containers) ? containers : []) {
    const ports = asRecord(c)?.ports;
    for (const p of Array.isArray(ports) ? ports : []) {
      const port = asRecord(p);
      if (!port || port.protocol === 'UDP' || port.protocol === 'SCTP') continue;
      parts.push(String(port.containerPort ?? 0));
    }
  }
  return parts.join(',');
}

/**
 * Istio `appendMultusNetwork` (pkg/kube/inject/template.go): adds `network` to a `k8s.v1.cni.cncf.io/networks`
 * value; idempotent. Empty → `network`. A flat list `a, b` becomes `a, b, <network>` unless an entry equals
 * `network` (trimmed). A JSON list (the value has a `]`) that is not a list of objects is returned unchanged
 * (Go's `json.Unmarshal` into `[]map` fails); else `, {"name": ...}` is inserted before the last `]` unless an
 * entry already names it. From Istio 1.26 (`splitNamespace`) a `namespace/name` network (Kubernetes
 * `SplitQualifiedName`) matches an entry with that name and that namespace (absent = "") and is written
 * `{"name": ..., "namespace": ...}`; before, the whole value is the name.
 * Used by the built-in Handlebars templates (1.31 line: `splitNamespace` true) and the Go func map.
 */
export function appendMultusNetworkTo(existing: string, network: string, splitNamespace = true): string {
  if (existing === '') return network;
  const i = existing.lastIndexOf(']');
  if (i !== -1) {
    let networks: unknown;
    try {
      networks = JSON.parse(existing);
    } catch {
      return existing;
    }
    if (!Array.isArray(networks) || networks.some((n) => n !== null && (typeof n !== 'object' || Array.isArray(n))))
      return existing;
    const slash = network.indexOf('/');
    const ns = splitNamespace && slash >= 0 ? network.slice(0, slash) : '';
    const name = splitNamespace && slash >= 0 ? network.slice(slash + 1) : network;
    for (const n of networks as Array<Record<string, unknown> | null>) {
      if (n?.name !== name) continue;
      if (!splitNamespace || (n.namespace ?? '') === ns) return existing;
    }
    const entry = ns === '' ? `, {"name": "${name}"}` : `, {"name": "${name}", "namespace": "${ns}"}`;
    return existing.slice(0, i) + entry + existing.slice(i);
  }
  for (const n of existing.split(',')) if (n.trim() === network) return existing;
  return `${existing}, ${network}`;
}

/** The Handlebars helper: {@link appendMultusNetworkTo} with the templates' values read as strings. */
export function appendMultusNetwork(existing: unknown, network: unknown): string {
  return appendMultusNetworkTo(str(existing), str(network));
}

const OTEL_PREFIX = 'resource.opentelemetry.io/';

function imageVersion(image: string): string {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : '';
  const ref = at >= 0 ? image.slice(0, at) : image;
  const colon = ref.lastIndexOf(':');
  const tag = colon > ref.lastIndexOf('/') ? ref.slice(colon + 1) : '';
  if (tag && digest) return `${tag}@${digest}`;
  return tag || digest;
}

/** Whether a mesh config has an OpenTelemetry provider with `serviceAttributeEnrichment: OTEL_SEMANTIC_CONVENTIONS`. */
function otelEnabled(mesh: unknown): boolean {
  const providers = asRecord(mesh)?.extensionProviders;
  return (
    Array.isArray(providers) &&
    providers.some((p) => {
      const otel = asRecord(asRecord(p)?.opentelemetry);
      return otel?.serviceAttributeEnrichment === 'OTEL_SEMANTIC_CONVENTIONS';
    })
  );
}

/**
 * Istio `otelResourceAttributes`: `""` unless an `opentelemetry` extension provider of the mesh sets
 * `serviceAttributeEnrichment: OTEL_SEMANTIC_CONVENTIONS`; otherwise
 * `service.namespace=<ns>,service.version=<v>,service.instance.id=<id>` where each value comes from the
 * `resource.opentelemetry.io/service.*` annotation when set, else the namespace, the
 * `app.kubernetes.io/version` label or the single container's image tag, and `<ns>.$(POD_NAME).<first container>`.
 * Attributes without a value are left out.
 */
export function otelResourceAttributes(
  mesh: unknown,
  annos: unknown,
  labels: unknown,
  ns: unknown,
  containers: unknown,
): string {
  if (!otelEnabled(mesh)) return '';
  const a = asRecord(annos) ?? {};
  const l = asRecord(labels) ?? {};
  const list = (Array.isArray(containers) ? containers : []).map(asRecord).filter((c) => c && c.name !== 'istio-proxy');
  const namespace = str(a[`${OTEL_PREFIX}service.namespace`]) || str(ns);
  let version = str(a[`${OTEL_PREFIX}service.version`]) || str(l['app.kubernetes.io/version']);
  if (!version && list.length === 1) version = imageVersion(str(list[0]?.image));
  const first = str(list[0]?.name);
  const instance = str(a[`${OTEL_PREFIX}service.instance.id`]) || (first ? `${namespace}.$(POD_NAME).${first}` : '');
  const parts: string[] = [];
  if (namespace) parts.push(`service.namespace=${namespace}`);
  if (version) parts.push(`service.version=${version}`);
  if (instance) parts.push(`service.instance.id=${instance}`);
  return parts.join(',');
}

/** Istio's functions by name, added to the shared helpers on the Istio engine. */
export const ISTIO_TEMPLATE_FUNCTIONS: Readonly<Record<string, Helper>> = {
  excludeInboundPort: (...raw) => {
    const [p, l] = args(raw);
    return excludeInboundPort(p, l);
  },
  includeInboundPorts: (...raw) => includeInboundPorts(args(raw)[0]),
  protoToJSON: (...raw) => proxyConfigToJSON(asRecord(args(raw)[0]) as JsonObject | undefined),
  appendMultusNetwork: (...raw) => {
    const [e, n] = args(raw);
    return appendMultusNetwork(e, n);
  },
  env: (...raw) => args(raw)[1] ?? '',
  omitNil: (...raw) => omitNil(args(raw)[0]),
  otelResourceAttributes: (...raw) => {
    const [m, a, l, n, c] = args(raw);
    return otelResourceAttributes(m, a, l, n, c);
  },
};

/**
 * Plan rules of Istio's functions (`src/render/plan-helpers.ts`): `otelResourceAttributes` reads the pod only
 * when the mesh config enables OpenTelemetry semantic-convention enrichment; otherwise its text is empty
 * whatever the pod holds. The others have no rule: a placeholder among their arguments joins the plan key.
 */
export const ISTIO_PLAN_RULES: Readonly<Record<string, PlanRule>> = {
  otelResourceAttributes: (a, real) => {
    if (planText(a[0]) || taintedPath(a[0])) throw noPlanFor([a[0]], 'reads the mesh config as');
    if (otelEnabled(a[0])) throw noPlanFor(a, 'builds OTEL_RESOURCE_ATTRIBUTES from');
    return real(...a);
  },
};
