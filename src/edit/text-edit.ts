import type { TextMap, TextNode, TextPair, TextSeq } from '../yaml/read/text-node.ts';
import { hasKeys, isJsonObject, jsonEqual } from '../json.ts';
import type { Json } from '../model.ts';
import {
  doubleQuoted,
  emitAfterDash,
  emitAfterKey,
  emitInline,
  emitMapLines,
  emitString,
  NOT_RAW,
  spaces,
  type BlockStyle,
} from '../yaml/emit/emit-block.ts';
import { applyEdits, matchEntries, editFlow, Unfaithful, type FlowStyle } from './flow-edit.ts';
import { column, headCommentStart, lineStart, lineStartDash, startsLine, trailingCommentsEnd } from './text-lines.ts';
import { defined } from '../checked.ts';

/**
 * Edits the source text of one resource so that it reads as `next`, touching only what differs: every
 * unchanged line (comments, spacing, quoting, flow style, list indentation) stays byte for byte. New map
 * entries are appended to their map; list entries are matched by their Kubernetes merge key (`name`,
 * `mountPath`, `containerPort`, ...) or by value and put in `next`'s order; changed scalars keep their
 * quote style. New text follows the resource's list indentation (`style`).
 *
 * @param text the whole input text (node ranges of `doc` are offsets into it)
 * @param root the resource's syntax tree (`TextNode` offsets are into `text`)
 * @param old the resource as data (`doc.toJS()`)
 * @param next the desired resource as data (`null` map values mean absent)
 * @param flow how new entries of flow collections are written (`json` for a JSON resource)
 * @param record when given, receives the edits made (offsets into `text`, non-overlapping): applied to
 *   [start, end) of `text` they give the returned text, except where the resource has no final line break
 *   (the caller checks before relying on them; `meshinject diff` builds its hunks from them)
 * @param texts source texts to write where a node of a block collection is written anew or changed
 *   ({@link SourceTexts}); the caller proves the result by reading it back and, where it does not read as
 *   `next`, edits again without them
 * @returns the new text of the range [start, end) of the resource, or undefined when nothing changed
 * @throws Unfaithful where an edit would drop a comment (the caller takes a slower path)
 */
export function editText(
  text: string,
  root: TextNode,
  old: Json,
  next: Json,
  range: [number, number],
  style: BlockStyle,
  flow: FlowStyle = { json: false, unit: 2 },
  record?: Edit[],
  texts?: SourceTexts,
): string | undefined {
  const end = range[1];
  const ctx: Ctx = texts
    ? { text, end, style, flow, edits: [], texts, path: [] }
    : { text, end, style, flow, edits: [] };
  if (root.t !== 'map' || !isJsonObject(old) || !isJsonObject(next)) throw new Error('a resource must be a mapping');
  // `null` map values mean absent (Kubernetes reads null as absent): handled where maps are patched.
  const target = next as JsonObj;
  if (jsonEqual(old, target)) return undefined;
  try {
    patchMap(root, old, target, ctx);
  } catch (e) {
    if (!(e instanceof NeedsRewrite)) throw e;
    // Only for shapes the text editor does not edit in place (e.g. removing the first key after `- `).
    const col = column(text, range[0]);
    const whole = emitMapLines(target, col, style)
      .slice(col)
      .replace(/\n$/, text[range[1] - 1] === '\n' ? '\n' : '');
    record?.push({ start: range[0], end: range[1], text: whole });
    return whole;
  }
  if (ctx.edits.length === 0) return undefined;
  // Nothing is edited past the resource's range: the caller writes the text after it as it stands, so an edit there
  // would write it twice. The editor reads no further (`commentsEnd`); should an edit still reach past it, the
  // resource is written by the slower path instead.
  for (const e of ctx.edits)
    if (e.end > range[1]) throw new Unfaithful('an edit past the end of the resource', range[1]);
  if (record) for (const e of ctx.edits) record.push(e);
  const out = applyEdits(text, range[0], range[1], ctx.edits);
  // A resource without a final line break keeps it that way (removing its last lines leaves the break before them).
  return text[range[1] - 1] === '\n' ? out : out.replace(/\r?\n$/, '');
}

