/**
 * The drivers' shared status record: what an injection added to a pod template and what it replaced, kept
 * so that uninject (and `removeWhenSkipped`) removes exactly what was added and puts back what was replaced
 * (issue #21 §1: a user's `kubectl.kubernetes.io/default-container: manager` must survive an inject and an
 * uninject, whatever the mesh writes there).
 *
 * Two users:
 * - a driver whose own record keeps previous values (meshinject's `<mesh>-status` records) validates and
 *   restores its label and annotation maps with {@link isPreviousMap} and {@link restorePrevious};
 * - every driver gets, from the pipeline, the companion annotation {@link ORIGINAL_ANNOTATION}: the values the
 *   pod template had, before the injection, for the metadata keys the driver says it may write
 *   (`MeshDriver.recordKeys`), and the lists of the pod spec that were present but empty (`volumes: []`,
 *   JSON `"volumes": null`), and the repairs (`replaced`, ./status-repairs.ts) for whatever else the driver's
 *   own uninject would not give back exactly, and the source texts (`texts`, src/edit/source-texts.ts) of what
 *   the injection replaced where a fresh emit would write it otherwise. It is written only when it holds
 *   something (most pods have none of these), next to the mesh's own record, which stays as the mesh writes it. Without it (an input injected by an older
 *   meshinject or by the mesh itself), uninject falls back to the driver's own rules.
 *
 * A record is not taken on trust: one that is not the JSON written here, or that names a key the driver cannot
 * write or a list that is not a pod-spec list, is refused with an error naming the annotation (never
 * ignored: the user's values would be lost). Mesh-neutral: it names no mesh.
 */
import { isJsonObject, assignOwn, setOwn, deepFreeze, hasKeys } from '../json.ts';
import { quoteData } from '../results/quote.ts';
import type { Json, JsonObject, PodTemplate } from '../model.ts';
import { InjectError, MeshInjectError } from '../results/errors.ts';
import { namedProbePorts, PORT_HANDLERS, PROBES, restoreNamedPorts, type NamedProbePort } from './probe-ports.ts';
import {
  applyRepairs,
  diffRepairs,
  fingerprint,
  isRepair,
  isRepairPath,
  type Repair,
  valueAt,
} from './status-repairs.ts';

/** The companion record's annotation (JSON, see {@link OriginalRecord}). */
export const ORIGINAL_ANNOTATION = 'meshinject.dev/original';

/** Key → value before the injection (null: the key was absent, so the injection added it). */
export type PreviousMap = Record<string, string | null>;

/** Which metadata map a key belongs to. */
export type MetadataKind = 'labels' | 'annotations';

/** Predicate of the metadata keys a driver's injection may write (`MeshDriver.recordKeys`). */
export type RecordKeys = (kind: MetadataKind, key: string) => boolean;

/**
 * What a driver asks the companion record to keep: its `recordKeys` and `recordsProbePorts` (`MeshDriver`), and
 * `uninject`: the pod template uninjected as uninject would do it (the driver's rules, the record's parts other
 * than `replaced`), undefined when it carries no injection; it may throw an `InjectError` (then nothing is
 * `replaced`). Without it the record keeps no repairs.
 */
export interface RecordNeeds {
  recordKeys?: RecordKeys | undefined;
  recordsProbePorts?: boolean;
  uninject?: (pod: PodTemplate) => PodTemplate | undefined;
  /**
   * The source texts of the nodes of `before` that `after` replaces or removes and that a fresh emit would
   * not write as they were (src/edit/source-texts.ts): `[path from the pod template's root, text]`.
   */
  texts?: (before: PodTemplate, after: PodTemplate) => Array<[Array<string | number>, string]>;
}

/**
 * One source text of the companion record (`texts`): `[path, guard, value, text]`. `path` as a repair's
 * (src/patch/status-repairs.ts); `guard`: `fingerprint` of what the injection left at `path` (the record's
 * own annotation left out); `value`: `fingerprint` of the value the text was written for (the pod template's
 * before the injection); `text`: the node's text after its `key:` or `- ` (src/edit/text-edit.ts `SourceTexts`).
 */
export type SourceText = [Array<string | number>, string, string, string];

