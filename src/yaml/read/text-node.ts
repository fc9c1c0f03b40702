import { Scalar, isAlias, isMap, isPair, isScalar, isSeq, type Node } from 'yaml';

/**
 * The syntax tree `editText` edits: where each node of a resource sits in the input text. Both YAML
 * readers produce it: the fast block reader (`readBlockStream`) directly, and the `yaml` package (used for
 * everything the fast reader declines) through `fromYamlNode`.
 *
 * Offsets are UTF-16 indices into the whole input text. `start` is the node's first character (the `-` of
 * a block sequence, the first key of a block mapping, the indicator of a block scalar); `end` is just past
 * its content (a block collection: past the newline of its last entry's last line); `outerEnd` is just past
 * whatever else the reader gave the node on its last line (trailing spaces, a comment, the newline).
 */
export type TextNode = TextScalar | TextMap | TextSeq | TextAlias;

interface TextRange {
  start: number;
  end: number;
  outerEnd: number;
}

/** A scalar; `style` is how it is written (`block`: a `|` or `>` block scalar). */
export interface TextScalar extends TextRange {
  t: 'scalar';
  style: 'plain' | 'single' | 'double' | 'block';
}

/** A mapping; `flow` for `{...}`. */
export interface TextMap extends TextRange {
  t: 'map';
  flow: boolean;
  pairs: TextPair[];
}

/** A sequence; `flow` for `[...]`. An entry is null only where the `yaml` package has no node. */
export interface TextSeq extends TextRange {
  t: 'seq';
  flow: boolean;
  items: Array<TextNode | null>;
}

/** An alias (`*name`): only from the `yaml` package (the fast reader declines anchors and aliases). */
export interface TextAlias extends TextRange {
  t: 'alias';
}

/** A mapping entry: its key as text (undefined for a complex key), the key's node, and the value's. */
export interface TextPair {
  key: string | undefined;
  keyNode: TextNode;
  value: TextNode | null;
}

function range(node: Node): TextRange {
  const r = node.range;
  if (!r) throw new Error('a yaml node without its source range');
  return { start: r[0], end: r[1], outerEnd: r[2] };
}

/**
 * Converts a node of a document composed by the `yaml` package into a `TextNode`, taking its ranges
 * (`[start, valueEnd, nodeEnd]`) as they are.
 *
 * @throws Error for a node without a source range (never for a parsed document)
 */
export function fromYamlNode(node: Node): TextNode {
  if (isMap(node)) {
    const pairs: TextPair[] = [];
    for (const p of node.items) {
      if (!isPair(p)) continue;
      const k = p.key as Node;
      pairs.push({
        key: isScalar(k) ? String(k.value) : undefined,
        keyNode: fromYamlNode(k),
        value: p.value ? fromYamlNode(p.value as Node) : null,
      });
    }
    return { t: 'map', flow: !!node.flow, pairs, ...range(node) };
  }
  if (isSeq(node)) {
    return {
      t: 'seq',
      flow: !!node.flow,
      items: node.items.map((n) => (n ? fromYamlNode(n as Node) : null)),
      ...range(node),
    };
  }
  if (isAlias(node)) return { t: 'alias', ...range(node) };
  const type = isScalar(node) ? node.type : undefined;
  const style =
    type === Scalar.QUOTE_DOUBLE
      ? 'double'
      : type === Scalar.QUOTE_SINGLE
        ? 'single'
        : type === Scalar.BLOCK_LITERAL || type === Scalar.BLOCK_FOLDED
          ? 'block'
          : 'plain';
  return { t: 'scalar', style, ...range(node) };
}
