import { parseSource, type ParsedSource, type SourceItem } from '../krm/source.ts';
import type { KrmResult } from '../model.ts';
import type { TextNode } from '../yaml/read/text-node.ts';

/**
 * Source positions of findings: the 1-based line and column (UTF-16 code units, SARIF's default
 * `columnKind`) of a resource's field in the text the CLI read. Positions come from the parsed source's
 * offsets (`SourceItem.node`, a `TextNode` tree from src/krm/source.ts), so they are right for block YAML,
 * flow YAML, JSON and the items of a `kind: List` alike. Items of a ResourceList from kpt are reformatted
 * by kpt; their positions are in the ResourceList, not in the package's files, and are not reported.
 */

/** A place in a file: 1-based line and column, and the 0-based offsets of the node it starts. */
export interface SourcePosition {
  line: number;
  column: number;
  /** UTF-16 offset of the node in its input text. */
  offset: number;
}

/** A resource's extent in its input: its start and end positions (for SARIF fixes). */
export interface ResourceSpan {
  start: SourcePosition;
  end: SourcePosition;
}

/** Line-start offsets of a text, for offset → line/column in O(log lines). */
export class LineIndex {
  private readonly starts: number[] = [0];
  constructor(readonly text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }

  /** The 1-based line and column of a UTF-16 offset. */
  position(offset: number): SourcePosition {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] ?? offset) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (this.starts[lo] ?? 0) + 1, offset };
  }
}

/**
 * Splits a KRM field path into steps: `spec.template.metadata.annotations[sidecar.istio.io/inject]` →
 * `spec`, `template`, `metadata`, `annotations`, `sidecar.istio.io/inject`; `containers[0]` → `containers`, 0.
 * A bracketed step of digits only is a list index.
 */
export function fieldSteps(path: string): Array<string | number> {
  const steps: Array<string | number> = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '.') i++;
    if (path[i] === '[') {
      const close = path.indexOf(']', i);
      const inner = close < 0 ? path.slice(i + 1) : path.slice(i + 1, close);
      steps.push(/^\d+$/.test(inner) ? Number(inner) : inner);
      i = close < 0 ? path.length : close + 1;
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    if (j > i) steps.push(path.slice(i, j));
    i = j;
  }
  return steps;
}

/**
 * The offset of a field in a resource's syntax tree: the key of the deepest mapping entry (or the list
 * entry) the path reaches. A path that leaves the tree early (a field the input does not have yet) ends at
 * the deepest existing field on the way, so the position is still inside the resource.
 */
export function fieldOffset(root: TextNode, path: string): number {
  let node: TextNode = root;
  let at = root.start;
  for (const step of fieldSteps(path)) {
    if (node.t === 'map' && typeof step === 'string') {
      const pair = node.pairs.find((p) => p.key === step);
      if (!pair) break;
      at = pair.keyNode.start;
      if (!pair.value) break;
      node = pair.value;
    } else if (node.t === 'seq' && typeof step === 'number') {
      const item = node.items[step];
      if (!item) break;
      at = item.start;
      node = item;
    } else break;
  }
  return at;
}

/** One located input: its parsed source and line index, with resources findable by identity. */
export interface LocatedInput {
  name?: string;
  lines: LineIndex;
  source: ParsedSource;
}

/** Parses an input for locating (undefined when it does not parse: nothing to point into). */
export function locateInput(text: string, name?: string): LocatedInput | undefined {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return {
      ...(name !== undefined ? { name } : {}),
      lines: new LineIndex(body),
      source: parseSource(body, name ?? 'input'),
    };
  } catch {
    return undefined;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function identity(
  item: SourceItem,
): { apiVersion?: string; kind?: string; name?: string; namespace?: string } | undefined {
  try {
    const v = item.value as {
      apiVersion?: unknown;
      kind?: unknown;
      metadata?: { name?: unknown; generateName?: unknown; namespace?: unknown };
    } | null;
    if (!v || typeof v !== 'object') return undefined;
    const out: { apiVersion?: string; kind?: string; name?: string; namespace?: string } = {};
    const a = str(v.apiVersion);
    const k = str(v.kind);
    const n = str(v.metadata?.name) ?? str(v.metadata?.generateName);
    const ns = str(v.metadata?.namespace);
    if (a !== undefined) out.apiVersion = a;
    if (k !== undefined) out.kind = k;
    if (n !== undefined) out.name = n;
    if (ns) out.namespace = ns;
    return out;
  } catch {
    return undefined;
  }
}

/**
 * Finds the resource a result is about among the located inputs: the input named by `file.path` (a file
 * the CLI read; any input when there is a single one), the resource with the same apiVersion, kind, name
 * and namespace, preferring the one at document `file.index`.
 */
export function findResource(
  inputs: readonly LocatedInput[],
  r: KrmResult,
): { input: LocatedInput; item: SourceItem } | undefined {
  const ref = r.resourceRef;
  if (!ref) return undefined;
  const pool = inputs.length === 1 ? inputs : inputs.filter((i) => i.name !== undefined && i.name === r.file?.path);
  let fallback: { input: LocatedInput; item: SourceItem } | undefined;
  for (const input of pool) {
    if (input.source.form === 'resource-list') continue;
    for (const item of input.source.items) {
      const id = identity(item);
      if (
        !id ||
        id.kind !== ref.kind ||
        id.apiVersion !== ref.apiVersion ||
        id.name !== ref.name ||
        id.namespace !== ref.namespace
      )
        continue;
      if (r.file?.index === undefined || item.topPosition === r.file.index) return { input, item };
      fallback ??= { input, item };
    }
  }
  return fallback;
}

/** Where a result points: its field (or the resource itself) in the input the CLI read. */
export function locateResult(
  inputs: readonly LocatedInput[],
  r: KrmResult,
): (SourcePosition & { file?: string; span: ResourceSpan }) | undefined {
  const found = findResource(inputs, r);
  if (!found) return undefined;
  const { input, item } = found;
  const node = item.node;
  const offset = r.field?.path && node ? fieldOffset(node, r.field.path) : item.start;
  return {
    ...input.lines.position(offset),
    ...(input.name !== undefined ? { file: input.name } : {}),
    span: { start: input.lines.position(item.start), end: input.lines.position(item.end) },
  };
}