/**
 * The companion record: `{"labels":{k:v},"annotations":{k:v},"lists":{"volumes":[]},"namedPorts":[...],
 * "replaced":[...],"texts":[...]}`, each part present only when non-empty. `labels` / `annotations`: the value each key the driver may write had before the injection
 * (the injection kept or replaced it). `lists`: pod-spec lists that were empty (`[]`) or `null` before the
 * injection added entries to them. `namedPorts`: probe ports given by name that the injection rewrote (a mesh
 * that redirects probes through its proxy records the port number it resolved, not the name).
 */
export interface OriginalRecord {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  lists: Record<string, [] | null>;
  /** Probe ports the app gave by name (`port: http`) that the injection rewrote: `[container, probe, handler, name]`. */
  namedPorts: NamedProbePort[];
  /**
   * What the driver's uninject does not give back exactly (a probe's key order, `scheme: HTTP`, a user's
   * annotation the mesh's uninject removes), as repairs applied last (src/patch/status-repairs.ts).
   */
  replaced: Repair[];
  /**
   * Source texts (issue #37 item 3): how the user wrote what the injection replaced or removed, where a
   * fresh emit would write it otherwise (`service: "/startup"`, `labels: *labels`). Uninject writes a text back
   * only where the injected value is still there and the text reads back as the value it restores.
   */
  texts: SourceText[];
}

/** The pod-spec lists an injection adds entries to (what `lists` may name). */
export const RECORDED_LISTS: readonly string[] = ['containers', 'initContainers', 'volumes', 'imagePullSecrets'];

/** True for a {@link PreviousMap}: a map whose values are strings or null. */
export function isPreviousMap(v: Json | undefined): v is PreviousMap {
  return isJsonObject(v) && Object.values(v).every((x) => x === null || typeof x === 'string');
}

/**
 * `map` with the previous values of `previous` put back: a null entry is removed, a string entry set. Keys
 * keep their place in `map`; a key put back that `map` lacks takes its place from `order` (the map as
 * injected), else goes last. Returns undefined when the result is empty (the caller drops the field).
 */
