import type { Json } from '../../model.ts';
import { isJsonObject, isShared } from '../../json.ts';
import { Declined, NOT_PLAIN_START, decline } from './scan.ts';
import { resolvePlain } from '../scalars.ts';
import { AGREED_FLOW, LineReader, afterSpaces, isEntry, type Line, type ProvenSpan } from './fragment-lines.ts';

/**
 * Checks, without building the data, that the fast reader reads `text` as `expected`, as `same` compares
 * (`readsAs` of src/edit/read-back.ts: null map values mean absent). The read-back of every edited resource runs
 * this (issue #24: the read-back was a fifth of the injection's time, most of it building data only to
 * compare it).
 *
 * It reads no plain scalar that is a YAML 1.1 boolean (`AGREED_FLOW`: `yes` is true for Istio's injector and the
 * string "yes" in the Kubernetes reading), so what it proves holds in the Kubernetes and YAML 1.2 readings too.
 *
 * @returns true only when `readFragmentFast(text)` would read the whole text without declining, with no plain
 *   YAML 1.1 boolean, and the result compares equal to `expected`; undefined for anything else (a difference, a
 *   decline, a key given twice), where the caller reads the text in full and decides
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

/**
 * Spans proven to read as a shared subtree (`isShared` of ../json.ts), per comparison and object (at most
 * `MAX_SPANS` each: a subtree is written at a few columns at most). A shared subtree is deep-frozen, so a
 * span proven once reads as it wherever the same span stands in the same way (see `nodeAt`).
 * Module state by design: a memo keyed by deep-frozen subtrees, which cannot change.
 */
const PROVEN = new WeakMap<object, WeakMap<object, ProvenSpan[]>>();
const MAX_SPANS = 4;

/**
 * Whether `inlineValue` (fragment-lines.ts) reads the line text `v` (a plain scalar, nothing after it) as the string
 * `v`: its plain branch, step for step, on a text with no comment, no trailing white space and no `: `, resolving to
 * itself. One pass over `v` finds a ` #` or a `: ` (what `includes` found); a last character that is no `:` and lies
 * between `!` and `~` is no white space `trimEnd` would cut (every character it cuts is at most a space or beyond
 * ASCII: ECMA-262 WhiteSpace and LineTerminator), so only another last character is looked at with `trimEnd`.
 */
function plainValue(v: string): boolean {
  const c = v[0];
  // Quotes, brackets and block scalar indicators are among the characters that cannot start a plain scalar.
  if (c === undefined || NOT_PLAIN_START.has(c)) return false;
  if ((c === '-' || c === '?' || c === ':') && (v.length === 1 || v[1] === ' ')) return false;
  const n = v.length;
  const last = v.charCodeAt(n - 1);
  if (last === 58 || ((last <= 32 || last >= 127) && v.trimEnd() !== v)) return false;
  for (let i = 0, ch = v.charCodeAt(0); i < n - 1; i++) {
    const after = v.charCodeAt(i + 1);
    // ` #` (32, 35) starts a comment; `: ` (58, 32) would be read as a key.
    if ((ch === 32 && after === 35) || (ch === 58 && after === 32)) return false;
    ch = after;
  }
  return resolvePlain(v, '1.1') === v;
}

/**
 * Whether the line text `t` is the string `v` written in quotes (single or double) with nothing after it, so that
 * `inlineValue` reads it as `v`: `quoted` finds the closing quote at the first quote character after the opening one
 * (`quoteEnd`; in double quotes a backslash would escape the next character), so with no quote character of that kind
 * in `v` (and no backslash in double quotes) it closes at the end of `t`; nothing then follows (`ONLY_COMMENT` holds for
 * ''), and `unquote` returns the text between the quotes as it is (no `''` to fold, no escape to decode).
 */
function quotedAs(t: string, v: string): boolean {
  const q = t.charCodeAt(0);
  if ((q !== 39 && q !== 34) || t.length !== v.length + 2 || t.charCodeAt(t.length - 1) !== q) return false;
  if (q === 39 ? v.includes("'") : v.includes('"') || v.includes('\\')) return false;
  return t.slice(1, -1) === v;
}

