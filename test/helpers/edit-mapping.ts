/**
 * The text editor (src/edit/text-edit.ts) on one block mapping, for property tests of its key handling
 * (test/yaml/text-edit-key-order.test.ts, test/security/prototype-keys-editor.test.ts): the editor itself, not
 * `emitChanged`, whose read-back would send a wrong edit to the Document path.
 */
import { parseDocument } from 'yaml';
import { parseSource } from '../../src/krm/source.ts';
import { editText } from '../../src/edit/text-edit.ts';
import type { Json } from '../../src/model.ts';

/**
 * Writes `kind: X`, a mapping `m` of `textKeys` (each `k: v-k`) and `end: 1`, edits `m` to `next` with the text
 * editor and reads the result back with `yaml`: the mapping as read (its keys in text order) and whether the text
 * parsed without errors, and the whole new text; undefined when the input was not read as one resource.
 */
export function editMapping(
  textKeys: readonly string[],
  next: { [k: string]: Json },
): { got: { [k: string]: Json }; ok: boolean; text: string } | undefined {
  const text = `kind: X\nm:\n${textKeys.map((k) => `  ${k}: v-${k}\n`).join('')}end: 1\n`;
  const item = parseSource(text).items[0];
  if (!item) return undefined;
  const out = editText(text, item.node, item.value, { kind: 'X', m: next, end: 1 }, [item.start, item.end], {
    seqIndent: 'compact',
  });
  const whole = out === undefined ? text : text.slice(0, item.start) + out + text.slice(item.end);
  const doc = parseDocument(whole);
  return { got: (doc.toJS() as { m?: { [k: string]: Json } }).m ?? {}, ok: doc.errors.length === 0, text: whole };
}
