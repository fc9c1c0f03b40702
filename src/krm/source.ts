import { Composer, CST, Document, Parser, type Node } from 'yaml';
import { MeshInjectError } from '../results/errors.ts';
import type { Json } from '../model.ts';
import { readBlockYaml, type BlockDocument } from '../yaml/block-reader.ts';
import { fromYamlNode, type TextMap, type TextNode } from '../yaml/text-node.ts';

/** How the input was framed; the output keeps the same framing. */
export type SourceForm = 'resource-list' | 'list' | 'stream';

/** Options of the `yaml` composer used for every resource (aliases capped: billion-laughs safe). */
export const YAML_PARSE_OPTIONS = {
  prettyErrors: false,
  uniqueKeys: true,
  maxAliasCount: 100,
  strict: true,
} as const;

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
  /** The CST node, kept only for a nested `kind: List` (its items are expanded into resources). */
  listToken?: CST.Token;
  start: number;
  end: number;
  /** Column of the node's first character; continuation lines of a re-serialised node are indented by it. */
  column: number;
  /**
   * Where each node of the resource sits in the input text (what `patchText` edits). Released (null) by
   * `processItems` once the resource is processed.
   */
  node: TextNode;
  /** The resource as plain data. Released (null) by `processItems` once processed. */
  value: Json;
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
}