/**
 * Keys of expected maps and whether each is written plain as it reads (`FragmentVerifier.plainKey`): a pure function
 * of the key, remembered; emptied when it holds `MAX_PLAIN_KEYS`.
 * Module state by design: a memo of a pure function of a key, bounded (`MAX_PLAIN_KEYS`), like `PROVEN`.
 */
const PLAIN_KEYS = new Map<string, boolean>();
const MAX_PLAIN_KEYS = 4096;

/**
 * The block structure of `FastReader` (fragment-reader.ts), step for step (the same lines consumed, the same declines), comparing
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
    super(text, AGREED_FLOW);
    let proven = PROVEN.get(same);
    if (!proven) {
      proven = new WeakMap();
      PROVEN.set(same, proven);
    }
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
   * start of its first line (indentation, and a `- ` before a compact map, included) to the end of its last;
   * where it holds a block scalar or a multi-line flow collection (those read raw lines until a line ends them:
   * `rawReads`), the raw line after the span must end such reads, both where it was proven and here (`endsRawReads`).
   * So when the same span stands at the start of the node's first line, is read the same way (the same
   * column, as a list at its key's column or not) and the line after it ends the node as above, the node
   * reads as it did where the span was proven, which was as `exp`; a shared `exp` cannot have changed since
   * (deep-frozen). Any other case is compared line by line.
   *
   */
  private nodeAt(c: number, indentlessSeq: boolean, exp: Json | undefined): boolean {
    // Only shared subtrees have spans (`PROVEN`): a span found answers `isShared` without a lookup of its own.
    // A shared subtree is frozen (`isShared`): what is not (a fresh map or list, a scalar) is read at once.
    const frozen = exp !== null && typeof exp === 'object' && Object.isFrozen(exp);
    const spans = frozen ? this.proven.get(exp) : undefined;
    if (spans === undefined && !(frozen && isShared(exp))) return indentlessSeq ? this.seq(c, exp) : this.node(c, exp);
    const line = this.line(this.pos);
    if (line === undefined) decline();
    const first = line.index;
    const seqNode = indentlessSeq || isEntry(line.text);
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
    const line = this.line(this.pos);
    if (line === undefined) decline();
    if (line.indent !== indent) decline();
    if (line.text === '-' || line.text.startsWith('- ')) return this.seq(indent, exp);
    // A map expected, and the line no flow map (`{`): `map` reads its first key (a line that is no key declines
    // there) without finding the key's end here first; what else the line could hold (a scalar, a flow list) does not
    // read as a map either.
    if ((isJsonObject(exp) && line.text.charCodeAt(0) !== 123) || this.keyEnd(line.text) >= 0)
      return this.map(indent, exp);
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
        this.replaceLine(this.pos, col, rest);
        if (rest === '-' || rest.startsWith('- ') || this.keyEnd(rest) >= 0) {
          ok = this.nodeAt(col, false, e);
        } else {
          this.pos++;
          ok = this.scalar(rest, line, indent, e);
        }
      }
      if (!ok) return false;
    }
    return i === exp.length;
  }

  /**
   * Whether a map line that starts with `k`, then `:` and a space or the line's end, reads as the key `k` with its
   * `:` right after it, as `keyEnd` and `key` find it: a pure function of `k`, remembered (`PLAIN_KEYS`). `keyEnd`
   * reads the line's characters up to `k.length` (the `:` included), which are those of `k + ':'`, so it ends the key
   * there exactly when `keyEnd(k + ':')` is `k.length` (a `: ` or ` #` inside `k`, or an indicator first, ends or
   * refuses it earlier); `key` then reads `k` itself when `k` is unquoted, has no trailing white space (`key` trims
   * it: `a\r` reads as `a`) and resolves to itself as Go's YAML 1.1 reads a plain scalar (`resolvePlain`: `on` reads
   * as true, `0644` declines).
   */
  private plainKey(k: string): boolean {
    let plain = PLAIN_KEYS.get(k);
    if (plain === undefined) {
      plain =
        k.length > 0 &&
        k[0] !== '"' &&
        k[0] !== "'" &&
        k.trimEnd() === k &&
        this.keyEnd(`${k}:`) === k.length &&
        resolvePlain(k, '1.1') === k;
      if (PLAIN_KEYS.size >= MAX_PLAIN_KEYS) PLAIN_KEYS.clear();
      PLAIN_KEYS.set(k, plain);
    }
    return plain;
  }

  /**
   * Whether the value `t` after a key or a dash on `line` (its parent at column `indent`) reads as `exp`: as
   * `inlineValue` reads it, or, where `t` is `exp` itself and `exp` is a string that reads as itself written
   * plain (`plainValue`), without reading it again (the line after it is still looked at: a more indented one
   * would continue the scalar), or is `exp` in quotes as `quotedAs` proves.
   */
  private scalar(t: string, line: Line, indent: number, exp: Json | undefined): boolean {
    if (typeof exp === 'string') {
      if (t === exp && plainValue(exp)) {
        const next = this.line(this.pos);
        if (next && next.indent > indent) decline();
        return this.same(exp, exp);
      }
      // `quoted` (inlineValue's quote branch) looks at no other line.
      if (quotedAs(t, exp)) return this.same(exp, exp);
    }
    return this.same(this.inlineValue(t, line, indent), exp);
  }

  /**
   * A block map, whose keys must come in the order of `exp`'s keys (keys of `exp` whose value is null or
   * absent may be missing): the order injection writes. Another order, a key given twice or a key `exp`
   * lacks is a difference here (the caller reads the text in full). Looking keys up in order, rather than
   * by name, is what makes this faster than reading: a key sliced from the text is a fresh string, and
   * every lookup by name would hash it. The keys are walked with `for...in` (the order of `Object.keys`, without
   * building its array: a fresh map of every injected container is walked once per workload).
   */
  private map(indent: number, exp: Json | undefined): boolean {
    if (!isJsonObject(exp)) return false;
    let line = this.line(this.pos);
    // The key of `line` once read (undefined: not read yet), and where it ends.
    let key: string | undefined;
    let end = -1;
    for (const k in exp) {
      const v = exp[k];
      if (key === undefined) {
        if (line === undefined || line.indent !== indent) {
          if (line !== undefined && line.indent > indent) decline();
          if (v !== null && v !== undefined) return false;
          continue;
        }
        const t = line.text;
        // The line starts with `k:` written plain (`plainKey`): the key `k`, found without scanning or cutting it out.
        if (
          t.charCodeAt(k.length) === 58 &&
          (t.length === k.length + 1 || t.charCodeAt(k.length + 1) === 32) &&
          t.startsWith(k) &&
          this.plainKey(k)
        ) {
          end = k.length;
          key = k;
        } else {
          end = this.keyEnd(t);
          if (end < 0) decline();
          key = this.key(t.slice(0, end));
        }
        if (key === '<<' || key === '__proto__') decline();
      }
      if (key !== k) {
        if (v !== null && v !== undefined) return false;
        continue;
      }
      if (line === undefined) return false;
      const rest = afterSpaces(line.text, end + 1);
      this.pos++;
      let ok: boolean;
      if (rest === '' || rest[0] === '#') {
        const next = this.line(this.pos);
        if (next && next.indent > indent) ok = this.nodeAt(next.indent, false, v);
        else if (next && next.indent === indent && isEntry(next.text)) ok = this.nodeAt(indent, true, v);
        else ok = this.same(null, v);
      } else {
        ok = this.scalar(rest, line, indent, v);
      }
      if (!ok) return false;
      key = undefined;
      line = this.line(this.pos);
    }
    // A line left with a key `exp` lacks (or one read and matched by none), or a line more indented than the map.
    if (line !== undefined && line.indent >= indent) {
      if (line.indent > indent || this.keyEnd(line.text) < 0) decline();
      return false;
    }
    return true;
  }
}
