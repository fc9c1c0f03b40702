import type { Json } from '../model.ts';
import { jsonEqual, withoutNulls } from '../json.ts';
import { patchText } from '../yaml/patch-text.ts';
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
 * The new source text of a resource whose data becomes `next`, or undefined when nothing changes. Only
 * the differing parts of the text are rewritten (see `patchText`); new text uses the resource's list
 * indentation and the input's line endings (CRLF kept).
 */
export function emitChanged(item: SourceItem, source: ParsedSource, next: Json): string | undefined {
  const original = source.text.slice(item.start, item.end);
  const meta = (item.value as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata;
  if (item.node.t === 'map' && item.node.flow) {
    // A flow-mapping resource (JSON input) is written back as JSON, indented to its place.
    if (jsonEqual(item.value, withoutNulls(next))) return undefined;
    if (!original.includes('\n')) return JSON.stringify(withoutNulls(next));
    const pad = ' '.repeat(item.column);
    return JSON.stringify(withoutNulls(next), null, 2).replace(/\n/g, `\n${pad}`);
  }
  const style = { seqIndent: seqIndentOf(original, meta?.annotations) };
  let out = patchText(source.text, item.node, item.value, next, [item.start, item.end], style);
  if (out !== undefined && original.includes('\r\n')) out = out.replace(/\r?\n/g, '\r\n');
  return out;
}
