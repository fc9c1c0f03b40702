/**
 * The unified diff of one file, built from the edits that made its new text (`FileOutput.edits`) instead of
 * comparing whole texts: every changed line is one an edit touched, every context line is read from the old
 * text. Time and memory are linear in the size of the file and the edits (a general diff algorithm is
 * O(N·D): on 3 000 injected workloads it never finished).
 *
 * Format: GNU diffutils' unified format as git writes it (`diff --git a/P b/P`, `--- a/P`, `+++ b/P`,
 * `@@ -a,b +c,d @@` hunks with 3 lines of context, hunks merged when their contexts touch or overlap, a
 * count of 1 written without `,1`, an empty range as `-a,0` with `a` the line before it, and
 * `\ No newline at end of file` after a last line without a line break). Paths are quoted as git quotes
 * them (`quotePath`). `patch -p1` and `git apply` accept it.
 */
import { defined } from '../checked.ts';

/** A text edit: replace [start, end) of the old text (UTF-16 offsets) with `text`. */
export interface TextEdit {
  start: number;
  end: number;
  text: string;
}

/** Lines of context around each change (diff -u, git). */
const CONTEXT = 3;

/** ANSI colours of a diff on a terminal (as git: headers bold, hunk headers cyan, removals red, additions green). */
const COLOUR = { bold: '\u001b[1m', cyan: '\u001b[36m', red: '\u001b[31m', green: '\u001b[32m', reset: '\u001b[m' };

const NO_NEWLINE = '\\ No newline at end of file\n';

/** git's C-style escapes (quote.c `cq_lookup`): the named ones; other control bytes are octal. */
const NAMED_ESCAPES: Record<number, string> = {
  7: 'a',
  8: 'b',
  9: 't',
  10: 'n',
  11: 'v',
  12: 'f',
  13: 'r',
  34: '"',
  92: '\\',
};

/**
 * A path as git writes it in diff headers (core.quotePath true, git's default; quote.c `quote_c_style`):
 * unchanged when it holds no byte below 0x20, no DEL, no `"` or `\` and nothing outside ASCII; otherwise in
 * double quotes, with `\a \b \t \n \v \f \r \" \\` and every other such byte (UTF-8) as a 3-digit octal
 * escape. A name holding line breaks thus stays on one header line and cannot forge `---`/`+++` lines.
 *
 * @param path the path with its `a/`/`b/` prefix
 */
