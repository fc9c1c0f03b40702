/**
 * The source texts an injection replaces or removes (issue #37 item 3): where the injection rewrites or drops a
 * node of the pod template, its text as the user wrote it, when a fresh emit of its value would write other
 * text (quotes, a comment, flow style, key order, an alias such as `labels: *labels`, an anchor). The companion
 * record keeps them (`texts`, src/patch/status-record.ts) and uninject writes them back in place of a fresh
 * emit (`editText`'s `texts`), where they read back as the value uninject restores. Canonical text needs no
 * entry, so most pods get none.
 */
import { hasKeys, isJsonObject, jsonEqual } from '../json.ts';
import type { Json } from '../model.ts';
import type { TextNode, TextPair } from '../yaml/read/text-node.ts';
import { emitAfterDash, emitAfterKey, type BlockStyle } from '../yaml/emit/emit-block.ts';
import { matchEntries } from './flow-edit.ts';
import { itemTextOf, sourceTextOf } from './text-edit.ts';
import { column, lineStartDash } from './text-lines.ts';

/** A node's path (keys and list indexes) below the node the walk starts at, and its source text (`SourceTexts`). */
export type NodeText = [Array<string | number>, string];

/** The node at `path` (keys of mappings, indexes of sequences) below `node`, or undefined. */
export function nodeAt(node: TextNode | null, path: ReadonlyArray<string | number>): TextNode | undefined {
  let cur: TextNode | null | undefined = node;
  for (const seg of path) {
    if (!cur) return undefined;
    if (cur.t === 'map' && typeof seg === 'string') cur = valueOfKey(cur.pairs, seg);
    else if (cur.t === 'seq' && typeof seg === 'number') cur = cur.items[seg];
    else return undefined;
  }
  return cur ?? undefined;
}

/** The value node of the first pair of `pairs` whose key is `key` (`find` without a closure per level; issue #40). */
function valueOfKey(pairs: readonly TextPair[], key: string): TextNode | null | undefined {
  for (const p of pairs) if (p.key === key) return p.value;
  return undefined;
}

/**
 * The source texts of the nodes under `node` (whose value is `before`) that `after` replaces or removes and
 * whose text a fresh emit would not give: the deepest such nodes, found by walking both values (mapping keys
 * by name, list entries matched as the text editor matches them, `matchEntries`); an alias, a flow collection
 * (but one of plain scalars on one line, which the flow editor gives back), or a node whose value is replaced by
 * one of another shape, is taken whole. `path` is prepended to each path; `text` is the
 * resource's source text (node offsets index it); `style` how the text editor would emit (its list indentation).
 */
export function replacedTexts(
  text: string,
  node: TextNode,
  before: Json | undefined,
  after: Json | undefined,
  style: BlockStyle,
  path: Array<string | number>,
  out: NodeText[] = [],
): NodeText[] {
  if (!jsonEqual(before, after)) differingTexts(text, node, before, after, style, [...path], out);
  return out;
}

/**
 * {@link replacedTexts} of a node whose `before` and `after` differ (the caller compared them): each value is
 * compared once, by its parent, and not again on the way down (issue #40: the second comparison, at the top of
 * every level, was a third of the walk). `path` is the walk's own stack: a level pushes its key or index while it
 * descends and pops it after, and only an entry of `out` takes a copy (not one new array per level; issue #40).
 */