export function restorePrevious(
  map: Record<string, string> | null | undefined,
  previous: PreviousMap,
  order: readonly string[] = [],
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  const have = map ?? {};
  const keys = [...order.filter((k) => Object.hasOwn(have, k) || Object.hasOwn(previous, k)), ...Object.keys(have)];
  for (const k of [...keys, ...Object.keys(previous)]) {
    if (Object.hasOwn(out, k)) continue;
    const was = Object.hasOwn(previous, k) ? previous[k] : have[k];
    if (was === null || was === undefined) continue;
    setOwn(out, k, was);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The error refusing a record in annotation `key`; `why` says what is wrong with it. */
export function refusedRecord(key: string, why: string): InjectError {
  return new InjectError(
    `${key} is not a record meshinject wrote (${why}): cannot tell what the injection replaced; correct or remove the annotation`,
    { field: `metadata.annotations[${key}]` },
  );
}

/**
 * The JSON object in annotation `key` of `annotations`, or undefined when absent.
 * @throws InjectError ({@link refusedRecord}) when the value is not a JSON object
 */
export function readRecordJson(
  annotations: Record<string, string> | null | undefined,
  key: string,
): JsonObject | undefined {
  if (annotations === undefined || annotations === null || !Object.hasOwn(annotations, key)) return undefined;
  const raw = annotations[key];
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw refusedRecord(key, 'not JSON');
  }
  if (!isJsonObject<Json>(v)) throw refusedRecord(key, 'not a JSON object');
  return v;
}

const stringMap = (v: Json | undefined): v is Record<string, string> =>
  isJsonObject(v) && Object.values(v).every((x) => typeof x === 'string');

/**
 * The last record read whole ({@link readOriginal}): its annotation's value and the record, deep-frozen. One
 * entry: a workload's record is read two or three times in a row (the inject-time check's uninject reads it in
 * the driver's hook and in `restoreOriginal`; issue #40), each time parsed and checked anew before.
 * Module state by design: a one-entry memo of a pure function of the annotation's value, its answer deep-frozen.
 */
let lastRead: { value: unknown; rec: OriginalRecord } | undefined;

/**
 * The companion record of `pod`, or undefined when it has none. Deep-frozen, and the same object for the same
 * annotation value read again (the last one read is kept: JSON parsing and the shape checks run once per value;
 * the `recordKeys` check runs on every read, for it depends on the caller); callers only read it (a write
 * throws a TypeError).
 * @throws InjectError naming {@link ORIGINAL_ANNOTATION} when the record is malformed, names a metadata key
 *   `recordKeys` rejects, or a list outside {@link RECORDED_LISTS} (a tampered record is refused)
 */
export function readOriginal(pod: PodTemplate, recordKeys: RecordKeys | undefined): OriginalRecord | undefined {
  const annotations = pod.metadata.annotations;
  if (annotations === undefined || annotations === null || !Object.hasOwn(annotations, ORIGINAL_ANNOTATION))
    return undefined;
  const value: unknown = annotations[ORIGINAL_ANNOTATION];
  const last = lastRead;
  if (last !== undefined && value === last.value) {
    for (const kind of ['labels', 'annotations'] as const) checkRecordKeys(kind, last.rec[kind], recordKeys);
    return last.rec;
  }
  const rec = parseOriginal(pod, recordKeys);
  if (rec !== undefined) lastRead = { value, rec: deepFreeze(rec) };
  return rec;
}

/** Refuses a record whose `kind` map names a key `recordKeys` rejects ({@link readOriginal}). */
function checkRecordKeys(kind: MetadataKind, m: Record<string, string>, recordKeys: RecordKeys | undefined): void {
  for (const k of Object.keys(m)) {
    if (!recordKeys?.(kind, k))
      throw refusedRecord(
        ORIGINAL_ANNOTATION,
        `it names ${kind.slice(0, -1)} "${k}", which this mesh's injection does not write`,
      );
  }
}

/** {@link readOriginal} without the memo: the annotation's JSON parsed and checked. */
function parseOriginal(pod: PodTemplate, recordKeys: RecordKeys | undefined): OriginalRecord | undefined {
  const o = readRecordJson(pod.metadata.annotations, ORIGINAL_ANNOTATION);
  if (!o) return undefined;
  const extra = Object.keys(o).find(
    (k) => !['labels', 'annotations', 'lists', 'namedPorts', 'replaced', 'texts'].includes(k),
  );
  if (extra !== undefined) throw refusedRecord(ORIGINAL_ANNOTATION, `unknown field "${extra}"`);
  const rec: OriginalRecord = { labels: {}, annotations: {}, lists: {}, namedPorts: [], replaced: [], texts: [] };
  const texts = o.texts ?? [];
  if (!Array.isArray(texts) || !texts.every(isSourceText))
    throw refusedRecord(
      ORIGINAL_ANNOTATION,
      '"texts" must list [path, guard, value, text] entries under metadata or spec',
    );
  rec.texts = texts as SourceText[];
  const replaced = o.replaced ?? [];
  if (!Array.isArray(replaced) || !replaced.every(isRepair))
    throw refusedRecord(
      ORIGINAL_ANNOTATION,
      '"replaced" must list [path, guard, value?, key?] entries under metadata or spec',
    );
  rec.replaced = replaced as Repair[];
  const ports = o.namedPorts ?? [];
  const isEntry = (e: Json): boolean =>
    Array.isArray(e) &&
    e.length === 4 &&
    e.every((x) => typeof x === 'string') &&
    (PROBES as readonly string[]).includes(e[1] as string) &&
    (PORT_HANDLERS as readonly string[]).includes(e[2] as string);
  if (!Array.isArray(ports) || !ports.every(isEntry))
    throw refusedRecord(ORIGINAL_ANNOTATION, '"namedPorts" must list [container, probe, handler, port name] entries');
  rec.namedPorts = ports as OriginalRecord['namedPorts'];
  for (const kind of ['labels', 'annotations'] as const) {
    const m = o[kind] ?? {};
    if (!stringMap(m)) throw refusedRecord(ORIGINAL_ANNOTATION, `"${kind}" must map keys to strings`);
    checkRecordKeys(kind, m, recordKeys);
    rec[kind] = m;
  }
  const lists = o.lists ?? {};
  if (!isJsonObject(lists)) throw refusedRecord(ORIGINAL_ANNOTATION, '"lists" must be a map');
  for (const [k, v] of Object.entries(lists)) {
    if (!RECORDED_LISTS.includes(k) || !(v === null || (Array.isArray(v) && v.length === 0))) {
      throw refusedRecord(ORIGINAL_ANNOTATION, `"lists" may only name empty pod-spec lists; got ${quoteData(k)}`);
    }
    setOwn(rec.lists, k, v as [] | null);
  }
  return rec;
}

/** The record's annotation value (compact JSON, empty parts left out), or undefined when it holds nothing. */
export function originalValue(rec: OriginalRecord): string | undefined {
  const out: JsonObject = {};
  for (const part of ['labels', 'annotations', 'lists'] as const)
    if (Object.keys(rec[part]).length > 0) out[part] = rec[part];
  if (rec.namedPorts.length > 0) out.namedPorts = rec.namedPorts;
  if (rec.replaced.length > 0) out.replaced = rec.replaced as Json;
  if (rec.texts.length > 0) out.texts = rec.texts;
  return Object.keys(out).length > 0 ? JSON.stringify(out) : undefined;
}

/**
 * The companion record for one injection: `before` is the pod template as the injection received it, `after`
 * as it returned it. Metadata: the value in `before` of each key `recordKeys` accepts that `after` still has
 * (kept or replaced; a key `after` dropped is the driver's own business). Lists: each pod-spec list empty or
 * null in `before` that `after` fills. Named probe ports the injection rewrote, when the driver asks for them
 * (`needs.recordsProbePorts`). When `before` carries a record already (a re-injection), its entries
 * win: they hold the values before the first injection. `alreadyInjected`: `before` carries the mesh's own
 * injection without a companion record; its metadata values may be the earlier injection's, so none is taken.
 */
export function originalRecord(
  before: PodTemplate,
  after: PodTemplate,
  needs: RecordNeeds,
  previous: OriginalRecord | undefined,
  alreadyInjected: boolean,
): OriginalRecord {
  const { recordKeys } = needs;
  const namedPorts = previous?.namedPorts ?? (needs.recordsProbePorts ? namedProbePorts(before, after) : []);
  const rec: OriginalRecord = { labels: {}, annotations: {}, lists: {}, namedPorts, replaced: [], texts: [] };
  for (const kind of ['labels', 'annotations'] as const) {
    const was = before.metadata[kind] ?? {};
    const now = after.metadata[kind] ?? {};
    if (recordKeys && !alreadyInjected && !previous) {
      for (const [k, v] of Object.entries(was))
        if (k !== ORIGINAL_ANNOTATION && Object.hasOwn(now, k) && recordKeys(kind, k)) setOwn(rec[kind], k, v);
    }
    if (previous) assignOwn(rec[kind], previous[kind]);
  }
  for (const list of RECORDED_LISTS) {
    const was = before.spec[list];
    const now = after.spec[list];
    const empty = was === null || (Array.isArray(was) && was.length === 0);
    if (empty && Object.hasOwn(before.spec, list) && Array.isArray(now) && now.length > 0)
      rec.lists[list] = was as [] | null;
  }
  if (previous) assignOwn(rec.lists, previous.lists);
  return rec;
}

/**
 * `after` with the companion record of this injection set (or taken away when it holds nothing); see
 * {@link originalRecord}. With `needs.uninject`, the record also keeps the repairs ({@link OriginalRecord}
 * `replaced`) that make uninject give back `before` exactly (for a `before` already injected: what uninject
 * gives for `before`, so uninject(inject(x)) = uninject(x)). Returns `after` itself when nothing changes.
 * @throws InjectError when `before` carries a record that {@link readOriginal} refuses
 */
export function withOriginalRecord(
  before: PodTemplate,
  after: PodTemplate,
  needs: RecordNeeds,
  alreadyInjected: boolean,
): PodTemplate {
  const previous = readOriginal(before, needs.recordKeys);
  const rec = originalRecord(before, after, needs, previous, alreadyInjected && !previous);
  const tentative = withRecordValue(after, originalValue(rec));
  rec.replaced = repairsFor(before, tentative, needs, alreadyInjected);
  // Re-injecting keeps the first injection's texts and values (the user's text from before any injection), with
  // each guard taken anew: what this injection leaves at the path (another revision, image or mode writes other
  // values there), so that the output equals a fresh injection's and uninject finds the guard it wrote.
  rec.texts = previous
    ? previous.texts.map(([path, , value, text]): SourceText => [path, textFingerprint(after, path), value, text])
    : sourceTextsFor(before, after, needs);
  return rec.replaced.length > 0 || rec.texts.length > 0 ? withRecordValue(after, originalValue(rec)) : tentative;
}

/** True for a well-formed {@link SourceText}. */
function isSourceText(v: Json): boolean {
  if (!Array.isArray(v) || v.length !== 4) return false;
  const [path, guard, value, text] = v;
  const fp = (x: Json | undefined): boolean => typeof x === 'string' && /^(?:-|[0-9a-f]{8})$/.test(x);
  return isRepairPath(path) && fp(guard) && fp(value) && typeof text === 'string';
}

/** The value at `path` of `pod` without the companion record's annotation (what a text's guard fingerprints). */
function guarded(pod: PodTemplate, path: ReadonlyArray<string | number>): Json | undefined {
  // A pod template is JSON; its interface has no index signature, so it is not assignable to `JsonObject`.
  return valueAt(withRecordValue(pod, undefined) as unknown as JsonObject, path);
}

/**
 * A text's guard or value fingerprint: `fingerprint` of the value at `path` of `pod` (record left out) with the
 * keys of every map in sorted order. A map's key order is not part of its value: the driver's pod template
 * orders keys as it builds them (a re-injection removes and adds its keys again), the text editor keeps the
 * order of the text, so an order-bound fingerprint taken at injection would not match the pod read back at
 * uninject (test/core/pipeline.test.ts: re-injecting equals a fresh injection).
 */
function textFingerprint(pod: PodTemplate, path: ReadonlyArray<string | number>): string {
  return fingerprint(sortedKeys(guarded(pod, path)));
}

function sortedKeys(v: Json | undefined): Json | undefined {
  if (Array.isArray(v)) return v.map((x) => sortedKeys(x) ?? null);
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) setOwn(out, k, sortedKeys(v[k]) ?? null);
  return out;
}

