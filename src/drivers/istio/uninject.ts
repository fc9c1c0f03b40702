/**
 * The Istio driver's `uninject` hook: undoes what an Istio injection changed beyond the containers, volumes
 * and status annotation that the generic removal (src/patch/uninject.ts) takes away. Every restored value
 * comes from a record the injection left (the removed proxy's `ISTIO_KUBE_APP_PROBERS` and
 * `ISTIO_PROMETHEUS_ANNOTATIONS`, `proxy.istio.io/overrides`, the status revision); every removed label or
 * annotation is one the injection provably writes: re-injecting the uninjected pod with this configuration
 * writes it again with the same value. Istio has no uninject of its own (`istioctl x kube-uninject` was
 * removed); the records read here are those of pkg/kube/inject (app_probe.go, webhook.go).
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import type { Inventory, UninjectContext } from '../../contract/driver.ts';
import type { IstioSettings } from './config.ts';
import { InjectError, MeshInjectError } from '../../results/errors.ts';
import { ORIGINAL_ANNOTATION, readOriginal } from '../../patch/status-record.ts';
import { OVERRIDES_ANNOTATION, parseOverrides } from './overrides.ts';
import { reinject } from './reinject.ts';
import { cloneJson, jsonEqual, isJsonObject, setOwn } from '../../json.ts';
import { APP_PROBERS_ENV } from './probes.ts';
import { restoreProbes } from './uninject-probes.ts';
import { checkPatchedContainers, restoreOverrides } from './uninject-overrides.ts';
import { PROMETHEUS_ENV, SCRAPE_TARGETS_ANNOTATION } from './prometheus.ts';
import {
  INJECTED_CONTAINER_NAMES,
  INJECTED_VOLUME_NAMES,
  type InjectionStatus,
  parseInjectionStatus,
  STATUS_ANNOTATION,
  untrustedStatusError,
  untrustedStatusItems,
} from './status.ts';
import { containersOf, findContainer, PROXY_CONTAINER } from './pod-fields.ts';
import { defined } from '../../checked.ts';

/**
 * Labels the Istio templates and post-processing write (sidecar, gateway, grpc templates; `applyMetadata`).
 * Each is removed only when re-injection writes it again with the same value.
 */
export const INJECTED_LABELS: readonly string[] = [
  'security.istio.io/tlsMode',
  'networking.istio.io/tunnel',
  'service.istio.io/canonical-name',
  'service.istio.io/canonical-revision',
  'topology.istio.io/network',
];

/**
 * Annotations the Istio templates and post-processing write, other than the revision and the prometheus merge
 * (handled from their records). Each is removed only when re-injection writes it again with the same value; a
 * user's own annotation that the template only echoes (`traffic.sidecar.istio.io/kubevirtInterfaces`) is
 * therefore kept.
 */
export const INJECTED_ANNOTATIONS: readonly string[] = [
  'kubectl.kubernetes.io/default-logs-container',
  'kubectl.kubernetes.io/default-container',
  'k8s.v1.cni.cncf.io/networks',
  'sidecar.istio.io/interceptionMode',
  'traffic.sidecar.istio.io/includeOutboundIPRanges',
  'traffic.sidecar.istio.io/excludeOutboundIPRanges',
  'traffic.sidecar.istio.io/includeInboundPorts',
  'traffic.sidecar.istio.io/excludeInboundPorts',
  'traffic.sidecar.istio.io/includeOutboundPorts',
  'traffic.sidecar.istio.io/excludeOutboundPorts',
  'traffic.sidecar.istio.io/kubevirtInterfaces',
  'traffic.sidecar.istio.io/excludeInterfaces',
  'istio.io/reroute-virtual-interfaces',
  'prometheus.istio.io/secure-port',
  'sidecar.istio.io/rewriteAppHTTPProbers',
];

/** Multus networks annotation; Istio's CNI template appends `default/istio-cni` to the user's flat list. */
const MULTUS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
const MULTUS_APPENDED = /^(.*\S),\s*default\/istio-cni$/s;

