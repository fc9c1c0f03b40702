import type { TextMap, TextNode, TextSeq } from '../yaml/read/text-node.ts';
import type { Edit } from '../krm/write.ts';
import { isJsonObject, jsonEqual, withoutNulls } from '../json.ts';
import type { Json } from '../model.ts';
import { doubleQuoted, emitFlow, NOT_RAW } from '../yaml/emit/emit-block.ts';
import { MERGE_KEYS, mergeKeyOf } from '../workloads/merge-keys.ts';
import { defined } from '../checked.ts';

/**
 * In-place edits of flow collections (`{...}`, `[...]`, and JSON, which is all flow): only the entries
 * that change are rewritten, new entries are inserted after the last one, removed ones are cut out with
 * their comma. Everything else (quotes, comments, big integers, line breaks, indentation, a trailing
 * comma) stays byte for byte. An edit that would cut a comment out throws `Unfaithful`.
 */

/** How new flow entries are written: as JSON (`json`, a JSON resource) or YAML flow; `unit`: JSON indentation step. */
export interface FlowStyle {
  json: boolean;
  unit: number;
}

/** An edit the text editor cannot make faithfully (e.g. it would drop a comment); `offset` is where. */
export class Unfaithful extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** Applies non-overlapping edits inside [start, end) of `text`. */
export function applyEdits(text: string, start: number, end: number, edits: Edit[]): string {
  edits.sort((x, y) => x.start - y.start || x.end - y.end);
  let out = '';
  let at = start;
  for (const e of edits) {
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at, end);
}

/** Every merge key of the table, for lists the table does not name (`MERGE_KEYS`, in its order). */
const ANY_MERGE_KEY = [...new Set(Object.values(MERGE_KEYS))];

/**
 * Identity of an entry of the list `field`: the value of the field's strategic-merge key (`MERGE_KEYS`:
 * `volumeMounts` by `mountPath`, `ports` by `containerPort`); for a list the table does not name (a list
 * Kubernetes replaces whole, or a list in a list), the first merge key of the table the entry has; for a
 * scalar, the value itself.
 */
export function entryKey(v: Json | undefined, field?: string): string | undefined {
  if (isJsonObject(v)) {
    const own = mergeKeyOf(field);
    for (const k of own !== undefined ? [own] : ANY_MERGE_KEY) {
      const x = v[k];
      if (typeof x === 'string' || typeof x === 'number') return `${k}=${x}`;
    }
    return undefined;
  }
  if (v === null || typeof v !== 'object') return `scalar=${typeof v}:${String(v)}`;
  return undefined;
}

/**
 * Matches the entries of the list `field`: for each entry of `next`, the index of the entry of `old` it
 * continues (by `entryKey`, each old entry used once; entries without a key by position), or -1 for a new
 * entry.
 */
export function matchEntries(old: readonly Json[], next: readonly Json[], field?: string): number[] {
  const oldKeys = old.map((v) => entryKey(v, field));
  const used = new Set<number>();
  return next.map((v, i) => {
    const key = entryKey(v, field);
    let at = -1;
    if (key !== undefined) at = oldKeys.findIndex((k, j) => k === key && !used.has(j));
    else if (i < old.length && !used.has(i) && oldKeys[i] === undefined) at = i;
    if (at >= 0) used.add(at);
    return at;
  });
}

/** The layout of a collection: `pad` is its entries' indentation when they are on lines of their own. */
function padOf(text: string, node: TextMap | TextSeq): string | undefined {
  const first = node.t === 'map' ? node.pairs[0]?.keyNode : node.items[0];
  if (!first) return undefined;
  // Only the text between the bracket and the first entry is looked at (linear on one-line JSON).
  const gap = text.slice(node.start, first.start);
  const nl = gap.lastIndexOf('\n');
  return nl < 0 ? undefined : ' '.repeat(gap.length - nl - 1);
}

function emitValue(v: Json, pad: string | undefined, style: FlowStyle): string {
  const clean = withoutNulls(v);
  if (!style.json) return emitFlow(clean);
  return pad === undefined ? oneLineJson(clean) : JSON.stringify(clean, null, style.unit).replace(/\n/g, `\n${pad}`);
}

/** JSON on one line in the style people write it: `{"a": 1, "b": [2, 3]}`. */
function oneLineJson(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(oneLineJson).join(', ')}]`;
  if (isJsonObject(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${oneLineJson(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

function emitKey(k: string, style: FlowStyle): string {
  return style.json ? JSON.stringify(k) : emitFlow(k);
}

function emitScalar(node: TextNode, v: Json, style: FlowStyle): string {
  if (style.json) return JSON.stringify(v);
  if (typeof v === 'string' && node.t === 'scalar') {
    if (node.style === 'double') return doubleQuoted(v);
    if (node.style === 'single' && !NOT_RAW.test(v)) return `'${v.replace(/'/g, "''")}'`;
  }
  return emitFlow(v);
}

