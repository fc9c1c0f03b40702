/**
 * `meshinject migrate --to ambient|sidecar` for Istio (`MeshDriver.migration`): the package's namespaces moved
 * between sidecars and the ambient data plane, as changes to manifests.
 *
 * The order is Istio's "Migrate from Sidecar to Ambient" guide (istio.io/latest/docs/ambient/migrate/, "Enable
 * ambient mode"), per namespace: a waypoint `Gateway` (class `istio-waypoint`) where L7 policy needs one, activated
 * by `istio.io/use-waypoint` on the namespace; the namespace labelled `istio.io/dataplane-mode=ambient`; the
 * injection labels `istio-injection` / `istio.io/rev` removed; the workloads restarted. In Git: the Gateway gets an
 * Argo CD sync wave one before its namespace's (`argocd.argoproj.io/sync-wave`), so it is applied before the label;
 * sidecars a manifest carries (kube-injected) are uninjected; every workload gets the pod-template annotation
 * `meshinject.dev/dataplane: ambient`, so the change rolls its pods once (the guide's restart). What
 * cannot move by itself (a namespace that is not a Namespace object of the package, an L7 `AuthorizationPolicy`
 * with a pod `selector`, a `VirtualService`) is a note saying what to change by hand. `--to sidecar` undoes it.
 */
import { isJsonObject, stringsAt } from '../../json.ts';
import { atoi } from '../go-parse.ts';
import type { Json, JsonObject } from '../../model.ts';
import type { MigrationPlan, MigrationRequest, MigrationResource } from '../../contract/driver.ts';
import { DATAPLANE_LABEL, USE_WAYPOINT_LABEL, WAYPOINT_CLASS } from './ambient.ts';
import { l7Attributes } from './ambient-checks.ts';
import { INJECT_LABEL, NS_INJECTION_LABEL, REV_LABEL } from './webhook.ts';
import { defined } from '../../checked.ts';

/** Pod-template annotation that rolls a webhook-injected workload's pods once when its namespace moves to ambient. */
export const DATAPLANE_ANNOTATION = 'meshinject.dev/dataplane';
/** Namespace (or pod-template) annotation recording the injection labels `--to ambient` removed (`istio.io/rev=stable`), for `--to sidecar`. */
export const SIDECAR_INJECTION_ANNOTATION = 'meshinject.dev/sidecar-injection';
/** Annotation on a waypoint `Gateway` that `--to ambient` added (and `--to sidecar` removes). */
export const MIGRATED_ANNOTATION = 'meshinject.dev/migrated';
/** Argo CD's sync-wave annotation. */
export const SYNC_WAVE = 'argocd.argoproj.io/sync-wave';

type Plan = { -readonly [K in keyof MigrationPlan]: Array<MigrationPlan[K][number]> };