type JsonObj = { [k: string]: Json };

type Edit = import('../krm/write.ts').Edit;

interface Ctx {
  text: string;
  /**
   * Where the resource's text ends: comment lines after its last node (`      # end of containers` ending the
   * document) lie past it, and the caller writes them after the new text as they stand.
   */
  end: number;
  style: BlockStyle;
  flow: FlowStyle;
  edits: Edit[];
  /** The source texts to use (see `editText`), and the path of the node being edited (only with them). */
  texts?: SourceTexts;
  path?: ReadonlyArray<string | number>;
}

/**
 * Source texts of nodes, by the node's path from the resource's root (`JSON.stringify` of its keys and list
 * indexes, the indexes of the resource as it is to be written): the text after the node's `key:` or `- `
 * (its value's first line, the following lines without the indentation of the key or dash, a final line
 * break), as {@link sourceTextOf} reads it. The text editor writes it, re-indented, instead of a fresh emit
 * wherever it changes or adds the node (the companion record's `texts`, src/patch/status-record.ts).
 */
export type SourceTexts = ReadonlyMap<string, string>;

/** `ctx` for the node at key or index `seg` of the node it edits (itself when no source texts are given). */
function at(ctx: Ctx, seg: string | number): Ctx {
  return ctx.path ? { ...ctx, path: [...ctx.path, seg] } : ctx;
}

/** The source text given for the node `ctx` edits (or for its entry `seg`), re-indented to `col`; else undefined. */
function sourceText(ctx: Ctx, col: number, seg?: string | number): string | undefined {
  if (!ctx.texts || !ctx.path) return undefined;
  const t = ctx.texts.get(JSON.stringify(seg === undefined ? ctx.path : [...ctx.path, seg]));
  return t === undefined ? undefined : reindent(t, col);
}

/** A source text (see {@link SourceTexts}) with each non-empty line after the first indented by `col`. */
function reindent(text: string, col: number): string {
  return col === 0 ? text : text.replace(/\n(?=[^\n])/g, `\n${spaces(col)}`);
}

/**
 * The text after `key:` of a block mapping's entry, as {@link SourceTexts} holds it: from the colon to the
 * end of the value (a block collection's last line; else the line's end, its comment included), the lines
 * after the first without `col` (the key's column) spaces. Undefined where no colon follows the key at once,
 * the value does not end a line, or a line is indented less than `col`.
 */
export function sourceTextOf(text: string, pair: TextPair, col: number): string | undefined {
  if (text[pair.keyNode.end] !== ':') return undefined;
  return dedent(text, pair.keyNode.end + 1, valueEnd(text, pair), col);
}

/** The text after the `- ` of a block sequence's entry, as {@link sourceTextOf} reads a mapping's (`col`: the dash's). */
export function itemTextOf(text: string, item: TextNode): string | undefined {
  const dash = lineStartDash(text, item);
  if (text.slice(dash, dash + 2) !== '- ' || !startsLine(text, dash)) return undefined;
  return dedent(text, dash + 2, itemEnd(text, item), column(text, dash));
}

/**
 * The text [start, end) (CRLF read as LF, a final line break added at the end of a text without one) without `col`
 * spaces at the start of each line after the first; undefined where one has fewer, or more than white space
 * follows on the last line.
 */
