/**
 * The wrapper forms of an input: a ResourceList or a `kind: List` (its items, nested Lists expanded), in YAML or JSON, with the layout of a JSON input kept for writing it back.
 */
import { CST } from 'yaml';
import { MeshInjectError } from '../results/errors.ts';
import type { Json } from '../model.ts';
import { TO_JS_OPTIONS } from '../yaml/read/readers.ts';
import {
  type LineIndex,
  MAX_LIST_DEPTH,
  type YamlContext,
  composeNode,
  isMapToken,
  isNullToken,
  nodeEnd,
  scalarText,
  valueEnd,
} from './compose.ts';
import { makeItem } from './items.ts';
import type { JsonLayout, ParsedSource, SourceForm, SourceItem } from './source.ts';

export function collectItems(
  text: string,
  seq: CST.Token | null | undefined,
  where: string,
  ctx: YamlContext,
): SourceItem[] {
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
export function expandNestedLists(
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
    const item = out[i];
    if (item === undefined) continue;
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
 * The framing rules both readers apply (the KRM functions spec; kubectl for `kind: List`): a single
 * document whose `kind` is `ResourceList` (any apiVersion) or `List` frames the resources in its `items`;
 * anything else is a stream of resources.
 */
export function wrapperForm(kind: unknown): 'resource-list' | 'list' | undefined {
  return kind === 'ResourceList' ? 'resource-list' : kind === 'List' ? 'list' : undefined;
}

/** A ResourceList must have `items` (an empty list is `items: []`); a List without `items` holds nothing. */
export function requireItems(form: SourceForm, hasItems: boolean, where: string): void {
  if (!hasItems && form === 'resource-list') {
    throw new MeshInjectError('BAD_INPUT', `${where}: ResourceList has no \`items\` (an empty list is \`items: []\`)`);
  }
}

/**
 * A ResourceList or List document read with the `yaml` package: its `items` (nested Lists expanded), and
 * for a ResourceList its `functionConfig` and the range of an input `results`; JSON wrappers also get
 * where `results` goes. Keys of the wrapper must be unique.
 */
export function parseWrapper(
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
        : // From the key: the blank lines and comments before it (the pair's start tokens) stay, as they stood before
          // the first run appended `results` after them (a second run must write what the first wrote).
          [pair.key.offset, pair.value ? nodeEnd(pair.value) : nodeEnd(pair.key)];
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

export function docStartOf(doc: CST.Document): { docStart?: CST.SourceToken[] } {
  return doc.start.some((x) => x.type === 'doc-start') ? { docStart: doc.start } : {};
}

/**
 * The source range of entry `i` of a flow mapping together with one separating comma (the one before it,
 * or for the first entry the one after it), so that removing it leaves valid flow syntax.
 */
export function flowEntryRange(root: CST.FlowCollection, i: number): [number, number] {
  const pair = root.items[i];
  const value = pair?.value ?? pair?.key;
  if (pair === undefined || value === undefined || value === null)
    throw new Error(`flowEntryRange: no entry ${i} in the flow mapping`);
  const comma = pair.start.find((t) => t.type === 'comma');
  if (comma) return [comma.offset, valueEnd(value)];
  const next = root.items[i + 1];
  const nextComma = next?.start.find((t) => t.type === 'comma');
  const keyStart = pair.key ? pair.key.offset : value.offset;
  if (next && nextComma) {
    const after = next.key ?? next.value;
    return [keyStart, after ? after.offset : nextComma.offset + 1];
  }
  return [keyStart, valueEnd(value)];
}

/** Where and how `results` is added to a JSON (flow mapping) ResourceList: see `JsonLayout`. */
export function jsonLayoutOf(root: CST.FlowCollection, lines: LineIndex): JsonLayout {
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
