/**
 * The resources of a parsed input (`SourceItem`): each one's source range, and its value composed on first use (`ResourceItem`), with the trees kept under a budget (`KEEP_TREES`).
 */
import { type CST, Parser, type Node } from 'yaml';
import { MeshInjectError } from '../results/errors.ts';
import type { Json } from '../model.ts';
import { TO_JS_OPTIONS } from '../yaml/read/readers.ts';
import { fromYamlNode, type TextNode } from '../yaml/read/text-node.ts';
import { type YamlContext, composeNode, isMapToken, nodeEnd, rootKind, rootName } from './compose.ts';
import { docStartOf } from './wrapper.ts';
import type { SourceItem } from './source.ts';

/** A resource's syntax tree and data. */
export interface ItemContent {
  node: TextNode;
  value: Json;
}

/** The fields of a `SourceItem` other than its content. */
export type ItemRange = Pick<
  SourceItem,
  'position' | 'topPosition' | 'kind' | 'name' | 'start' | 'end' | 'column' | 'reader' | 'preamble' | 'listToken'
>;

/**
 * A resource of the input: its source range (the `ItemRange` fields, declared once by `SourceItem` and
 * merged into the class), and its content, which is either loaded, still to be composed (a function, run
 * once by `load`), or released.
 */
export interface ResourceItem extends ItemRange {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every ItemRange field (Object.assign), declared once here instead of field by field
export class ResourceItem implements SourceItem {
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
export function makeItem(text: string, node: CST.Token, position: number, where: string, ctx: YamlContext): SourceItem {
  return new ResourceItem(yamlRange(node, position, where, ctx), () =>
    composeItem(text, node, where, ctx, ctx.docStart),
  );
}

/**
 * The source range of a `yaml`-path resource read from its syntax tree (kind, name, end, column, and a
 * List's tree).
 * @throws MeshInjectError `BAD_INPUT` for a root that is not a mapping or is nested too deeply
 */
export function yamlRange(node: CST.Token, position: number, where: string, ctx: YamlContext): ItemRange {
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
export function composeItem(
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
export function keptItem(
  text: string,
  range: ItemRange,
  doc: CST.Document,
  where: string,
  ctx: YamlContext,
): SourceItem {
  const root = doc.value;
  if (root === undefined) throw new Error(`${where}: a kept document without a root node`);
  return new ResourceItem(range, () => composeItem(text, root, where, ctx, docStartOf(doc).docStart));
}

/**
 * A document of a `yaml`-path stream as a resource whose syntax tree is not kept (beyond `KEEP_TREES`):
 * `load` parses the document again from its own text (`text` from `docOffset` to `docEnd`, where the
 * stream's parse put its document token) before composing it.
 */
export function streamItem(
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
    // reparseDocument checked that the root stands at `start`: a document without one throws there.
    const root = doc.value;
    if (root === undefined) throw new Error(`${where}: the document has no root node at offset ${start}`);
    return composeItem(text, root, where, { directives, lines }, docStartOf(doc).docStart);
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
  const doc = docs[0];
  if (docs.length !== 1 || doc === undefined || doc.value?.offset !== start) {
    throw new Error(`${where}: the document reads differently on its own than in its stream (offsets ${from}-${to})`);
  }
  return doc;
}

/** The document tokens of `text` from `from` to `to`, with offsets into `text`, and whether the parser reported errors. */
export function parseAt(text: string, from: number, to: number): { docs: CST.Document[]; errors: boolean } {
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
export function isEmptyDocument(d: CST.Document): boolean {
  return !d.value || (d.value.type === 'scalar' && d.value.source === '');
}

/**
 * Decides which stream documents keep their syntax trees (`KEEP_TREES`): called once per document in order,
 * with its position and range; true while both the count and the characters of `budget` last.
 */
export function treeKeeper(budget: TreeBudget): (position: number, range: ItemRange) => boolean {
  let chars = budget.chars;
  return (position, range) => {
    const size = range.end - range.start;
    if (position >= budget.documents || size > chars) return false;
    chars -= size;
    return true;
  };
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
