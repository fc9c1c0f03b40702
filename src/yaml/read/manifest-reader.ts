import type { Json } from '../../model.ts';
import type { TextMap, TextNode, TextPair, TextScalar, TextSeq } from './text-node.ts';
import {
  COLON,
  CR,
  DASH,
  DOT,
  Declined,
  HASH,
  MAX_DEPTH,
  NOT_PLAIN_START,
  SPACE,
  TAB,
  closeOnLine,
  decline,
  quoteEnd,
  readFlow,
  seqEntryAt,
  unquote,
} from './scan.ts';
import { PlainCache } from './plain-cache.ts';
import { plainContinued, plainLineEnd, quotedContinued } from './multiline-scalars.ts';

/**
 * One document of a YAML stream read by `readBlockStream`: its root as data and as a text tree, or both
 * null for a document with no content (only comments, or nothing between two `---`).
 */
export interface BlockDocument {
  value: Json;
  node: TextNode | null;
}

/**
 * A document `readBlockStream` leaves to the `yaml` package, by its text: from its `---` line (or its first
 * line, for a document without one) to the next line that is a `---` marker (or the end of the input).
 */
export interface DeclinedDocument {
  declined: { from: number; to: number };
}

/**
 * A fast reader for the YAML that Kubernetes manifests are written in: block mappings and sequences
 * (either list indentation), plain, single- and double-quoted scalars (values also wrapped over lines:
 * multiline-scalars.ts), `|` and `>` block scalars, one-line flow collections, comments, blank lines, CRLF
 * line ends and `---` document separators. Plain scalars resolve with the YAML 1.2 core schema, as the
 * `yaml` package does by default; it
 * declines those the Kubernetes reading reads otherwise (`0644`, `1_000`), and reads the YAML 1.1 booleans
 * (`yes`, `on`) as the strings both readings give (`resolveManifestPlain` of ../scalars.ts).
 *
 * It reads the whole stream in one pass over the text, building each document's data and `TextNode`
 * tree together. Where a document uses anything else (anchors, aliases, tags, explicit keys, wrapped scalars
 * multiline-scalars.ts leaves, multi-line flow collections, tabs outside block scalars, duplicate keys, `<<` or
 * `__proto__` keys, keys that are not strings, and everything that is not valid YAML) it declines that
 * document: it is given by its text (`DeclinedDocument`) for the caller to read with the `yaml` package,
 * which also gives the error messages, and the documents around it are still read. It declines the whole
 * input (undefined) for what concerns more than one document: directives, a `...` marker between read
 * documents, control characters. What it accepts it reads exactly as `yaml`'s `parseAllDocuments(text)` +
 * `toJS()` does and as the Kubernetes reading does (readers.ts; test/yaml/manifest-reader*.test.ts).
 *
 * A declined document ends where the next line is `---` at column 0 followed by a space, a tab or the line's
 * end: YAML allows no such line inside a document (its `c-forbidden` rule). The caller parses each declined
 * document's text alone and must find exactly one document there (src/krm/source.ts, `mixedStream`).
 *
 * @param text the input text (without a byte order mark)
 * @returns the documents in order, or undefined when the fast reader declines the whole input
 */
export function readBlockStream(text: string): Array<BlockDocument | DeclinedDocument> | undefined {
  try {
    return new BlockReader(text).stream();
  } catch (e) {
    if (e instanceof Declined) return undefined;
    throw e;
  }
}

class BlockReader {
  private readonly text: string;
  private readonly n: number;
  /** The current line: its start, indentation, first content character, content end (before `\r\n`), next line. */
  private ls = 0;
  private ind = 0;
  private cs = 0;
  private ce = 0;
  private nx = 0;
  /** Nesting depth of the collection being read (deeper inputs are left to `yaml`'s limits and errors). */
  private depth = 0;
  /** Set before declining for what concerns the whole input (see `readBlockStream`). */
  private whole = false;
  /** The data value of the node the last `block`/`map`/`seq`/`afterIndicator`/`inline` call returned. */
  private val: Json = null;
  /**
   * Entries of the collections being read (a nested one's above its parent's), copied out at their exact length
   * when a collection ends: an array grown by `push` has room for 17, most mappings have one to three entries
   * (that room was half the text tree's memory). `pairTop`/`itemTop`: the heights; entries above are stale.
   */
  private readonly pairStack: TextPair[] = [];
  private pairTop = 0;
  private readonly itemStack: TextNode[] = [];
  private readonly valueStack: Json[] = [];
  private itemTop = 0;
  /** Short plain scalars read before, with their values. */
  private readonly plains: PlainCache;