/** The revision annotation every Istio template writes (`istio.io/rev: <revision|default>`). */
const REV_ANNOTATION = 'istio.io/rev';
/** The scrape annotations the prometheus merge writes, and the values it writes besides the port. */
const PROM_KEYS = ['prometheus.io/port', 'prometheus.io/path', 'prometheus.io/scrape'] as const;
const PROM_MERGED = { 'prometheus.io/path': '/stats/prometheus', 'prometheus.io/scrape': 'true' } as const;

/**
 * The pod-template keys an Istio injection may write or keep (`MeshDriver.recordKeys`): the labels and
 * annotations above, the prometheus scrape annotations and `istio.io/rev`. The shared status record keeps
 * their values from before the injection, which this hook's re-injection rule cannot tell from the mesh's.
 */
export function recordedIstioKey(kind: 'labels' | 'annotations', key: string): boolean {
  if (kind === 'labels') return INJECTED_LABELS.includes(key);
  return INJECTED_ANNOTATIONS.includes(key) || (PROM_KEYS as readonly string[]).includes(key) || key === REV_ANNOTATION;
}

function fail(message: string, field?: string): never {
  throw new InjectError(`cannot uninject faithfully: ${message}`, { field });
}

/**
 * The env of the removed proxy container (native or classic) of `injected`, as found (`[]` without one): read by
 * {@link proxyEnv}, found once for both of the proxy's records (issue #40).
 */
function proxyEnvOf(injected: PodTemplate, inv: Inventory): readonly Json[] {
  const listed = inv.containers.includes(PROXY_CONTAINER)
    ? 'containers'
    : inv.initContainers.includes(PROXY_CONTAINER)
      ? 'initContainers'
      : undefined;
  const proxy = listed ? findContainer(PROXY_CONTAINER, containersOf(injected.spec, listed)) : undefined;
  // Read only (`injected` is frozen): `envOf` would add `env: []` to a proxy without one.
  return Array.isArray(proxy?.env) ? proxy.env : [];
}

/** The string values of the first `env` entries named `first` and `second` (`env.find` of each), in one pass (#40). */
function proxyEnv(env: readonly Json[], first: string, second: string): [string | undefined, string | undefined] {
  let a: JsonObject | undefined;
  let b: JsonObject | undefined;
  for (const x of env) {
    if (!isJsonObject(x)) continue;
    if (a === undefined && x.name === first) a = x;
    else if (b === undefined && x.name === second) b = x;
    if (a !== undefined && b !== undefined) break;
  }
  return [typeof a?.value === 'string' ? a.value : undefined, typeof b?.value === 'string' ? b.value : undefined];
}

/**
 * Istio `applyPrometheusMerge` undone from its record `ISTIO_PROMETHEUS_ANNOTATIONS` (`{scrape, path, port[,
 * targets]}`): the merged `prometheus.io/*` values are replaced by the saved ones, under the `prometheus.io/` keys
 * (Prometheus reads every key variant by its sanitized name, `prometheus_io_port`, so the spelling does not
 * change what it scrapes). Into `annos`, which the caller gives without the `prometheus.io/` keys. Without a
 * record, the merged annotations are left to the re-injection check.
 *
 * Istio 1.31's `prometheus.istio.io/scrape-targets` (`targets`, a list of `{port, path}`) is recorded parsed: its
 * text (blanks, a path given without `/` or left to default to `/metrics`) and whether `port` and `path` were the
 * user's or filled from its first target are lost. It is put back in the form Istio parses to the same targets
 * (`port:path,...`), and `port`/`path` only when they differ from the first target's (Istio fills them from it):
 * what Istio's merge reads is the same. Where the text differed, meshinject's companion record
 * (`meshinject.dev/original`) holds repairs (`replaced`, src/patch/status-repairs.ts), computed at inject time from
 * this same result, that make it exact; an input Istio injected itself has none, and gets that form. Not refused:
 * a record without repairs is also what an exact reconstruction leaves, so the two cannot be told apart.
 * @throws InjectError when the record is not JSON
 */