/** The record's source texts for one injection (`needs.texts`), each with its guard and value fingerprints. */
function sourceTextsFor(before: PodTemplate, after: PodTemplate, needs: RecordNeeds): SourceText[] {
  if (!needs.texts) return [];
  return needs
    .texts(before, after)
    .map(([path, text]) => [path, textFingerprint(after, path), textFingerprint(before, path), text]);
}

/**
 * The source texts of `injected`'s companion record that uninject may write (src/edit/text-edit.ts
 * `SourceTexts`): those whose guard matches what `injected` (the pod template as found) holds at their path, the
 * value the injection wrote there (a value the user changed since keeps the user's), and whose value is what
 * `restored` (the pod template uninjected) holds there. The text editor proves each by reading it back.
 * `[path from the pod template's root, text]`; `[]` without a record.
 * @throws InjectError when the record is refused ({@link readOriginal})
 */
export function sourceTextsToWrite(
  injected: PodTemplate,
  restored: PodTemplate,
  recordKeys: RecordKeys | undefined,
): Array<[Array<string | number>, string]> {
  const rec = readOriginal(injected, recordKeys);
  if (!rec) return [];
  return rec.texts
    .filter(([path, guard, value]) => {
      return textFingerprint(injected, path) === guard && textFingerprint(restored, path) === value;
    })
    .map(([path, , , text]) => [path, text]);
}

