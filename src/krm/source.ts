import { Composer, CST, Document, Parser, type Node } from 'yaml';
import { MeshInjectError } from '../results/errors.ts';
import type { Json } from '../model.ts';
import { readBlockStream, type BlockDocument, type DeclinedDocument } from '../yaml/manifest-reader.ts';
import { K8S_YAML_OPTIONS, TO_JS_OPTIONS, findKeyProblem, keyProblemMessage } from '../yaml/readers.ts';
import { fromYamlNode, type TextMap, type TextNode } from '../yaml/text-node.ts';

/** How the input was framed; the output keeps the same framing. */
export type SourceForm = 'resource-list' | 'list' | 'stream';

/**
 * Nested `kind: List` resources are expanded this deep (a List in a List in a List ...); deeper nesting is
 * refused with an error naming the List, never skipped.
 */
export const MAX_LIST_DEPTH = 16;

/**
 * One resource of the input, kept as its source text. `start`/`end` are UTF-16 offsets of the resource's
 * node in the input text (excluding the `- ` of a list entry and comments before it), so an unchanged
 * resource is written back byte for byte and a changed one replaces exactly that range.
 */
export interface SourceItem {
  /** Position in the item list / document stream, from 0 (items of a nested `kind: List` come after). */
  position: number;
  /** Position of the top-level item or document this resource is (or is inside, for a nested List). */
  topPosition: number;
  /** The top-level `kind` as written (read without composing the resource). */
  kind: string | undefined;
  /**
   * `metadata.name` as written, read without composing the resource (a scalar written under a `metadata`
   * mapping); undefined when it is not written that way (an alias, a merge key, absent). Composing may give
   * another value only where this is undefined.
   */
  name?: string;
  /** The CST node, kept only for a nested `kind: List` (its items are expanded into resources). */
  listToken?: CST.Token;
  start: number;
  end: number;
  /** Column of the node's first character; continuation lines of a re-serialised node are indented by it. */
  column: number;
  /**
   * Where each node of the resource sits in the input text (what `editText` edits). Loaded on first read
   * (see `load`); reading it after `release` throws.
   */
  readonly node: TextNode;
  /** The resource as plain data (as Kubernetes reads it). Loaded on first read (see `load`); reading it after `release` throws. */
  readonly value: Json;
  /**
   * Loads the resource's syntax tree and data now: a resource of the `yaml` path is composed on first use
   * (one resource at a time, so a large input never holds every syntax tree at once); the block reader's
   * are loaded as read. Idempotent.
   * @throws MeshInjectError `BAD_INPUT` naming the resource and line (duplicate keys, alias bombs, ...)
   */
  load(): void;
  /**
   * Drops the syntax tree and data (and `listToken`): `processItems` calls it once the resource is
   * processed; only the source range is valid afterwards.
   */
  release(): void;
  /**
   * Which reader read it: `block`, the fast block reader (no anchors, merge keys, tags, nor scalars YAML
   * 1.1 and 1.2 read differently), or `yaml` (also when absent), the `yaml` package (YAML 1.1 with merge keys).
   */
  reader?: 'block' | 'yaml';
  /** `%TAG`/`%YAML` directive lines of the resource's document and a `---` line, for reading its text alone. */
  preamble?: string;
}

/** The parsed input: its framing, its resources, and the wrapper parts the output must reproduce. */
export interface ParsedSource {
  form: SourceForm;
  text: string;
  items: SourceItem[];
  /** ResourceList only: the `functionConfig` as data, when present. */
  functionConfig?: Json;
  /** The wrapper is a flow mapping (JSON input): results are written as JSON. */
  json?: boolean;
  /** ResourceList only: the source range of an input `results` entry (dropped: results are output only). */
  resultsRange?: [number, number];
  /** JSON (flow mapping) wrapper only: where `results` goes, and the document's indentation. */
  jsonLayout?: JsonLayout;
  /**
   * `null` items of a `kind: List` (how a Go marshaller writes an empty RawExtension), left in the output as
   * they are and named here (`<input> items[2]`): `linkerd inject` keeps them and reports
   * `document missing "kind" field, skipped` (cli/cmd/inject.go, testdata inject_emojivoto_list_empty_resources).
   */
  kindless?: string[];
}

/**
 * How `results` is added to a JSON ResourceList: inserted at `at` (the end of the wrapper's last entry,
 * before any comment or closing brace), on its own line at `pad` indented by `unit` spaces per level, or
 * on the same line when the wrapper is written on one line (`pad` undefined).
 */
export interface JsonLayout {
  at: number;
  pad: string | undefined;
  unit: number;
}