function dedent(text: string, start: number, end: number, col: number): string | undefined {
  if (text[end - 1] !== '\n' && !/^\s*$/.test(text.slice(end))) return undefined;
  const lines = text.slice(start, end).replace(/\r\n/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const pad = spaces(col);
  const out = [lines[0] ?? ''];
  for (const line of lines.slice(1)) {
    if (line.startsWith(pad)) out.push(line.slice(col));
    else if (/^ *$/.test(line)) out.push('');
    else return undefined;
  }
  return `${out.join('\n')}\n`;
}

/** Where the text of a mapping entry's value ends (as `replaceAfterKey` replaces it). */
function valueEnd(text: string, pair: TextPair): number {
  const value = pair.value;
  const block = value !== null && (value.t === 'map' || value.t === 'seq') && !value.flow;
  return block ? value.end : pairEnd(text, pair);
}

/** Where the text of a block sequence entry ends: a block collection's last line, else the line's end. */
function itemEnd(text: string, item: TextNode): number {
  if ((item.t === 'map' || item.t === 'seq') && !item.flow) return item.end;
  let end = Math.max(item.end, item.outerEnd);
  if (end > 0 && text[end - 1] !== '\n') {
    const nl = text.indexOf('\n', end);
    if (nl >= 0 && /^[ \t]*(#.*)?\r?$/.test(text.slice(end, nl))) end = nl + 1;
  }
  return end;
}

/** End of a pair: after its value's trailing comment and newline. */
function pairEnd(text: string, pair: TextPair): number {
  const v = pair.value;
  let end = v ? Math.max(v.end, v.outerEnd) : pair.keyNode.outerEnd;
  if (end > 0 && text[end - 1] !== '\n') {
    const nl = text.indexOf('\n', end);
    // Only a comment may follow on the line.
    if (nl >= 0 && /^[ \t]*(#.*)?\r?$/.test(text.slice(end, nl))) end = nl + 1;
  }
  return end;
}

/**
 * {@link trailingCommentsEnd} within the resource's text (`ctx.end`): the comment lines that end a document follow
 * its last node but not the resource, and an addition after them would be written past the resource (twice, once
 * in the new text and once as the text after it); it goes in front of them instead.
 */
function commentsEnd(ctx: Ctx, end: number, col: number): number {
  return Math.min(trailingCommentsEnd(ctx.text, end, col), Math.max(end, ctx.end));
}

function patchMap(map: TextMap, old: JsonObj, next: JsonObj, ctx: Ctx): void {
  if (map.flow) {
    ctx.edits.push(...editFlow(ctx.text, map, old, next, ctx.flow));
    return;
  }
  const { text } = ctx;
  const pairs = map.pairs;
  const keyCol = column(text, defined(pairs[0], 'the first pair of a block mapping').keyNode.start);
  let removed: Set<TextPair> | undefined;
  for (const pair of pairs) {
    const k = pair.key;
    if (k === undefined) continue;
    // Own keys only (a key of the text named like a prototype member, `constructor`, is a plain key).
    const o = Object.hasOwn(old, k) ? old[k] : undefined;
    if (!Object.hasOwn(next, k) || next[k] === null) {
      // `key:` with no value reads as null, which is what "absent" means: keep it as written.
      if (o === null) continue;
      // A null or absent value given a source text is that text put back (uninject: the user's `labels:` with no
      // value, which the injection filled; a pod `metadata:` with none, which uninject leaves out as empty). Else
      // the pair goes: a null value means absent.
      if (sourceText(ctx, keyCol, k) !== undefined) {
        patchPairValue(pair, o, null, keyCol, at(ctx, k));
        continue;
      }
      removePair(map, pair, ctx);
      removed ??= new Set<TextPair>();
      removed.add(pair);
      continue;
    }
    const n = defined(next[k], 'a value just tested present');
    if (jsonEqual(o, n)) continue;
    patchPairValue(pair, o, n, keyCol, at(ctx, k));
  }
  // New keys go where `next` has them: after the closest preceding key that already exists, or before
  // the first one (so a re-rendered container reads in the same key order as a fresh one).
  const survivors = removed === undefined ? pairs : pairs.filter((p) => !removed?.has(p));
  const find = pairFinder(survivors);
  // Each run of new keys goes after one anchor (a key met in `next` ends the run before it), in `next`'s order.
  const pending = new Map<TextPair | null, string>();
  let anchor: TextPair | null = null;
  let run: string[] = [];
  for (const k in next) {
    const v = next[k];
    if (v === null || v === undefined) continue;
    const existing = find(k);
    if (existing) {
      if (run.length > 0) pending.set(anchor, run.join(''));
      run = [];
      anchor = existing;
      continue;
    }
    run.push(spaces(keyCol), emitString(k), ':', sourceText(ctx, keyCol, k) ?? emitAfterKey(v, keyCol, ctx.style));
  }
  if (run.length > 0) pending.set(anchor, run.join(''));
  for (const [after, add] of pending) {
    if (after === null) {
      const first = survivors[0];
      if (!first) throw new NeedsRewrite(map);
      const pos = first.keyNode.start;
      // Above the first key's own comment, never between the comment and its key (issue #37 item 2: kpt reads
      // such a comment as the key's and writes it again above it, so a comment would double).
      const head = startsLine(text, pos) ? headCommentStart(text, lineStart(text, pos), keyCol) : undefined;
      if (head !== undefined && head < lineStart(text, pos)) ctx.edits.push({ start: head, end: head, text: add });
      else if (first === pairs[0])
        ctx.edits.push({ start: pos, end: pos, text: `${add.slice(keyCol)}${spaces(keyCol)}` });
      else ctx.edits.push({ start: lineStart(text, pos), end: lineStart(text, pos), text: add });
      continue;
    }
    const at = commentsEnd(ctx, pairEnd(text, after), keyCol);
    ctx.edits.push({ start: at, end: at, text: text[at - 1] === '\n' ? add : `\n${add.replace(/\n$/, '')}` });
  }
}

/**
 * The pair of `pairs` whose key is `k` (the last such, as a `Map` of them gives), or undefined. A block mapping
 * on the path of an injection holds a handful of keys: those are searched in place, from the last, instead of a
 * `Map` built for every mapping edited (issue #40); a larger one gets its `Map`.
 */
function pairFinder(pairs: readonly TextPair[]): (k: string) => TextPair | undefined {
  if (pairs.length > SCANNED_PAIRS) {
    const byKey = new Map<string | undefined, TextPair>();
    for (const p of pairs) byKey.set(p.key, p);
    return (k) => byKey.get(k);
  }
  return (k) => {
    for (let i = pairs.length - 1; i >= 0; i--) {
      const p = pairs[i];
      if (p?.key === k) return p;
    }
    return undefined;
  };
}

/** How many pairs a mapping holds at most for `pairFinder` to search them in place. */
const SCANNED_PAIRS = 8;

function removePair(map: TextMap, pair: TextPair, ctx: Ctx): void {
  const { text } = ctx;
  const k = pair.keyNode;
  if (!startsLine(text, k.start)) {
    // The first entry of a `- key: value` map: rewrite the whole map instead.
    throw new NeedsRewrite(map);
  }
  ctx.edits.push({ start: lineStart(text, k.start), end: pairEnd(text, pair), text: '' });
}

class NeedsRewrite extends Error {
  constructor(readonly node: TextNode) {
    super('rewrite');
  }
}

function replaceNode(node: TextNode, replacement: string, ctx: Ctx): void {
  ctx.edits.push({ start: node.start, end: node.end, text: replacement });
}

/** Whether a source text is given for a node below the one `ctx` edits (not for that node itself). */
function textsBelow(ctx: Ctx): boolean {
  if (!ctx.texts || !ctx.path) return false;
  const prefix = `${JSON.stringify(ctx.path).slice(0, -1)},`;
  for (const k of ctx.texts.keys()) if (k.startsWith(prefix)) return true;
  return false;
}

/**
 * `emitAfterKey` of `v`, the node `ctx` edits, with the source texts given for it or for the entries of the block
 * maps it holds, at any depth (uninject: a probe whose whole action the injection replaced, `tcpSocket: {port: 80}`
 * where the map held only `httpGet`, is written anew with the user's text of its action).
 */
function freshAfterKey(v: Json, keyCol: number, ctx: Ctx): string {
  const own = sourceText(ctx, keyCol);
  if (own !== undefined) return own;
  if (!isJsonObject(v) || !hasKeys(v) || !textsBelow(ctx)) return emitAfterKey(v, keyCol, ctx.style);
  const col = keyCol + 2;
  let out = '\n';
  for (const k in v) {
    const x = v[k];
    if (x === undefined || (x === null && !ctx.style.keepNulls)) continue;
    out += `${spaces(col)}${emitString(k)}:${freshAfterKey(x, col, at(ctx, k))}`;
  }
  return out;
}

/** Replaces `key: value` from the end of the key, re-emitting the value (block style for collections). */
function replaceAfterKey(pair: TextPair, v: Json, keyCol: number, ctx: Ctx): void {
  const end = valueEnd(ctx.text, pair);
  let emitted = `:${freshAfterKey(v, keyCol, ctx)}`;
  if (ctx.text[end - 1] !== '\n') emitted = emitted.replace(/\n$/, '');
  ctx.edits.push({ start: pair.keyNode.end, end, text: emitted });
}

function patchPairValue(pair: TextPair, o: Json | undefined, n: Json, keyCol: number, ctx: Ctx): void {
  const node = pair.value;
  if (sourceText(ctx, keyCol) !== undefined) {
    replaceAfterKey(pair, n, keyCol, ctx);
    return;
  }
  // The value's edits go straight into `ctx.edits`; where the value is rewritten instead, they are dropped again.
  const mark = ctx.edits.length;
  try {
    // An empty flow collection (`{}`, `[]`) that gets content is rewritten in block style.
    if (node?.t === 'map' && isJsonObject(o) && isJsonObject(n) && (node.flow ? hasKeys(o) : hasKeys(n))) {
      patchMap(node, o, n, ctx);
    } else if (node?.t === 'seq' && Array.isArray(o) && Array.isArray(n) && (node.flow ? o.length > 0 : n.length > 0)) {
      patchSeq(node, o, n, ctx, pair.key);
    } else if (
      node?.t === 'scalar' &&
      node.style !== 'block' &&
      node.end > node.start &&
      emitInline(n) !== undefined &&
      typeof n !== 'object'
    ) {
      replaceNode(node, defined(scalarLike(node, n), 'the inline form of a value just checked'), ctx);
    } else {
      replaceAfterKey(pair, n, keyCol, ctx);
    }
  } catch (e) {
    if (!(e instanceof NeedsRewrite)) throw e;
    ctx.edits.length = mark;
    replaceAfterKey(pair, n, keyCol, ctx);
  }
}

/**
 * A new scalar in the style of the one it replaces (quote style kept for strings); undefined where `v` has no
 * inline form (`emitInline`: a multi-line string not kept in double or single quotes, a non-empty collection).
 */
function scalarLike(node: TextNode, v: Json): string | undefined {
  if (typeof v === 'string' && node.t === 'scalar') {
    if (node.style === 'double') return doubleQuoted(v);
    if (node.style === 'single' && !NOT_RAW.test(v)) return `'${v.replace(/'/g, "''")}'`;
  }
  return emitInline(v);
}

/** Edits the block or flow list `field` (its entries matched by the field's merge key, `matchEntries`). */
function patchSeq(seq: TextSeq, old: Json[], next: Json[], ctx: Ctx, field?: string): void {
  if (seq.flow) {
    ctx.edits.push(...editFlow(ctx.text, seq, old, next, ctx.flow, field));
    return;
  }
  const { text } = ctx;
  if (seq.items.some((n) => !n || n.t === 'alias')) throw new NeedsRewrite(seq);
  const items = seq.items as TextNode[];
  const matched = matchEntries(old, next, field);
  const order: Array<{ at: number; value: Json }> = next.map((v, i) => ({
    at: defined(matched[i], 'the match of a list entry'),
    value: v,
  }));
  const sameShape = order.length === old.length && order.every((o, i) => o.at === i);
  const dash = lineStartDash(text, defined(items[0], 'the first entry of a block sequence'));
  if (!startsLine(text, dash)) throw new NeedsRewrite(seq);
  const dashCol = column(text, dash);
  if (sameShape) {
    for (const [i, o] of order.entries())
      patchItem(defined(items[i], 'a block sequence entry'), old[i], o.value, dashCol, at(ctx, i));
    return;
  }
  // Rebuild the list from the old entries' text (each patched) and new entries, in `next`'s order.
  const starts = items.map((n) => lineStart(text, lineStartDash(text, n)));
  const seqEnd = commentsEnd(ctx, seq.end, dashCol);
  // Each entry's text runs to the next entry's line, the last one's to the end of the list.
  const segments = starts.map((s, i) => [s, starts[i + 1] ?? seqEnd] as const);
  let out = '';
  for (const [j, o] of order.entries()) {
    if (o.at < 0) {
      out += `${spaces(dashCol)}- ${sourceText(ctx, dashCol, j) ?? emitAfterDash(o.value, dashCol, ctx.style)}`;
      continue;
    }
    const [s, e] = defined(segments[o.at], 'the text of a matched block sequence entry');
    const sub: Ctx = { ...at(ctx, j), edits: [] };
    patchItem(defined(items[o.at], 'a matched block sequence entry'), old[o.at], o.value, dashCol, sub);
    let seg = applyEdits(text, s, e, sub.edits);
    if (!seg.endsWith('\n')) seg += '\n';
    out += seg;
  }
  if (text[seqEnd - 1] !== '\n') out = out.replace(/\n$/, '');
  ctx.edits.push({ start: defined(starts[0], 'the start of the first block sequence entry'), end: seqEnd, text: out });
}

function patchItem(node: TextNode, o: Json | undefined, n: Json, dashCol: number, ctx: Ctx): void {
  if (jsonEqual(o, n)) return;
  const given = sourceText(ctx, dashCol);
  const dash = given === undefined ? -1 : lineStartDash(ctx.text, node);
  if (given !== undefined && ctx.text.slice(dash, dash + 2) === '- ') {
    const end = itemEnd(ctx.text, node);
    ctx.edits.push({ start: dash + 2, end, text: ctx.text[end - 1] === '\n' ? given : given.replace(/\n$/, '') });
    return;
  }
  // As in `patchPairValue`: the entry's edits go straight into `ctx.edits`, dropped again where it is rewritten.
  const mark = ctx.edits.length;
  try {
    if (node.t === 'map' && isJsonObject(o) && isJsonObject(n) && (node.flow || hasKeys(n))) patchMap(node, o, n, ctx);
    else if (node.t === 'seq' && Array.isArray(o) && Array.isArray(n) && (node.flow || n.length > 0))
      patchSeq(node, o, n, ctx);
    else if (node.t === 'scalar' && node.style !== 'block' && node.end > node.start && typeof n !== 'object')
      replaceNode(node, scalarLike(node, n) ?? '', ctx);
    else throw new NeedsRewrite(node);
  } catch (e) {
    if (!(e instanceof NeedsRewrite)) throw e;
    ctx.edits.length = mark;
    let emitted = emitAfterDash(n, dashCol, ctx.style);
    const end = node.end;
    if (ctx.text[end - 1] !== '\n') emitted = emitted.replace(/\n$/, '');
    ctx.edits.push({ start: node.start, end, text: emitted });
  }
}
