/**
 * meshinject's record of an OSM/FSM injection: the pod annotation `meshinject.dev/osm-status` (or
 * `fsm-status`). The meshes' webhooks keep no such record (OSM spots its own injection by the bootstrap
 * volume, peers.md §2.1), so meshinject writes one to make re-injection idempotent and uninject exact:
 * the names of what it added, the previous values of the labels and annotations it set (null: absent), and
 * the probes as the user wrote them.
 *
 * The label and annotation maps are the shared status record's previous-value maps (`src/patch/status-record.ts`:
 * validated with `isPreviousMap`, put back with `restorePrevious`).
 *
 * Value: compact JSON, keys in this order:
 * `{"class":"envoy","uuid":"…","initContainers":["osm-init"],"containers":["envoy"],"volumes":["envoy-bootstrap-config-volume"],"labels":{"osm-proxy-uuid":null},"annotations":{},"probes":[…]}`.
 */
import { cloneJson, isJsonObject } from '../../json.ts';
import { quoteData } from '../../results/quote.ts';
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import type { Inventory } from '../../contract/driver.ts';
import { restoreProbes, type OriginalProbe } from './probes.ts';
import { isPreviousMap, readRecordJson, restorePrevious } from '../../patch/status-record.ts';

/** What one injection did (the parsed status annotation). */
export interface StatusRecord {
  class: string;
  uuid: string;
  initContainers: string[];
  containers: string[];
  volumes: string[];
  /** Label key → value before the injection (null: the label was absent). */
  labels: Record<string, string | null>;
  /** Annotation key → value before the injection (null: absent). */
  annotations: Record<string, string | null>;
  probes: OriginalProbe[];
}

/** The status annotation value for `rec`. */
export function statusValue(rec: StatusRecord): string {
  return JSON.stringify({
    class: rec.class,
    uuid: rec.uuid,
    initContainers: rec.initContainers,
    containers: rec.containers,
    volumes: rec.volumes,
    labels: rec.labels,
    annotations: rec.annotations,
    probes: rec.probes.map((p) => ({ container: p.container, probe: p.probe, original: p.original })),
  });
}

const strings = (v: Json | undefined): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const previous = isPreviousMap;
/** Whether `v` is a probe a status record keeps (`OriginalProbe`). */
const isProbe = (v: Json): v is Json & OriginalProbe =>
  isJsonObject(v) &&
  typeof v.container === 'string' &&
  ['livenessProbe', 'readinessProbe', 'startupProbe'].includes(v.probe as string) &&
  isJsonObject(v.original);

/**
 * The record in the pod's status annotation `key`, or undefined when the annotation is absent.
 * @throws InjectError when the annotation is present but not a record meshinject wrote (edited by hand):
 *   re-injecting on top of an unknown injection would duplicate it
 */
export function readStatus(pod: PodTemplate, key: string): StatusRecord | undefined {
  const raw = pod.metadata.annotations?.[key];
  if (raw === undefined) return undefined;
  let v: Json;
  try {
    v = readRecordJson(pod.metadata.annotations, key) ?? null;
  } catch {
    v = null;
  }
  if (!isStatusRecord(v)) {
    throw new InjectError(
      `annotation ${key} is not a status meshinject wrote (${quoteData(raw.slice(0, 80))}): cannot tell what a previous injection added; remove the injected containers and the annotation, then run again`,
      { field: `metadata.annotations[${key}]` },
    );
  }
  return v;
}

/** Whether `v` is a status record meshinject wrote (`StatusRecord`, each field of its type). */
function isStatusRecord(v: Json): v is Json & StatusRecord {
  return (
    isJsonObject(v) &&
    typeof v.class === 'string' &&
    typeof v.uuid === 'string' &&
    strings(v.initContainers) &&
    strings(v.containers) &&
    strings(v.volumes) &&
    previous(v.labels) &&
    previous(v.annotations) &&
    Array.isArray(v.probes) &&
    v.probes.every(isProbe)
  );
}

/** The inventory of a record: what generic removal takes away, and the `detail` the driver's `uninject` restores from. */
export function inventoryOf(rec: StatusRecord, key: string): Inventory {
  const added = (m: Record<string, string | null>) => Object.keys(m).filter((k) => m[k] === null);
  const changed = (m: Record<string, string | null>): JsonObject =>
    Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null)) as JsonObject;
  return {
    statusAnnotation: key,
    containers: [...rec.containers],
    initContainers: [...rec.initContainers],
    volumes: [...rec.volumes],
    imagePullSecrets: [],
    annotations: [key, ...added(rec.annotations)],
    labels: added(rec.labels),
    detail: {
      annotations: changed(rec.annotations),
      labels: changed(rec.labels),
      probes: rec.probes.map((p) => ({ container: p.container, probe: p.probe, original: p.original })),
    },
  };
}

function containersOf(spec: JsonObject, field: 'containers' | 'initContainers'): JsonObject[] {
  const v = spec[field];
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

/**
 * Undoes what generic removal cannot (the driver's `uninject`): puts back the original probes and the
 * label and annotation values the injection overwrote, from `inventory.detail`. Returns a new pod.
 */
export function restoreFromInventory(pod: PodTemplate, inventory: Inventory): PodTemplate {
  const out = cloneJson(pod);
  const d = inventory.detail ?? {};
  const probes = Array.isArray(d.probes) ? d.probes.filter(isProbe) : [];
  restoreProbes(containersOf(out.spec, 'containers'), probes);
  const put = (field: 'labels' | 'annotations') => {
    const prev = d[field];
    if (!previous(prev) || Object.keys(prev).length === 0) return;
    const map = restorePrevious(out.metadata[field], prev);
    if (map) out.metadata[field] = map;
  };
  put('labels');
  put('annotations');
  return out;
}

/**
 * Removes a previous injection entirely (re-injection): the containers, init containers and volumes it
 * added, its labels and annotations (restored to their previous values), its probe rewrite and the status
 * annotation. Mutates `pod`.
 */
export function removeInjection(pod: PodTemplate, rec: StatusRecord, key: string): void {
  const spec = pod.spec;
  const drop = (field: 'containers' | 'initContainers' | 'volumes', names: string[]) => {
    const v = spec[field];
    if (!Array.isArray(v)) return;
    const kept = v.filter((x) => !(isJsonObject(x) && typeof x.name === 'string' && names.includes(x.name)));
    if (kept.length > 0) spec[field] = kept;
    else delete spec[field];
  };
  drop('containers', rec.containers);
  drop('initContainers', rec.initContainers);
  drop('volumes', rec.volumes);
  restoreProbes(containersOf(spec, 'containers'), rec.probes);
  const reset = (field: 'labels' | 'annotations', prev: Record<string, string | null>) => {
    const m = restorePrevious(pod.metadata[field], field === 'annotations' ? { ...prev, [key]: null } : prev);
    if (m) pod.metadata[field] = m;
    else delete pod.metadata[field];
  };
  reset('labels', rec.labels);
  reset('annotations', rec.annotations);
}
