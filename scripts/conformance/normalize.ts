/**
 * Pure comparison logic of the Istio conformance runner: parse YAML streams the way Go does (YAML 1.1), apply
 * exactly the normalisations of istio-injection.md §9.1 to both sides, and report the first difference.
 * Nothing here touches the file system or processes.
 */
import { parseAllDocuments } from 'yaml';
import jsonPatch from 'fast-json-patch';
import type { Json, JsonObject } from '../../src/model.ts';
import { canonicalQuantity } from '../../src/drivers/istio/quantity.ts';
import { isJsonObject } from '../../src/json.ts';

/** Pod-template annotations whose values are JSON documents (§9.1 rule 7). */
export const JSON_ANNOTATIONS: readonly string[] = ['sidecar.istio.io/status', 'proxy.istio.io/overrides'];
/** Proxy env entries whose values are JSON documents (§9.1 rule 7). */
export const JSON_ENVS: readonly string[] = [
  'ISTIO_META_POD_PORTS',
  'ISTIO_PROMETHEUS_ANNOTATIONS',
  'ISTIO_KUBE_APP_PROBERS',
  'PROXY_CONFIG',
];
/**
 * meshinject's own status record (src/patch/status-record.ts, issue #21): the values a pod had before the
 * injection for the keys the mesh writes. No mesh writes it, so it is not compared (like the result annotation,
 * which the corpora switch off).
 */
const OWN_RECORD_ANNOTATION = 'meshinject.dev/original';
/** Annotation compared as parsed JSON only when it holds a JSON list (Multus network list). */
const MULTUS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';

/**
 * Splits a YAML stream into parsed documents with YAML 1.1 rules (as Go's yaml.v2 reads it), ignoring empty
 * documents (so a trailing `---` does not matter). Throws on a YAML syntax error.
 * @param text a multi-document YAML stream
 */
export function parseYamlStream(text: string): Json[] {
  const out: Json[] = [];
  for (const doc of parseAllDocuments(text, { version: '1.1' })) {
    if (doc.errors.length > 0) throw new Error(`YAML error: ${doc.errors[0]!.message}`);
    const v = doc.toJS({ maxAliasCount: -1 }) as Json | undefined;
    if (v === null || v === undefined) continue;
    out.push(v);
  }
  return out;
}

// ---- Kubernetes quantities (rule 6) --------------------------------------------------------------------

// canonicalQuantity: the driver's own Kubernetes quantity rule (src/drivers/istio/quantity.ts).

// ---- normalisation ---------------------------------------------------------------------------------------

const QUANTITY_PARENTS = new Set(['requests', 'limits']);

function parseJsonValue(s: string): Json {
  try {
    return { $json: JSON.parse(s) as Json };
  } catch {
    return s;
  }
}

