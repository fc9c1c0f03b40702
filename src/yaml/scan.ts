import type { Json } from '../model.ts';
import type { TextMap, TextNode, TextPair, TextSeq } from './text-node.ts';

/**
 * The pieces of the fast block reader (`block-reader.ts`) that read one line's worth of YAML: plain scalar
 * resolution (YAML 1.2 core schema), quoted scalars and one-line flow collections. Anything they do not
 * read exactly as the `yaml` package does throws `Declined`.
 */

/** Thrown inside the reader for anything it does not read itself. */
export class Declined extends Error {}

/** Declines the input: the caller reads it with the `yaml` package instead. */
export function decline(): never {
  throw new Declined();
}

export const SPACE = 32;
export const HASH = 35;
export const TAB = 9;
export const CR = 13;
export const COLON = 58;
export const DASH = 45;
/** Collections nested deeper than this are left to the `yaml` package. */
export const MAX_DEPTH = 200;

/** YAML 1.1 booleans that the 1.2 core schema reads as strings (`yes`, `on`, `y`, ...). */
const YAML11_BOOL = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'n', 'N', 'no', 'No', 'NO', 'on', 'On', 'ON', 'off', 'Off', 'OFF']);

/**
 * YAML 1.2 core schema: a plain scalar's value (`yaml` tags null, bool, int, float; else a string).
 * Scalars that a YAML 1.1 reader (kubectl's sigs.k8s.io/yaml, go-yaml v2; `yaml` with `version: '1.1'`)
 * reads differently are declined, so that what the fast reader accepts reads the same in both versions:
 * 1.1 booleans (`yes`, `on`, `n`), legacy octal and leading zeros (`0644` is 420 in 1.1, 644 in 1.2),
 * digit separators (`1_000`) and base 60 (`1:20`).
 */
export function resolveCore(s: string): Json {
  const c = s.charCodeAt(0);
  if (s.length <= 5) {
    if (s === '' || s === '~' || s === 'null' || s === 'Null' || s === 'NULL') return null;
    if (s === 'true' || s === 'True' || s === 'TRUE') return true;
    if (s === 'false' || s === 'False' || s === 'FALSE') return false;
    if (s.length <= 3 && YAML11_BOOL.has(s)) decline();
  }
  if ((c >= 48 && c <= 57) || c === DASH || c === 43 || c === 46) {
    if (/^[-+]?[0-9]+$/.test(s)) {
      if (/^[-+]?0[0-9]/.test(s)) decline();
      const n = Number(s);
      return Number.isSafeInteger(n) ? n : decline();
    }
    if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(s)) return Number(s);
    // 0o17, 0x1f, .inf, .nan: read by `yaml`; 1_000, 1:20, 0b1: numbers in YAML 1.1 only.
    if (/^0[oxb]|^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$|^[-+]?[0-9][0-9_]*(?:[_:][0-9_]*)+(?:\.[0-9_]*)?$/.test(s)) decline();
  }
  return s;
}

/** Characters that cannot start a plain scalar in block context (YAML 1.2 `c-indicator`, less `-?:`). */
export const NOT_PLAIN_START = new Set([',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`']);

const DOUBLE_ESCAPES: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b',
  ' ': ' ', '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029',
};

/** Index of the closing quote of the quoted scalar at `i`, before `ce` (the line's end; multi-line: declined). */
export function quoteEnd(text: string, i: number, ce: number): number {
  const q = text.charCodeAt(i);
  for (let j = i + 1; j < ce; j++) {
    const ch = text.charCodeAt(j);
    if (q === 34 && ch === 92) j++;
    else if (ch === q) {
      if (q === 39 && text.charCodeAt(j + 1) === 39) j++;
      else return j;
    }
  }
  return decline();
}

/** The value of the quoted scalar from `i` to its closing quote `close` (YAML escapes decoded). */
export function unquote(text: string, i: number, close: number): string {
const body = text.slice(i + 1, close);
if (text.charCodeAt(i) === 39) return body.includes("'") ? body.replace(/''/g, "'") : body;
  if (!body.includes('\\')) return body;
  let out = '';
  for (let j = 0; j < body.length; j++) {
    const ch = body[j]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = body[++j]!;
    const simple = DOUBLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const hex = body.slice(j + 1, j + 1 + len);
    if (len === 0 || hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) decline();
    const cp = parseInt(hex, 16);
    if (cp > 0x10ffff) decline();
    out += String.fromCodePoint(cp);
    j += len;
  }
  return out;
}

