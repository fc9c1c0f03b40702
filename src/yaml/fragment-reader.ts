import { parse } from 'yaml';
import type { Json } from '../model.ts';

/**
 * A fast reader for the block YAML that driver templates render (the hot path of injection: one fragment
 * per workload). It reads the subset templates produce: block maps and sequences, plain / single- /
 * double-quoted scalars, `|` and `>` block scalars, flow collections on one line (trailing commas allowed,
 * as in Istio's `annotations: {...}`), comments and blank lines. Plain scalars resolve with YAML 1.1 rules
 * like Go's sigs.k8s.io/yaml (`yes`/`on` are booleans, `0x1f` and `017` numbers). Anything else (anchors,
 * aliases, tags, complex keys, multi-line plain scalars, tabs) falls back to the `yaml` package in YAML 1.1
 * mode, so the result always equals `parse(text, {version: '1.1'})` for the input's data.
 */
export function parseFragment(text: string): Json {
  try {
    return new FastReader(text).document();
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e;
    return parse(text, { version: '1.1', uniqueKeys: false }) as Json;
  }
}

class Unsupported extends Error {}

const BOOL_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const BOOL_FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const INT_DEC = /^[-+]?(?:0|[1-9][0-9_]*)$/;
const FLOAT = /^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?$|^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$/;
const SPECIAL = /^[-+]?0x[0-9a-fA-F_]+$|^[-+]?0b[01_]+$|^[-+]?0[0-7_]+$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$|:[0-5]?[0-9]$|^\d{4}-\d\d?-\d\d?/;