function restorePrometheus(annos: Record<string, string>, record: string): void {
  let saved: unknown;
  try {
    saved = JSON.parse(record);
  } catch {
    fail(`${PROMETHEUS_ENV} of the removed proxy is not JSON`);
  }
  const s = (isJsonObject(saved as Json) ? saved : {}) as Record<string, unknown>;
  const targets = Array.isArray(s.targets) ? s.targets.filter(isJsonObject) : undefined;
  const put = (k: string, v: unknown) => {
    if (typeof v === 'string' && v !== '') annos[k] = v;
  };
  const [first] = targets ?? [];
  const filled = first !== undefined && s.port === first.port && s.path === first.path;
  put('prometheus.io/scrape', s.scrape);
  put('prometheus.io/path', filled ? '' : s.path);
  put('prometheus.io/port', filled ? '' : s.port);
  if (targets && targets.length > 0)
    annos[SCRAPE_TARGETS_ANNOTATION] = targets.map((x) => `${String(x.port)}:${String(x.path)}`).join(',');
}

/**
 * The Istio `uninject` hook (see `MeshDriver.uninject`): on the pod without the injected containers, volumes
 * and status annotation, puts back the user's container customisations (`proxy.istio.io/overrides`), the app
 * probes and hooks, and the prometheus annotations; removes `istio.io/rev` when it is the status revision;
 * removes each label and annotation of {@link INJECTED_LABELS} / {@link INJECTED_ANNOTATIONS} (and merged
 * `prometheus.io/*` without a record), and the gateway template's pod sysctl, when re-injecting the result
 * with this configuration writes it again with the same value. A key re-injection would not write identically (the user's own, or one written by an
 * injection with another configuration) is kept.
 * @throws InjectError when a record is missing or cannot be restored faithfully, or re-injection fails
 */
export function uninjectIstio(
  pod: PodTemplate,
  inv: Inventory,
  settings: IstioSettings,
  ctx: UninjectContext,
): PodTemplate {
  // Its own pod template, metadata and spec: every change below sets a field of those three (restoreProbes and
  // restoreOverrides set the container lists anew), never one deeper, so `pod` may be read-only (uninject hands
  // the hook its deep-frozen view with the inventory removed, src/patch/uninject.ts) and is not deep-copied.
  const out: PodTemplate = { ...pod, metadata: { ...pod.metadata }, spec: { ...pod.spec } };
  const status = parseInjectionStatus(ctx.injected.metadata.annotations?.[STATUS_ANNOTATION]);
  const { annos, promRecorded } = restoreRecordedParts(out, inv, status, ctx);
  proveStatusItems(out, status, settings, ctx);
  out.metadata.annotations = annos;
  const labels = out.metadata.labels ?? {};
  const gone = removeKeysReinjectionWrites(out, labels, annos, promRecorded, inv, settings, ctx);
  // The maps and the metadata built anew without what goes, not `delete`d from: a `delete` turns an object into a
  // slow dictionary-mode one for every reader after it (issue #40). An emptied map is dropped.
  const kept = { labels: without(labels, gone.labels), annotations: without(annos, gone.annotations) };
  const metadata: PodTemplate['metadata'] = {};
  for (const k of Object.keys(out.metadata)) {
    if (k === 'labels') {
      if (Object.keys(kept.labels).length > 0) metadata.labels = kept.labels;
    } else if (k === 'annotations') {
      if (Object.keys(kept.annotations).length > 0) metadata.annotations = kept.annotations;
    } else setOwn(metadata as JsonObject, k, out.metadata[k] as Json);
  }
  out.metadata = metadata;
  return out;
}

/** A copy of `map` without the keys `drop` lists (in `map`'s order). */
function without(map: Record<string, string>, drop: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(map)) if (!drop.includes(k)) setOwn(out, k, map[k] as string);
  return out;
}

/**
 * The status annotation of `ctx.injected` proven for what it lists beyond the names of the built-in templates
 * (`untrustedStatusItems`: e.g. a volume a user Go template of `spec.istio.values.sidecarInjectorWebhook.templates`
 * adds): each such container, init container or volume must be one that this configuration's injection of the
 * uninjected pod `out` (the same templates, rendered on it) lists in its own status. Istio trusts the status: its
 * re-injection removes every container it lists (`stripPod`, pkg/kube/inject/inject.go @86c9f01; the last
 * `istioctl x kube-uninject`, istioctl/cmd/kubeuninject.go @1.18.0, removed fixed names only, so never a user
 * template's volume); here a forged status cannot delete a user's own container or volume (issue #8). Renders
 * only when the status lists such a name (never for a pod the built-in templates injected), reusing the check's
 * injection where it is the same request. `status`: that of `ctx.injected`, parsed; one that lists only built-in
 * names ({@link onlyBuiltInNames}) has nothing to prove and returns before any other record is read (issue #40).
 * @throws InjectError naming the status annotation for the first name the injection does not add
 */
