import { Document, Pair, Scalar, YAMLMap, YAMLSeq, isMap, isNode, isScalar, isSeq, visit } from 'yaml';
import type { Json } from '../model.ts';

/**
 * Plain strings that a YAML 1.1 reader (Go's sigs.k8s.io/yaml, i.e. kubectl, kpt, kustomize, the API
 * server) resolves to something else than a string: booleans (y/yes/on/off/...), null (~), numbers in
 * 1.1 forms (0x1f, 0o17, 1_000, 1:20, .5, +1), and timestamps. New string scalars matching it are quoted.
 */
const YAML11_NON_STRING =
  /^(?:[yY]|[yY]es|YES|[nN]|[nN]o|NO|[tT]rue|TRUE|[fF]alse|FALSE|[oO]n|ON|[oO]ff|OFF|~|[nN]ull|NULL|)$|^[-+]?(?:0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][-+]?[0-9]+)?|[1-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$|^\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?$/;

/** Whether a string must be quoted so that YAML 1.1 and 1.2 readers both read it back as a string. */
export function needsQuotes(value: string): boolean {
  return YAML11_NON_STRING.test(value);
}

function isPlainObject(v: Json | undefined): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Creates a block-style node for new data; strings a YAML 1.1 reader would misread are double-quoted. */
export function createNode(doc: Document, value: Json): unknown {
  const node = doc.createNode(pruneNulls(value));
  visit(node, {
    Scalar(_key, s) {
      if (typeof s.value === 'string' && needsQuotes(s.value)) s.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return node;
}

/** Drops `key: null` entries from maps (Kubernetes reads null as absent); array entries are kept. */
function pruneNulls(value: Json): Json {
  if (Array.isArray(value)) return value.map(pruneNulls);
  if (isPlainObject(value)) {
    const out: { [k: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = pruneNulls(v);
    return out;
  }
  return value;
}

function keyOf(pair: Pair): string | undefined {
  const k = pair.key;
  if (isScalar(k)) return String(k.value);
  if (typeof k === 'string') return k;
  return undefined;
}

/** Identity of a list entry for matching old and new lists: Kubernetes merge keys first, then the value. */
function entryKey(v: Json): string | undefined {
  if (isPlainObject(v)) {
    for (const k of ['name', 'mountPath', 'containerPort', 'devicePath', 'ip', 'topologyKey']) {
      const x = v[k];
      if (typeof x === 'string' || typeof x === 'number') return `${k}=${x}`;
    }
    return undefined;
  }
  if (v === null || typeof v !== 'object') return `scalar=${typeof v}:${String(v)}`;
  return undefined;
}

function nodeJson(node: unknown): Json {
  if (isNode(node)) return node.toJSON() as Json;
  return (node ?? null) as Json;
}

/** Result of syncing one node: the node to keep in place (same object when edited in place). */
interface Synced {
  node: unknown;
  changed: boolean;
}

function syncMap(doc: Document, map: YAMLMap, value: { [k: string]: Json }): Synced {
  let changed = false;
  const kept: Pair[] = [];
  for (const pair of map.items as Pair[]) {
    const k = keyOf(pair);
    if (k === undefined || !(k in value) || value[k] === null) {
      // A null in the new data means absent; keep a source `key:` (null) only if it was null already.
      if (k !== undefined && k in value && value[k] === null && (pair.value === null || (isScalar(pair.value) && pair.value.value === null))) {
        kept.push(pair);
        continue;
      }
      changed = true;
      continue;
    }
    const r = syncValue(doc, pair.value, value[k]!);
    if (r.node !== pair.value) pair.value = r.node as typeof pair.value;
    changed ||= r.changed;
    kept.push(pair);
  }
  const present = new Set(kept.map(keyOf));
  for (const [k, v] of Object.entries(value)) {
    if (present.has(k) || v === null) continue;
    kept.push(doc.createPair(k, null) as Pair);
    kept[kept.length - 1]!.value = createNode(doc, v) as never;
    changed = true;
  }
  map.items = kept as typeof map.items;
  // A flow map that was empty (`{}`) and now has content reads better in block style.
  if (changed && map.flow && isEmptyFlowSource(map)) map.flow = false;
  return { node: map, changed };
}

function isEmptyFlowSource(map: YAMLMap | YAMLSeq): boolean {
  const r = map.range;
  return !!r && r[1] - r[0] <= 3;
}

function syncSeq(doc: Document, seq: YAMLSeq, value: Json[]): Synced {
  const old = seq.items.slice();
  const oldKeys = old.map((n) => entryKey(nodeJson(n)));
  const used = new Set<number>();
  const next: unknown[] = [];
  let changed = old.length !== value.length;
  value.forEach((v, i) => {
    const key = entryKey(v);
    let at = -1;
    if (key !== undefined) at = oldKeys.findIndex((k, j) => k === key && !used.has(j));
    else if (i < old.length && !used.has(i) && oldKeys[i] === undefined) at = i;
    if (at < 0) {
      next.push(createNode(doc, v));
      changed = true;
      return;
    }
    used.add(at);
    if (at !== i) changed = true;
    const r = syncValue(doc, old[at], v);
    changed ||= r.changed;
    next.push(r.node);
  });
  seq.items = next as typeof seq.items;
  if (changed && seq.flow && isEmptyFlowSource(seq)) seq.flow = false;
  return { node: seq, changed };
}

function syncValue(doc: Document, node: unknown, value: Json): Synced {
  if (isPlainObject(value)) {
    if (isMap(node)) return syncMap(doc, node, value);
    return { node: createNode(doc, value), changed: true };
  }
  if (Array.isArray(value)) {
    if (isSeq(node)) return syncSeq(doc, node, value);
    return { node: createNode(doc, value), changed: true };
  }
  if (isScalar(node)) {
    if (node.value === value) return { node, changed: false };
    if (typeof value === 'string' && typeof node.value === 'string') {
      node.value = value;
      if (node.type === Scalar.PLAIN && needsQuotes(value)) node.type = Scalar.QUOTE_DOUBLE;
      return { node, changed: true };
    }
  }
  return { node: createNode(doc, value), changed: true };
}

/**
 * Makes the node at `path` of `doc` equal to `value` with the smallest edit: unchanged nodes (and their
 * comments, quoting, flow style, key order) are kept as they are; map entries missing from `value` are
 * removed, new ones appended; list entries are matched by their Kubernetes merge key (`name`,
 * `mountPath`, `containerPort`, ...) or, for scalars, by value, and put in the order of `value`.
 *
 * @param doc the resource Document (edited in place)
 * @param path keys from the root to the node to sync (`[]` for the whole resource)
 * @param value the desired JSON value (`null` map values mean "absent")
 * @returns whether anything changed
 */
export function syncIn(doc: Document, path: readonly string[], value: Json): boolean {
  if (path.length === 0) {
    const r = syncValue(doc, doc.contents, value);
    if (r.node !== doc.contents) doc.contents = r.node as typeof doc.contents;
    return r.changed;
  }
  const parentPath = path.slice(0, -1);
  const key = path[path.length - 1]!;
  const parent = parentPath.length ? doc.getIn(parentPath, true) : doc.contents;
  if (!isMap(parent)) {
    doc.setIn(path, createNode(doc, value));
    return true;
  }
  const pair = (parent.items as Pair[]).find((p) => keyOf(p) === key);
  if (!pair) {
    parent.items.push(doc.createPair(key, null) as never);
    (parent.items[parent.items.length - 1] as Pair).value = createNode(doc, value) as never;
    return true;
  }
  const r = syncValue(doc, pair.value, value);
  if (r.node !== pair.value) pair.value = r.node as typeof pair.value;
  return r.changed;
}
