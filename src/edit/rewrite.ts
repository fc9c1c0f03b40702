/**
 * The new text of one changed resource (pipeline step `emitChanged`): the text editor (src/edit/text-edit.ts)
 * rewrites only what differs, the result is read back and compared with `next`, and where that cannot be
 * proven the resource goes through a `yaml` Document (src/edit/document-edit.ts) or is refused.
 */
import type { Json } from '../model.ts';
import { MeshInjectError } from '../results/errors.ts';
import { editDocument } from './document-edit.ts';
import { Unfaithful } from './flow-edit.ts';
import type { Edit } from '../krm/write.ts';
import { editText, type SourceTexts } from './text-edit.ts';
import { checkReadBack, readsAs } from './read-back.ts';
import type { TextNode } from '../yaml/read/text-node.ts';
import { LineIndex } from '../krm/compose.ts';
import type { ParsedSource, SourceItem } from '../krm/source.ts';

/**
 * List indentation of a resource's text: the style of its first block sequence under a mapping key
 * (`compact`: `- ` at the key's column; `wide`: indented by two). Without a block sequence, kpt's
 * `internal.config.kubernetes.io/seqindent` annotation, else compact. The text wins over the annotation:
 * kpt sends items compact inside the ResourceList and re-applies the file's style when it writes files.
 */
export function seqIndentOf(text: string, annotations: Record<string, unknown> | undefined): 'compact' | 'wide' {
  const m = firstBlockSequence(text);
  if (m) return m.item > m.key ? 'wide' : 'compact';
  const a = annotations?.['internal.config.kubernetes.io/seqindent'];
  return a === 'wide' ? 'wide' : 'compact';
}