/**
 * Whether the quote at `text[i]` begins a quoted scalar: it follows `[`, `{` or `,` (blanks between), or a `:` that
 * ends a key (a blank before the quote, or a quoted key right before the colon, as JSON writes `"a":"b"`); in
 * `b:'c` the quote is part of a plain scalar.
 */
function opensScalar(text: string, i: number, prev: string): boolean {
  if (prev === '[' || prev === '{' || prev === ',') return true;
  if (prev !== ':') return false;
  const before = text[i - 1];
  return before !== ':' || text[i - 2] === '"' || text[i - 2] === "'";
}

/**
 * Refuses an edit of `text[start, end)` (whole flow nodes) that holds a comment: a `#` after a blank, outside quoted
 * scalars. A quote opens a scalar only where one begins (`opensScalar`, or at the span's start); a `#` inside a
 * quoted scalar (`"...\n# rules"`) or a plain one (`a#b`) is text.
 * @throws Unfaithful at the comment
 */
function noComment(text: string, start: number, end: number): void {
  let quote = '';
  let prev = '['; // the last character outside blanks: what a quote at the start follows
  for (let i = start; i < end; i++) {
    const c = text[i] as string;
    if (quote === '"') {
      if (c === '\\') i++;
      else if (c === '"') quote = '';
      continue;
    }
    if (quote === "'") {
      if (c === "'" && text[i + 1] === "'") i++;
      else if (c === "'") quote = '';
      continue;
    }
    const blank = c === ' ' || c === '\t' || c === '\n' || c === '\r';
    if (c === '#' && i > start && /[ \t\r\n]/.test(text[i - 1] as string))
      throw new Unfaithful('a comment inside a flow collection would be removed', i);
    if ((c === '"' || c === "'") && opensScalar(text, i, prev)) quote = c;
    if (!blank) prev = c;
  }
}

function endOf(node: TextNode): number {
  return node.end;
}

/**
 * The edits that make a flow collection read as `next` (its data is `old`). Nested collections are
 * edited in place as well; values that change type are rewritten whole.
 *
 * @throws Unfaithful where an edit would remove a comment
 */
export function editFlow(
  text: string,
  node: TextMap | TextSeq,
  old: Json,
  next: Json,
  style: FlowStyle,
  field?: string,
): Edit[] {
  if (jsonEqual(old, next)) return [];
  const edits: Edit[] = [];
  patchValue(text, node, old, next, undefined, style, edits, field);
  return edits;
}

function patchValue(
  text: string,
  node: TextNode,
  o: Json | undefined,
  n: Json,
  pad: string | undefined,
  style: FlowStyle,
  edits: Edit[],
  field?: string,
): void {
  if (jsonEqual(o, n)) return;
  if (node.t === 'alias') throw new Unfaithful('an alias inside a changed flow collection', node.start);
  if (node.t === 'map' && isJsonObject(o) && isJsonObject(n) && node.pairs.length > 0) {
    patchMap(text, node, o, n, style, edits);
    return;
  }
  if (node.t === 'seq' && Array.isArray(o) && Array.isArray(n) && node.items.length > 0) {
    patchSeq(text, node, o, n, style, edits, field);
    return;
  }
  if (node.t === 'scalar' && (n === null || typeof n !== 'object') && node.end > node.start) {
    edits.push({ start: node.start, end: node.end, text: emitScalar(node, n, style) });
    return;
  }
  noComment(text, node.start, node.end);
  edits.push({ start: node.start, end: node.end, text: emitValue(n, pad, style) });
}

function patchMap(
  text: string,
  map: TextMap,
  old: { [k: string]: Json },
  next: { [k: string]: Json },
  style: FlowStyle,
  edits: Edit[],
): void {
  const pad = padOf(text, map);
  const pairs = map.pairs;
  const keyed = pairs.map((p) => {
    if (p.key === undefined) throw new Unfaithful('a complex key inside a flow mapping', p.keyNode.start);
    return { pair: p, key: p.key };
  });
  const removed = keyed.map(({ key }) => {
    const n = Object.hasOwn(next, key) ? next[key] : undefined;
    // JSON keeps an explicit `null` (`"volumes": null` put back by uninject, issue #21 §4): it is a value there.
    if (n === null && style.json) return false;
    return (n === undefined || n === null) && Object.hasOwn(old, key) && old[key] !== null && old[key] !== undefined;
  });
  if (removed.every(Boolean)) {
    noComment(text, map.start, map.end);
    edits.push({ start: map.start, end: map.end, text: emitValue(next, pad, style) });
    return;
  }
  keyed.forEach(({ pair: p, key: k }, i) => {
    if (removed[i]) return;
    const n = next[k];
    if (n === undefined || (n === null && !style.json) || jsonEqual(old[k], n)) return;
    if (!p.value) throw new Unfaithful(`flow mapping key \`${k}\` has no value`, p.keyNode.start);
    patchValue(text, p.value, old[k], n, pad, style, edits, k);
  });
  const ends = pairs.map((p) => endOf(p.value ?? p.keyNode));
  const starts = pairs.map((p) => p.keyNode.start);
  cutRemoved(text, removed, starts, ends, edits);
  const have = new Set(pairs.map((p) => p.key));
  const added = Object.entries(next).filter(([k, v]) => v !== null && !have.has(k));
  if (added.length === 0) return;
  const sep = pad === undefined ? ', ' : `,\n${pad}`;
  const last = defined(ends[removed.lastIndexOf(false)], 'the end of the last kept flow entry');
  const entry = ([k, v]: [string, Json]): string => `${emitKey(k, style)}: ${emitValue(v, pad, style)}`;
  edits.push({ start: last, end: last, text: added.map((e) => sep + entry(e)).join('') });
}

