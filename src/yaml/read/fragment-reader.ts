import { parse } from 'yaml';
import type { Json } from '../../model.ts';
import { isJsonObject, isShared } from '../../json.ts';
import { FRAGMENT_YAML_OPTIONS } from './readers.ts';
import {
  Declined,
  NOT_PLAIN_START,
  decline,
  quoteEnd,
  readFlow,
  resolveGo11,
  unquote,
  type FlowRules,
} from './scan.ts';

/**
 * Reads the block YAML that driver templates render (the hot path of injection: one fragment per
 * workload) as Istio's injector reads it: YAML 1.1 as Go's sigs.k8s.io/yaml does (`yes`/`on` are booleans,
 * `0x1f` and `017` numbers; the rules are in `scalars.ts`), i.e. `yaml`'s `parse(text, FRAGMENT_YAML_OPTIONS)`.
 * The fast reader (`readFragmentFast`) reads the subset templates produce and declines the rest, which
 * `yaml` reads instead. Returns the document's data (null for an empty text).
 *
 * @throws the `yaml` package's error for text that is not YAML
 */
export function parseFragment(text: string): Json {
  const fast = readFragmentFast(text);
  return fast !== undefined ? fast : (parse(text, FRAGMENT_YAML_OPTIONS) as Json);
}

/**
 * The fast fragment reader: the data of `text`, or `undefined` where it declines. It reads block maps and
 * sequences, plain / single- / double-quoted scalars, `|` literal block scalars (any chomping), flow
 * collections (`readFlow`, trailing commas allowed, spread over lines), comments and blank lines.
 *
 * It declines (the decline list, pinned by test/yaml/fragment-reader.test.ts): anchors, aliases and tags
 * (`&`, `*`, `!`), explicit keys (`?`), directives and document markers (`%`, `---`, `...`), tabs in
 * indentation, multi-line plain or quoted scalars, `>` folded block scalars and block scalars with an
 * indentation indicator, `<<` merge keys and duplicate keys in flow collections, implicit nulls in flow
 * (`{a}`), keys in flow that are not strings, plain scalars whose readers disagree or that JSON cannot
 * hold exactly (`0x1f`, `0644`, `1_000`, `1:20`, `.inf`, integers beyond 2^53: `scalars.ts`), and any
 * structure it does not recognise (wrong indentation, `a: b: c`, text after a flow collection).
 */
export function readFragmentFast(text: string): Json | undefined {
  try {
    return new FastReader(text).document();
  } catch (e) {
    if (e instanceof Declined) return undefined;
    throw e;
  }
}

/** Flow collections in templates: YAML 1.1 as Go reads it, trailing commas allowed (`{a: "1",}`). */
const FRAGMENT_FLOW: FlowRules = { resolve: resolveGo11, trailingComma: true };