const str = (v: Json | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const nsOf = (r: MigrationResource, req: MigrationRequest) =>
  r.id.namespace ?? (r.value.kind === 'Namespace' ? r.id.name : req.config.defaultNamespace);

/** The workload part of a resource of a migration (`MigrationResource.workload`). */
type Workload = NonNullable<MigrationResource['workload']>;

/** `v` with the map at `path` replaced (removed when empty); the objects on the way are copied. */
function withMap(v: JsonObject, path: readonly string[], map: Record<string, string>): JsonObject {
  const [first, ...rest] = path;
  const head = defined(first, 'the first key of a map path');
  const out: JsonObject = { ...v };
  if (rest.length === 0) {
    if (Object.keys(map).length === 0) delete out[head];
    else out[head] = map;
    return out;
  }
  const at = v[head];
  const next = isJsonObject(at) ? at : {};
  out[head] = withMap(next, rest, map);
  return out;
}

/** The migration of the request's namespaces (`MeshDriver.migration.plan`); an unknown `--to` is an error. */
export function planIstioMigration(req: MigrationRequest): MigrationPlan | { error: string } {
  if (req.to !== 'ambient' && req.to !== 'sidecar')
    return { error: `meshinject migrate --to must be ambient or sidecar for Istio; got "${req.to}"` };
  const unknown = Object.keys(req.options).filter((k) => k !== 'waypoint');
  if (unknown.length > 0)
    return { error: `meshinject migrate: Istio takes no option ${unknown.map((k) => `--${k}`).join(', ')}` };
  if (req.to === 'sidecar' && req.options.waypoint !== undefined)
    return { error: 'meshinject migrate --waypoint is for --to ambient' };
  const plan: Plan = { changes: [], additions: [], notes: [] };
  for (const ns of req.namespaces) {
    if (req.to === 'ambient') toAmbient(ns, req, plan);
    else toSidecar(ns, req, plan);
  }
  return plan;
}

/** The index of namespace `ns`'s Namespace object, or -1. */
function namespaceIndex(req: MigrationRequest, ns: string): number {
  return req.resources.findIndex(
    (r) => r.value.kind === 'Namespace' && str(r.value.apiVersion) === 'v1' && r.id.name === ns,
  );
}

/** Each namespace of `--to ambient`, in the guide's order (see the file comment). */
function toAmbient(ns: string, req: MigrationRequest, plan: Plan): void {
  const nsIndex = namespaceIndex(req, ns);
  const l7 = req.resources.map((r, i) => ({ r, i })).filter(({ r }) => nsOf(r, req) === ns && isL7SelectorPolicy(r));
  const waypoint = req.options.waypoint ?? (l7.length > 0 ? 'waypoint' : undefined);
  if (waypoint !== undefined) addWaypoint(ns, waypoint, nsIndex, req, plan);
  const nsResource = req.resources[nsIndex];
  if (nsResource === undefined) {
    plan.notes.push({
      severity: 'warning',
      rule: 'migrate-namespace',
      id: { apiVersion: 'v1', kind: 'Namespace', name: ns },
      message: `namespace ${ns} is not a Namespace object in the package: label it ${DATAPLANE_LABEL}=ambient${waypoint ? ` and ${USE_WAYPOINT_LABEL}=${waypoint}` : ''} and remove ${NS_INJECTION_LABEL} / ${REV_LABEL} where it is defined`,
    });
  } else {
    ambientNamespace(nsResource, nsIndex, waypoint, plan);
  }
  req.resources.forEach((r, i) => {
    if (r.workload && nsOf(r, req) === ns) ambientWorkload(r, r.workload, i, plan);
  });
  for (const { r } of l7) {
    plan.notes.push({
      severity: 'warning',
      rule: 'ambient-l7-policy',
      id: r.id,
      field: 'spec.selector',
      message: `an L7 AuthorizationPolicy (${l7Attributes(isJsonObject(r.value.spec) ? r.value.spec : {}).join(', ')}) that selects pods with spec.selector has no effect in ambient: replace spec.selector with targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: ${waypoint}}] (or kind Service)`,
    });
  }
  for (const r of req.resources) {
    if (
      r.value.kind === 'VirtualService' &&
      str(r.value.apiVersion)?.startsWith('networking.istio.io/') &&
      nsOf(r, req) === ns
    ) {
      plan.notes.push({
        severity: 'warning',
        rule: 'migrate-virtualservice',
        id: r.id,
        message:
          'a VirtualService is Alpha in ambient: rewrite it as an HTTPRoute (gateway.networking.k8s.io) attached to the waypoint or the Service',
      });
    }
  }
}

/** True for a security.istio.io AuthorizationPolicy with a pod `selector` and L7 rules. */
function isL7SelectorPolicy(r: MigrationResource): boolean {
  const spec = isJsonObject(r.value.spec) ? r.value.spec : undefined;
  return (
    r.value.kind === 'AuthorizationPolicy' &&
    str(r.value.apiVersion)?.startsWith('security.istio.io/') === true &&
    spec !== undefined &&
    isJsonObject(spec.selector) &&
    l7Attributes(spec).length > 0
  );
}

/** The sync wave of a resource: Argo CD reads the annotation with `strconv.Atoi`; a value it refuses is wave 0. */
function waveOf(v: JsonObject | undefined): number {
  const w = atoi((v ? stringsAt(v, ['metadata', 'annotations'])[SYNC_WAVE] : undefined) ?? '0');
  return w.ok ? Number(w.value) : 0;
}

/** A waypoint `Gateway` for namespace `ns` (what `istioctl waypoint generate` writes), unless the package holds it. */
function addWaypoint(ns: string, name: string, nsIndex: number, req: MigrationRequest, plan: Plan): void {
  const exists = req.resources.some(
    (r) =>
      r.value.kind === 'Gateway' &&
      str(r.value.apiVersion)?.startsWith('gateway.networking.k8s.io/') &&
      r.id.name === name &&
      nsOf(r, req) === ns,
  );
  if (exists) return;
  const after = nsIndex >= 0 ? nsIndex : req.resources.findIndex((r) => nsOf(r, req) === ns);
  if (after < 0) return;
  const wave = waveOf(req.resources[nsIndex]?.value) - 1;
  plan.additions.push({
    after,
    summary: `waypoint Gateway ${ns}/${name} (gatewayClassName ${WAYPOINT_CLASS}, sync wave ${wave}: before the namespace label)`,
    value: {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: {
        name,
        namespace: ns,
        labels: { 'istio.io/waypoint-for': 'service' },
        annotations: { [SYNC_WAVE]: String(wave), [MIGRATED_ANNOTATION]: 'ambient' },
      },
      spec: { gatewayClassName: WAYPOINT_CLASS, listeners: [{ name: 'mesh', port: 15008, protocol: 'HBONE' }] },
    },
  });
}

/** The Namespace object moved to ambient: `use-waypoint`, `dataplane-mode=ambient`, the injection labels removed and recorded. */
function ambientNamespace(r: MigrationResource, index: number, waypoint: string | undefined, plan: Plan): void {
  const labels = stringsAt(r.value, ['metadata', 'labels']);
  const annotations = stringsAt(r.value, ['metadata', 'annotations']);
  const removed = [NS_INJECTION_LABEL, REV_LABEL]
    .filter((k) => labels[k] !== undefined)
    .map((k) => `${k}=${labels[k]}`);
  for (const k of [NS_INJECTION_LABEL, REV_LABEL]) delete labels[k];
  if (waypoint !== undefined) labels[USE_WAYPOINT_LABEL] = waypoint;
  labels[DATAPLANE_LABEL] = 'ambient';
  if (removed.length > 0) annotations[SIDECAR_INJECTION_ANNOTATION] = removed.join(',');
  const value = withMap(withMap(r.value, ['metadata', 'labels'], labels), ['metadata', 'annotations'], annotations);
  if (JSON.stringify(value) === JSON.stringify(r.value)) return;
  plan.changes.push({
    index,
    value,
    summary: `labelled ${DATAPLANE_LABEL}=ambient${waypoint ? `, ${USE_WAYPOINT_LABEL}=${waypoint}` : ''}${removed.length ? `; removed ${removed.join(', ')}` : ''}`,
  });
}

/**
 * A workload of a namespace moving to ambient: uninjected when its manifest carries the sidecar (kube-injected),
 * and given `meshinject.dev/dataplane: ambient` (one roll of its pods, which the webhook then leaves without a
 * sidecar); its pod-level injection labels removed. A
 * pod labelled `istio.io/dataplane-mode=none` keeps its sidecar (a note).
 */
function ambientWorkload(r: MigrationResource, wl: Workload, index: number, plan: Plan): void {
  const meta = [...wl.templatePath, 'metadata'];
  const podLabels = stringsAt(r.value, [...meta, 'labels']);
  if (podLabels[DATAPLANE_LABEL] === 'none') {
    plan.notes.push({
      severity: 'info',
      rule: 'migrate-workload',
      id: r.id,
      message: `its pods are labelled ${DATAPLANE_LABEL}=none: left on sidecars`,
    });
    return;
  }
  let value = wl.uninjected ?? r.value;
  const labels = stringsAt(value, [...meta, 'labels']);
  const dropped = [INJECT_LABEL, REV_LABEL].filter((k) => labels[k] !== undefined);
  const record = dropped.map((k) => `${k}=${labels[k]}`).join(',');
  for (const k of dropped) delete labels[k];
  value = withMap(value, [...meta, 'labels'], labels);
  const annotations = stringsAt(value, [...meta, 'annotations']);
  annotations[DATAPLANE_ANNOTATION] = 'ambient';
  if (record !== '') annotations[SIDECAR_INJECTION_ANNOTATION] = record;
  value = withMap(value, [...meta, 'annotations'], annotations);
  if (JSON.stringify(value) === JSON.stringify(r.value)) return;
  const what = `${wl.uninjected ? 'uninjected (its manifest carried the sidecar); ' : ''}pod template annotated ${DATAPLANE_ANNOTATION}=ambient (its pods roll once, without a sidecar)`;
  plan.changes.push({
    index,
    value,
    summary: `${what}${dropped.length ? `; removed pod labels ${dropped.join(', ')}` : ''}`,
  });
}

/** Each namespace of `--to sidecar`: the Namespace labels restored, the added waypoint removed, the roll annotation removed. */
function toSidecar(ns: string, req: MigrationRequest, plan: Plan): void {
  const nsIndex = namespaceIndex(req, ns);
  const nsResource = req.resources[nsIndex];
  if (nsResource === undefined) {
    plan.notes.push({
      severity: 'warning',
      rule: 'migrate-namespace',
      id: { apiVersion: 'v1', kind: 'Namespace', name: ns },
      message: `namespace ${ns} is not a Namespace object in the package: remove ${DATAPLANE_LABEL} and ${USE_WAYPOINT_LABEL} and label it ${NS_INJECTION_LABEL}=enabled (or ${REV_LABEL}=<revision>) where it is defined`,
    });
  } else {
    sidecarNamespace(nsResource, nsIndex, plan);
  }
  req.resources.forEach((r, i) => {
    if (nsOf(r, req) !== ns) return;
    if (
      r.value.kind === 'Gateway' &&
      stringsAt(r.value, ['metadata', 'annotations'])[MIGRATED_ANNOTATION] === 'ambient'
    ) {
      plan.changes.push({
        index: i,
        value: null,
        summary: `removed (the waypoint meshinject migrate --to ambient added)`,
      });
    } else if (r.workload) sidecarWorkload(r, r.workload, i, plan);
  });
}

/** The Namespace object back on sidecars: the recorded injection label (else `istio-injection=enabled`) instead of ambient. */
function sidecarNamespace(r: MigrationResource, index: number, plan: Plan): void {
  const labels = stringsAt(r.value, ['metadata', 'labels']);
  const annotations = stringsAt(r.value, ['metadata', 'annotations']);
  const recorded = annotations[SIDECAR_INJECTION_ANNOTATION];
  delete labels[DATAPLANE_LABEL];
  delete labels[USE_WAYPOINT_LABEL];
  delete annotations[SIDECAR_INJECTION_ANNOTATION];
  const restore = recorded
    ? recorded.split(',')
    : labels[REV_LABEL] === undefined && labels[NS_INJECTION_LABEL] === undefined
      ? [`${NS_INJECTION_LABEL}=enabled`]
      : [];
  for (const kv of restore) {
    const eq = kv.indexOf('=');
    if (eq > 0) labels[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const value = withMap(withMap(r.value, ['metadata', 'labels'], labels), ['metadata', 'annotations'], annotations);
  if (JSON.stringify(value) === JSON.stringify(r.value)) return;
  plan.changes.push({
    index,
    value,
    summary: `removed ${DATAPLANE_LABEL}, ${USE_WAYPOINT_LABEL}${restore.length ? `; labelled ${restore.join(', ')}` : ''}`,
  });
}

/**
 * A workload back on sidecars: the roll annotation removed (its pods roll and the webhook injects them), the pod
 * injection labels `--to ambient` recorded put back.
 */
function sidecarWorkload(r: MigrationResource, wl: Workload, index: number, plan: Plan): void {
  const meta = [...wl.templatePath, 'metadata'];
  const annotations = stringsAt(r.value, [...meta, 'annotations']);
  if (annotations[DATAPLANE_ANNOTATION] === undefined) return;
  const labels = stringsAt(r.value, [...meta, 'labels']);
  const restore = (annotations[SIDECAR_INJECTION_ANNOTATION] ?? '').split(',').filter((kv) => kv.indexOf('=') > 0);
  for (const kv of restore) labels[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  delete annotations[DATAPLANE_ANNOTATION];
  delete annotations[SIDECAR_INJECTION_ANNOTATION];
  const value = withMap(withMap(r.value, [...meta, 'labels'], labels), [...meta, 'annotations'], annotations);
  plan.changes.push({
    index,
    value,
    summary: `removed the pod-template annotation ${DATAPLANE_ANNOTATION} (its pods roll once and get the webhook's sidecar)${restore.length ? `; pod labels ${restore.join(', ')} put back` : ''}`,
  });
}