function proveStatusItems(
  out: PodTemplate,
  status: InjectionStatus | undefined,
  settings: IstioSettings,
  ctx: UninjectContext,
): void {
  if (!status || onlyBuiltInNames(status)) return;
  const annotations = ctx.injected.metadata.annotations;
  // App containers whose original the overrides record holds are proven by re-injection later (checkPatchedContainers).
  const recorded = parseOverrides(annotations?.[OVERRIDES_ANNOTATION]);
  const names = (list: readonly JsonObject[]) => list.map((c) => String(c.name));
  const items = untrustedStatusItems(status, annotations, {
    containers: names(recorded.containers),
    initContainers: names(recorded.initContainers),
  });
  if (items.length === 0) return;
  const again = parseInjectionStatus(reinject(cloneJson(out), settings, ctx).metadata.annotations?.[STATUS_ANNOTATION]);
  const adds = (kind: string): readonly string[] =>
    again ? again[kind === 'volume' ? 'volumes' : kind === 'container' ? 'containers' : 'initContainers'] : [];
  const unproven = items.find((item) => !adds(item.kind).includes(item.name));
  if (unproven) throw untrustedStatusError(unproven);
}

/**
 * Whether every container, init container and volume of `status` is a built-in template's name: then
 * `untrustedStatusItems` finds nothing, whatever else it is told (`INJECTED_CONTAINER_NAMES`, `INJECTED_VOLUME_NAMES`).
 */
function onlyBuiltInNames(status: InjectionStatus): boolean {
  const known = BUILT_IN_ONLY.get(status);
  if (known !== undefined) return known;
  const builtIn = (names: readonly string[], known: readonly string[]) => names.every((n) => known.includes(n));
  const answer =
    builtIn(status.containers, INJECTED_CONTAINER_NAMES) &&
    builtIn(status.initContainers, INJECTED_CONTAINER_NAMES) &&
    builtIn(status.volumes, INJECTED_VOLUME_NAMES);
  BUILT_IN_ONLY.set(status, answer);
  return answer;
}

/**
 * {@link onlyBuiltInNames} of each status seen: `parseInjectionStatus` gives one frozen object per annotation
 * value, so the workloads of one sidecar plan, whose status is the same text, ask once (issue #40: the name
 * search was a twentieth of the Istio hook in the companion record's check).
 * Module state by design: a pure memo keyed by a frozen, immutable parsed status (weakly held).
 */
const BUILT_IN_ONLY = new WeakMap<InjectionStatus, boolean>();

/**
 * First step of `uninjectIstio`, on `out` (owned): puts back the overwritten containers, the app probes
 * and hooks and the prometheus annotations the removed proxy records, and drops `istio.io/rev` when it is
 * the status revision (`status`: that of `ctx.injected`, parsed). Returns the pod's new annotations (not yet
 * set on `out`) and whether the proxy recorded the prometheus annotations.
 * @throws InjectError when a record is not JSON or cannot be restored faithfully
 */
function restoreRecordedParts(
  out: PodTemplate,
  inv: Inventory,
  status: InjectionStatus | undefined,
  ctx: UninjectContext,
): { annos: Record<string, string>; promRecorded: boolean } {
  restoreOverrides(out, out.metadata.annotations?.[OVERRIDES_ANNOTATION], ctx.injected);
  const [promRecord, probers] = proxyEnv(proxyEnvOf(ctx.injected, inv), PROMETHEUS_ENV, APP_PROBERS_ENV);
  const from = out.metadata.annotations ?? {};
  const revision = status && (status.revision === '' ? 'default' : status.revision);
  // Without the overrides record, the status revision, and the merged prometheus keys a record replaces.
  const drop = [OVERRIDES_ANNOTATION, ...(promRecord === undefined ? [] : PROM_KEYS)];
  if (revision !== undefined && from[REV_ANNOTATION] === revision) drop.push(REV_ANNOTATION);
  const annos = without(from, drop);
  if (probers !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(probers);
    } catch {
      fail(`${APP_PROBERS_ENV} of the removed proxy is not JSON`);
    }
    restoreProbes(out, (isJsonObject(parsed as Json) ? parsed : {}) as Record<string, Json>);
  }
  if (promRecord !== undefined) restorePrometheus(annos, promRecord);
  return { annos, promRecorded: promRecord !== undefined };
}