/**
 * A flow collection at `i` that closes before `ce` (on the same line: `{a: 1, "b": [x, y]}`), nested at
 * most `MAX_DEPTH - depth` deep; trailing commas, implicit nulls and anything unusual are declined.
 */
export function readFlow(text: string, i: number, ce: number, depth: number): { value: Json; node: TextMap | TextSeq } {
  let p = i;
  const ws = (): void => {
    while (text.charCodeAt(p) === SPACE) p++;
    if (p >= ce) decline();
  };
  const scalar = (inMap: boolean, asKey: boolean): { value: Json; node: TextNode } => {
    ws();
    const c = text.charCodeAt(p);
    if (c === 123 || c === 91) {
      if (asKey) decline();
      return collection();
    }
    const start = p;
    if (c === 34 || c === 39) {
      const close = quoteEnd(text, p, ce);
      p = close + 1;
      return { value: unquote(text, start, close), node: { t: 'scalar', style: c === 34 ? 'double' : 'single', start, end: p, outerEnd: p } };
    }
    if (NOT_PLAIN_START.has(text[p]!) || ((c === DASH || c === 63 || c === COLON) && text.charCodeAt(p + 1) === SPACE)) decline();
    while (p < ce) {
      const ch = text.charCodeAt(p);
      if (ch === 44 || ch === 93 || ch === 125 || ch === 91 || ch === 123) break;
      if (ch === COLON) {
        const after = text.charCodeAt(p + 1);
        if (after === SPACE) {
          if (!inMap || !asKey) decline();
          break;
        }
        if (after === 44 || after === 93 || after === 125 || p + 1 >= ce) decline();
      }
      if (ch === HASH && text.charCodeAt(p - 1) === SPACE) decline();
      if (ch === TAB) decline();
      p++;
    }
    let e = p;
    while (text.charCodeAt(e - 1) === SPACE) e--;
    const s = text.slice(start, e);
    if (s === '') decline();
    return { value: resolveCore(s), node: { t: 'scalar', style: 'plain', start, end: e, outerEnd: e } };
  };
  /** After an entry: true at the closing bracket `close`; past the `,` before another entry otherwise. */
  const entryEnds = (close: number): boolean => {
    ws();
    const c = text.charCodeAt(p);
    if (c === close) return true;
    if (c !== 44) decline();
    p++;
    ws();
    // A trailing comma (`[a, ]`) is left to yaml.
    if (text.charCodeAt(p) === close) decline();
    return false;
  };
  const collection = (): { value: Json; node: TextMap | TextSeq } => {
    const start = p;
    if (++depth > MAX_DEPTH) decline();
    if (text.charCodeAt(p) === 123) {
      p++;
      const value: { [k: string]: Json } = {};
      const pairs: TextPair[] = [];
      ws();
      if (text.charCodeAt(p) !== 125) {
        for (;;) {
          const k = scalar(true, true);
          if (typeof k.value !== 'string' || k.value === '<<' || k.value === '__proto__' || Object.hasOwn(value, k.value)) decline();
          ws();
          if (text.charCodeAt(p) !== COLON) decline();
          p++;
          // After a plain key the `:` needs a space; after a quoted key (JSON style) it does not.
          if (k.node.t === 'scalar' && k.node.style === 'plain' && text.charCodeAt(p) !== SPACE) decline();
          const v = scalar(true, false);
          value[k.value] = v.value;
          pairs.push({ key: k.value, keyNode: k.node, value: v.node });
          if (entryEnds(125)) break;
        }
      }
      p++;
      depth--;
      return { value, node: { t: 'map', flow: true, pairs, start, end: p, outerEnd: p } };
    }
    p++;
    const value: Json[] = [];
    const items: TextNode[] = [];
    ws();
    if (text.charCodeAt(p) !== 93) {
      for (;;) {
        const v = scalar(false, false);
        value.push(v.value);
        items.push(v.node);
        if (entryEnds(93)) break;
      }
    }
    p++;
    depth--;
    return { value, node: { t: 'seq', flow: true, items, start, end: p, outerEnd: p } };
  };
  return collection();
}
