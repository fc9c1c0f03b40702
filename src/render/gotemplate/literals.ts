/**
 * Literals of Go `text/template` source, as text/template/parse reads them: quoted strings and character
 * constants (`strconv.Unquote`) and numbers (`newNumber` in parse/node.go: every interpretation of a numeric
 * literal, int64/uint64 ranges checked exactly with bigint).
 */
import type { NumberNode } from './ast.ts';
import { T, goQuoteString } from './lex.ts';

/**
 * Go `strconv.Unquote` for `"..."` and `` `...` `` literals (and `'x'` character constants).
 * @throws Error `invalid syntax` as strconv does.
 */
export function goUnquote(s: string): string {
  const q = s[0];
  if (s.length < 2 || s[s.length - 1] !== q) throw new Error('invalid syntax');
  const body = s.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) throw new Error('invalid syntax');
    return body.replace(/\r/g, '');
  }
  if (q !== '"' && q !== "'") throw new Error('invalid syntax');
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === q || c === '\n') throw new Error('invalid syntax');
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = {
      a: '\x07',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
      v: '\v',
      '\\': '\\',
    };
    if (e !== undefined && simple[e] !== undefined) out += simple[e];
    else if (e === q) out += q;
    else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw new Error('invalid syntax');
      const cp = parseInt(hex, 16);
      if (e === 'x') out += String.fromCharCode(cp);
      else {
        if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) throw new Error('invalid syntax');
        out += String.fromCodePoint(cp);
      }
      i += n;
    } else if (e !== undefined && e >= '0' && e <= '7') {
      const oct = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) throw new Error('invalid syntax');
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else throw new Error('invalid syntax');
  }
  if (q === "'" && [...out].length !== 1) throw new Error('invalid syntax');
  return out;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/** strconv.ParseInt/ParseUint with base 0 (prefixes, underscores only after a prefix). */
function parseGoInt(text: string): bigint | undefined {
  let s = text;
  let neg = false;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  let base = 10;
  let digits = s;
  const m = /^0([xXoObB])/.exec(s);
  if (m) {
    base = { x: 16, o: 8, b: 2 }[(m[1] as string).toLowerCase() as 'x' | 'o' | 'b'];
    digits = s.slice(2);
  } else if (s.length > 1 && s[0] === '0') {
    base = 8;
    digits = s.slice(1);
  }
  if (digits.includes('_')) {
    if (!m && !(base === 8)) return undefined;
    if (!/^_?[^_]+(_[^_]+)*$/.test(digits)) return undefined;
    digits = digits.replace(/_/g, '');
  }
  const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[base as 2 | 8 | 10 | 16];
  if (!valid.test(digits)) return undefined;
  let v = 0n;
  for (const ch of digits) v = v * BigInt(base) + BigInt(parseInt(ch, 16));
  return neg ? -v : v;
}

/** Go `newNumber`: every interpretation of a numeric literal. @throws Error with Go's message. */
export function newNumber(pos: number, text: string, typ: T): NumberNode {
  const n: NumberNode = {
    type: 'number',
    pos,
    text,
    isInt: false,
    isUint: false,
    isFloat: false,
    isComplex: false,
    int: 0,
    float: 0,
  };
  if (typ === T.CharConstant) {
    let ch: string;
    try {
      ch = goUnquote(text);
    } catch {
      throw new Error(`malformed character constant: ${text}`);
    }
    const cp = ch.codePointAt(0) as number;
    return { ...n, isInt: true, isUint: true, isFloat: true, int: cp, float: cp };
  }
  if (typ === T.Complex || text.endsWith('i')) {
    throw new Error(`complex constants are not supported: ${text}`);
  }
  const big = parseGoInt(text);
  if (big !== undefined) {
    if (big >= 0n && big <= UINT64_MAX) n.isUint = true;
    if (big >= INT64_MIN && big <= INT64_MAX) n.isInt = true;
    if (n.isInt || n.isUint) {
      n.isFloat = true;
      n.int = Number(big);
      n.float = Number(big);
      return n;
    }
  }
  const clean = text.replace(/_/g, '');
  let f = NaN;
  if (/^[+-]?0[xX]/.test(clean)) f = parseHexFloat(clean);
  else if (/^[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(clean)) f = Number(clean);
  if (!Number.isNaN(f)) {
    if (!/[.eEpP]/.test(text)) throw new Error(`integer overflow: ${goQuoteString(text)}`);
    n.isFloat = true;
    n.float = f;
    if (Number.isInteger(f) && Math.abs(f) < 2 ** 63) {
      n.isInt = true;
      n.int = f;
      if (f >= 0) n.isUint = true;
    }
    return n;
  }
  throw new Error(`illegal number syntax: ${goQuoteString(text)}`);
}

/** Go hexadecimal floating-point literal (`0x1.8p3`); NaN when the text is not one. */
function parseHexFloat(s: string): number {
  const m = /^([+-])?0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(s);
  if (!m) return NaN;
  const int = m[2] ?? '';
  const frac = m[3] ?? '';
  if (int === '' && frac === '') return NaN;
  let v = 0;
  for (const ch of int + frac) v = v * 16 + parseInt(ch, 16);
  v = (v / 16 ** frac.length) * 2 ** Number(m[4]);
  return m[1] === '-' ? -v : v;
}