export function quotePath(path: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: git quotes a path holding control characters or non-ASCII bytes (quote.c, sq_must_quote); the class names them
  if (!/[\x00-\x1f\x7f"\\]|[^\x00-\x7f]/.test(path)) return path;
  let out = '"';
  for (const byte of Buffer.from(path, 'utf8')) {
    const named = NAMED_ESCAPES[byte];
    if (named !== undefined) out += `\\${named}`;
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}

/** A changed block: old lines [oldLine, oldLine + removed.length) (0-based), starting at offset `startPos`, ending at `endPos`. */
interface Block {
  oldLine: number;
  startPos: number;
  endPos: number;
  removed: string[];
  added: string[];
}

/** The text split after each line break (the last line may have none); '' gives no line. */
function splitLines(s: string): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < s.length) {
    const nl = s.indexOf('\n', at);
    const end = nl < 0 ? s.length : nl + 1;
    out.push(s.slice(at, end));
    at = end;
  }
  return out;
}

/** The offset just after the line holding `pos` (after its `\n`, or the end of the text). */
function lineEndAt(text: string, pos: number): number {
  const nl = text.indexOf('\n', pos);
  return nl < 0 ? text.length : nl + 1;
}

/** Number of `\n` in text[from, to). */
function countBreaks(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i >= 0 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The offset of the start of the line holding `pos`. */
function lineStartAt(text: string, pos: number): number {
  return pos <= 0 ? 0 : text.lastIndexOf('\n', pos - 1) + 1;
}

/** Where the old lines an edit touches end: after the line of its last replaced character; an insertion at a line start touches none. */
function touchedEnd(text: string, e: TextEdit): number {
  if (e.end > e.start) return lineEndAt(text, e.end - 1);
  return lineStartAt(text, e.start) === e.start ? e.start : lineEndAt(text, e.start);
}

/**
 * The changed blocks, in order: edits sharing a line are one region of whole lines, extended until its new
 * text ends at a line break (or the file ends); lines equal at the start and end of a region are context.
 */
function changedBlocks(text: string, edits: readonly TextEdit[]): Block[] {
  const sorted = edits
    .filter((e) => e.end > e.start || e.text.length > 0)
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const blocks: Block[] = [];
  let linePos = 0;
  let lineNo = 0;
  let i = 0;
  for (let lead = sorted[i]; lead !== undefined; lead = sorted[i]) {
    const start = lineStartAt(text, lead.start);
    let end = start;
    let next = '';
    let at = start;
    let first = true;
    for (;;) {
      // Every edit that starts inside the region (or at the end of a file without a final line break) joins it.
      for (
        let e = sorted[i];
        e !== undefined && (first || e.start < end || (e.start === end && end === text.length));
        e = sorted[i]
      ) {
        i++;
        next += text.slice(at, e.start) + e.text;
        at = e.end;
        end = Math.max(end, touchedEnd(text, e));
        first = false;
      }
      const tail = next + text.slice(at, end);
      if (end >= text.length || tail === '' || tail.endsWith('\n')) break;
      end = lineEndAt(text, end);
    }
    next += text.slice(at, end);
    lineNo += countBreaks(text, linePos, start);
    linePos = start;
    const block = trimmed(text.slice(start, end), next, start, lineNo);
    if (block) blocks.push(block);
  }
  return blocks;
}

/** The block of a region [start, start + old.length) becoming `next`, its equal first and last lines left out; undefined when nothing differs. */
function trimmed(old: string, next: string, start: number, lineNo: number): Block | undefined {
  if (old === next) return undefined;
  const removed = splitLines(old);
  const added = splitLines(next);
  let head = 0;
  while (head < removed.length && head < added.length && removed[head] === added[head]) head++;
  let tail = 0;
  while (
    tail < removed.length - head &&
    tail < added.length - head &&
    removed[removed.length - 1 - tail] === added[added.length - 1 - tail]
  )
    tail++;
  let startPos = start;
  for (const l of removed.slice(0, head)) startPos += l.length;
  let endPos = start + old.length;
  for (const l of removed.slice(removed.length - tail)) endPos -= l.length;
  return {
    oldLine: lineNo + head,
    startPos,
    endPos,
    removed: removed.slice(head, removed.length - tail),
    added: added.slice(head, added.length - tail),
  };
}

/** Up to `n` whole lines of `text` before offset `pos` (a line start), in order. */
function linesBefore(text: string, pos: number, n: number): string[] {
  const out: string[] = [];
  let end = pos;
  while (out.length < n && end > 0) {
    const start = lineStartAt(text, end - 1);
    out.unshift(text.slice(start, end));
    end = start;
  }
  return out;
}

/** Up to `n` whole lines of `text` from offset `pos` (a line start), stopping at `limit`. */
function linesAfter(text: string, pos: number, n: number, limit = text.length): string[] {
  const out: string[] = [];
  let at = pos;
  while (out.length < n && at < limit) {
    const end = lineEndAt(text, at);
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

/** The range of a hunk header: `start,count`, `start` alone for one line, the line before for none (1-based). */
function range(start: number, count: number): string {
  if (count === 1) return `${start + 1}`;
  return `${count === 0 ? start : start + 1},${count}`;
}

/** Blocks grouped into hunks: a block joins the previous hunk when at most 2 × CONTEXT lines separate them (GNU diff, git). */
function groupHunks(blocks: readonly Block[]): Block[][] {
  const hunks: Block[][] = [];
  for (const b of blocks) {
    const last = hunks[hunks.length - 1];
    const prev = last?.[last.length - 1];
    const gap = last && prev ? b.oldLine - (prev.oldLine + prev.removed.length) : Infinity;
    // Adjacent blocks are one: all their old lines, then all their new ones.
    if (prev && gap === 0) {
      prev.endPos = b.endPos;
      for (const l of b.removed) prev.removed.push(l);
      for (const l of b.added) prev.added.push(l);
    } else if (last && gap <= 2 * CONTEXT) last.push(b);
    else hunks.push([b]);
  }
  return hunks;
}

/**
 * The hunks of a file, as text pieces (one per hunk).
 *
 * @param before the old text
 * @param edits the edits that make the new text from `before` (non-overlapping; any order)
 * @param paint colours a line (identity without colour)
 */
function hunkPieces(
  before: string,
  edits: readonly TextEdit[],
  paint: (c: keyof typeof COLOUR, s: string) => string,
): string[] {
  const pieces: string[] = [];
  let delta = 0;
  const line = (mark: string, l: string, c?: keyof typeof COLOUR): string => {
    const body = l.endsWith('\n') ? l.slice(0, -1) : l;
    const shown = c ? paint(c, `${mark}${body}`) : `${mark}${body}`;
    return l.endsWith('\n') ? `${shown}\n` : `${shown}\n${NO_NEWLINE}`;
  };
  for (const hunk of groupHunks(changedBlocks(before, edits))) {
    const first = defined(hunk[0], 'the first block of a hunk');
    const lead = linesBefore(before, first.startPos, CONTEXT);
    const body: string[] = lead.map((l) => line(' ', l));
    let oldCount = lead.length;
    let newCount = lead.length;
    let prev: Block | undefined;
    for (const b of hunk) {
      if (prev) {
        for (const l of linesAfter(before, prev.endPos, Infinity, b.startPos)) body.push(line(' ', l));
        const between = b.oldLine - (prev.oldLine + prev.removed.length);
        oldCount += between;
        newCount += between;
      }
      for (const l of b.removed) body.push(line('-', l, 'red'));
      for (const l of b.added) body.push(line('+', l, 'green'));
      oldCount += b.removed.length;
      newCount += b.added.length;
      prev = b;
    }
    const trail = linesAfter(before, (prev ?? first).endPos, CONTEXT);
    for (const l of trail) body.push(line(' ', l));
    oldCount += trail.length;
    newCount += trail.length;
    const oldStart = first.oldLine - lead.length;
    const newStart = oldStart + delta;
    delta += hunk.reduce((n, b) => n + b.added.length - b.removed.length, 0);
    pieces.push(
      `${paint('cyan', `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`)}\n${body.join('')}`,
    );
  }
  return pieces;
}

/**
 * The unified diff of one file, as text pieces in order ('' when the edits change nothing): a git-style
 * header, then one piece per hunk.
 *
 * @param path the path as the user named it (`stdin` for standard input); quoted as git quotes paths
 * @param before the file's text
 * @param edits the edits that make the new text (`FileOutput.edits`): replacements of [start, end) of
 *   `before` (UTF-16 offsets), non-overlapping
 * @param colour ANSI colours (for a terminal)
 */
export function unifiedDiffPieces(path: string, before: string, edits: readonly TextEdit[], colour = false): string[] {
  const paint = (c: keyof typeof COLOUR, s: string) => (colour ? `${COLOUR[c]}${s}${COLOUR.reset}` : s);
  const hunks = hunkPieces(before, edits, paint);
  if (hunks.length === 0) return [];
  const a = quotePath(`a/${path}`);
  const b = quotePath(`b/${path}`);
  // As git (diff.c): a name holding a space ends with a tab on the ---/+++ lines, where patch stops reading it.
  const tab = path.includes(' ') ? '\t' : '';
  return [
    `${paint('bold', `diff --git ${a} ${b}`)}\n${paint('bold', `--- ${a}${tab}`)}\n${paint('bold', `+++ ${b}${tab}`)}\n`,
    ...hunks,
  ];
}
