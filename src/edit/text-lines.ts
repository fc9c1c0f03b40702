/**
 * Lines of a manifest's text, as the text editor (./text-edit.ts) and the record's source texts
 * (./source-texts.ts) find them: where a line starts, a position's column, where the comment lines around a node
 * begin and end, and where a block sequence entry's dash stands. Offsets are UTF-16 indexes into the text.
 */
import { defined } from '../checked.ts';
import type { TextNode } from '../yaml/read/text-node.ts';

/**
 * `text.lastIndexOf('\n', pos - 1) + 1`, read back character by character (the search starts at `pos - 1` put
 * within [0, length - 1], as `lastIndexOf` puts it): a line's start is a few characters back, nearer than the
 * call into the engine's search that `lastIndexOf` is (issue #40, a mapping's key column in every mapping edited).
 */
export function lineStart(text: string, pos: number): number {
  let at = Math.min(Math.max(pos - 1, 0), text.length - 1);
  while (at >= 0 && text.charCodeAt(at) !== 10) at--;
  return at + 1;
}

export function column(text: string, pos: number): number {
  return pos - lineStart(text, pos);
}

/**
 * Where a node's trailing comment block ends: `end` (the end of the node's last line) moved past the comment
 * lines, and blank lines between them, indented deeper than `col` (the node's dash or key column). Such
 * comments annotate the node above them (an operator's container ending with a commented-out `#resources:`
 * block), so what is added after the node goes after them; a comment at `col` or left of it annotates what
 * follows and stays after the addition (issue #21 §2). Blank lines after the last such comment stay where
 * they are. `end` itself when no comment follows or `end` is not at a line start.
 */
export function trailingCommentsEnd(text: string, end: number, col: number): number {
  if (end === 0 || text[end - 1] !== '\n') return end;
  let at = end;
  let pos = end;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const lineEnd = nl < 0 ? text.length : nl + 1;
    // Both groups take part in every match, and the pattern matches every line (both may be empty).
    const m = defined(/^([ \t]*)(#?)/.exec(text.slice(pos, lineEnd)) ?? undefined, 'the indentation of a line');
    const indent = defined(m[1], 'the indentation group');
    const rest = text.slice(pos + m[0].length, lineEnd);
    if (m[2] === '' && /^\r?\n?$/.test(rest)) {
      pos = lineEnd; // a blank line: part of the block only if another deeper comment follows
      continue;
    }
    if (m[2] !== '#' || indent.length <= col || indent.includes('\t')) break;
    at = lineEnd;
    pos = lineEnd;
  }
  return at;
}

/**
 * Where the comment lines right above the line starting at `start` begin: the run of lines holding only a
 * comment at column `col` or left of it (a comment so placed annotates what follows it, as kpt and
 * `trailingCommentsEnd` read it). `start` itself when no such line precedes it.
 */
export function headCommentStart(text: string, start: number, col: number): number {
  let at = start;
  while (at > 0) {
    const prev = lineStart(text, at - 1);
    const m = /^([ ]*)#/.exec(text.slice(prev, at));
    if (!m || defined(m[1], 'the indentation group').length > col) break;
    at = prev;
  }
  return at;
}

/** Whether only indentation precedes `pos` on its line. */
export function startsLine(text: string, pos: number): boolean {
  return /^[ ]*$/.test(text.slice(lineStart(text, pos), pos));
}

/**
 * Position of the `-` of a block sequence entry: on the entry's first line, or on an earlier line when
 * anchors, tags or comments stand between the dash and the entry (`- &main\n  name: x`).
 */
export function lineStartDash(text: string, item: TextNode): number {
  let ls = lineStart(text, item.start);
  for (let guard = 0; guard < 50; guard++) {
    const m = /^( *)-(?: |\r?$)/.exec(text.slice(ls, text.indexOf('\n', ls) >>> 0));
    if (m) return ls + defined(m[1], 'the indentation group').length;
    if (ls === 0) break;
    ls = lineStart(text, ls - 1);
  }
  return item.start;
}
