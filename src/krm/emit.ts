import type { Document } from 'yaml';
import type { ParsedSource, SourceItem } from './source.ts';

/**
 * List indentation of a resource's text: the style of its first block sequence under a mapping key
 * (`compact`: `- ` at the key's column; `wide`: indented by two). Without a block sequence, kpt's
 * `internal.config.kubernetes.io/seqindent` annotation, else compact. The text wins over the annotation:
 * kpt sends items compact inside the ResourceList and re-applies the file's style when it writes files.
 */
export function seqIndentOf(text: string, annotations: Record<string, unknown> | undefined): 'compact' | 'wide' {
  const m = /^([ \t]*)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*(?:#[^\n]*)?\r?\n)*([ \t]*)- /m.exec(text);
  if (m) return m[2]!.length > m[1]!.length ? 'wide' : 'compact';
  const a = annotations?.['internal.config.kubernetes.io/seqindent'];
  return a === 'wide' ? 'wide' : 'compact';
}

/**
 * Serialises a changed resource for its place in the input: block style, no line folding, the resource's
 * list indentation, continuation lines indented by the node's column, the input's line ending (CRLF kept).
 */
export function emitItem(item: SourceItem, source: ParsedSource): string {
  const doc: Document = item.doc;
  const original = source.text.slice(item.start, item.end);
  const meta = (item.value as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata;
  if (item.flow && doc.contents && typeof doc.contents === 'object' && 'flow' in doc.contents) {
    (doc.contents as { flow?: boolean }).flow = true;
  }
  let out = doc.toString({
    lineWidth: 0,
    indentSeq: seqIndentOf(original, meta?.annotations) === 'wide',
    flowCollectionPadding: false,
  });
  // The node's range ends at its last character: no trailing newline inside it.
  const trailing = /\s*$/.exec(original)?.[0] ?? '';
  out = out.replace(/\n+$/, '');
  if (item.column > 0) {
    const pad = ' '.repeat(item.column);
    out = out.replace(/\n(?!\n|$)/g, `\n${pad}`);
  }
  if (original.includes('\r\n')) out = out.replace(/\r?\n/g, '\r\n');
  return out + trailing;
}