/** A line that ends a mapping key: `key:` with an optional comment (`[^\s#-][^\n]*:[ \t]*(?:#.*)?\r?`). */
const KEY_LINE = /^([ \t]*)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?$/;
const BLANK_OR_COMMENT_LINE = /^[ \t]*(?:#[^\n]*)?\r?$/;

/**
 * The indents of the first block sequence under a mapping key (its key line, blank or comment lines, a `- `
 * line), or undefined: the first key line (`KEY_LINE`, one that a line break ends) whose next line other than
 * blank and comment lines (the text's last line included) is an item line (`^[ \t]*- `). Found from the item
 * lines, not the key lines (issue #40: a pattern per line of the resource up to its first list, some twenty): each
 * line led by `- ` after indentation, in order, is taken with the line before it other than blank and comment
 * lines, and the first such pair whose line before is a key line is the answer. The same pair: the key line K of
 * the first answer and its item line I have only blank and comment lines between them, so an earlier item line
 * with a key line before it would give a key line before K followed by an item line, and a key line between K and
 * I would not be blank. Linear in the text: each line is looked at at most twice (issue 19: no pattern that goes
 * back over a line for each line). Exported for test/core/write-fast-paths.test.ts, which holds it to the line-by-line scan.
 */
export function firstBlockSequence(text: string): { key: number; item: number } | undefined {
  for (let dash = text.indexOf('- '); dash >= 0; dash = text.indexOf('- ', dash + 1)) {
    const start = itemLineStart(text, dash);
    if (start < 0) continue;
    const key = keyLineBefore(text, start);
    if (key !== undefined) return { key, item: dash - start };
  }
  return undefined;
}

/** The start of the line of the `- ` at `dash` when only spaces and tabs precede it there (an item line), else -1. */
function itemLineStart(text: string, dash: number): number {
  let at = dash - 1;
  for (let c = text.charCodeAt(at); at >= 0 && c !== 10; c = text.charCodeAt(--at)) if (c !== 32 && c !== 9) return -1;
  return at + 1;
}

/**
 * The indent of the line before the line starting at `start`, passing blank and comment lines, when it is a key
 * line (`KEY_LINE`); else undefined (also where no other line precedes).
 */
function keyLineBefore(text: string, start: number): number | undefined {
  for (let end = start - 1; end >= 0; ) {
    // (`lastIndexOf` from -1 would look at the first character: a line at the text's start starts there.)
    const from = end === 0 ? 0 : text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(from, end);
    // The group is mandatory in the pattern: a match has it.
    if (!BLANK_OR_COMMENT_LINE.test(line)) return KEY_LINE.exec(line)?.[1]?.length;
    end = from - 1;
  }
  return undefined;
}

/**
 * A construct the text editor does not edit: merge keys (`<<`: it would edit the merged keys as if
 * they were the map's own) and complex keys. Aliases are left to the read-back: an edit of an anchored
 * node that an alias elsewhere must not see reads back differently and takes the Document path.
 */
function riskyConstruct(node: TextNode | null): { what: string; offset: number } | undefined {
  if (!node) return undefined;
  if (node.t === 'seq') {
    for (const it of node.items) {
      const r = riskyConstruct(it);
      if (r) return r;
    }
  }
  if (node.t === 'map') {
    for (const p of node.pairs) {
      if (p.key === undefined) return { what: 'a complex key', offset: p.keyNode.start };
      if (p.key === 'Symbol(<<)') return { what: 'a merge key (<<)', offset: p.keyNode.start };
      const r = riskyConstruct(p.value);
      if (r) return r;
    }
  }
  return undefined;
}

/**
 * Whether a resource written as one flow mapping is JSON (its first key double-quoted, as JSON requires) rather than
 * YAML flow style (`{apiVersion: v1, ...}`): new entries are written as JSON in the one, as YAML flow in the other.
 */
function isJsonText(original: string, item: SourceItem): boolean {
  return item.node.t === 'map' && item.node.flow && /^\s*\{\s*"/.test(original);
}

/** The indentation step of a multi-line JSON resource (the column of its first key less that of `{`). */
function jsonUnit(text: string, column: number): number {
  const m = /^\{[ \t]*\r?\n([ ]+)"/.exec(text);
  const indent = m?.[1];
  return indent !== undefined ? Math.max(1, indent.length - column) : 2;
}

/**
 * The new source text of a resource whose data becomes `next`, or undefined when nothing changes.
 *
 * The fast path edits only the differing parts of the text (see `editText`; new text uses the resource's
 * list indentation, JSON resources stay JSON at their indentation, CRLF is kept). Its result is read back
 * (`checkReadBack`): it must read, as YAML 1.1 (kubectl) and as YAML 1.2, as the input plus exactly this
 * change. Where the text editor does not edit a construct faithfully (aliases, merge keys, a comment
 * an edit would drop) or the read-back differs, the resource is rewritten through a `yaml` Document
 * (`editDocument`) and that result is read back too.
 *
 * @throws MeshInjectError `UNFAITHFUL_EDIT` naming the resource, the construct and its line when neither
 *   path writes the change faithfully (the pipeline turns it into an error result for the resource, which
 *   stays as it was)
 */
export function emitChanged(item: SourceItem, source: ParsedSource, next: Json): string | undefined {
  return emitChangedEdits(item, source, next)?.text;
}

/** A changed resource: its new text, and the edits of the input text that give it. */
export interface ChangedResource {
  /** The new text of the resource's range [item.start, item.end). */
  text: string;
  /**
   * Replacements of ranges of the input text (offsets into `source.text`, inside the resource's range,
   * non-overlapping, sorted) that give `text`: the text editor's own edits where they are proven to give
   * it, else one replacing the whole range. `meshinject diff` builds its hunks from them.
   */
  edits: Edit[];
}

/**
 * The edits of the input text the text editor made, with CRLF line breaks where the resource has them, when
 * they give `out` exactly; else one edit replacing the whole resource. Each edit's text is then cut from `out`
 * (which the run keeps anyway): the editor's own texts are ropes of the many small strings they were joined from,
 * and a run keeps every changed resource's edits (for `meshinject diff`), so keeping those ropes would have the
 * garbage collector copy them from generation to generation, resource after resource.
 *
 * What is compared is the input text between the edits, each piece where it stands in `out` given the lengths of
 * the edits before it, and the length of the rest: when all of it matches, the edits with their texts cut from
 * `out` give `out` exactly, whatever the editor's own texts held. Those texts are not compared with `out`:
 * comparing a rope flattens it, a copy of each new text made only to be thrown away.
 */
function editsGiving(
  source: ParsedSource,
  item: SourceItem,
  made: readonly Edit[],
  out: string,
  crlf: boolean,
): Edit[] {
  // Whether the input text [from, to) stands in `out` at `pos`: cut and compared, not `startsWith` (V8 compares equal
  // strings as memory, `startsWith` character by character; a cut of a flat string is a view, not a copy).
  const standsAt = (from: number, to: number, pos: number): boolean =>
    out.slice(pos, pos + to - from) === source.text.slice(from, to);
  const edits = made
    .map((e) => ({ start: e.start, end: e.end, text: crlf ? e.text.replace(/\r?\n/g, '\r\n') : e.text }))
    .sort((x, y) => x.start - y.start);
  // Compared piece by piece where each stands in `out`: no text of the whole resource is built to compare.
  const whole = [{ start: item.start, end: item.end, text: out }];
  let pos = 0; // where in `out` the input text at `at` stands
  let at = item.start;
  for (const e of edits) {
    if (e.start < at || e.end > item.end) return whole;
    if (!standsAt(at, e.start, pos)) return whole;
    pos += e.start - at + e.text.length;
    at = e.end;
  }
  if (out.length - pos !== item.end - at || !standsAt(at, item.end, pos)) return whole;
  let shift = -item.start; // where in `out` the input offset after the last edit stands, less that offset
  for (const e of edits) {
    const from = e.start + shift;
    e.text = out.slice(from, from + e.text.length);
    shift += e.text.length - (e.end - e.start);
  }
  return edits;
}

/**
 * The text editor's edit of `item` to `next`, read back: the changed resource, undefined when nothing changes,
 * or why the edit is not faithful. With `texts` (see `SourceTexts`) the editor writes them where it writes their
 * nodes; the read-back proves they read as `next`.
 */
function fastEdit(
  item: SourceItem,
  source: ParsedSource,
  next: Json,
  style: { seqIndent: 'compact' | 'wide' },
  texts: SourceTexts | undefined,
): ChangedResource | undefined | { what: string; offset: number } {
  const original = source.text.slice(item.start, item.end);
  const json = isJsonText(original, item);
  try {
    const made: Edit[] = [];
    const flow = { json, unit: jsonUnit(original, item.column) };
    let out = editText(source.text, item.node, item.value, next, [item.start, item.end], style, flow, made, texts);
    if (out === undefined) return undefined;
    const crlf = original.includes('\r\n');
    if (crlf) out = out.replace(/\r?\n/g, '\r\n');
    const simple = item.reader === 'block';
    const problem = checkReadBack(original, out, item.column, item.value, next, simple, item.preamble);
    if (!problem) return { text: out, edits: editsGiving(source, item, made, out, crlf) };
    return { what: `a text edit (${problem})`, offset: item.start };
  } catch (e) {
    if (!(e instanceof Unfaithful)) throw e;
    return { what: e.message, offset: e.offset };
  }
}

/**
 * `emitChanged`, with the edits of the input text that give the new text (see `ChangedResource`). `texts`:
 * source texts to write back where their nodes are written (uninject's, from the companion record); where the
 * result does not read back as `next`, the resource is edited again without them.
 * @throws MeshInjectError `UNFAITHFUL_EDIT` as `emitChanged`
 */
export function emitChangedEdits(
  item: SourceItem,
  source: ParsedSource,
  next: Json,
  texts?: SourceTexts,
): ChangedResource | undefined {
  const original = source.text.slice(item.start, item.end);
  const meta = (item.value as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata;
  const style = { seqIndent: seqIndentOf(original, meta?.annotations) };
  const json = isJsonText(original, item);
  // Nothing to change (null map values mean absent): the text stays as it is, whatever it holds.
  if (readsAs(item.value, next)) return undefined;
  // The fast block reader declines merge keys and keys that are not strings (src/yaml/read/manifest-reader.ts):
  // a resource it read holds neither, and the walk over its syntax tree is left out.
  let why = item.reader === 'block' ? undefined : riskyConstruct(item.node);
  if (!why) {
    let done = texts && texts.size > 0 ? fastEdit(item, source, next, style, texts) : undefined;
    if (done === undefined || 'what' in done) done = fastEdit(item, source, next, style, undefined);
    if (done === undefined || !('what' in done)) return done;
    why = done;
  }
  const refuse = (reason: string, offset: number): never => {
    const line = new LineIndex(source.text).line(offset);
    const v = item.value as { kind?: unknown; metadata?: { name?: unknown } } | null;
    throw new MeshInjectError(
      'UNFAITHFUL_EDIT',
      `${String(v?.kind ?? 'resource')} "${String(v?.metadata?.name ?? '')}", line ${line}: cannot write the injection faithfully: ${reason}`,
    );
  };
  if (json) return refuse(`${why.what} in a JSON resource`, why.offset);
  const slow = editDocument(original, item.column, item.value, next, style, item.preamble);
  if (!slow.ok) return refuse(`${why.what}, and rewriting the resource: ${slow.reason}`, item.start + slow.offset);
  let out = slow.text;
  if (original.includes('\r\n')) out = out.replace(/\r?\n/g, '\r\n');
  const problem = checkReadBack(original, out, item.column, item.value, next, false, item.preamble);
  if (problem) return refuse(`${why.what}, and rewriting the resource: ${problem}`, why.offset);
  return { text: out, edits: [{ start: item.start, end: item.end, text: out }] };
}