function lineColumn(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/**
 * Line starts of a text, computed once (one pass), so that positions of many resources on one long line
 * (compact JSON) are found by binary search instead of scanning back from each.
 */
export class LineIndex {
  private starts: number[] | undefined;
  constructor(private readonly text: string) {}

  private get lineStarts(): number[] {
    if (!this.starts) {
      const s = [0];
      for (let i = this.text.indexOf('\n'); i >= 0; i = this.text.indexOf('\n', i + 1)) s.push(i + 1);
      this.starts = s;
    }
    return this.starts;
  }

  /** 0-based index of the line holding `offset`. */
  private lineOf(offset: number): number {
    const s = this.lineStarts;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** 1-based line number of `offset`. */
  line(offset: number): number {
    return this.lineOf(offset) + 1;
  }

  /** Column (UTF-16 units from the line start) of `offset`. */
  column(offset: number): number {
    return offset - this.lineStarts[this.lineOf(offset)]!;
  }
}

/**
 * Composes one CST node as a standalone Document read as Kubernetes reads it (YAML 1.1, merge keys; see
 * `K8S_YAML_OPTIONS`), with the `%TAG`/`%YAML` directives of its document. Throws a BAD_INPUT error
 * naming the line for syntax errors and duplicate keys (checked with a Set: linear in the keys).
 */
function composeNode(
  text: string,
  node: CST.Token,
  where: string,
  directives: readonly CST.Directive[] = [],
  lines?: LineIndex,
  docStart?: CST.SourceToken[],
): Document.Parsed {
  const composer = new Composer(K8S_YAML_OPTIONS);
  // With directives, the document's `---` marker is needed too (the composer requires it after `%TAG`).
  const start = directives.length > 0 && docStart ? docStart : [];
  const docToken: CST.Document = { type: 'document', offset: node.offset, start, value: node, end: [] };
  const docs = [...composer.compose([...directives, docToken], true, text.length)];
  const doc = docs[0];
  if (!doc) throw new MeshInjectError('BAD_INPUT', `${where}: empty document`);
  const at = (offset: number): number => (lines ?? new LineIndex(text)).line(offset);
  const err = doc.errors[0];
  if (err) {
    throw new MeshInjectError(
      'BAD_INPUT',
      `${where}, line ${at(err.pos[0])}: invalid YAML: ${err.message.split('\n')[0]}`,
    );
  }
  const problem = findKeyProblem(doc);
  if (problem)
    throw new MeshInjectError('BAD_INPUT', `${where}, line ${at(problem.offset)}: ${keyProblemMessage(problem)}`);
  return doc as Document.Parsed;
}

/** End of a value's own text: after its closing bracket or last character, before trailing space and comments. */
function valueEnd(node: CST.Token): number {
  if (node.type === 'flow-collection') {
    const close = node.end.find((t) => t.type === 'flow-map-end' || t.type === 'flow-seq-end');
    if (close) return close.offset + close.source.length;
  }
  if (node.type === 'scalar' || node.type === 'double-quoted-scalar' || node.type === 'single-quoted-scalar')
    return node.offset + node.source.length;
  return nodeEnd(node);
}

function nodeEnd(node: CST.Token): number {
  return node.offset + CST.stringify(node).length;
}

/** A resource's syntax tree and data. */
interface ItemContent {
  node: TextNode;
  value: Json;
}

/** The fields of a `SourceItem` other than its content. */
type ItemRange = Pick<
  SourceItem,
  'position' | 'topPosition' | 'kind' | 'name' | 'start' | 'end' | 'column' | 'reader' | 'preamble' | 'listToken'
>;

/**
 * A resource of the input: its source range (the `ItemRange` fields, declared once by `SourceItem` and
 * merged into the class), and its content, which is either loaded, still to be composed (a function, run
 * once by `load`), or released.
 */
interface ResourceItem extends ItemRange {}
class ResourceItem implements SourceItem {
  private content: ItemContent | (() => ItemContent) | 'released';

  constructor(range: ItemRange, content: ItemContent | (() => ItemContent) | 'released') {
    Object.assign(this, range);
    this.content = content;
  }

  get node(): TextNode {
    return this.loaded().node;
  }

  get value(): Json {
    return this.loaded().value;
  }

  load(): void {
    this.loaded();
  }

  release(): void {
    this.content = 'released';
    delete this.listToken;
  }

  private loaded(): ItemContent {
    if (typeof this.content === 'function') this.content = this.content();
    if (this.content === 'released')
      throw new Error(`resource ${this.position} of the input was read after its release`);
    return this.content;
  }
}

/**
 * A copy of a resource's source range without its content (released): for output edits that only need
 * the range (`run`'s dropped local-config documents).
 */
export function rangeOf(item: SourceItem): SourceItem {
  const { position, topPosition, kind, start, end, column } = item;
  return new ResourceItem({ position, topPosition, kind, start, end, column }, 'released');
}

/**
 * A resource of the `yaml` path. Its Document and data are composed by `load` (on first use) and
 * released by the pipeline after use. Composition errors (duplicate keys, alias bombs) surface then as
 * `MeshInjectError` `BAD_INPUT`.
 */
function makeItem(text: string, node: CST.Token, position: number, where: string, ctx: YamlContext): SourceItem {
  return new ResourceItem(yamlRange(node, position, where, ctx), () =>
    composeItem(text, node, where, ctx, ctx.docStart),
  );
}

/**
 * The source range of a `yaml`-path resource read from its syntax tree (kind, name, end, column, and a
 * List's tree).
 * @throws MeshInjectError `BAD_INPUT` for a root that is not a mapping or is nested too deeply
 */
function yamlRange(node: CST.Token, position: number, where: string, ctx: YamlContext): ItemRange {
  if (!isMapToken(node)) {
    throw new MeshInjectError('BAD_INPUT', `${where}: a Kubernetes resource must be a mapping`);
  }
  let end: number;
  try {
    end = nodeEnd(node);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new MeshInjectError(
      'BAD_INPUT',
      `${where}, line ${ctx.lines.line(node.offset)}: nested too deeply (${e.message})`,
    );
  }
  const kind = rootKind(node);
  const name = rootName(node);
  return {
    position,
    topPosition: position,
    start: node.offset,
    end,
    column: ctx.lines.column(node.offset),
    kind,
    ...(name !== undefined ? { name } : {}),
    reader: 'yaml',
    ...(ctx.directives.length > 0 ? { preamble: `${ctx.directives.map((d) => d.source).join('\n')}\n---\n` } : {}),
    ...(kind === 'List' ? { listToken: node } : {}),
  };
}

/** Composes a `yaml`-path resource from its syntax tree: its data and text tree. */
function composeItem(
  text: string,
  node: CST.Token,
  where: string,
  ctx: YamlContext,
  docStart: CST.SourceToken[] | undefined,
): ItemContent {
  try {
    const doc = composeNode(text, node, where, ctx.directives, ctx.lines, docStart);
    return { value: doc.toJS(TO_JS_OPTIONS) as Json, node: fromYamlNode(doc.contents as Node) };
  } catch (e) {
    // Alias bombs (ReferenceError) and absurd nesting (RangeError) are bad input too.
    if (e instanceof MeshInjectError) throw e;
    throw new MeshInjectError('BAD_INPUT', `${where}, line ${ctx.lines.line(node.offset)}: ${(e as Error).message}`);
  }
}

/** A document of a `yaml`-path stream as a resource composed from the syntax tree kept for it (`KEEP_TREES`). */
function keptItem(text: string, range: ItemRange, doc: CST.Document, where: string, ctx: YamlContext): SourceItem {
  return new ResourceItem(range, () => composeItem(text, doc.value!, where, ctx, docStartOf(doc).docStart));
}

/**
 * A document of a `yaml`-path stream as a resource whose syntax tree is not kept (beyond `KEEP_TREES`):
 * `load` parses the document again from its own text (`text` from `docOffset` to `docEnd`, where the
 * stream's parse put its document token) before composing it.
 */
function streamItem(
  text: string,
  range: ItemRange,
  docOffset: number,
  docEnd: number,
  where: string,
  ctx: YamlContext,
): SourceItem {
  const { start } = range;
  const { directives, lines } = ctx;
  return new ResourceItem(range, () => {
    const doc = reparseDocument(text, docOffset, docEnd, start, where);
    return composeItem(text, doc.value!, where, { directives, lines }, docStartOf(doc).docStart);
  });
}

/**
 * One document of a stream parsed again from its own text, with offsets into the whole `text` (the parser
 * counts on from `from`). A document's syntax does not depend on the documents before it (its directives
 * are kept apart), so the tree is the one the stream's parse made, its root at `start`
 * (test/yaml/source-reparse.test.ts compares whole trees over every YAML file of the repository). Only a document
 * broken at its end (a quote still open at the next `---`) is tokenised differently where the input ends
 * instead: composing it fails either way.
 * @throws Error (an internal error) when the text gives no single document with its root at `start`
 */
export function reparseDocument(text: string, from: number, to: number, start: number, where: string): CST.Document {
  const { docs } = parseAt(text, from, to);
  if (docs.length !== 1 || docs[0]!.value?.offset !== start) {
    throw new Error(`${where}: the document reads differently on its own than in its stream (offsets ${from}-${to})`);
  }
  return docs[0]!;
}

/** The document tokens of `text` from `from` to `to`, with offsets into `text`, and whether the parser reported errors. */
function parseAt(text: string, from: number, to: number): { docs: CST.Document[]; errors: boolean } {
  const parser = new Parser();
  parser.offset = from;
  const docs: CST.Document[] = [];
  let errors = false;
  for (const t of parser.parse(text.slice(from, to))) {
    if (t.type === 'document') docs.push(t);
    else if (t.type === 'error') errors = true;
  }
  return { docs, errors };
}

/** Whether a document has no content (only comments, or nothing after its `---`). */
function isEmptyDocument(d: CST.Document): boolean {
  return !d.value || (d.value.type === 'scalar' && d.value.source === '');
}

/**
 * Decides which stream documents keep their syntax trees (`KEEP_TREES`): called once per document in order,
 * with its position and range; true while both the count and the characters of `budget` last.
 */
function treeKeeper(budget: TreeBudget): (position: number, range: ItemRange) => boolean {
  let chars = budget.chars;
  return (position, range) => {
    const size = range.end - range.start;
    if (position >= budget.documents || size > chars) return false;
    chars -= size;
    return true;
  };
}

function scalarText(node: CST.Token | null | undefined): string | undefined {
  if (!node) return undefined;
  if (node.type === 'scalar' || node.type === 'single-quoted-scalar' || node.type === 'double-quoted-scalar') {
    return CST.resolveAsScalar(node, true, () => undefined)?.value;
  }
  return undefined;
}

/** A block mapping or a flow mapping (`{...}`, e.g. JSON). */
function isMapToken(t: CST.Token | null | undefined): t is CST.BlockMap | CST.FlowCollection {
  return !!t && (t.type === 'block-map' || (t.type === 'flow-collection' && t.start.source === '{'));
}

/** Reads the top-level `kind` of a document's root map without composing it. */
function rootKind(root: CST.Token | undefined): string | undefined {
  return mapEntry(root, 'kind');
}

/** Reads `metadata.name` of a document's root map without composing it (see `SourceItem.name`). */
function rootName(root: CST.Token | undefined): string | undefined {
  if (!isMapToken(root)) return undefined;
  for (const it of root.items) {
    if (scalarText(it.key) === 'metadata') return mapEntry(it.value, 'name');
  }
  return undefined;
}

/** The scalar at the first `key` of a mapping token, read without composing it. */
function mapEntry(map: CST.Token | null | undefined, key: string): string | undefined {
  if (!isMapToken(map)) return undefined;
  for (const it of map.items) {
    if (scalarText(it.key) === key) return scalarText(it.value);
  }
  return undefined;
}

/** What composing a resource of the `yaml` path needs besides its node: its document's directives, line index. */
interface YamlContext {
  directives: readonly CST.Directive[];
  /** The tokens before the document's root (its `---` marker line), when it has a marker. */
  docStart?: CST.SourceToken[];
  lines: LineIndex;
  /** Where a `kind: List`'s `null` items are named (see `ParsedSource.kindless`); undefined: they are errors. */
  kindless?: string[];
}

/** Whether a token is a plain `null` / `~` scalar (a Go marshaller's empty List item). */
function isNullToken(t: CST.Token): boolean {
  return t.type === 'scalar' && ['null', 'Null', 'NULL', '~'].includes(t.source);
}

function collectItems(text: string, seq: CST.Token | null | undefined, where: string, ctx: YamlContext): SourceItem[] {
  if (!seq) return [];
  if (seq.type === 'block-seq') {
    const out: SourceItem[] = [];
    seq.items.forEach((it, i) => {
      if (!it.value) return;
      if (ctx.kindless && isNullToken(it.value)) ctx.kindless.push(`${where} items[${i}]`);
      else out.push(makeItem(text, it.value, out.length, `${where} items[${i}]`, ctx));
    });
    return out;
  }
  if (seq.type === 'flow-collection' && seq.start.source === '[') {
    const out: SourceItem[] = [];
    seq.items.forEach((it, i) => {
      if (!it.value) return;
      if (ctx.kindless && isNullToken(it.value)) ctx.kindless.push(`${where} items[${i}]`);
      else out.push(makeItem(text, it.value, out.length, `${where} items[${out.length}]`, ctx));
    });
    return out;
  }
  if (seq.type === 'scalar' && CST.resolveAsScalar(seq, true, () => undefined)?.value === '') return [];
  throw new MeshInjectError('BAD_INPUT', `${where}: \`items\` must be a sequence of resources`);
}

/**
 * Adds the items of nested `kind: List` resources (a List inside a ResourceList or a stream, and Lists
 * inside those, recursively) as resources of their own, after the top-level ones, as Istio's kube-inject
 * does (`IntoResourceFile` recurses into List items). Each List stays unchanged text around its items; its
 * `null` items stay too and are named in `kindless` (see `ParsedSource.kindless`).
 *
 * @throws MeshInjectError `BAD_INPUT` for Lists nested deeper than `MAX_LIST_DEPTH`, naming the List
 */
function expandNestedLists(
  text: string,
  items: SourceItem[],
  where: string,
  ctx: YamlContext,
): { items: SourceItem[]; kindless: string[] } {
  const kindless: string[] = [];
  const out = items.slice();
  const depth = new Map<SourceItem, number>();
  const names = new Map<SourceItem, string>();
  for (let i = 0; i < out.length; i++) {
    const item = out[i]!;
    const root = item.listToken;
    if (!isMapToken(root)) continue;
    const d = (depth.get(item) ?? 0) + 1;
    const name = names.get(item) ?? `${where} items[${item.position}]`;
    if (d > MAX_LIST_DEPTH) {
      throw new MeshInjectError(
        'BAD_INPUT',
        `${name}, line ${ctx.lines.line(root.offset)}: kind: List nested more than ${MAX_LIST_DEPTH} deep`,
      );
    }
    const pair = root.items.find((p) => scalarText(p.key) === 'items');
    for (const sub of collectItems(text, pair?.value, name, { ...ctx, kindless })) {
      names.set(sub, `${name} items[${sub.position}]`);
      sub.position = out.length;
      sub.topPosition = item.topPosition;
      depth.set(sub, d);
      out.push(sub);
    }
  }
  return { items: out, kindless };
}

/**
 * Parses the input text: a ResourceList (`kind: ResourceList`, any apiVersion), a `kind: List`, or a
 * multi-document YAML stream. Nothing is re-serialised: each resource keeps its source range.
 *
 * Manifests as people and tools write them are read in one pass by the fast block reader
 * (`readBlockStream`), which also checks that the whole input is well-formed. A document of a stream it
 * declines (anchors, tags, JSON, malformed YAML, ...) is read with the `yaml` package from its own text, the
 * others stay the fast reader's (`mixedStream`); where that cannot be done (nested Lists, an input `results`,
 * directives, a declined ResourceList, ...) the whole input is read with the `yaml` package instead (syntax
 * errors are reported now). Resources read with the `yaml` package are composed on first use of
 * `node`/`value` (duplicate keys and alias bombs are reported then).
 *
 * @param text the whole input (CRLF line endings are kept as they are; `run` strips a leading BOM)
 * @param where how to name the input in errors (e.g. `stdin` or a file path)
 * @param options for tests: `keepTrees` (see `KEEP_TREES`; none: every stream document is parsed again) and
 *   `mixed: false` (a stream with a declined document is read with the `yaml` package as a whole)
 * @throws MeshInjectError `BAD_INPUT` naming the document/item and line; composing a resource later
 *   throws the same
 */
export function parseSource(
  text: string,
  where = 'input',
  options: { keepTrees?: TreeBudget; mixed?: boolean } = {},
): ParsedSource {
  const keepTrees = options.keepTrees ?? KEEP_TREES;
  const docs = readBlockStream(text);
  const read = docs?.every((d): d is BlockDocument => !('declined' in d))
    ? fromBlockDocuments(text, docs as BlockDocument[], where)
    : docs && options.mixed !== false
      ? mixedStream(text, docs, where, keepTrees)
      : undefined;
  return read ?? parseWithYaml(text, where, keepTrees);
}

/**
 * A stream some of whose documents the fast reader declined (an anchor in one ConfigMap of a rendered chart):
 * each of those is parsed with the `yaml` package from its own text, the others keep the fast reader's items,
 * so one such document no longer sends every resource through the slower path. Undefined, and the whole
 * input is read with the `yaml` package (which also gives the errors), for a single document, a declined
 * text that is not exactly one well-formed document, a root that is not a mapping, or a List.
 */
function mixedStream(
  text: string,
  docs: Array<BlockDocument | DeclinedDocument>,
  where: string,
  keepTrees: TreeBudget,
): ParsedSource | undefined {
  if (docs.filter((d) => 'declined' in d || d.node !== null).length < 2) return undefined;
  const lines = new LineIndex(text);
  const items: SourceItem[] = [];
  const keep = treeKeeper(keepTrees);
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    if (!('declined' in d)) {
      if (d.node === null) continue;
      const item = blockItem(text, d.value, d.node, items.length);
      if (!item) return undefined;
      items.push(item);
      continue;
    }
    const { from, to } = d.declined;
    const doc = onlyDocument(text, from, to);
    if (!doc) return undefined;
    const docWhere = `${where} document ${i + 1}`;
    const ctx: YamlContext = { directives: [], lines };
    let range: ItemRange;
    try {
      range = yamlRange(doc.value!, items.length, docWhere, ctx);
    } catch (e) {
      if (e instanceof MeshInjectError) return undefined;
      throw e;
    }
    if (range.kind === 'List') return undefined;
    items.push(
      keep(items.length, range)
        ? keptItem(text, range, doc, docWhere, ctx)
        : streamItem(text, range, doc.offset, to, docWhere, ctx),
    );
  }
  return { form: 'stream', text, items };
}

/** The one non-empty document of `text` from `from` to `to` (offsets into `text`), or undefined: none, more, or a syntax error. */
function onlyDocument(text: string, from: number, to: number): CST.Document | undefined {
  const { docs, errors } = parseAt(text, from, to);
  return !errors && docs.length === 1 && !isEmptyDocument(docs[0]!) ? docs[0] : undefined;
}

/** How many stream documents keep their syntax trees (`KEEP_TREES`): at most `documents`, `chars` of text together. */
export interface TreeBudget {
  documents: number;
  /** UTF-16 units of the documents' roots. */
  chars: number;
}

/**
 * The `yaml`-path stream documents whose syntax trees are kept from reading the stream to composing them:
 * the first 64, up to 4 Mi characters; the documents after those are parsed again when composed
 * (`streamItem`). In the `yaml` package's form a tree takes some 75 times its text, and the garbage
 * collector's every pass grows with what is kept (measured, bench class anchored-300k, a stream of small
 * documents: keeping every tree of 300 000 held 3.3 GB and the run's CPU grew 1.3 times faster than the
 * stream; keeping those of the first 4 Mi characters, some 50 000 documents, was slower still; parsing each
 * twice made the growth 1.03 at the same CPU for 75 000). A few large documents keep theirs: parsing a
 * 40 000-key ConfigMap twice cost 45 % more CPU.
 */
export const KEEP_TREES: Readonly<TreeBudget> = { documents: 64, chars: 4 * 1024 * 1024 };

/**
 * The framing rules both readers apply (the KRM functions spec; kubectl for `kind: List`): a single
 * document whose `kind` is `ResourceList` (any apiVersion) or `List` frames the resources in its `items`;
 * anything else is a stream of resources.
 */
function wrapperForm(kind: unknown): 'resource-list' | 'list' | undefined {
  return kind === 'ResourceList' ? 'resource-list' : kind === 'List' ? 'list' : undefined;
}

/** A ResourceList must have `items` (an empty list is `items: []`); a List without `items` holds nothing. */
function requireItems(form: SourceForm, hasItems: boolean, where: string): void {
  if (!hasItems && form === 'resource-list') {
    throw new MeshInjectError('BAD_INPUT', `${where}: ResourceList has no \`items\` (an empty list is \`items: []\`)`);
  }
}

/** A resource read by the fast reader; undefined (decline) for what only the `yaml` path handles. */
function blockItem(text: string, value: Json, node: TextNode | null, position: number): SourceItem | undefined {
  if (!node || node.t !== 'map' || typeof value !== 'object' || value === null || Array.isArray(value))
    return undefined;
  const kind = value.kind;
  if ((kind !== undefined && typeof kind !== 'string') || kind === 'List') return undefined;
  const meta = value.metadata;
  const name =
    typeof meta === 'object' && meta !== null && !Array.isArray(meta) && typeof meta.name === 'string'
      ? meta.name
      : undefined;
  return new ResourceItem(
    {
      position,
      topPosition: position,
      kind,
      ...(name !== undefined ? { name } : {}),
      start: node.start,
      end: node.end,
      column: lineColumn(text, node.start),
      reader: 'block',
    },
    { node, value },
  );
}

/**
 * The parsed input from the fast reader's documents, or undefined when the input needs the `yaml` path:
 * a root that is not a block mapping, a List/ResourceList whose items are not block mappings, nested
 * `kind: List` resources, or an input `results` entry.
 */
function fromBlockDocuments(text: string, docs: BlockDocument[], where: string): ParsedSource | undefined {
  const nonEmpty = docs.filter((d) => d.node !== null);
  const root = nonEmpty.length === 1 ? nonEmpty[0]! : undefined;
  const rootValue = root?.value as { [k: string]: Json } | undefined;
  const form = root?.node?.t === 'map' ? wrapperForm(rootValue?.kind) : undefined;
  if (form) {
    if (form === 'resource-list' && 'results' in rootValue!) return undefined;
    if (!('items' in rootValue!)) {
      requireItems(form, false, where);
      return { form, text, items: [] };
    }
    const itemsNode = (root!.node as TextMap).pairs.find((p) => p.key === 'items')!.value;
    const values = rootValue!.items;
    const items: SourceItem[] = [];
    if (values !== null) {
      if (!Array.isArray(values) || itemsNode?.t !== 'seq') return undefined;
      for (let i = 0; i < values.length; i++) {
        const item = blockItem(text, values[i]!, itemsNode.items[i] ?? null, i);
        if (!item) return undefined;
        items.push(item);
      }
    }
    const parsed: ParsedSource = { form, text, items };
    if (form === 'resource-list' && 'functionConfig' in rootValue! && rootValue!.functionConfig !== null) {
      parsed.functionConfig = rootValue!.functionConfig!;
    }
    return parsed;
  }
  const items: SourceItem[] = [];
  for (const d of nonEmpty) {
    const item = blockItem(text, d.value, d.node, items.length);
    if (!item) return undefined;
    items.push(item);
  }
  return { form: 'stream', text, items };
}

/**
 * `parseSource` with the `yaml` package: the whole input through its parser (syntax errors are reported
 * now); a single ResourceList or List document keeps its syntax tree (its items are composed from it on
 * first use), the documents of a stream are parsed again when composed (`streamItem`).
 */
function parseWithYaml(text: string, where: string, keepTrees: TreeBudget): ParsedSource {
  const lines = new LineIndex(text);
  // The non-empty documents: a tree is dropped once its range is read unless it fits in the budget, and the
  // first one's is kept while it is the only one (it may be a ResourceList or List). `docEnd`: where the
  // next token starts.
  const docs: StreamDoc[] = [];
  const keep = treeKeeper(keepTrees);
  // A document's range error waits for the syntax errors of the whole input, which are reported first.
  let problem: MeshInjectError | undefined;
  const readRange = (i: number): void => {
    const d = docs[i]!;
    try {
      d.range = yamlRange(d.doc!.value!, i, d.where, { directives: d.directives, lines });
      if (keep(i, d.range)) return;
    } catch (e) {
      if (!(e instanceof MeshInjectError)) throw e;
      problem ??= e;
    }
    d.doc = undefined;
  };
  let directives: CST.Directive[] = [];
  let count = 0;
  for (const t of new Parser().parse(text)) {
    const last = docs[docs.length - 1];
    if (last && last.docEnd < 0) last.docEnd = t.offset;
    if (t.type === 'error') {
      throw new MeshInjectError('BAD_INPUT', `${where}, line ${lines.line(t.offset)}: invalid YAML: ${t.message}`);
    }
    if (t.type === 'directive') directives.push(t);
    if (t.type !== 'document') continue;
    count++;
    if (!isEmptyDocument(t)) {
      if (docs.length === 1) readRange(0);
      docs.push({ doc: t, directives, where: `${where} document ${count}`, docOffset: t.offset, docEnd: -1 });
      if (docs.length > 1) readRange(docs.length - 1);
    }
    directives = [];
  }
  const last = docs[docs.length - 1];
  if (last && last.docEnd < 0) last.docEnd = text.length;
  const only = docs.length === 1 ? docs[0]!.doc! : undefined;
  if (!problem && only) {
    const kind = rootKind(only.value!);
    const form = wrapperForm(kind);
    if (form && isMapToken(only.value))
      return parseWrapper(text, only.value, form, kind!, where, {
        directives: docs[0]!.directives,
        lines,
        ...docStartOf(only),
      });
    readRange(0);
  }
  if (problem) throw problem;
  const items = docs.map((d) =>
    d.doc
      ? keptItem(text, d.range!, d.doc, d.where, { directives: d.directives, lines })
      : streamItem(text, d.range!, d.docOffset, d.docEnd, d.where, { directives: d.directives, lines }),
  );
  const nested = expandNestedLists(text, items, where, { directives: [], lines });
  return {
    form: 'stream',
    text,
    items: nested.items,
    ...(nested.kindless.length > 0 ? { kindless: nested.kindless } : {}),
  };
}

/** A non-empty document of a `yaml`-path stream while the stream is read (`parseWithYaml`). */
interface StreamDoc {
  /** Its syntax tree, kept when it fits in the budget (dropped once its range is read otherwise). */
  doc: CST.Document | undefined;
  range?: ItemRange;
  directives: CST.Directive[];
  where: string;
  /** Where its text starts and ends in the input (the end is -1 until the next token is seen). */
  docOffset: number;
  docEnd: number;
}

/**
 * A ResourceList or List document read with the `yaml` package: its `items` (nested Lists expanded), and
 * for a ResourceList its `functionConfig` and the range of an input `results`; JSON wrappers also get
 * where `results` goes. Keys of the wrapper must be unique.
 */
function parseWrapper(
  text: string,
  root: CST.BlockMap | CST.FlowCollection,
  form: 'resource-list' | 'list',
  kind: string,
  where: string,
  ctx: YamlContext,
): ParsedSource {
  const json = root.type === 'flow-collection';
  const parsed: ParsedSource = { form, text, items: [], json };
  let sawItems = false;
  root.items.forEach((pair, i) => {
    const key = scalarText(pair.key);
    if (key === 'items') {
      sawItems = true;
      const kindless: string[] = [];
      parsed.items = collectItems(text, pair.value, where, form === 'list' ? { ...ctx, kindless } : ctx);
      if (kindless.length > 0) parsed.kindless = kindless;
    } else if (key === 'functionConfig' && form === 'resource-list' && pair.value) {
      parsed.functionConfig = composeNode(
        text,
        pair.value,
        `${where} functionConfig`,
        ctx.directives,
        ctx.lines,
        ctx.docStart,
      ).toJS(TO_JS_OPTIONS) as Json;
    } else if (key === 'results' && form === 'resource-list' && pair.key) {
      parsed.resultsRange = json
        ? flowEntryRange(root, i)
        : [
            pair.start.length ? pair.start[0]!.offset : pair.key.offset,
            pair.value ? nodeEnd(pair.value) : nodeEnd(pair.key),
          ];
    }
  });
  requireItems(form, sawItems, where);
  const keys = root.items.map((p) => scalarText(p.key));
  const seen = new Set<string>();
  for (const k of keys) {
    if (k === undefined) continue;
    if (seen.has(k)) throw new MeshInjectError('BAD_INPUT', `${where}: duplicate key \`${k}\` in the ${kind}`);
    seen.add(k);
  }
  if (json) {
    const layout = jsonLayoutOf(root, ctx.lines);
    // When the input's `results` is the last entry, the new one goes where it started.
    if (parsed.resultsRange && layout.at >= parsed.resultsRange[0]) layout.at = parsed.resultsRange[0];
    parsed.jsonLayout = layout;
  }
  const nested = expandNestedLists(text, parsed.items, where, ctx);
  parsed.items = nested.items;
  const kindless = [...(parsed.kindless ?? []), ...nested.kindless];
  if (kindless.length > 0) parsed.kindless = kindless;
  return parsed;
}

function docStartOf(doc: CST.Document): { docStart?: CST.SourceToken[] } {
  return doc.start.some((x) => x.type === 'doc-start') ? { docStart: doc.start } : {};
}

/**
 * The source range of entry `i` of a flow mapping together with one separating comma (the one before it,
 * or for the first entry the one after it), so that removing it leaves valid flow syntax.
 */
function flowEntryRange(root: CST.FlowCollection, i: number): [number, number] {
  const pair = root.items[i]!;
  const value = pair.value ?? pair.key!;
  const comma = pair.start.find((t) => t.type === 'comma');
  if (comma) return [comma.offset, valueEnd(value)];
  const next = root.items[i + 1];
  const nextComma = next?.start.find((t) => t.type === 'comma');
  const keyStart = pair.key ? pair.key.offset : value.offset;
  if (nextComma) {
    const after = next!.key ?? next!.value;
    return [keyStart, after ? after.offset : nextComma.offset + 1];
  }
  return [keyStart, valueEnd(value)];
}

/** Where and how `results` is added to a JSON (flow mapping) ResourceList: see `JsonLayout`. */
function jsonLayoutOf(root: CST.FlowCollection, lines: LineIndex): JsonLayout {
  const last = root.items[root.items.length - 1];
  const lastNode = last?.value ?? last?.key;
  const at = lastNode ? valueEnd(lastNode) : root.start.offset + 1;
  const first = root.items[0]?.key;
  const multiLine = !!first && lines.line(first.offset) !== lines.line(root.start.offset);
  if (!multiLine) return { at, pad: undefined, unit: 2 };
  const pad = ' '.repeat(lines.column(first.offset));
  const unit = Math.max(1, lines.column(first.offset) - lines.column(root.start.offset)) || 2;
  return { at, pad, unit };
}
