/**
 * Composing a resource's value from the `yaml` package's token tree (CST): its nodes read as JSON values (scalars as Kubernetes reads them), with line and column positions for messages.
 */
import { Composer, CST, type Document } from 'yaml';
import { MeshInjectError } from '../results/errors.ts';
import { K8S_YAML_OPTIONS, findKeyProblem, keyProblemMessage } from '../yaml/read/readers.ts';

/**
 * Nested `kind: List` resources are expanded this deep (a List in a List in a List ...); deeper nesting is
 * refused with an error naming the List, never skipped.
 */
export const MAX_LIST_DEPTH = 16;

export function lineColumn(text: string, offset: number): number {
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
      if ((s[mid] ?? Number.POSITIVE_INFINITY) <= offset) lo = mid;
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
    return offset - (this.lineStarts[this.lineOf(offset)] ?? 0);
  }
}

/**
 * Composes one CST node as a standalone Document read as Kubernetes reads it (YAML 1.1, merge keys; see
 * `K8S_YAML_OPTIONS`), with the `%TAG`/`%YAML` directives of its document. Throws a BAD_INPUT error
 * naming the line for syntax errors and duplicate keys (checked with a Set: linear in the keys).
 */
export function composeNode(
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
  return doc;
}

/** End of a value's own text: after its closing bracket or last character, before trailing space and comments. */
export function valueEnd(node: CST.Token): number {
  if (node.type === 'flow-collection') {
    const close = node.end.find((t) => t.type === 'flow-map-end' || t.type === 'flow-seq-end');
    if (close) return close.offset + close.source.length;
  }
  if (node.type === 'scalar' || node.type === 'double-quoted-scalar' || node.type === 'single-quoted-scalar')
    return node.offset + node.source.length;
  return nodeEnd(node);
}

export function nodeEnd(node: CST.Token): number {
  return node.offset + CST.stringify(node).length;
}

export function scalarText(node: CST.Token | null | undefined): string | undefined {
  if (!node) return undefined;
  if (node.type === 'scalar' || node.type === 'single-quoted-scalar' || node.type === 'double-quoted-scalar') {
    return CST.resolveAsScalar(node, true, () => undefined)?.value;
  }
  return undefined;
}

/** A block mapping or a flow mapping (`{...}`, e.g. JSON). */
export function isMapToken(t: CST.Token | null | undefined): t is CST.BlockMap | CST.FlowCollection {
  return !!t && (t.type === 'block-map' || (t.type === 'flow-collection' && t.start.source === '{'));
}

/** Reads the top-level `kind` of a document's root map without composing it. */
export function rootKind(root: CST.Token | undefined): string | undefined {
  return mapEntry(root, 'kind');
}

/** Reads `metadata.name` of a document's root map without composing it (see `SourceItem.name`). */
export function rootName(root: CST.Token | undefined): string | undefined {
  if (!isMapToken(root)) return undefined;
  for (const it of root.items) {
    if (scalarText(it.key) === 'metadata') return mapEntry(it.value, 'name');
  }
  return undefined;
}

/** The scalar at the first `key` of a mapping token, read without composing it. */
export function mapEntry(map: CST.Token | null | undefined, key: string): string | undefined {
  if (!isMapToken(map)) return undefined;
  for (const it of map.items) {
    if (scalarText(it.key) === key) return scalarText(it.value);
  }
  return undefined;
}

/** What composing a resource of the `yaml` path needs besides its node: its document's directives, line index. */
export interface YamlContext {
  directives: readonly CST.Directive[];
  /** The tokens before the document's root (its `---` marker line), when it has a marker. */
  docStart?: CST.SourceToken[];
  lines: LineIndex;
  /** Where a `kind: List`'s `null` items are named (see `ParsedSource.kindless`); undefined: they are errors. */
  kindless?: string[];
}

/** Whether a token is a plain `null` / `~` scalar (a Go marshaller's empty List item). */
export function isNullToken(t: CST.Token): boolean {
  return t.type === 'scalar' && ['null', 'Null', 'NULL', '~'].includes(t.source);
}