/** Cuts out removed entries with one comma each: `[end of previous kept, end)`, or up to the next kept entry. */
function cutRemoved(text: string, removed: boolean[], starts: number[], ends: number[], edits: Edit[]): void {
  const firstKept = removed.indexOf(false);
  if (firstKept > 0) {
    const start = defined(starts[0], 'the start of the first flow entry');
    const end = defined(starts[firstKept], 'the start of the first kept flow entry');
    noComment(text, start, end);
    edits.push({ start, end, text: '' });
  }
  for (let i = firstKept + 1; i < removed.length; i++) {
    if (!removed[i]) continue;
    const start = defined(ends[i - 1], 'the end of the flow entry before a removed one');
    const end = defined(ends[i], 'the end of a removed flow entry');
    noComment(text, start, end);
    edits.push({ start, end, text: '' });
  }
}

function patchSeq(
  text: string,
  seq: TextSeq,
  old: Json[],
  next: Json[],
  style: FlowStyle,
  edits: Edit[],
  field: string | undefined,
): void {
  const pad = padOf(text, seq);
  if (seq.items.some((n) => !n)) throw new Unfaithful('an empty entry in a flow sequence', seq.start);
  const items = seq.items as TextNode[];
  const matched = matchEntries(old, next, field);
  const order = next.map((v, i) => ({ at: defined(matched[i], 'the match of a flow entry'), value: v }));
  const used = new Set(matched.filter((i) => i >= 0));
  const kept = order.filter((o) => o.at >= 0);
  const monotonic = kept.every((o, i) => {
    const previous = kept[i - 1];
    return previous === undefined || o.at > previous.at;
  });
  if (kept.length === 0 || !monotonic) {
    noComment(text, seq.start, seq.end);
    const parts = order.map((o) => {
      if (o.at < 0) return emitValue(o.value, pad, style);
      const item = itemAt(items, o.at);
      const sub: Edit[] = [];
      patchValue(text, item, old[o.at], o.value, pad, style, sub);
      return applyEdits(text, item.start, item.end, sub);
    });
    const open = text.slice(seq.start, itemAt(items, 0).start);
    const close = text.slice(itemAt(items, items.length - 1).end, seq.end);
    edits.push({
      start: seq.start,
      end: seq.end,
      text: `${open}${parts.join(pad === undefined ? ', ' : `,\n${pad}`)}${close.replace(/^,/, '')}`,
    });
    return;
  }
  const removed = items.map((_, i) => !used.has(i));
  for (const o of kept) patchValue(text, itemAt(items, o.at), old[o.at], o.value, pad, style, edits);
  const starts = items.map((n) => n.start);
  const ends = items.map(endOf);
  cutRemoved(text, removed, starts, ends, edits);
  const sep = pad === undefined ? ', ' : `,\n${pad}`;
  // New entries go after the kept entry before them, or before the first kept entry.
  let anchor = -1;
  const before: string[] = [];
  const after = new Map<number, string>();
  for (const o of order) {
    if (o.at >= 0) {
      anchor = o.at;
      continue;
    }
    const v = emitValue(o.value, pad, style);
    if (anchor < 0) before.push(v);
    else after.set(anchor, (after.get(anchor) ?? '') + sep + v);
  }
  if (before.length) {
    const first = defined(starts[defined(kept[0], 'the first kept flow entry').at], 'the start of a kept flow entry');
    edits.push({ start: first, end: first, text: before.join(sep) + sep });
  }
  for (const [i, t] of after) {
    const end = defined(ends[i], 'the end of a kept flow entry');
    edits.push({ start: end, end, text: t });
  }
}

/** The node of entry `at` of a flow sequence (an index of the data's list, which has one entry per node). */
function itemAt(items: readonly TextNode[], at: number): TextNode {
  return defined(items[at], 'the node of a flow sequence entry');
}