/** What may follow a value on its line: spaces, then perhaps a comment (a `#` after a space). */
const ONLY_COMMENT = /^(?: *| +#.*)$/;

/** `t` from `from` on, past any spaces there (`t.slice(from).replace(/^ +/, '')` without the regex). */
function afterSpaces(t: string, from: number): string {
  let i = from;
  while (t.charCodeAt(i) === 32) i++;
  return i === 0 ? t : t.slice(i);
}

interface Line {
  indent: number;
  /** Content after the indentation, without a trailing comment-only remainder. */
  text: string;
  /** Index of the line in the source (for block scalars). */
  index: number;
}

/**
 * The line table and the one-line pieces (keys, scalars, block scalars, flow collections) shared by the
 * reader (`FastReader`) and the verifier (`FragmentVerifier`), which walk the block structure the same way.
 */
abstract class LineReader {
  /** The text, and where each of its raw lines starts (lines are sliced only when a block scalar or a flow needs them). */
  protected readonly text: string;
  protected readonly starts: number[] = [];
  /** Block scalars and flow collections over several lines read so far: both read raw lines, blank ones too. */
  protected rawReads = 0;
  /** How many raw lines count (a last line of spaces after the final line break does not). */
  protected readonly rawCount: number;
  /** The structural lines, in order. */
  private readonly lines: Line[] = [];
  protected pos = 0;

  constructor(text: string) {
    // Tabs (as indentation, as separation, or in text) are left to yaml: one scan of the whole text.
    if (text.includes('\t')) decline();
    this.text = text;
    const starts = this.starts;
    for (let at = 0; ; ) {
      starts.push(at);
      const nl = text.indexOf('\n', at);
      if (nl < 0) break;
      at = nl + 1;
    }
    // The text's final line break ends its last line: it does not start an empty one (`|+` keeps empty lines).
    // Nor does a last line of spaces without a line break after it.
    let count = starts.length;
    if (count > 1 && /^ *$/.test(text.slice(starts[count - 1]))) count--;
    this.rawCount = count;
    for (let index = 0; index < count; index++) {
      const l = this.scanLine(index);
      if (l) this.lines.push(l);
    }
  }

  /** Structural line `p` (not blank, not only a comment); undefined past the last line. */
  protected line(p: number): Line | undefined {
    return this.lines[p];
  }

  /** The first structural line at raw line `raw` or after (`pos` and before are not looked at). */
  protected peekFrom(raw: number): Line | undefined {
    let p = this.pos;
    while (p < this.lines.length && this.lines[p]!.index < raw) p++;
    return this.lines[p];
  }

  /** Moves `pos` to the first structural line at raw line `raw` or after. */
  protected skipTo(raw: number): void {
    while (this.pos < this.lines.length && this.lines[this.pos]!.index < raw) this.pos++;
  }

  /**
   * Whether structural line `next` (undefined: the end of the text) ends a node at column `c` (its keys' column,
   * or its dashes' for a block sequence): a line left of `c`, or, after a sequence, one at `c` that is not an entry.
   */
  protected endsNode(next: Line | undefined, c: number, seqNode: boolean): boolean {
    return next === undefined || next.indent < c || (seqNode && next.indent === c && !isEntry(next.text));
  }

  /**
   * The span of the node that started at raw line `first` and was just read (`pos` is past it), for reuse
   * (see `FragmentVerifier.nodeAt`): whole raw lines from the start of its first to the end of its last
   * structural line. Undefined where a span would not prove the node: the node read raw lines past its own
   * (a block scalar or a flow collection over several lines read since `reads`), does not end as `endsNode`
   * says, or its last line has no line break.
   */
  protected spanOf(
    first: number,
    reads: number,
    c: number,
    indentlessSeq: boolean,
    seqNode: boolean,
  ): ProvenSpan | undefined {
    if (this.rawReads !== reads) return undefined;
    const next = this.line(this.pos);
    if (!this.endsNode(next, c, seqNode)) return undefined;
    // The node's last line: the structural line before the next one (comments after it are not its own).
    const last = this.lines[this.pos - 1]!.index;
    if (last + 1 >= this.starts.length) return undefined;
    // A copy, not a slice: a slice would keep the whole text it was cut from alive for as long as the span.
    const text = `${this.text.slice(this.starts[first]!, this.starts[last + 1])} `.slice(0, -1);
    return { text, lines: last + 1 - first, column: c, indentlessSeq };
  }

  /**
   * Whether `span` stands at the start of raw line `first`, is read the same way (column `c`, `indentlessSeq`)
   * and ends the node there (`endsNode`); if so, moves past it.
   */
  protected skipSpan(span: ProvenSpan, first: number, c: number, indentlessSeq: boolean, seqNode: boolean): boolean {
    if (span.column !== c || span.indentlessSeq !== indentlessSeq) return false;
    if (this.text.substr(this.starts[first]!, span.text.length) !== span.text) return false;
    const after = first + span.lines;
    if (!this.endsNode(this.peekFrom(after), c, seqNode)) return false;
    this.skipTo(after);
    return true;
  }

  /** Puts `l` in place of structural line `p` (already read): a `- ` entry's content seen at its own column. */
  protected replaceLine(p: number, l: Line): void {
    this.lines[p] = l;
  }

  /** Raw line `index` as a structural line, or undefined for a blank or comment-only one. */
  private scanLine(index: number): Line | undefined {
    const text = this.text;
    const s = this.starts[index]!;
    let e = index + 1 < this.starts.length ? this.starts[index + 1]! - 1 : text.length;
    if (e > s && text.charCodeAt(e - 1) === 13 /* \r */) e--;
    let i = s;
    while (i < e && text.charCodeAt(i) === 32) i++;
    if (i === e || text.charCodeAt(i) === 35 /* # */) return undefined;
    const t = text.slice(i, e);
    if (t === '---' || t === '...' || t.startsWith('--- ') || t[0] === '%') decline();
    return { indent: i - s, text: t, index };
  }

  /** Raw line `i` (0 ≤ i < rawCount), without its line break (a `\r` before it is kept). */
  protected rawLine(i: number): string {
    const s = this.starts[i]!;
    return this.text.slice(s, i + 1 < this.starts.length ? this.starts[i + 1]! - 1 : this.text.length);
  }

  /** Index of the `:` that ends a block mapping key, or -1. */
  protected keyEnd(t: string): number {
    const c = t[0];
    if (c === '"' || c === "'") {
      const close = quoteEnd(t, 0, t.length);
      return t[close + 1] === ':' && (close + 2 === t.length || t[close + 2] === ' ') ? close + 1 : -1;
    }
    if (NOT_PLAIN_START.has(c!) || ((c === '-' || c === '?' || c === ':') && (t.length === 1 || t[1] === ' ')))
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
    const v = resolveGo11(k.trimEnd());
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
    if (NOT_PLAIN_START.has(c!) || ((c === '-' || c === '?' || c === ':') && (t.length === 1 || t[1] === ' ')))
      decline();
    const hash = t.indexOf(' #');
    const s = (hash >= 0 ? t.slice(0, hash) : t).trimEnd();
    if (s.includes(': ') || s.endsWith(':')) decline();
    // A plain scalar continued on more-indented lines is a multi-line scalar: not handled here.
    const next = this.line(this.pos);
    if (next && next.indent > indent) decline();
    return resolveGo11(s);
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
    for (; i < this.rawCount; i++) {
      const l = this.rawLine(i).replace(/\r$/, '');
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
      if (idx >= this.rawCount) decline();
      const raw = this.rawLine(idx).replace(/\r$/, '');
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
    const { value, node } = readFlow(t, 0, t.length, 0, FRAGMENT_FLOW);
    if (!ONLY_COMMENT.test(t.slice(node.end))) decline();
    return value;
  }
}

/** Reads the block structure into data (`readFragmentFast`). */
class FastReader extends LineReader {
  document(): Json {
    const first = this.line(0);
    if (first === undefined) return null;
    const v = this.node(first.indent);
    if (this.line(this.pos) !== undefined) decline();
    return v;
  }

  /** A block node whose lines start at `indent` (or a scalar on its own line). */
  private node(indent: number): Json {
    const line = this.line(this.pos)!;
    if (line.indent !== indent) decline();
    if (line.text === '-' || line.text.startsWith('- ')) return this.seq(indent);
    if (this.keyEnd(line.text) >= 0) return this.map(indent);
    // A lone scalar or flow collection.
    this.pos++;
    return this.inlineValue(line.text, line, indent);
  }

  private seq(indent: number): Json[] {
    const out: Json[] = [];
    for (let line = this.line(this.pos); line !== undefined; line = this.line(this.pos)) {
      if (line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) {
        if (line.indent > indent) decline();
        break;
      }
      const rest = line.text === '-' ? '' : afterSpaces(line.text, 2);
      if (rest === '' || rest[0] === '#') {
        this.pos++;
        const next = this.line(this.pos);
        out.push(next && next.indent > indent ? this.node(next.indent) : null);
        continue;
      }
      // `- key: value` starts a compact map at the column of `key`; `- - x` a nested seq.
      const col = indent + (line.text.length - rest.length);
      this.replaceLine(this.pos, { indent: col, text: rest, index: line.index });
      if (rest === '-' || rest.startsWith('- ') || this.keyEnd(rest) >= 0) {
        out.push(this.node(col));
      } else {
        this.pos++;
        out.push(this.inlineValue(rest, line, indent));
      }
    }
    return out;
  }

  private map(indent: number): { [k: string]: Json } {
    const out: { [k: string]: Json } = {};
    for (let line = this.line(this.pos); line !== undefined; line = this.line(this.pos)) {
      if (line.indent !== indent) {
        if (line.indent > indent) decline();
        break;
      }
      const end = this.keyEnd(line.text);
      if (end < 0) decline();
      const key = this.key(line.text.slice(0, end));
      if (key === '<<' || key === '__proto__') decline();
      const rest = afterSpaces(line.text, end + 1);
      this.pos++;
      let value: Json;
      if (rest === '' || rest[0] === '#') {
        const next = this.line(this.pos);
        if (next && next.indent > indent) value = this.node(next.indent);
        else if (next && next.indent === indent && isEntry(next.text)) value = this.seq(indent);
        else value = null;
      } else {
        value = this.inlineValue(rest, line, indent);
      }
      out[key] = value;
    }
    return out;
  }
}

/**
 * Checks, without building the data, that the fast reader reads `text` as `expected`, as `same` compares
 * (`readsAs` of src/edit/read-back.ts: null map values mean absent). The read-back of every edited resource runs
 * this (issue #24: the read-back was a fifth of the injection's time, most of it building data only to
 * compare it).
 *
 * @returns true only when `readFragmentFast(text)` would read the whole text without declining and the
 *   result compares equal to `expected`; undefined for anything else (a difference, a decline, a key given
 *   twice), where the caller reads the text in full and decides
 */
export function verifyFragmentFast(
  text: string,
  expected: Json,
  same: (read: Json | undefined, expected: Json | undefined) => boolean,
): true | undefined {
  try {
    return new FragmentVerifier(text, same).document(expected) ? true : undefined;
  } catch (e) {
    if (e instanceof Declined) return undefined;
    throw e;
  }
}

/** A stretch of text proven to read as a shared subtree: whole raw lines, each ending with `\n`. */
interface ProvenSpan {
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
}

/**
 * Spans proven to read as a shared subtree (`isShared` of ../json.ts), per comparison and object (at most
 * `MAX_SPANS` each: a subtree is written at a few columns at most). A shared subtree is deep-frozen, so a
 * span proven once reads as it wherever the same span stands in the same way (see `nodeAt`).
 */
const PROVEN = new WeakMap<object, WeakMap<object, ProvenSpan[]>>();
const MAX_SPANS = 4;

function isEntry(t: string): boolean {
  return t === '-' || t.startsWith('- ');
}

/**
 * The block structure of `FastReader`, step for step (the same lines consumed, the same declines), comparing
 * each value with the expected one instead of building it. Any method returns false at the first difference.
 *
 * A node expected to be a shared subtree is compared once per distinct text: the first time line by line,
 * later by its text alone (`nodeAt`). Injection writes the same proxy container parts into every workload
 * a sidecar plan serves, so most of an injected resource is proven by comparing text.
 */
class FragmentVerifier extends LineReader {
  private readonly proven: WeakMap<object, ProvenSpan[]>;

  constructor(
    text: string,
    private readonly same: (read: Json | undefined, expected: Json | undefined) => boolean,
  ) {
    super(text);
    let proven = PROVEN.get(same);
    if (!proven) PROVEN.set(same, (proven = new WeakMap()));
    this.proven = proven;
  }

  /**
   * Whether the node whose first line is structural line `pos`, at column `c`, reads as `exp`
   * (`indentlessSeq`: a block sequence at its key's column, compared by `seq`, else by `node`): line by line,
   * or, for a shared `exp`, by a span proven before.
   *
   * Why a span proves the node: the node's lines are read from its raw text alone, given where it ends. A
   * node at column `c` (its keys' column, or its dashes' for a sequence) ends at the first line after it
   * that is left of `c`, or, for a sequence, at `c` but not an entry. Its text is whole raw lines, from the
   * start of its first line (indentation, and a `- ` before a compact map, included) to the end of its last,
   * with no block scalar or multi-line flow collection (those read raw lines past the node: `rawReads`).
   * So when the same span stands at the start of the node's first line, is read the same way (the same
   * column, as a list at its key's column or not) and the line after it ends the node as above, the node
   * reads as it did where the span was proven, which was as `exp`; a shared `exp` cannot have changed since
   * (deep-frozen). Any other case is compared line by line.
   *
   */
  private nodeAt(c: number, indentlessSeq: boolean, exp: Json | undefined): boolean {
    if (!isShared(exp)) return indentlessSeq ? this.seq(c, exp) : this.node(c, exp);
    const line = this.line(this.pos)!;
    const first = line.index;
    const seqNode = indentlessSeq || isEntry(line.text);
    const spans = this.proven.get(exp as object);
    if (spans) for (const span of spans) if (this.skipSpan(span, first, c, indentlessSeq, seqNode)) return true;
    const reads = this.rawReads;
    const ok = indentlessSeq ? this.seq(c, exp) : this.node(c, exp);
    const span = ok ? this.spanOf(first, reads, c, indentlessSeq, seqNode) : undefined;
    if (span) {
      if (!spans) this.proven.set(exp as object, [span]);
      else if (spans.length < MAX_SPANS) spans.push(span);
    }
    return ok;
  }

  document(exp: Json | undefined): boolean {
    const first = this.line(0);
    if (first === undefined) return this.same(null, exp);
    const ok = this.node(first.indent, exp);
    if (this.line(this.pos) !== undefined) decline();
    return ok;
  }

  private node(indent: number, exp: Json | undefined): boolean {
    const line = this.line(this.pos)!;
    if (line.indent !== indent) decline();
    if (line.text === '-' || line.text.startsWith('- ')) return this.seq(indent, exp);
    if (this.keyEnd(line.text) >= 0) return this.map(indent, exp);
    this.pos++;
    return this.same(this.inlineValue(line.text, line, indent), exp);
  }

  private seq(indent: number, exp: Json | undefined): boolean {
    if (!Array.isArray(exp)) return false;
    let i = 0;
    for (let line = this.line(this.pos); line !== undefined; line = this.line(this.pos)) {
      if (line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) {
        if (line.indent > indent) decline();
        break;
      }
      if (i >= exp.length) return false;
      const e = exp[i++];
      const rest = line.text === '-' ? '' : afterSpaces(line.text, 2);
      let ok: boolean;
      if (rest === '' || rest[0] === '#') {
        this.pos++;
        const next = this.line(this.pos);
        ok = next && next.indent > indent ? this.nodeAt(next.indent, false, e) : this.same(null, e);
      } else {
        const col = indent + (line.text.length - rest.length);
        this.replaceLine(this.pos, { indent: col, text: rest, index: line.index });
        if (rest === '-' || rest.startsWith('- ') || this.keyEnd(rest) >= 0) {
          ok = this.nodeAt(col, false, e);
        } else {
          this.pos++;
          ok = this.same(this.inlineValue(rest, line, indent), e);
        }
      }
      if (!ok) return false;
    }
    return i === exp.length;
  }

  /**
   * A block map, whose keys must come in the order of `exp`'s keys (keys of `exp` whose value is null or
   * absent may be missing): the order injection writes. Another order, a key given twice or a key `exp`
   * lacks is a difference here (the caller reads the text in full). Looking keys up in order, rather than
   * by name, is what makes this faster than reading: a key sliced from the text is a fresh string, and
   * every lookup by name would hash it.
   */
  private map(indent: number, exp: Json | undefined): boolean {
    if (!isJsonObject(exp)) return false;
    const keys = Object.keys(exp);
    let j = 0;
    for (let line = this.line(this.pos); line !== undefined; line = this.line(this.pos)) {
      if (line.indent !== indent) {
        if (line.indent > indent) decline();
        break;
      }
      const end = this.keyEnd(line.text);
      if (end < 0) decline();
      const key = this.key(line.text.slice(0, end));
      if (key === '<<' || key === '__proto__') decline();
      let e: Json | undefined;
      for (;;) {
        if (j >= keys.length) return false;
        const k = keys[j++]!;
        const v = exp[k];
        if (k === key) {
          e = v;
          break;
        }
        if (v !== null && v !== undefined) return false;
      }
      const rest = afterSpaces(line.text, end + 1);
      this.pos++;
      let ok: boolean;
      if (rest === '' || rest[0] === '#') {
        const next = this.line(this.pos);
        if (next && next.indent > indent) ok = this.nodeAt(next.indent, false, e);
        else if (next && next.indent === indent && isEntry(next.text)) ok = this.nodeAt(indent, true, e);
        else ok = this.same(null, e);
      } else {
        ok = this.same(this.inlineValue(rest, line, indent), e);
      }
      if (!ok) return false;
    }
    for (; j < keys.length; j++) {
      const v = exp[keys[j]!];
      if (v !== null && v !== undefined) return false;
    }
    return true;
  }
}