function differingTexts(
  text: string,
  node: TextNode,
  before: Json | undefined,
  after: Json | undefined,
  style: BlockStyle,
  path: Array<string | number>,
  out: NodeText[],
): void {
  if (node.t === 'alias' || node.t === 'scalar' || node.flow) return;
  if (node.t === 'map' && isJsonObject(before)) {
    for (const pair of node.pairs) {
      const k = pair.key;
      const v = pair.value;
      if (k === undefined || v === null || !Object.hasOwn(before, k)) continue;
      const b = before[k];
      const a = isJsonObject(after) && Object.hasOwn(after, k) ? after[k] : undefined;
      if (jsonEqual(b, a)) continue;
      if (whole(v, b, a) || hasProperties(text, pair.keyNode.end, v.start)) {
        const t = sourceTextOf(text, pair, column(text, pair.keyNode.start));
        // A null is kept whatever its text: the text editor writes no fresh null (a null value means absent), so
        // without its text uninject would drop the key (`annotations:` with no value, which the injection filled).
        if (t !== undefined && (b === null || t !== emitAfterKey(b as Json, 0, style)) && !plainFlow(v, t, b, a))
          out.push([[...path, k], t]);
      } else {
        path.push(k);
        differingTexts(text, v, b, a, style, path, out);
        path.pop();
      }
    }
  }
  if (node.t === 'seq' && Array.isArray(before)) {
    const now = Array.isArray(after) ? after : [];
    const matched = matchEntries(before, now, path[path.length - 1]?.toString());
    // Entry `i` of `before` → the entry of `now` that continues it (matchEntries uses each old entry once): one
    // pass, not an `indexOf` per entry (issue #40).
    const next: Array<Json | undefined> = new Array(before.length);
    for (let j = 0; j < matched.length; j++) {
      const i = matched[j] as number;
      if (i >= 0) next[i] = now[j];
    }
    for (let i = 0; i < before.length; i++) {
      const item = node.items[i];
      if (!item) continue;
      const b = before[i];
      const a = next[i];
      if (jsonEqual(b, a)) continue;
      if (whole(item, b, a) || hasProperties(text, lineStartDash(text, item), item.start)) {
        const t = itemTextOf(text, item);
        if (t !== undefined && t !== emitAfterDash(b as Json, 0, style) && !plainFlow(item, t, b, a))
          out.push([[...path, i], t]);
      } else {
        path.push(i);
        differingTexts(text, item, b, a, style, path, out);
        path.pop();
      }
    }
  }
}

/**
 * Whether the node (value `b`, `a` after the injection) is taken whole: removed, an alias, a scalar, a flow
 * collection (the flow editor writes a changed entry anew, plain), or reshaped.
 */
function whole(node: TextNode, b: Json | undefined, a: Json | undefined): boolean {
  if (a === undefined || node.t === 'alias' || node.t === 'scalar' || node.flow) return true;
  return node.t === 'map' ? !isJsonObject(b) || !isJsonObject(a) : !Array.isArray(b) || !Array.isArray(a);
}

/**
 * Whether the text between a key (or an entry's dash) at `from` and its value's node at `to` may hold node
 * properties: an anchor (`&name`) or a tag (`!tag`), which belong to the value's text but not to its node's range.
 * A changed node with an anchor is taken whole: walked into, only its changed parts would be kept, and uninject
 * would write the node back without its anchor, leaving its aliases (`startupProbe: *probe`) to expand. A comment
 * holding `&` or `!` counts too (the node is then kept whole, which is never wrong, only longer).
 */
function hasProperties(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x26 /* & */ || c === 0x21 /* ! */) return true;
  }
  return false;
}

/**
 * A flow collection on one line with nothing but plain scalars (no quotes, comment, anchor or alias) that the
 * injection changed but kept (`after` is a collection of the same kind): the flow editor edits it in place and
 * gives it back, so it needs no entry. One the injection removed or reshaped (Istio's rewrite of a
 * `tcpSocket: {port: 8080}` readiness probe) is written anew by uninject, in block style: it keeps its text. So
 * does an empty one (`annotations: { }`, `before` empty): the text editor writes the entries an injection gives it
 * in block style, and uninject's `{}` would not give back its spacing.
 */
function plainFlow(node: TextNode, text: string, before: Json | undefined, after: Json | undefined): boolean {
  if (isJsonObject(before) ? !hasKeys(before) : Array.isArray(before) && before.length === 0) return false;
  const kept = node.t === 'map' ? isJsonObject(after) : Array.isArray(after);
  return kept && node.t !== 'scalar' && node.t !== 'alias' && node.flow && !/["'#&*!|>]|\n./.test(text);
}

/**
 * The source text ({@link sourceTextOf}) of the pair `key` of `parent`, a block mapping; undefined where `parent`
 * is not one or lacks the key.
 */
export function pairText(text: string, parent: TextNode | undefined, key: string | undefined): string | undefined {
  if (parent?.t !== 'map' || parent.flow) return undefined;
  const pair = parent.pairs.find((p) => p.key === key);
  return pair ? sourceTextOf(text, pair, column(text, pair.keyNode.start)) : undefined;
}
