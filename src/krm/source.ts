import { type CST, Parser } from 'yaml';
import { defined } from '../checked.ts';
import { MeshInjectError } from '../results/errors.ts';
import type { Json } from '../model.ts';
import { readBlockStream, type BlockDocument, type DeclinedDocument } from '../yaml/read/manifest-reader.ts';
import type { TextMap, TextNode } from '../yaml/read/text-node.ts';
import { LineIndex, type YamlContext, isMapToken, lineColumn, rootKind } from './compose.ts';
import {
  type ItemRange,
  KEEP_TREES,
  ResourceItem,
  type TreeBudget,
  isEmptyDocument,
  keptItem,
  parseAt,
  streamItem,
  treeKeeper,
  yamlRange,
} from './items.ts';
import { docStartOf, expandNestedLists, parseWrapper, requireItems, wrapperForm } from './wrapper.ts';
export { rangeOf } from './items.ts';

/** How the input was framed; the output keeps the same framing. */
export type SourceForm = 'resource-list' | 'list' | 'stream';

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
   * Which reader read it: `block`, the fast block reader (no anchors, merge keys, tags, nor plain scalars
   * the Kubernetes reading and YAML 1.2 read differently), or `yaml` (also when absent), the `yaml` package
   * (YAML 1.1 with merge keys).
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
    ? fromBlockDocuments(text, docs, where)
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
  for (const [i, d] of docs.entries()) {
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
      range = yamlRange(defined(doc.value, 'the root of a non-empty declined document'), items.length, docWhere, ctx);
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
  const [only] = docs;
  return !errors && docs.length === 1 && only && !isEmptyDocument(only) ? only : undefined;
}

/** A resource read by the fast reader; undefined (decline) for what only the `yaml` path handles. */
function blockItem(text: string, value: Json, node: TextNode | null, position: number): SourceItem | undefined {
  if (node?.t !== 'map' || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
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
  const root = nonEmpty.length === 1 ? nonEmpty[0] : undefined;
  if (root?.node?.t === 'map') {
    const rootValue = root.value as { [k: string]: Json };
    const form = wrapperForm(rootValue.kind);
    if (form) return blockWrapper(text, root.node, rootValue, form, where);
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
 * A ResourceList or List read by the fast reader (`node` its root mapping, `value` the same as data), or
 * undefined when it needs the `yaml` path (an input `results`, items that are not block mappings).
 * @throws MeshInjectError `BAD_INPUT` for a ResourceList without `items`
 */
function blockWrapper(
  text: string,
  node: TextMap,
  value: { [k: string]: Json },
  form: 'resource-list' | 'list',
  where: string,
): ParsedSource | undefined {
  if (form === 'resource-list' && 'results' in value) return undefined;
  if (!('items' in value)) {
    requireItems(form, false, where);
    return { form, text, items: [] };
  }
  const itemsNode = defined(
    node.pairs.find((p) => p.key === 'items'),
    'the `items` entry of a block mapping whose data has `items`',
  ).value;
  const values = value.items;
  const items: SourceItem[] = [];
  if (values !== null) {
    if (!Array.isArray(values) || itemsNode?.t !== 'seq') return undefined;
    for (const [i, v] of values.entries()) {
      const item = blockItem(text, v, itemsNode.items[i] ?? null, i);
      if (!item) return undefined;
      items.push(item);
    }
  }
  const parsed: ParsedSource = { form, text, items };
  const functionConfig = value.functionConfig;
  if (form === 'resource-list' && functionConfig !== undefined && functionConfig !== null) {
    parsed.functionConfig = functionConfig;
  }
  return parsed;
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
  const readRange = (d: StreamDoc, i: number): void => {
    try {
      const root = defined(d.doc?.value, 'the syntax tree of a stream document whose range is not read yet');
      d.range = yamlRange(root, i, d.where, { directives: d.directives, lines });
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
      const [first] = docs;
      if (first && docs.length === 1) readRange(first, 0);
      const d: StreamDoc = { doc: t, directives, where: `${where} document ${count}`, docOffset: t.offset, docEnd: -1 };
      docs.push(d);
      if (docs.length > 1) readRange(d, docs.length - 1);
    }
    directives = [];
  }
  const last = docs[docs.length - 1];
  if (last && last.docEnd < 0) last.docEnd = text.length;
  const [first] = docs;
  const only = first && docs.length === 1 ? defined(first.doc, 'the syntax tree of the only document') : undefined;
  if (!problem && first && only) {
    const kind = rootKind(only.value);
    const form = wrapperForm(kind);
    if (form && kind !== undefined && isMapToken(only.value))
      return parseWrapper(text, only.value, form, kind, where, {
        directives: first.directives,
        lines,
        ...docStartOf(only),
      });
    readRange(first, 0);
  }
  if (problem) throw problem;
  const items = docs.map((d) => {
    const range = defined(d.range, 'the range of a stream document (read without a problem)');
    return d.doc
      ? keptItem(text, range, d.doc, d.where, { directives: d.directives, lines })
      : streamItem(text, range, d.docOffset, d.docEnd, d.where, { directives: d.directives, lines });
  });
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
