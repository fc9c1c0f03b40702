import {
  Lexer,
  Pair,
  Scalar,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseDocument,
  visit,
  type Document,
  type Node,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { isJsonObject, jsonEqual, withoutNulls } from '../json.ts';
import type { Json } from '../model.ts';
import { emitString, type BlockStyle } from '../yaml/emit/emit-block.ts';
import { matchEntries } from './flow-edit.ts';
import { K8S_YAML_OPTIONS } from '../yaml/read/readers.ts';

/**
 * The slow, proven path for resources the text editor does not edit: the resource is parsed into a full
 * `yaml` Document (YAML 1.1, merge keys, integers as bigint so no digit is lost), changed node by node, and
 * written again by `yaml`. Anchors and aliases are resolved only where needed:
 *
 * - a change under an alias (`labels: *l`) edits a copy of the anchored node in the alias's place;
 * - before an anchored node is changed, the aliases that must keep the old value (`matchLabels: *l`) are
 *   replaced by copies of it;
 * - a change to a key that a map only has through a merge key (`<<: *podspec`) adds an explicit key holding
 *   a copy of the merged value with the change: explicit keys win over merged ones in YAML 1.1, so nothing
 *   merged is shadowed by a partial value; the merged source stays as written.
 *
 * Comments are kept where `yaml` keeps them; `editDocument` reports the first one it would lose.
 */

/** The result of the slow path: the resource's new text, or why it cannot be written. */
export type DocumentEdit = { ok: true; text: string } | { ok: false; reason: string; offset: number };

function quoteLikeEmitter(node: Node): void {
  visit(node, {
    Scalar(_, s) {
      if (typeof s.value !== 'string') return;
      const e = emitString(s.value);
      if (e.startsWith('"')) s.type = Scalar.QUOTE_DOUBLE;
      else if (e.startsWith("'")) s.type = Scalar.QUOTE_SINGLE;
    },
  });
}

class DocEditor {
  constructor(private readonly doc: Document) {}

  private create(v: Json): Node {
    const node = this.doc.createNode(withoutNulls(v)) as Node;
    quoteLikeEmitter(node);
    return node;
  }

  /** A copy of `node` with no anchors (its aliases keep pointing at the original). */
  private detachedCopy(node: Node): Node {
    const copy = node.clone() as Node;
    visit(copy, {
      Node(_, n) {
        if ('anchor' in n) delete (n as { anchor?: string }).anchor;
      },
    });
    if ('anchor' in copy) delete (copy as { anchor?: string }).anchor;
    return copy;
  }

  /** Replaces every alias of the anchored `node` by a copy of it as it is now. */
  private detachAliases(node: Node): void {
    const anchor = (node as { anchor?: string }).anchor;
    if (!anchor) return;
    const doc = this.doc;
    visit(doc, {
      Alias: (_, a) => (a.source === anchor && a.resolve(doc) === node ? this.detachedCopy(node) : undefined),
    });
  }

  /** The node that reads as `n` in place of `node` (which reads as `o`); `node` itself when edited in place. */
  apply(node: Node | null, o: Json | undefined, n: Json, field?: string): Node {
    if (node === null) return this.create(n);
    if (jsonEqual(o, n)) return node;
    if (isAlias(node)) {
      const target = node.resolve(this.doc) as Node | undefined;
      if (!target) return this.create(n);
      return this.apply(this.detachedCopy(target), o, n, field);
    }
    this.detachAliases(node);
    if (isMap(node) && isJsonObject(o) && isJsonObject(n)) {
      this.applyMap(node as YAMLMap<Node, Node | null>, o, n);
      return node;
    }
    if (isSeq(node) && Array.isArray(o) && Array.isArray(n)) {
      this.applySeq(node as YAMLSeq<Node>, o, n, field);
      return node;
    }
    const created = this.create(n);
    if (isScalar(node) && isScalar(created) && typeof n === 'string' && created.type === undefined) {
      if (node.type === Scalar.QUOTE_DOUBLE || node.type === Scalar.QUOTE_SINGLE) created.type = node.type;
    }
    return created;
  }

  /** The maps a `<<` merge key brings in, in precedence order (YAML 1.1 merge: earlier sources win). */
  private mergeSources(map: YAMLMap<Node, Node | null>): YAMLMap[] {
    const out: YAMLMap[] = [];
    for (const p of map.items) {
      if (!isScalar(p.key) || typeof p.key.value !== 'symbol' || !p.value) continue;
      const values = isSeq(p.value) ? (p.value.items as Node[]) : [p.value];
      for (const v of values) {
        const r = isAlias(v) ? (v.resolve(this.doc) as Node | undefined) : v;
        if (r && isMap(r)) out.push(r);
      }
    }
    return out;
  }

  private applyMap(map: YAMLMap<Node, Node | null>, o: { [k: string]: Json }, n: { [k: string]: Json }): void {
    const sources = this.mergeSources(map);
    const explicit = new Map<string, Pair<Node, Node | null>>();
    for (const p of map.items)
      if (isScalar(p.key) && typeof p.key.value !== 'symbol') explicit.set(String(p.key.value), p);
    for (const k of new Set([...Object.keys(o), ...Object.keys(n)])) {
      const ok = Object.hasOwn(o, k) ? (o[k] ?? null) : null;
      const nk = Object.hasOwn(n, k) ? (n[k] ?? null) : null;
      if (jsonEqual(withoutNulls(ok), withoutNulls(nk))) continue;
      const pair = explicit.get(k);
      const merged = sources.find((m) => m.has(k));
      if (nk === null) {
        if (pair && !merged) map.items.splice(map.items.indexOf(pair), 1);
        else if (pair) pair.value = this.create(null);
        else map.items.push(new Pair(this.create(k), this.doc.createNode(null) as Node));
        continue;
      }
      if (pair) pair.value = this.apply(pair.value, ok, nk, k);
      else if (merged)
        map.items.push(new Pair(this.create(k), this.apply(this.detachedCopy(merged.get(k, true) as Node), ok, nk, k)));
      else map.items.push(new Pair(this.create(k), this.create(nk)));
    }
  }

  private applySeq(seq: YAMLSeq<Node>, o: Json[], n: Json[], field: string | undefined): void {
    const matched = matchEntries(o, n, field);
    const items = seq.items;
    seq.items = n.map((v, j) => {
      const i = matched[j] ?? -1;
      return i < 0 ? this.create(v) : this.apply(items[i] ?? null, o[i], v);
    });
  }
}

/** The comments of a text, in order (`#` to the end of the line, as the `yaml` lexer finds them). */
function comments(text: string): Array<{ text: string; offset: number }> {
  const out: Array<{ text: string; offset: number }> = [];
  let offset = 0;
  for (const tok of new Lexer().lex(text)) {
    if (tok.startsWith('#')) out.push({ text: tok.trimEnd(), offset });
    offset += tok.length;
  }
  return out;
}

/**
 * Rewrites a resource through a `yaml` Document so that it reads as `next` (see the module comment).
 *
 * @param text the resource's source text (its first line starts at `column` of the input)
 * @param column the column of its first character; continuation lines keep that indentation
 * @param old the resource as the pipeline read it (Kubernetes reading)
 * @param next the desired resource (`null` map values mean absent)
 * @param style list indentation of new and rewritten sequences
 * @param preamble the document's directives (`%TAG`) and `---` line, when it has directives
 * @returns the new text, or why it cannot be written (with an offset into `text`)
 */
export function editDocument(
  text: string,
  column: number,
  old: Json,
  next: Json,
  style: BlockStyle,
  preamble = '',
): DocumentEdit {
  const pad = text.includes('\n') ? ' '.repeat(column) : '';
  const doc = parseDocument(preamble + pad + text, { ...K8S_YAML_OPTIONS, intAsBigInt: true });
  const err = doc.errors[0];
  if (err)
    return {
      ok: false,
      reason: `it does not read as one document (${err.message.split('\n')[0]})`,
      offset: Math.max(0, err.pos[0] - column - preamble.length),
    };
  doc.contents = new DocEditor(doc).apply(doc.contents as Node, old, next) as typeof doc.contents;
  let out = doc.toString({
    lineWidth: 0,
    minContentWidth: 0,
    flowCollectionPadding: false,
    indentSeq: style.seqIndent === 'wide',
  });
  // The directives and `---` are the document's, outside the resource's text.
  if (preamble) out = out.slice(out.indexOf('---\n') + 4);
  out = out.replace(/\n(?=[^\n])/g, `\n${pad}`);
  if (!text.endsWith('\n')) out = out.replace(/\n+$/, '');
  let from = 0;
  for (const c of comments(text)) {
    const at = out.indexOf(c.text, from);
    if (at < 0) return { ok: false, reason: `the comment \`${c.text.slice(0, 40)}\` would be lost`, offset: c.offset };
    from = at + c.text.length;
  }
  return { ok: true, text: out.replace(/^ */, '') };
}