  constructor(text: string) {
    this.text = text;
    this.n = text.length;
    this.plains = new PlainCache(text);
    // Control characters and a carriage return that does not end a line are left to `yaml`.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: YAML's character sets (YAML 1.2 §5.1, c-printable) are defined by control characters
    if (/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff]|\r(?!\n)/.test(text)) decline();
    this.load(0);
  }

  private load(p: number): void {
    const { text } = this;
    this.ls = p;
    let i = p;
    while (text.charCodeAt(i) === SPACE) i++;
    this.ind = i - p;
    this.cs = i;
    let le = text.indexOf('\n', i);
    if (le < 0) le = this.n;
    this.nx = le < this.n ? le + 1 : this.n;
    if (text.charCodeAt(le - 1) === CR && le - 1 >= i) le--;
    this.ce = le;
  }

  private get eof(): boolean {
    return this.ls >= this.n;
  }

  /** Skips blank and comment-only lines; a tab in a line's indentation (even an empty line's) is declined. */
  private skipEmpty(): void {
    const { text } = this;
    while (this.ls < this.n) {
      const c = text.charCodeAt(this.cs);
      if (c === TAB && this.cs < this.ce) decline();
      if (this.cs < this.ce && c !== HASH) return;
      this.load(this.nx);
    }
  }

  /** Whether the current line is a `---` or `...` marker (`---` ends a document; `...` is declined). */
  private atDocMarker(): boolean {
    if (this.ind !== 0) return false;
    const { text, cs } = this;
    // Three `-` or three `.` (a line's end, `\r` or `\n`, is neither).
    const m = text.charCodeAt(cs);
    if ((m !== DASH && m !== DOT) || text.charCodeAt(cs + 1) !== m || text.charCodeAt(cs + 2) !== m) return false;
    const after = text.charCodeAt(cs + 3);
    if (cs + 3 < this.ce && after !== SPACE && after !== TAB) return false;
    if (m === DOT) this.declineWhole();
    return true;
  }

  private declineWhole(): never {
    this.whole = true;
    return decline();
  }

  /**
   * Start of the first line after the one at `from` that is a `---` marker (as `atDocMarker` reads one), or
   * the end of the input. (A `...` marker and a document after it stay in the declined text, which then holds
   * two documents: the caller reads the whole input with the `yaml` package.)
   */
  private nextMarker(from: number): number {
    const { text, n } = this;
    for (let p = text.indexOf('\n', from); p >= 0 && p + 1 < n; p = text.indexOf('\n', p + 1)) {
      if (!text.startsWith('---', p + 1)) continue;
      const after = text.charCodeAt(p + 4);
      if (p + 4 < n && after !== SPACE && after !== TAB && after !== CR && after !== 10 /* \n */) continue;
      return p + 1;
    }
    return n;
  }

  /** Whether the current line's content is a block sequence entry (`- ...` or a lone `-`). */
  private atSeqEntry(): boolean {
    if (this.text.charCodeAt(this.cs) !== DASH) return false;
    const after = this.text.charCodeAt(this.cs + 1);
    return this.cs + 1 >= this.ce || after === SPACE || after === TAB;
  }

  /** The documents of the input; a declined one is given by its text, and reading goes on at the next `---` line. */
  stream(): Array<BlockDocument | DeclinedDocument> {
    const docs: Array<BlockDocument | DeclinedDocument> = [];
    let open = false;
    // Where the current document's text starts: its `---` line, or its first line when it has none.
    let from = 0;
    for (;;) {
      if (!open) from = this.ls;
      try {
        this.skipEmpty();
        if (this.eof) break;
        if (this.text.charCodeAt(this.cs) === 37 /* % */) this.declineWhole();
        if (this.atDocMarker()) {
          if (open) docs.push({ value: null, node: null });
          open = true;
          from = this.ls;
          // `--- # comment` is fine; content after `---` on the same line is declined.
          const rest = this.text.slice(this.cs + 3, this.ce).trim();
          if (rest !== '' && rest[0] !== '#') decline();
          this.load(this.nx);
          continue;
        }
        if (this.ind !== 0) decline();
        const node = this.block(0);
        const value = this.val;
        this.skipEmpty();
        if (!this.eof && !this.atDocMarker()) decline();
        docs.push({ value, node });
        open = false;
      } catch (e) {
        if (!(e instanceof Declined) || this.whole) throw e;
        const to = this.nextMarker(from);
        docs.push({ declined: { from, to } });
        open = false;
        this.depth = 0;
        this.pairTop = 0;
        this.itemTop = 0;
        this.load(to);
      }
    }
    if (open) docs.push({ value: null, node: null });
    return docs;
  }

  /** A block mapping or sequence whose lines start at the current line's indentation (at least `min`). */
  private block(min: number): TextNode {
    if (this.ind < min) decline();
    return this.atSeqEntry() ? this.seq(this.ind) : this.map(this.ind);
  }

  /** Index of the `:` ending a plain block mapping key that starts at `from`, or -1. */
  private plainKeyColon(from: number): number {
    const { text, ce } = this;
    const c = text.charAt(from);
    if (
      NOT_PLAIN_START.has(c) ||
      ((c === '-' || c === '?' || c === ':') && (from + 1 >= ce || text.charCodeAt(from + 1) === SPACE))
    )
      return -1;
    for (let i = from; i < ce; i++) {
      const ch = text.charCodeAt(i);
      if (ch === COLON) {
        const nextCh = text.charCodeAt(i + 1);
        if (i + 1 >= ce || nextCh === SPACE) return i;
      } else if (ch === HASH && text.charCodeAt(i - 1) === SPACE) return -1;
      else if (ch === TAB) decline();
    }
    return -1;
  }

  private map(indent: number): TextMap {
    const { text } = this;
    if (++this.depth > MAX_DEPTH) decline();
    const value: { [k: string]: Json } = {};
    const base = this.pairTop;
    let outerEnd = this.cs;
    for (;;) {
      this.skipEmpty();
      if (this.eof || this.ind < indent || this.atDocMarker()) break;
      if (this.ind > indent || this.atSeqEntry()) decline();
      const ks = this.cs;
      let key: string;
      let keyEnd: number;
      let colon: number;
      const q = text.charCodeAt(ks);
      if (q === 34 || q === 39) {
        const close = quoteEnd(this.text, ks, this.ce);
        key = unquote(this.text, ks, close);
        keyEnd = close + 1;
        colon = keyEnd;
        if (text.charCodeAt(colon) !== COLON || (colon + 1 < this.ce && text.charCodeAt(colon + 1) !== SPACE))
          decline();
      } else {
        colon = this.plainKeyColon(ks);
        if (colon < 0) decline();
        keyEnd = colon;
        while (text.charCodeAt(keyEnd - 1) === SPACE) keyEnd--;
        // A key must read as the string it is written as (numbers, null, 1.1 look-alikes but booleans: declined).
        const resolved = this.plains.read(ks, keyEnd);
        key = this.plains.last;
        if (resolved !== key) decline();
      }
      if (keyEnd - ks > 1024 || key === '<<' || key === '__proto__' || Object.hasOwn(value, key)) decline();
      const keyNode: TextScalar = {
        t: 'scalar',
        style: q === 34 ? 'double' : q === 39 ? 'single' : 'plain',
        start: ks,
        end: keyEnd,
        outerEnd: keyEnd,
      };
      const node = this.afterIndicator(colon + 1, indent, true);
      value[key] = this.val;
      this.pairStack[this.pairTop] = { key, keyNode, value: node };
      this.pairTop++;
      outerEnd = node.outerEnd;
    }
    const pairs = this.pairStack.slice(base, this.pairTop);
    this.pairTop = base;
    const firstPair = pairs[0];
    if (firstPair === undefined) decline();
    this.depth--;
    const start = firstPair.keyNode.start;
    this.val = value;
    return { t: 'map', flow: false, pairs, start, end: outerEnd, outerEnd };
  }

  private seq(indent: number): TextSeq {
    const base = this.itemTop;
    const start = this.cs;
    let outerEnd = start;
    if (++this.depth > MAX_DEPTH) decline();
    for (;;) {
      this.skipEmpty();
      if (this.eof || this.ind < indent || this.atDocMarker()) break;
      if (this.ind > indent) decline();
      if (!this.atSeqEntry()) break;
      const node = this.afterIndicator(this.cs + 1, indent, false);
      this.valueStack[this.itemTop] = this.val;
      this.itemStack[this.itemTop] = node;
      this.itemTop++;
      outerEnd = node.outerEnd;
    }
    const items = this.itemStack.slice(base, this.itemTop);
    this.val = this.valueStack.slice(base, this.itemTop);
    this.itemTop = base;
    this.depth--;
    return { t: 'seq', flow: false, items, start, end: outerEnd, outerEnd };
  }

  /**
   * The value after a mapping's `:` or a sequence's `-` (`inMap` false) at `at` on the current line, whose
   * parent block collection is at `indent`: inline on this line, or a block collection on the following lines.
   */
  private afterIndicator(at: number, indent: number, inMap: boolean): TextNode {
    const { text } = this;
    let i = at;
    while (text.charCodeAt(i) === SPACE) i++;
    if (i < this.ce && text.charCodeAt(i) === TAB) decline();
    if (i >= this.ce || (text.charCodeAt(i) === HASH && i > at)) {
      // Nothing on this line: a nested block collection, a compact sequence under a key, or null.
      const lineEnd = this.nx;
      this.load(this.nx);
      this.skipEmpty();
      if (!this.eof && !this.atDocMarker()) {
        if (this.ind > indent) return this.block(indent + 1);
        if (inMap && this.ind === indent && this.atSeqEntry()) return this.seq(indent);
      }
      this.val = null;
      return { t: 'scalar', style: 'plain', start: i, end: i, outerEnd: lineEnd };
    }
    if (!inMap) {
      // `- key: value` starts a compact mapping at the column of `key`; `- - x` is declined.
      if (seqEntryAt(text, i, this.ce)) decline();
      const c = text.charCodeAt(i);
      if (c !== 34 && c !== 39 && c !== 123 && c !== 91 && this.plainKeyColon(i) >= 0) {
        this.ind = i - this.ls;
        this.cs = i;
        return this.map(this.ind);
      }
      const close = c === 34 || c === 39 ? closeOnLine(text, i, this.ce) : -1;
      if (close >= 0 && text.charCodeAt(close + 1) === COLON) {
        this.ind = i - this.ls;
        this.cs = i;
        return this.map(this.ind);
      }
    }
    return this.inline(i, indent);
  }

  /** An inline value at `i` (a scalar, a block scalar or a one-line flow collection); moves to the next line. */
  private inline(i: number, indent: number): TextNode {
    const { text } = this;
    const c = text.charCodeAt(i);
    let value: Json;
    let node: TextNode;
    if (c === 124 || c === 62) return this.blockScalar(i, indent);
    if (c === 34 || c === 39) {
      const onLine = closeOnLine(text, i, this.ce);
      const multi = onLine < 0 ? quotedContinued(text, i, indent) : undefined;
      const close = multi ? multi.close : onLine;
      value = multi ? multi.value : unquote(text, i, close);
      node = { t: 'scalar', style: c === 34 ? 'double' : 'single', start: i, end: close + 1, outerEnd: 0 };
      if (multi) this.load(text.lastIndexOf('\n', close) + 1);
      this.lineRest(close + 1);
    } else if (c === 123 || c === 91) {
      const f = readFlow(this.text, i, this.ce, this.depth);
      value = f.value;
      node = f.node;
      this.lineRest(node.end);
    } else {
      if (
        NOT_PLAIN_START.has(text.charAt(i)) ||
        ((c === DASH || c === 63 || c === COLON) && (i + 1 >= this.ce || text.charCodeAt(i + 1) === SPACE))
      )
        decline();
      const { end: e, commented } = plainLineEnd(text, i, this.ce);
      const more = commented ? undefined : plainContinued(text, i, e, this.nx, indent);
      const v = more ? more.value : this.plains.read(i, e);
      if (v === undefined) decline();
      value = v;
      node = { t: 'scalar', style: 'plain', start: i, end: more ? more.end : e, outerEnd: 0 };
      if (more) this.load(text.lastIndexOf('\n', more.end - 1) + 1);
    }
    node.outerEnd = this.nx;
    this.load(this.nx);
    // A more-indented content line after an inline value would continue it (a multi-line scalar) or be an error.
    this.skipEmpty();
    if (!this.eof && this.ind > indent) decline();
    this.val = value;
    return node;
  }

  /** After a quoted scalar or flow collection ending at `from`: only spaces and a comment may follow. */
  private lineRest(from: number): void {
    const { text } = this;
    let i = from;
    while (text.charCodeAt(i) === SPACE) i++;
    if (i < this.ce && !(text.charCodeAt(i) === HASH && i > from)) decline();
  }

  /**
   * A `|` or `>` block scalar whose header is at `i`; its content is the following lines indented more than
   * `indent`. Indentation indicators, and folded scalars with more-indented lines, are declined.
   *
   * Long by design: parser (YAML 1.2 block scalars, spec chapter 8.1).
   */
  private blockScalar(i: number, indent: number): TextNode {
    const { text } = this;
    const folded = text.charCodeAt(i) === 62;
    let h = i + 1;
    const chomp = text[h] === '-' || text[h] === '+' ? text[h] : '';
    if (chomp) h++;
    // Only spaces and a comment may follow the header (an indentation indicator is declined).
    if (h < this.ce && text.charCodeAt(h) !== SPACE) decline();
    this.lineRest(h);
    const lines: string[] = [];
    let blockIndent = -1;
    let leadingSpaces = 0;
    let end = this.nx;
    let trailingBlank = 0;
    for (this.load(this.nx); !this.eof; this.load(this.nx)) {
      if (this.cs >= this.ce) {
        // An empty line; spaces beyond the content indentation are content.
        if (blockIndent >= 0 && this.ind > blockIndent) {
          if (folded) decline();
          lines.push(text.slice(this.ls + blockIndent, this.ce));
          trailingBlank = 0;
          end = this.nx;
        } else {
          if (blockIndent < 0) leadingSpaces = Math.max(leadingSpaces, this.ind);
          lines.push('');
          trailingBlank++;
        }
        continue;
      }
      if (blockIndent < 0) {
        if (this.ind <= indent) break;
        blockIndent = this.ind;
        // A leading empty line longer than the content indentation is an error in YAML.
        if (leadingSpaces > blockIndent) decline();
      }
      if (this.ind < blockIndent) break;
      const line = text.slice(this.ls + blockIndent, this.ce);
      const first = line.charCodeAt(0);
      // Folding keeps more-indented lines as they are: declined, as are tabs at the content indentation.
      if (first === TAB && (folded || this.ind < blockIndent)) decline();
      if (folded && first === SPACE) decline();
      lines.push(line);
      trailingBlank = 0;
      end = this.nx;
    }
    if (blockIndent < 0) {
      // No content: the scalar is empty and spans the empty lines.
      if (leadingSpaces > indent) decline();
      end = this.ls;
    }
    if (chomp === '+' && trailingBlank > 0) decline();
    const content = blockIndent < 0 ? [] : lines.slice(0, lines.length - trailingBlank);
    let value = '';
    if (folded) {
      for (const [k, l] of content.entries()) {
        if (l === '') value += '\n';
        else if (k > 0 && content[k - 1] !== '') value += ' ';
        value += l;
      }
    } else {
      value = content.join('\n');
    }
    if (content.length > 0 && chomp !== '-') value += '\n';
    // The cursor is on the first line after the content (or at the end).
    if (!this.eof && this.ind > indent) decline();
    this.val = value;
    return { t: 'scalar', style: 'block', start: i, end, outerEnd: end };
  }
}
