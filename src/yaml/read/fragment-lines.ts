import type { Json } from '../../model.ts';
import {
  NOT_PLAIN_START,
  decline,
  quoteEnd,
  readFlow,
  resolveAgreed,
  resolveGo11,
  unquote,
  type FlowRules,
} from './scan.ts';

/**
 * The line table of a rendered fragment and its one-line pieces, shared by the fast fragment reader
 * (`fragment-reader.ts`) and its verifier (`fragment-verifier.ts`), which walk the block structure the same way.
 * Anything not read exactly as `yaml` reads it throws `Declined` (`scan.ts`).
 */

/** Flow collections in templates: YAML 1.1 as Go reads it, trailing commas allowed (`{a: "1",}`). */
export const FRAGMENT_FLOW: FlowRules = { resolve: resolveGo11, trailingComma: true };
/**
 * The read-back verifier's rules: `FRAGMENT_FLOW`, with plain scalars read only where every reading agrees
 * (`resolveAgreed`: a YAML 1.1 boolean is declined, a string in the Kubernetes reading, true for Istio's injector).
 */
export const AGREED_FLOW: FlowRules = { resolve: resolveAgreed, trailingComma: true };

/** What may follow a value on its line: spaces, then perhaps a comment (a `#` after a space). */
export const ONLY_COMMENT = /^(?: *| +#.*)$/;

/** `t` from `from` on, past any spaces there (`t.slice(from).replace(/^ +/, '')` without the regex). */
export function afterSpaces(t: string, from: number): string {
  let i = from;
  while (t.charCodeAt(i) === 32) i++;
  return i === 0 ? t : t.slice(i);
}

/** A structural line of a fragment (not blank, not only a comment): its indentation in spaces and its content. */
export interface Line {
  indent: number;
  /** Content after the indentation, without a trailing comment-only remainder. */
  text: string;
  /** Index of the line in the source (for block scalars). */
  index: number;
}

/** A stretch of text proven to read as a shared subtree: whole raw lines, each ending with `\n`. */
export interface ProvenSpan {
  readonly text: string;
  /** How many raw lines it holds. */
  readonly lines: number;
  /**
   * How it was read: the node's column, and whether as a sequence at its key's column (`seq`) or as a
   * node (`node`). The same text read another way reads otherwise (a one-entry list `- name: x` is a list
   * at the dash's column and a map at the key's), so a span is reused only where it is read the same way.
   */
  readonly column: number;
  readonly indentlessSeq: boolean;
  /**
   * Whether reading the node read raw lines (a block scalar, a flow collection over several lines): such a read
   * goes on until a line ends it, so the span proves the node only where the raw line after it ends every such
   * read (`endsRawReads`), as it did where it was proven.
   */
  readonly raw: boolean;
  /** Where each of its raw lines after the first, and the line after it, starts, from the span's start (`skipSpan`). */
  readonly ends: readonly number[];
}

/**
 * The line table and the one-line pieces (keys, scalars, block scalars, flow collections) shared by the
 * reader (`FastReader`) and the verifier (`FragmentVerifier`), which walk the block structure the same way.
 */
export abstract class LineReader {
  /**
   * The text, and where its first raw lines start, as far as the walk has needed them (`startOf`): lines are sliced only
   * when a block scalar or a flow needs them.
   */
  protected readonly text: string;
  private readonly starts: number[] = [0];
  /** Whether `starts` holds every raw line's start (the text has no line break after the last one). */
  private ended = false;
  /** Block scalars and flow collections over several lines read so far: both read raw lines, blank ones too. */
  protected rawReads = 0;
  /**
   * The structural lines scanned so far, in order: raw lines are scanned as the walk reaches them (`line`), and
   * the raw lines of a proven span that `skipTo` steps over are never scanned (see `skipTo`).
   */
  private readonly lines: Line[] = [];
  /** The first raw line not yet scanned (nor stepped over by `skipTo`). */
  private scanned = 0;
  /** The raw line after the last span `skipTo` stepped over without scanning it (0: none): see `spanOf`. */
  private skippedTo = 0;
  /**
   * The last look past the table (`peekFrom` scanning from raw line `from`, at or after the first line not yet
   * scanned): the first structural line there, or undefined for none up to the end. `skipTo(from)` takes it into the
   * table instead of scanning it again (the line after a proven span is looked at, then read).
   */
  private peeked: { from: number; line: Line | undefined } | undefined;
  protected pos = 0;

  /** How plain scalars and flow collections read (`FRAGMENT_FLOW` or `AGREED_FLOW`). */
  protected readonly rules: FlowRules;

  constructor(text: string, rules: FlowRules = FRAGMENT_FLOW) {
    // Tabs (as indentation, as separation, or in text) are left to yaml: one scan of the whole text.
    if (text.includes('\t')) decline();
    this.text = text;
    this.rules = rules;
  }

  /**
   * Where raw line `i` starts, or undefined past the last one (the text's final line break starts one more, empty line
   * here: `hasRaw` does not count it). Found as the walk needs them, line break by line break (`indexOf`), or taken from
   * a proven span stepped over (`skipSpan`), whose text stands here: the same starts as one scan of the whole text.
   */
  protected startOf(i: number): number | undefined {
    const starts = this.starts;
    while (i >= starts.length && !this.ended) {
      const nl = this.text.indexOf('\n', starts[starts.length - 1]);
      if (nl < 0) this.ended = true;
      else starts.push(nl + 1);
    }
    return starts[i];
  }

  /**
   * Whether raw line `i` counts: it exists and is not the text's last line holding only spaces, unless that is its only
   * line (the text's final line break ends its last line: it does not start an empty one, `|+` keeps empty lines; nor
   * does a last line of spaces without a line break after it).
   */
  protected hasRaw(i: number): boolean {
    const s = this.startOf(i);
    if (s === undefined) return false;
    return this.startOf(i + 1) !== undefined || i === 0 || !/^ *$/.test(this.text.slice(s));
  }

  /** How many raw lines count (`hasRaw`): all line starts found first. */
  private rawCount(): number {
    this.startOf(Number.MAX_SAFE_INTEGER);
    const n = this.starts.length;
    return this.hasRaw(n - 1) ? n : n - 1;
  }

  /**
   * Structural line `p` (not blank, not only a comment); undefined past the last line. Raw lines are scanned up to
   * it on first use: a line that declines (`scanLine`) declines when the walk reaches it. A walk that reads the
   * whole text scans every raw line, as a scan of the whole text up front would; one that stops earlier (a
   * difference) answers no differently, and the raw lines of a proven span were scanned when it was proven.
   */
  protected line(p: number): Line | undefined {
    const lines = this.lines;
    while (p >= lines.length && this.hasRaw(this.scanned)) {
      const l = this.scanLine(this.scanned++);
      if (l) lines.push(l);
    }
    return lines[p];
  }

  /**
   * The first structural line at raw line `raw` or after (`pos` and before are not looked at). Raw lines not yet
   * scanned are scanned from `raw` on (those before it are the span being looked past) and not kept.
   */
  protected peekFrom(raw: number): Line | undefined {
    const lines = this.lines;
    let p = this.pos;
    while (p < lines.length && (lines[p]?.index ?? raw) < raw) p++;
    if (p < lines.length) return lines[p];
    const from = Math.max(this.scanned, raw);
    let found: Line | undefined;
    for (let i = from; found === undefined && this.hasRaw(i); i++) found = this.scanLine(i);
    this.peeked = { from, line: found };
    return found;
  }

  /**
   * Moves `pos` to the first structural line at raw line `raw` or after. Raw lines before `raw` not yet scanned
   * (the rest of a proven span) are stepped over unscanned; the structural line `peekFrom(raw)` found after them, if
   * it looked there, goes into the table as it was scanned (the raw lines between it and `raw` are blank or comments).
   */
  protected skipTo(raw: number): void {
    while (this.pos < this.lines.length && (this.lines[this.pos]?.index ?? raw) < raw) this.pos++;
    if (this.pos === this.lines.length && this.scanned < raw) {
      this.scanned = raw;
      this.skippedTo = raw;
      const peeked = this.peeked;
      if (peeked !== undefined && peeked.from === raw) {
        this.peeked = undefined;
        if (peeked.line === undefined) this.scanned = this.rawCount();
        else {
          this.lines.push(peeked.line);
          this.scanned = peeked.line.index + 1;
        }
      }
    }
  }

  /**
   * Whether structural line `next` (undefined: the end of the text) ends a node at column `c` (its keys' column,
   * or its dashes' for a block sequence): a line left of `c`, or, after a sequence, one at `c` that is not an entry.
   */
  protected endsNode(next: Line | undefined, c: number, seqNode: boolean): boolean {
    return next === undefined || next.indent < c || (seqNode && next.indent === c && !isEntry(next.text));
  }

  /**
   * Whether raw line `raw` ends every block scalar of a node at column `c` that ran to the line before it: a line
   * with content (blank lines, and lines that look like comments, can be a block scalar's content) at column `c` or
   * left of it. A block scalar inside such a node has its parent's key or dash at `c` or right of it, so its content
   * is indented past `c` (`blockScalar`), and such a line ends it. A multi-line flow collection ends on its closing
   * line, which is in the node. False past the last line (a block scalar would run to the end of the text).
   */
  protected endsRawReads(raw: number, c: number): boolean {
    if (!this.hasRaw(raw)) return false;
    const text = this.text;
    const s = this.startOf(raw) ?? text.length;
    let i = s;
    while (text.charCodeAt(i) === 32) i++;
    const ch = text.charCodeAt(i);
    return i - s <= c && i < text.length && ch !== 10 && ch !== 13;
  }

  /**
   * The span of the node that started at raw line `first` and was just read (`pos` is past it), for reuse
   * (see `FragmentVerifier.nodeAt`): whole raw lines from the start of its first to the end of its last
   * structural line. Undefined where a span would not prove the node: it does not end as `endsNode` says, its last
   * line has no line break, or it read raw lines (a block scalar or a flow collection over several lines read since
   * `reads`) and the raw line after the span does not end such reads (`endsRawReads`: a block scalar whose last
   * lines look like comments, or are blank, reads past the node's last structural line).
   */
  protected spanOf(
    first: number,
    reads: number,
    c: number,
    indentlessSeq: boolean,
    seqNode: boolean,
  ): ProvenSpan | undefined {
    const raw = this.rawReads !== reads;
    const next = this.line(this.pos);
    if (!this.endsNode(next, c, seqNode)) return undefined;
    // The node's last line: the structural line before the next one (comments after it are not its own): the last
    // one scanned, or the last line of a span stepped over after it (a span ends with a structural line).
    const lastLine = this.lines[this.pos - 1];
    if (lastLine === undefined) return undefined;
    const last = Math.max(lastLine.index, this.skippedTo - 1);
    const end = this.startOf(last + 1);
    if (end === undefined || (raw && !this.endsRawReads(last + 1, c))) return undefined;
    const start = this.startOf(first) ?? 0;
    // A copy, not a slice: a slice would keep the whole text it was cut from alive for as long as the span.
    const text = `${this.text.slice(start, end)} `.slice(0, -1);
    // Every start up to `end` is found (`startOf` finds them in order).
    const ends: number[] = [];
    for (let i = first + 1; i <= last + 1; i++) ends.push((this.starts[i] ?? start) - start);
    return { text, lines: last + 1 - first, column: c, indentlessSeq, raw, ends };
  }

  /**
   * Whether `span` stands at the start of raw line `first`, is read the same way (column `c`, `indentlessSeq`)
   * and ends the node there (`endsNode`), and, for a span whose node read raw lines, the raw line after it ends
   * those reads (`endsRawReads`); if so, moves past it (counting a raw read, so that a span around it is checked
   * the same way).
   */
  protected skipSpan(span: ProvenSpan, first: number, c: number, indentlessSeq: boolean, seqNode: boolean): boolean {
    if (span.column !== c || span.indentlessSeq !== indentlessSeq) return false;
    const from = this.startOf(first);
    const after = first + span.lines;
    const starts = this.starts;
    if (from === undefined || (after >= starts.length && this.ended)) return false;
    // Where the lines after it start is known: the span's lines must end where its last line ends here. Compared
    // first, it refuses a span of another length without cutting the text.
    if (after < starts.length && starts[after] !== from + span.text.length) return false;
    // `substr` and `!==` rather than `startsWith`: V8 compares equal strings as memory, `startsWith` character by character.
    if (this.text.substr(from, span.text.length) !== span.text) return false;
    // The span's text stands at `from`, the start of raw line `first`: its lines start here where they start in it.
    for (let i = starts.length; i <= after; i++) starts.push(from + (span.ends[i - first - 1] ?? 0));
    if (span.raw && !this.endsRawReads(after, c)) return false;
    if (!this.endsNode(this.peekFrom(after), c, seqNode)) return false;
    if (span.raw) this.rawReads++;
    this.skipTo(after);
    return true;
  }

  /**
   * Structural line `p` (already read) seen as its `- ` entry's content: `text` at column `indent`, the same raw line.
   * Changed in place (no new line object per entry): a reader holding the line uses only its `index` after this.
   */
  protected replaceLine(p: number, indent: number, text: string): void {
    const l = this.lines[p];
    if (l === undefined) return;
    l.indent = indent;
    l.text = text;
  }

  /** Raw line `index` as a structural line, or undefined for a blank or comment-only one. */
  private scanLine(index: number): Line | undefined {
    const text = this.text;
    const s = this.startOf(index) ?? text.length;
    const next = this.startOf(index + 1);
    let e = next !== undefined ? next - 1 : text.length;
    if (e > s && text.charCodeAt(e - 1) === 13 /* \r */) e--;
    let i = s;
    while (i < e && text.charCodeAt(i) === 32) i++;
    if (i === e || text.charCodeAt(i) === 35 /* # */) return undefined;
    const t = text.slice(i, e);
    // A document marker (`---`, `...`, `--- x`) or a directive (`%`): only a line starting with `-`, `.` or `%` can be one.
    const c = text.charCodeAt(i);
    if (c === 37 || ((c === 45 || c === 46) && (t === '---' || t === '...' || t.startsWith('--- ')))) decline();
    return { indent: i - s, text: t, index };
  }

  /** Raw line `i` (`hasRaw(i)`), without its line break (a `\r` before it is kept). */
  protected rawLine(i: number): string {
    const s = this.startOf(i) ?? this.text.length;
    const next = this.startOf(i + 1);
    return this.text.slice(s, next !== undefined ? next - 1 : this.text.length);
  }

  /** Index of the `:` that ends a block mapping key, or -1. */
  protected keyEnd(t: string): number {
    const c = t[0];
    if (c === '"' || c === "'") {
      const close = quoteEnd(t, 0, t.length);
      return t[close + 1] === ':' && (close + 2 === t.length || t[close + 2] === ' ') ? close + 1 : -1;
    }
    if (
      (c !== undefined && NOT_PLAIN_START.has(c)) ||
      ((c === '-' || c === '?' || c === ':') && (t.length === 1 || t[1] === ' '))
    )
      return -1;
    for (let i = 0; i < t.length; i++) {
      const ch = t[i];
      if (ch === ':' && (i + 1 === t.length || t[i + 1] === ' ')) return i;
      if (ch === ' ' && t[i + 1] === '#') return -1;
    }
    return -1;
  }

  protected key(k: string): string {
    if (k[0] === '"' || k[0] === "'") return String(this.quoted(k));
    const v = this.rules.resolve(k.trimEnd());
    return v === null ? '' : String(v);
  }

  /** A quoted scalar that is the whole of `t` (trailing comment allowed). */
  protected quoted(t: string): string {
    const end = quoteEnd(t, 0, t.length);
    if (!ONLY_COMMENT.test(t.slice(end + 1))) decline();
    return unquote(t, 0, end);
  }

  /** The value after `key: ` or `- ` on one line, or a block scalar starting there. */
  protected inlineValue(t: string, line: Line, indent: number): Json {
    const c = t[0];
    if (c === '"' || c === "'") return this.quoted(t);
    if (c === '{' || c === '[') return this.flow(this.flowText(t, line, indent));
    if (c === '|' || c === '>') return this.blockScalar(t, line, indent);
    // Indicators cannot start a plain scalar; `- x`, `? x` and `: x` are not scalars.
    if (
      (c !== undefined && NOT_PLAIN_START.has(c)) ||
      ((c === '-' || c === '?' || c === ':') && (t.length === 1 || t[1] === ' '))
    )
      decline();
    const hash = t.indexOf(' #');
    const s = (hash >= 0 ? t.slice(0, hash) : t).trimEnd();
    if (s.includes(': ') || s.endsWith(':')) decline();
    // A plain scalar continued on more-indented lines is a multi-line scalar: not handled here.
    const next = this.line(this.pos);
    if (next && next.indent > indent) decline();
    return this.rules.resolve(s);
  }

  protected blockScalar(header: string, line: Line, parentIndent: number): string {
    this.rawReads++;
    const m = /^([|>])([-+]?)(?:\s+#.*)?\s*$/.exec(header);
    if (!m) decline();
    const folded = m[1] === '>';
    const chomp = m[2];
    // Consume raw lines (including blank and comment-looking ones) more indented than the parent.
    const body: string[] = [];
    let i = line.index + 1;
    let blockIndent = -1;
    for (; this.hasRaw(i); i++) {
      const l = withoutCr(this.rawLine(i));
      if (l.trim() === '') {
        // Spaces past the block's indentation are content; before the first text line they are left to yaml.
        if (blockIndent < 0 && l !== '') decline();
        body.push(l.length > blockIndent ? l.slice(blockIndent) : '');
        continue;
      }
      let ind = 0;
      while (l.charCodeAt(ind) === 32) ind++;
      if (blockIndent < 0) {
        if (ind <= parentIndent) break;
        blockIndent = ind;
      }
      if (ind < blockIndent) break;
      body.push(l.slice(blockIndent));
    }
    // Trailing blank lines belong to chomping; drop the parsed lines we consumed.
    while ((this.line(this.pos)?.index ?? i) < i) this.pos++;
    let trailing = 0;
    while (body.length && body[body.length - 1] === '') {
      body.pop();
      trailing++;
    }
    if (folded) decline();
    let text = body.join('\n');
    if (chomp === '-') return text;
    if (body.length === 0) return '';
    text += '\n';
    if (chomp === '+') text += '\n'.repeat(trailing);
    return text;
  }

  /**
   * The text of a flow collection that starts on `line` with `t`, joined with the following lines until
   * its brackets balance (outside quotes); consumed lines are skipped by the block reader.
   */
  protected flowText(t: string, line: Line, parentIndent: number): string {
    let depth = 0;
    let quote = '';
    let acc = '';
    let text = t;
    let idx = line.index;
    for (;;) {
      let cut = text.length;
      for (let i = 0; i < text.length; i++) {
        const ch = text[i];
        if (quote) {
          if (ch === '\\' && quote === '"') i++;
          else if (ch === quote) quote = '';
        } else if (ch === '"' || ch === "'") quote = ch;
        else if (ch === '{' || ch === '[') depth++;
        else if (ch === '}' || ch === ']') depth--;
        else if (ch === '#' && (i === 0 || text[i - 1] === ' ')) {
          cut = i;
          break;
        }
      }
      acc += (acc ? ' ' : '') + text.slice(0, cut).trim();
      if (depth === 0) break;
      // A comment inside the collection ends a plain scalar there, which yaml alone reads right.
      if (cut < text.length) decline();
      if (quote) decline();
      this.rawReads++;
      idx++;
      if (!this.hasRaw(idx)) decline();
      const raw = withoutCr(this.rawLine(idx));
      text = raw.trim();
      // Continuation lines are indented past the parent (`yaml`: "must be sufficiently indented"); only the
      // line that closes the collection may stand at the parent's column (`annotations: {` ... `}`).
      let ind = 0;
      while (raw.charCodeAt(ind) === 32) ind++;
      if (raw.charCodeAt(ind) === 9) decline();
      // A blank or comment line inside would end or fold a plain scalar that spans lines: left to yaml.
      if (text === '' || text[0] === '#') decline();
      if (ind <= parentIndent && !(ind === parentIndent && depth === 1 && (text[0] === '}' || text[0] === ']')))
        decline();
    }
    while ((this.line(this.pos)?.index ?? idx + 1) <= idx) this.pos++;
    return acc;
  }

  /** A flow collection joined onto one line by `flowText` (`readFlow`, then nothing but a comment). */
  protected flow(t: string): Json {
    const { value, node } = readFlow(t, 0, t.length, 0, this.rules);
    if (!ONLY_COMMENT.test(t.slice(node.end))) decline();
    return value;
  }
}

/** `l` without one `\r` at its end (`l.replace(/\r$/, '')` without the regex). */
function withoutCr(l: string): string {
  return l.charCodeAt(l.length - 1) === 13 ? l.slice(0, -1) : l;
}

/** Whether a structural line is a block sequence entry (`-` alone or `- ` and more). */
export function isEntry(t: string): boolean {
  return t === '-' || t.startsWith('- ');
}