/** `pod` with the record annotation set to `value`, or taken away when undefined; `pod` itself when it has that. */
function withRecordValue(pod: PodTemplate, value: string | undefined): PodTemplate {
  const annotations = pod.metadata.annotations ?? {};
  if (
    value === annotations[ORIGINAL_ANNOTATION] &&
    (value !== undefined || !Object.hasOwn(annotations, ORIGINAL_ANNOTATION))
  )
    return pod;
  // Built key by key, the record's annotation last, without `delete`: a `delete` turns the new map and metadata
  // into slow dictionary-mode objects for every reader after (issue #40; the order is the one `delete` then set gave).
  const next: Record<string, string> = {};
  for (const k of Object.keys(annotations)) if (k !== ORIGINAL_ANNOTATION) setOwn(next, k, annotations[k] as string);
  if (value !== undefined) next[ORIGINAL_ANNOTATION] = value;
  const keep = Object.keys(next).length > 0;
  const metadata: PodTemplate['metadata'] = {};
  for (const k of Object.keys(pod.metadata)) {
    if (k !== 'annotations') setOwn(metadata as JsonObject, k, pod.metadata[k] as Json);
    else if (keep) metadata.annotations = next;
  }
  if (keep && !Object.hasOwn(metadata, 'annotations')) metadata.annotations = next;
  return { ...pod, metadata };
}