/**
 * Second step of `uninjectIstio`: the keys the injection may have written ({@link INJECTED_LABELS},
 * {@link INJECTED_ANNOTATIONS}, merged `prometheus.io/*` when `promRecorded` is false, the gateway sysctl)
 * are all removed from a copy of `out`, which is injected again; returns each label and annotation key the
 * re-injection writes back identically (the caller removes them from `labels` / `annos`), and removes the sysctl
 * from `out` on the same condition (a multus annotation's value in `annos` becomes the user's part, kept). Keys
 * the companion record gives back are left out of this test and injected with their recorded values
 * ({@link restoredByRecord}).
 * Also proves that each app container the template patched comes back as injected.
 * @throws InjectError when re-injection fails or a patched app container does not come back
 */
function removeKeysReinjectionWrites(
  out: PodTemplate,
  labels: Record<string, string>,
  annos: Record<string, string>,
  promRecorded: boolean,
  inv: Inventory,
  settings: IstioSettings,
  ctx: UninjectContext,
): { labels: string[]; annotations: string[] } {
  const restored = restoredByRecord(ctx);
  const candidates = {
    labels: INJECTED_LABELS.filter((k) => Object.hasOwn(labels, k) && !Object.hasOwn(restored.labels, k)),
    annotations: (promRecorded ? INJECTED_ANNOTATIONS : ANNOTATIONS_AND_PROM).filter(
      (k) => Object.hasOwn(annos, k) && !(Object.hasOwn(restored.annotations, k) && !isPromKey(k)),
    ),
  };
  // The user's own multus networks with Istio's appended: the proposal is the user's part (kept only if proven).
  const multus = annos[MULTUS_ANNOTATION]?.match(MULTUS_APPENDED)?.[1];
  const sc = withoutGatewaySysctl(out.spec.securityContext);
  const scChanged = sc !== out.spec.securityContext;
  // App containers the template patched (grpc-simple, grpc-agent): restored from the overrides record above.
  const patched = (['containers', 'initContainers'] as const).flatMap((list) =>
    inv[list].filter((n) => !INJECTED_CONTAINER_NAMES.includes(n)).map((name) => ({ list, name })),
  );
  const gone = { labels: [] as string[], annotations: [] as string[] };
  if (candidates.labels.length + candidates.annotations.length === 0 && !scChanged && patched.length === 0) return gone;
  const probe = probeOf(out, candidates);
  if (multus !== undefined)
    defined(probe.metadata.annotations ?? undefined, 'the multus annotations')[MULTUS_ANNOTATION] = multus;
  if (sc === undefined) delete probe.spec.securityContext;
  else probe.spec.securityContext = sc;
  withRecordedValues(probe, restored);
  const again = reinject(probe, settings, ctx);
  checkPatchedContainers(patched, again, ctx);
  const promMerged = candidates.annotations.filter((k) => (PROM_KEYS as readonly string[]).includes(k));
  const promOk = promMerged.every(
    (k) =>
      again.metadata.annotations?.[k] === annos[k] &&
      (k === 'prometheus.io/port' || annos[k] === PROM_MERGED[k as keyof typeof PROM_MERGED]),
  );
  if (scChanged && jsonEqual(again.spec.securityContext, out.spec.securityContext)) {
    if (sc === undefined) delete out.spec.securityContext;
    else out.spec.securityContext = sc;
  }
  for (const k of candidates.labels) if (again.metadata.labels?.[k] === labels[k]) gone.labels.push(k);
  for (const k of candidates.annotations) {
    if ((PROM_KEYS as readonly string[]).includes(k) && !promOk) continue;
    if (again.metadata.annotations?.[k] !== annos[k]) continue;
    if (k === MULTUS_ANNOTATION && multus !== undefined) annos[k] = multus;
    else gone.annotations.push(k);
  }
  return gone;
}