/** YAML 1.1 resolution of a plain scalar (the forms templates emit; rarer ones are Unsupported). */
function resolvePlain(s: string): Json {
  if (NULLS.has(s)) return null;
  if (BOOL_TRUE.has(s)) return true;
  if (BOOL_FALSE.has(s)) return false;
  const c = s.charCodeAt(0);
  const numeric = (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46;
  if (numeric) {
    if (INT_DEC.test(s)) {
      if (s.includes('_')) throw new Unsupported();
      const n = Number(s);
      if (!Number.isSafeInteger(n)) throw new Unsupported();
      return n;
    }
    if (FLOAT.test(s)) {
      if (s.includes('_')) throw new Unsupported();
      return Number(s);
    }
  }
  if (SPECIAL.test(s)) throw new Unsupported();
  return s;
}

interface Line {
  indent: number;
  /** Content after the indentation, without a trailing comment-only remainder. */
  text: string;
  /** Index of the line in the source (for block scalars). */
  index: number;
}

class FastReader {
  private readonly raw: string[];
  private readonly lines: Line[] = [];
  private pos = 0;

  constructor(text: string) {
    this.raw = text.split('\n');
    this.raw.forEach((l, index) => {
      if (l.endsWith('\r')) l = l.slice(0, -1);
      let i = 0;
      while (l.charCodeAt(i) === 32) i++;
      if (l.charCodeAt(i) === 9) throw new Unsupported();
      const t = l.slice(i);
      if (t === '' || t[0] === '#') return;
      if (t === '---' || t === '...' || t.startsWith('--- ') || t[0] === '%') throw new Unsupported();
      this.lines.push({ indent: i, text: t, index });
    });
  }

  document(): Json {
    if (this.lines.length === 0) return null;
    const v = this.node(this.lines[0]!.indent);
    if (this.pos < this.lines.length) throw new Unsupported();
    return v;
  }

  /** A block node whose lines start at `indent` (or a scalar on its own line). */
  private node(indent: number): Json {
    const line = this.lines[this.pos]!;
    if (line.indent !== indent) throw new Unsupported();
    if (line.text === '-' || line.text.startsWith('- ')) return this.seq(indent);
    if (this.keyEnd(line.text) >= 0) return this.map(indent);
    // A lone scalar or flow collection.
    this.pos++;
    return this.inlineValue(line.text, line, indent);
  }

  private seq(indent: number): Json[] {
    const out: Json[] = [];
    while (this.pos < this.lines.length) {
      const line = this.lines[this.pos]!;
      if (line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) {
        if (line.indent > indent) throw new Unsupported();
        break;
      }
      const rest = line.text === '-' ? '' : line.text.slice(2).replace(/^ +/, '');
      if (rest === '' || rest[0] === '#') {
        this.pos++;
        const next = this.lines[this.pos];
        out.push(next && next.indent > indent ? this.node(next.indent) : null);
        continue;
      }
      // `- key: value` starts a compact map at the column of `key`; `- - x` a nested seq.
      const col = indent + (line.text.length - rest.length);
      this.lines[this.pos] = { indent: col, text: rest, index: line.index };
      if (rest === '-' || rest.startsWith('- ') || this.keyEnd(rest) >= 0) {
        out.push(this.node(col));
      } else {
        this.pos++;
        out.push(this.inlineValue(rest, line, col));
      }
    }
    return out;
  }

  private map(indent: number): { [k: string]: Json } {
    const out: { [k: string]: Json } = {};
    while (this.pos < this.lines.length) {
      const line = this.lines[this.pos]!;
      if (line.indent !== indent) {
        if (line.indent > indent) throw new Unsupported();
        break;
      }
      const end = this.keyEnd(line.text);
      if (end < 0) throw new Unsupported();
      const key = this.key(line.text.slice(0, end));
      const rest = line.text.slice(end + 1).replace(/^ +/, '');
      this.pos++;
      let value: Json;
      if (rest === '' || rest[0] === '#') {
        const next = this.lines[this.pos];
        if (next && next.indent > indent) value = this.node(next.indent);
        else if (next && next.indent === indent && (next.text === '-' || next.text.startsWith('- '))) value = this.seq(indent);
        else value = null;
      } else {
        value = this.inlineValue(rest, line, indent);
      }
      out[key] = value;
    }
    return out;
  }

  /** Index of the `:` that ends a block mapping key, or -1. */
  private keyEnd(t: string): number {
    const c = t[0];
    if (c === '"' || c === "'") {
      const close = c === '"' ? this.doubleEnd(t, 0) : this.singleEnd(t, 0);
      if (close < 0) return -1;
      return t[close + 1] === ':' && (close + 2 === t.length || t[close + 2] === ' ') ? close + 1 : -1;
    }
    if (c === '?' || c === '&' || c === '*' || c === '!' || c === '|' || c === '>' || c === '{' || c === '[' || c === '-' && t[1] === ' ') return -1;
    for (let i = 0; i < t.length; i++) {
      const ch = t[i];
      if (ch === ':' && (i + 1 === t.length || t[i + 1] === ' ')) return i;
      if (ch === ' ' && t[i + 1] === '#') return -1;
    }
    return -1;
  }

  private key(k: string): string {
    if (k[0] === '"' || k[0] === "'") return String(this.quoted(k));
    const v = resolvePlain(k.trimEnd());
    return v === null ? '' : String(v);
  }

  private doubleEnd(t: string, from: number): number {
    for (let i = from + 1; i < t.length; i++) {
      if (t[i] === '\\') i++;
      else if (t[i] === '"') return i;
    }
    return -1;
  }

  private singleEnd(t: string, from: number): number {
    for (let i = from + 1; i < t.length; i++) {
      if (t[i] === "'") {
        if (t[i + 1] === "'") i++;
        else return i;
      }
    }
    return -1;
  }

  /** A quoted scalar that is the whole of `t` (trailing comment allowed). */
  private quoted(t: string): Json {
    const end = t[0] === '"' ? this.doubleEnd(t, 0) : this.singleEnd(t, 0);
    if (end < 0) throw new Unsupported();
    const after = t.slice(end + 1).trim();
    if (after !== '' && after[0] !== '#') throw new Unsupported();
    const body = t.slice(1, end);
    if (t[0] === "'") return body.replace(/''/g, "'");
    if (!body.includes('\\')) return body;
    try {
      return JSON.parse(`"${body.replace(/\\\//g, '/').replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1')}"`) as string;
    } catch {
      throw new Unsupported();
    }
  }

  /** The value after `key: ` or `- ` on one line, or a block scalar starting there. */
  private inlineValue(t: string, line: Line, indent: number): Json {
    const c = t[0];
    if (c === '"' || c === "'") return this.quoted(t);
    if (c === '{' || c === '[') return this.flow(this.flowText(t, line));
    if (c === '|' || c === '>') return this.blockScalar(t, line, indent);
    if (c === '&' || c === '*' || c === '!' || c === '?' || c === '%' || c === '@' || c === '`') throw new Unsupported();
    const hash = t.indexOf(' #');
    const s = (hash >= 0 ? t.slice(0, hash) : t).trimEnd();
    if (s.includes(': ') || s.endsWith(':')) throw new Unsupported();
    // A plain scalar continued on more-indented lines is a multi-line scalar: not handled here.
    const next = this.lines[this.pos];
    if (next && next.indent > indent) throw new Unsupported();
    return resolvePlain(s);
  }

  private blockScalar(header: string, line: Line, parentIndent: number): string {
    const m = /^([|>])([-+]?)(?:\s+#.*)?\s*$/.exec(header);
    if (!m) throw new Unsupported();
    const folded = m[1] === '>';
    const chomp = m[2];
    // Consume raw lines (including blank and comment-looking ones) more indented than the parent.
    const body: string[] = [];
    let i = line.index + 1;
    let blockIndent = -1;
    for (; i < this.raw.length; i++) {
      const l = this.raw[i]!.replace(/\r$/, '');
      if (l.trim() === '') {
        body.push('');
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
    while (this.pos < this.lines.length && this.lines[this.pos]!.index < i) this.pos++;
    let trailing = 0;
    while (body.length && body[body.length - 1] === '') {
      body.pop();
      trailing++;
    }
    if (folded) throw new Unsupported();
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
  private flowText(t: string, line: Line): string {
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
      if (quote) throw new Unsupported();
      idx++;
      if (idx >= this.raw.length) throw new Unsupported();
      text = this.raw[idx]!.replace(/\r$/, '').trim();
    }
    while (this.pos < this.lines.length && this.lines[this.pos]!.index <= idx) this.pos++;
    return acc;
  }

  /** A flow collection (already joined onto one line): `{a: b, "c": 'd',}` / `[x, "y"]`, nested allowed. */
  private flow(t: string): Json {
    let i = 0;
    const ws = () => {
      while (t[i] === ' ') i++;
    };
    const scalarUntil = (stops: string): Json => {
      ws();
      if (t[i] === '"' || t[i] === "'") {
        const end = t[i] === '"' ? this.doubleEnd(t, i) : this.singleEnd(t, i);
        if (end < 0) throw new Unsupported();
        const v = this.quoted(t.slice(i, end + 1));
        i = end + 1;
        return v;
      }
      if (t[i] === '{' || t[i] === '[') return value();
      const start = i;
      while (i < t.length && !stops.includes(t[i]!) && !(t[i] === ':' && (t[i + 1] === ' ' || t[i + 1] === ',' || t[i + 1] === '}'))) i++;
      const s = t.slice(start, i).trim();
      if (/[&*!#?]/.test(s[0] ?? '')) throw new Unsupported();
      return resolvePlain(s);
    };
    const value = (): Json => {
      ws();
      if (t[i] === '{') {
        i++;
        const o: { [k: string]: Json } = {};
        for (;;) {
          ws();
          if (t[i] === '}') {
            i++;
            return o;
          }
          const k = scalarUntil(',}');
          ws();
          let v: Json = null;
          if (t[i] === ':') {
            i++;
            v = scalarUntil(',}');
          }
          o[k === null ? '' : String(k)] = v;
          ws();
          if (t[i] === ',') i++;
          else if (t[i] !== '}') throw new Unsupported();
        }
      }
      if (t[i] === '[') {
        i++;
        const a: Json[] = [];
        for (;;) {
          ws();
          if (t[i] === ']') {
            i++;
            return a;
          }
          a.push(scalarUntil(',]'));
          ws();
          if (t[i] === ',') i++;
          else if (t[i] !== ']') throw new Unsupported();
        }
      }
      throw new Unsupported();
    };
    const v = value();
    const after = t.slice(i).trim();
    if (after !== '' && after[0] !== '#') throw new Unsupported();
    return v;
  }
}