/**
 * The repairs that take what uninject gives for `injected` (the record without repairs) to `before` (or, when
 * `before` is injected already, to what uninject gives for it). `[]` when uninject is exact already, when the
 * driver gives no `needs.uninject`, or when uninject refuses either pod (its error then reaches the user at
 * uninject time).
 */
function repairsFor(
  before: PodTemplate,
  injected: PodTemplate,
  needs: RecordNeeds,
  alreadyInjected: boolean,
): Repair[] {
  const uninject = needs.uninject;
  if (!uninject) return [];
  try {
    // uninject writes neither (its hooks read a frozen copy, src/patch/uninject.ts `uninjectPod`)
    const want = alreadyInjected ? uninject(before) : before;
    const now = want && uninject(injected);
    // A pod template is JSON; its interface has no index signature, so it is not assignable to `JsonObject`.
    return now && want ? diffRepairs(now as unknown as JsonObject, want as unknown as JsonObject) : [];
  } catch (e) {
    if (e instanceof MeshInjectError) return [];
    throw e;
  }
}

/**
 * Uninject's last step: `pod` (the mesh's injection removed) with the companion record of `injected` (the pod
 * as found) applied: each recorded label and annotation put back with its recorded value, in its place in
 * `injected`; each recorded list that the removal dropped (or left empty) back as it was (`[]` or `null`);
 * the record's annotation removed; last, the record's repairs (`replaced`) whose guards match. Returns `pod`
 * itself when `injected` has no record.
 * @throws InjectError when the record is refused ({@link readOriginal})
 */
export function restoreOriginal(
  pod: PodTemplate,
  injected: PodTemplate,
  recordKeys: RecordKeys | undefined,
): PodTemplate {
  const rec = readOriginal(injected, recordKeys);
  if (!rec) return pod;
  // `restoreNamedPorts` writes into neither: its spec is `pod.spec` itself without entries (no copy; issue #40).
  const out: PodTemplate = { metadata: { ...pod.metadata }, spec: restoreNamedPorts(pod.spec, rec.namedPorts) };
  for (const kind of ['labels', 'annotations'] as const) {
    const previous: PreviousMap = { ...rec[kind] };
    if (kind === 'annotations') previous[ORIGINAL_ANNOTATION] = null;
    const now = out.metadata[kind];
    const map = restorePrevious(now, previous, Object.keys(injected.metadata[kind] ?? {}));
    if (map) out.metadata[kind] = map;
    // A map written with no value (null) or empty (`labels: {}`, the user's: a map the removal emptied is gone
    // already) that nothing is put back into stays as it is, whether the pod has a record or not.
    else if (now && hasKeys(now)) delete out.metadata[kind];
  }
  const lists = Object.entries(rec.lists).filter(
    ([list]) => out.spec[list] === undefined || (Array.isArray(out.spec[list]) && out.spec[list].length === 0),
  );
  // A pod template is JSON, and the repairs keep it one; the two types are not assignable either way.
  if (lists.length === 0) return applyRepairs(out as unknown as JsonObject, rec.replaced) as unknown as PodTemplate;
  // Each list back in its place among the spec's fields as injected.
  const spec: JsonObject = {};
  const back = new Map(lists);
  for (const k of [...Object.keys(injected.spec), ...Object.keys(out.spec)]) {
    if (Object.hasOwn(spec, k)) continue;
    if (back.has(k)) spec[k] = back.get(k) as Json;
    else if (Object.hasOwn(out.spec, k)) spec[k] = out.spec[k] as Json;
  }
  // A pod template is JSON, and the repairs keep it one; the two types are not assignable either way.
  return applyRepairs({ ...out, spec } as unknown as JsonObject, rec.replaced) as unknown as PodTemplate;
}