/** {@link INJECTED_ANNOTATIONS} and then the merged scrape keys: the candidates without a prometheus record. */
const ANNOTATIONS_AND_PROM: readonly string[] = [...INJECTED_ANNOTATIONS, ...PROM_KEYS];

/**
 * A copy of `out` for the re-injection check without the `candidates` keys of its labels and annotations. The check
 * changes only its top-level maps (the pod template, metadata, labels, annotations, spec): those are new, what they
 * hold is `out`'s (`injectIstioPod` copies the pod it is given; the reuse of the check's injection only reads it).
 * Not a deep copy, and built without `delete` (issue #40).
 */
function probeOf(
  out: PodTemplate,
  candidates: { labels: readonly string[]; annotations: readonly string[] },
): PodTemplate {
  const metadata = { ...out.metadata };
  if (metadata.labels) metadata.labels = without(metadata.labels, candidates.labels);
  if (metadata.annotations) metadata.annotations = without(metadata.annotations, candidates.annotations);
  return { ...out, metadata, spec: { ...out.spec } };
}

/**
 * The labels and annotations that the companion record of `ctx.injected` ({@link ORIGINAL_ANNOTATION}) gives
 * back, key → the value the pod had before the injection. Uninject's last step (`restoreOriginal`,
 * src/patch/status-record.ts) sets each of them to its recorded value whatever this hook decided for it, so
 * they are no candidates of the re-injection check, and the probe carries them with that value: the pod
 * template uninject gives back (in the inject-time check, the very pod template that was injected, whose
 * injection `ctx.injection` then serves; issue #40). The prometheus keys stay candidates (`promOk` judges them
 * together). Empty maps when the pod has no record, or one that uninject refuses (with its own error, after
 * this hook).
 */
function restoredByRecord(ctx: UninjectContext): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  try {
    const rec = readOriginal(ctx.injected, recordedIstioKey);
    return rec ? { labels: rec.labels, annotations: rec.annotations } : { labels: {}, annotations: {} };
  } catch (e) {
    if (e instanceof MeshInjectError) return { labels: {}, annotations: {} };
    throw e;
  }
}

/** Whether `k` is one of the scrape annotations the prometheus merge writes. */
const isPromKey = (k: string): boolean => (PROM_KEYS as readonly string[]).includes(k);

/**
 * Sets on `probe` (owned) each label and annotation of `restored` ({@link restoredByRecord}) but the prometheus
 * keys, with its recorded value: in its place when the probe has the key, else at the end of its map.
 */
function withRecordedValues(
  probe: PodTemplate,
  restored: { labels: Record<string, string>; annotations: Record<string, string> },
): void {
  for (const kind of ['labels', 'annotations'] as const) {
    const entries = Object.entries(restored[kind]).filter(([k]) => !isPromKey(k));
    if (entries.length === 0) continue;
    const map: Record<string, string> = { ...(probe.metadata[kind] ?? {}) };
    for (const [k, v] of entries) setOwn(map, k, v);
    probe.metadata[kind] = map;
  }
}

/** Gateway template's pod `securityContext.sysctls` entry letting the proxy bind low ports. */
const GATEWAY_SYSCTL = 'net.ipv4.ip_unprivileged_port_start';

/** `spec.securityContext` without the gateway template's sysctl (undefined when nothing else is left). */
function withoutGatewaySysctl(sc: Json | undefined): Json | undefined {
  if (!isJsonObject(sc) || !Array.isArray(sc.sysctls)) return sc;
  const sysctls = sc.sysctls.filter((x) => !(isJsonObject(x) && x.name === GATEWAY_SYSCTL && x.value === '0'));
  if (sysctls.length === sc.sysctls.length) return sc;
  const out: JsonObject = { ...sc };
  if (sysctls.length > 0) out.sysctls = sysctls;
  else delete out.sysctls;
  return Object.keys(out).length > 0 ? out : undefined;
}