function lineColumn(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

function lineNumber(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Composes one CST node as a standalone Document, throwing a BAD_INPUT error naming the line. */
function composeNode(text: string, node: CST.Token, where: string): Document.Parsed {
  const composer = new Composer(YAML_PARSE_OPTIONS);
  const docToken: CST.Document = { type: 'document', offset: node.offset, start: [], value: node, end: [] };
  const docs = [...composer.compose([docToken], true, text.length)];
  const doc = docs[0];
  if (!doc) throw new MeshInjectError('BAD_INPUT', `${where}: empty document`);
  const err = doc.errors[0];
  if (err) {
    throw new MeshInjectError('BAD_INPUT', `${where}, line ${lineNumber(text, err.pos[0])}: invalid YAML: ${err.message.split('\n')[0]}`);
  }
  return doc as Document.Parsed;
}

function nodeEnd(node: CST.Token): number {
  return node.offset + CST.stringify(node).length;
}

/**
 * A resource of the input. Its Document and data are composed on first use (and released by the
 * pipeline after use), so a large input never holds every resource's syntax tree at once. Composition
 * errors (duplicate keys, alias bombs) surface on first use as `MeshInjectError` `BAD_INPUT`.
 */
function makeItem(text: string, node: CST.Token, position: number, where: string): SourceItem {
  if (!isMapToken(node)) {
    throw new MeshInjectError('BAD_INPUT', `${where}: a Kubernetes resource must be a mapping`);
  }
  let end: number;
  try {
    end = nodeEnd(node);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new MeshInjectError('BAD_INPUT', `${where}, line ${lineNumber(text, node.offset)}: nested too deeply (${e.message})`);
  }
  let token: CST.Token | undefined = node;
  let tree: TextNode | null = null;
  let value: Json = null;
  const compose = (): void => {
    if (!token) return;
    const t = token;
    token = undefined;
    try {
      const doc = composeNode(text, t, where);
      value = doc.toJS({ maxAliasCount: YAML_PARSE_OPTIONS.maxAliasCount }) as Json;
      tree = fromYamlNode(doc.contents as Node);
    } catch (e) {
      // Alias bombs (ReferenceError) and absurd nesting (RangeError) are bad input too.
      if (e instanceof MeshInjectError) throw e;
      throw new MeshInjectError('BAD_INPUT', `${where}, line ${lineNumber(text, t.offset)}: ${(e as Error).message}`);
    }
  };
  const item = {
    position,
    topPosition: position,
    start: node.offset,
    end,
    column: lineColumn(text, node.offset),
    kind: rootKind(node),
    ...(rootKind(node) === 'List' ? { listToken: node } : {}),
  } as SourceItem;
  Object.defineProperty(item, 'node', {
    enumerable: true,
    get: () => (compose(), tree),
    set: (v: TextNode | null) => ((token = undefined), (tree = v)),
  });
  Object.defineProperty(item, 'value', {
    enumerable: true,
    get: () => (compose(), value),
    set: (v: Json) => ((token = undefined), (value = v)),
  });
  return item;
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
  if (!isMapToken(root)) return undefined;
  for (const it of root.items) {
    if (scalarText(it.key) === 'kind') return scalarText(it.value);
  }
  return undefined;
}

function collectItems(text: string, seq: CST.Token | null | undefined, where: string): SourceItem[] {
  if (!seq) return [];
  if (seq.type === 'block-seq') {
    return seq.items.flatMap((it, i) => (it.value ? [makeItem(text, it.value, i, `${where} items[${i}]`)] : []));
  }
  if (seq.type === 'flow-collection' && seq.start.source === '[') {
    const out: SourceItem[] = [];
    seq.items.forEach((it) => {
      if (it.value) out.push(makeItem(text, it.value, out.length, `${where} items[${out.length}]`));
    });
    return out;
  }
  if (seq.type === 'scalar' && CST.resolveAsScalar(seq, true, () => undefined)?.value === '') return [];
  throw new MeshInjectError('BAD_INPUT', `${where}: \`items\` must be a sequence of resources`);
}

/**
 * Adds the items of nested `kind: List` resources (a List inside a ResourceList or a stream) as resources of
 * their own, after the top-level ones, as Istio's kube-inject does (`IntoResourceFile`, List items
 * recursively). The List itself stays unchanged text around them.
 */
function expandNestedLists(text: string, items: SourceItem[], where: string): SourceItem[] {
  const out = items.slice();
  for (const item of items) {
    const root = item.listToken;
    if (!isMapToken(root)) continue;
    const pair = root.items.find((p) => scalarText(p.key) === 'items');
    for (const sub of collectItems(text, pair?.value, `${where} items[${item.position}]`)) {
      sub.position = out.length;
      sub.topPosition = item.topPosition;
      out.push(sub);
    }
  }
  return out;
}

/**
 * Parses the input text: a ResourceList (`kind: ResourceList`, any apiVersion), a `kind: List`, or a
 * multi-document YAML stream. Nothing is re-serialised: each resource keeps its source range.
 *
 * Manifests as people and tools write them are read in one pass by the fast block reader
 * (`readBlockYaml`), which also checks that the whole input is well-formed. Anything it declines (anchors,
 * tags, JSON, nested Lists, an input `results`, malformed YAML, ...) is read with the `yaml` package
 * instead: the whole text into its syntax tree here (syntax errors are reported now), each resource
 * composed on first use of `node`/`value` (duplicate keys and alias bombs are reported then).
 *
 * @param text the whole input (CRLF line endings are kept as they are; `run` strips a leading BOM)
 * @param where how to name the input in errors (e.g. `stdin` or a file path)
 * @throws MeshInjectError `BAD_INPUT` naming the document/item and line; composing a resource later
 *   throws the same
 */
export function parseSource(text: string, where = 'input'): ParsedSource {
  const docs = readBlockYaml(text);
  return (docs && fromBlockDocuments(text, docs, where)) ?? parseWithYaml(text, where);
}

/** A resource read by the fast reader; undefined (decline) for what only the `yaml` path handles. */
function blockItem(text: string, value: Json, node: TextNode | null, position: number): SourceItem | undefined {
  if (!node || node.t !== 'map' || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const kind = value.kind;
  if ((kind !== undefined && typeof kind !== 'string') || kind === 'List') return undefined;
  return { position, topPosition: position, kind, start: node.start, end: node.end, column: lineColumn(text, node.start), node, value };
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
  const rootKind = root?.node?.t === 'map' ? rootValue?.kind : undefined;
  if (rootKind === 'ResourceList' || rootKind === 'List') {
    const form: SourceForm = rootKind === 'ResourceList' ? 'resource-list' : 'list';
    if (form === 'resource-list' && 'results' in rootValue!) return undefined;
    if (!('items' in rootValue!)) {
      if (form === 'resource-list') throw new MeshInjectError('BAD_INPUT', `${where}: ResourceList has no \`items\` (an empty list is \`items: []\`)`);
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

/** `parseSource` with the `yaml` package: the whole input into its syntax tree, resources composed on first use. */
function parseWithYaml(text: string, where: string): ParsedSource {
  const tokens = [...new Parser().parse(text)];
  const docs = tokens.filter((t): t is CST.Document => t.type === 'document');
  for (const t of tokens) {
    if (t.type === 'error') {
      throw new MeshInjectError('BAD_INPUT', `${where}, line ${lineNumber(text, t.offset)}: invalid YAML: ${t.message}`);
    }
  }
  const nonEmpty = docs.filter((d) => d.value !== undefined && !(d.value.type === 'scalar' && d.value.source === ''));
  if (nonEmpty.length === 1) {
    const root = nonEmpty[0]!.value;
    const kind = rootKind(root);
    if ((kind === 'ResourceList' || kind === 'List') && isMapToken(root)) {
      const form: SourceForm = kind === 'ResourceList' ? 'resource-list' : 'list';
      const parsed: ParsedSource = { form, text, items: [], json: root.type === 'flow-collection' };
      let sawItems = false;
      for (const pair of root.items) {
        const key = scalarText(pair.key);
        if (key === 'items') {
          sawItems = true;
          parsed.items = collectItems(text, pair.value, where);
        } else if (key === 'functionConfig' && form === 'resource-list' && pair.value) {
          parsed.functionConfig = composeNode(text, pair.value, `${where} functionConfig`).toJS() as Json;
        } else if (key === 'results' && form === 'resource-list' && pair.key && root.type === 'block-map') {
          const start = pair.start.length ? pair.start[0]!.offset : pair.key.offset;
          parsed.resultsRange = [start, pair.value ? nodeEnd(pair.value) : nodeEnd(pair.key)];
        }
      }
      if (!sawItems && form === 'resource-list') {
        throw new MeshInjectError('BAD_INPUT', `${where}: ResourceList has no \`items\` (an empty list is \`items: []\`)`);
      }
      const keys = root.items.map((p) => scalarText(p.key));
      const dup = keys.find((k, i) => k !== undefined && keys.indexOf(k) !== i);
      if (dup !== undefined) throw new MeshInjectError('BAD_INPUT', `${where}: duplicate key \`${dup}\` in the ${kind}`);
      parsed.items = expandNestedLists(text, parsed.items, where);
      return parsed;
    }
  }
  const items: SourceItem[] = [];
  docs.forEach((d, i) => {
    if (!d.value || (d.value.type === 'scalar' && d.value.source === '')) return;
    items.push(makeItem(text, d.value, items.length, `${where} document ${i + 1}`));
  });
  return { form: 'stream', text, items: expandNestedLists(text, items, where) };
}