/** Rules 3, 5, 6 and 7, recursively; `path` is the list of map keys from the document root. */
function normalizeValue(v: Json, path: readonly string[]): Json | undefined {
  if (v === null) return undefined;
  if (Array.isArray(v)) {
    const parent = path[path.length - 1];
    return v.map((x) => {
      if (
        parent === 'env' &&
        isJsonObject(x) &&
        typeof x.name === 'string' &&
        JSON_ENVS.includes(x.name) &&
        typeof x.value === 'string'
      ) {
        const n = normalizeValue({ ...x, value: '' }, [...path, '[]']) as JsonObject;
        return { ...n, value: parseJsonValue(x.value) };
      }
      const n = normalizeValue(x, [...path, '[]']);
      return n === undefined ? null : n;
    });
  }
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    const key = path[path.length - 1];
    const parentKey = path[path.length - 2];
    for (const [k, x] of Object.entries(v)) {
      // Go's typed re-encoding drops `hostNetwork: false` (omitempty; Linkerd corpus SOURCE.md).
      if (k === 'hostNetwork' && x === false && key === 'spec') continue;
      if (key === 'annotations' && k === OWN_RECORD_ANNOTATION) continue;
      let n: Json | undefined;
      if (
        key === 'annotations' &&
        typeof x === 'string' &&
        (JSON_ANNOTATIONS.includes(k) || (k === MULTUS_ANNOTATION && x.trim().startsWith('[')))
      ) {
        n = parseJsonValue(x);
      } else if (
        (QUANTITY_PARENTS.has(key ?? '') && parentKey === 'resources') ||
        (key === 'resourceFieldRef' && k === 'divisor') ||
        (key === 'emptyDir' && k === 'sizeLimit')
      ) {
        n =
          typeof x === 'string' || typeof x === 'number'
            ? (canonicalQuantity(x) ?? x)
            : normalizeValue(x, [...path, k]);
      } else {
        n = normalizeValue(x, [...path, k]);
      }
      if (n === undefined) continue;
      out[k] = n;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v;
}

function isZeroish(v: Json | undefined): boolean {
  if (v === null || v === undefined || v === 0 || v === false || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isJsonObject(v)) return Object.values(v).every(isZeroish);
  return false;
}

/**
 * Applies the §9.1 normalisations to one parsed document: drops nulls and empty maps (incl. `creationTimestamp:
 * null`), a pod spec's `hostNetwork: false` (Go omitempty, as the Linkerd corpus' goldens show), a top-level `status` whose values are all zero/empty, DeploymentConfig's `spec.test: false`,
 * `spec.minReadySeconds: 0` and `spec.paused: false` (also in `kind: List` items); canonicalises quantities; replaces JSON-valued
 * annotations/env values by `{"$json": <parsed>}`. Lists keep their order; scalar types are kept.
 * @returns the normalised document (`null` if nothing remains)
 */
export function normalizeDocument(doc: Json): Json {
  let d: Json = structuredClone(doc);
  normalizeObject(d);
  // The items of a `kind: List` are objects of their own (Go round-trips each one typed).
  if (isJsonObject(d) && d.kind === 'List' && Array.isArray(d.items)) d.items.forEach(normalizeObject);
  d = normalizeValue(d, []) ?? null;
  return d;
}

function normalizeObject(d: Json): void {
  if (!isJsonObject(d)) return;
  if ('status' in d && isZeroish(d.status)) delete d.status;
  if (d.kind === 'DeploymentConfig' && isJsonObject(d.spec)) {
    const spec = d.spec;
    if (spec.test === false) delete spec.test;
    if (spec.minReadySeconds === 0) delete spec.minReadySeconds;
    if (spec.paused === false) delete spec.paused;
  }
}

/** The outcome of comparing an expected and an actual stream. */
export interface StreamDiff {
  equal: boolean;
  /** First difference, e.g. `replace /spec/template/spec/containers/0/image: "a" -> "b"`. */
  detail?: string;
}

function short(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 160 ? `${s.slice(0, 157)}...` : s;
}

function valueAt(root: Json, pointer: string): unknown {
  let cur: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** Position of a JSON pointer in document order: per segment, the key's index in `a` (else `b`), or the array index. */
function orderKey(a: Json, b: Json, pointer: string): number[] {
  const out: number[] = [];
  let x: unknown = a;
  let y: unknown = b;
  for (const raw of pointer.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const idx = (v: unknown): number =>
      Array.isArray(v) ? Number(k) : v !== null && typeof v === 'object' ? Object.keys(v).indexOf(k) : -1;
    const ix = idx(x);
    out.push(ix >= 0 ? ix : idx(y) >= 0 ? idx(y) + 0.5 : Number.MAX_SAFE_INTEGER);
    x = x !== null && typeof x === 'object' ? (x as Record<string, unknown>)[k] : undefined;
    y = y !== null && typeof y === 'object' ? (y as Record<string, unknown>)[k] : undefined;
  }
  return out;
}

function compareKeys(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * Compares two lists of parsed documents after {@link normalizeDocument}; reports the first differing path
 * (a JSON pointer prefixed with the document index) using fast-json-patch's `compare`.
 */
export function compareDocuments(expected: readonly Json[], actual: readonly Json[]): StreamDiff {
  const e = expected.map(normalizeDocument);
  const a = actual.map(normalizeDocument);
  if (e.length !== a.length) {
    return { equal: false, detail: `document count: expected ${e.length}, got ${a.length}` };
  }
  for (let i = 0; i < e.length; i++) {
    const ops = jsonPatch.compare(e[i] as object, a[i] as object);
    if (ops.length === 0) continue;
    // compare() walks keys backwards; report the op that comes first in document order.
    const op = ops.map((o) => ({ o, k: orderKey(e[i]!, a[i]!, o.path) })).sort((x, y) => compareKeys(x.k, y.k))[0]!.o;
    const want = valueAt(e[i]!, op.path);
    const got = valueAt(a[i]!, op.path);
    return { equal: false, detail: `doc ${i} ${op.op} ${op.path}: expected ${short(want)}, got ${short(got)}` };
  }
  return { equal: true };
}
