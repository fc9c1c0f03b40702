/**
 * Go's parsers, as the mesh webhooks run them on annotation and config values: where Go refuses a value the
 * webhook refuses the pod, so a driver reads every number, boolean, duration and port through this module and
 * turns a refusal into an error result naming the annotation (`InjectError`). Written from Go's documentation and
 * source (go1.24 `strconv/atoi.go`, `strconv/atob.go`, `time/format.go` `ParseDuration`); every result carries
 * Go's own error text (`strconv.ParseUint: parsing "+4": invalid syntax`), which the webhooks wrap.
 * Values are `bigint` where Go's range exceeds 2^53 (64-bit integers, durations in nanoseconds).
 */

import { isIP } from 'node:net';

export { type GoQuantity, parseQuantity, QUANTITY_ERRORS, scaledValue } from './go-parse-quantity.ts';

/** A value Go accepted, or Go's error text. */
export type GoParsed<T> = { ok: true; value: T } | { ok: false; error: string };

const ok = <T>(value: T): GoParsed<T> => ({ ok: true, value });
const fail = <T>(error: string): GoParsed<T> => ({ ok: false, error });

/** Go `strconv.Quote` for the texts errors quote (printable ASCII as is; others escaped as JSON does). */
function quote(s: string): string {
  return JSON.stringify(s);
}

/** Go's `*strconv.NumError` text: `strconv.<fn>: parsing "<num>": <err>`. */
function numError(fn: string, num: string, err: string): string {
  return `strconv.${fn}: parsing ${quote(num)}: ${err}`;
}

const SYNTAX = 'invalid syntax';
const RANGE = 'value out of range';

/** The digit value of a character in bases up to 36 (`0-9`, `a-z`, `A-Z`), or 99. */
function digitOf(c: string): number {
  const code = c.charCodeAt(0);
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 122 ? lower - 97 + 10 : 99;
}

/**
 * Go `underscoreOK` (strconv/atoi.go): underscores only between digits, or between a base prefix and a digit
 * (`0x_1f`, `1_000`; not `_1`, `1__0`, `1_`).
 */
function underscoreOK(s0: string): boolean {
  let s = s0;
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'box'.includes(s.charAt(1).toLowerCase())) {
    i = 2;
    saw = '0';
    hex = s.charAt(1).toLowerCase() === 'x';
  }
  for (; i < s.length; i++) {
    const c = s.charAt(i);
    if ((c >= '0' && c <= '9') || (hex && c.toLowerCase() >= 'a' && c.toLowerCase() <= 'f')) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/**
 * Go `strconv.ParseUint(s, base, bitSize)`: no sign; `base` 2..36, or 0 for the base from the prefix (`0b`, `0o`,
 * `0x`, else a leading `0` for octal, else decimal), where underscores may separate digits; `bitSize` 1..64 (0:
 * 64). Out of range is `value out of range` (reported as soon as the digits so far overflow).
 *
 * Long by design: ported recipe (strconv/atoi.go `ParseUint`, one branch per rule in Go's order).
 */
export function parseUint(s: string, base = 10, bitSize = 64, fn = 'ParseUint'): GoParsed<bigint> {
  if (s === '') return fail(numError(fn, s, SYNTAX));
  const s0 = s;
  const base0 = base === 0;
  if (base >= 2 && base <= 36) {
    // as given
  } else if (base === 0) {
    base = 10;
    if (s[0] === '0') {
      const p = s.length >= 3 ? s.charAt(1).toLowerCase() : '';
      if (p === 'b') [base, s] = [2, s.slice(2)];
      else if (p === 'o') [base, s] = [8, s.slice(2)];
      else if (p === 'x') [base, s] = [16, s.slice(2)];
      else [base, s] = [8, s.slice(1)];
    }
  } else {
    return fail(numError(fn, s0, `invalid base ${base}`));
  }
  if (bitSize === 0) bitSize = 64;
  else if (bitSize < 0 || bitSize > 64) return fail(numError(fn, s0, `invalid bit size ${bitSize}`));
  const maxVal = (1n << BigInt(bitSize)) - 1n;
  const big = BigInt(base);
  let n = 0n;
  let underscores = false;
  for (const c of s) {
    if (c === '_' && base0) {
      underscores = true;
      continue;
    }
    const d = digitOf(c);
    if (d >= base) return fail(numError(fn, s0, SYNTAX));
    n = n * big + BigInt(d);
    if (n > maxVal) return fail(numError(fn, s0, RANGE));
  }
  if (underscores && !underscoreOK(s0)) return fail(numError(fn, s0, SYNTAX));
  return ok(n);
}

/**
 * Go `strconv.ParseInt(s, base, bitSize)`: an optional `+` or `-`, then `ParseUint`'s rules; the range is
 * -2^(bitSize-1) .. 2^(bitSize-1)-1.
 */
// biome-ignore lint/suspicious/noShadowRestrictedNames: named after Go's strconv.ParseInt, which it implements; this module never calls the global
export function parseInt(s: string, base = 10, bitSize = 64, fn = 'ParseInt'): GoParsed<bigint> {
  if (s === '') return fail(numError(fn, s, SYNTAX));
  const neg = s[0] === '-';
  const digits = s[0] === '+' || s[0] === '-' ? s.slice(1) : s;
  const un = parseUint(digits, base, bitSize, fn);
  if (!un.ok && !un.error.endsWith(RANGE))
    return fail(un.error.replace(`parsing ${quote(digits)}`, `parsing ${quote(s)}`));
  const size = bitSize === 0 ? 64 : bitSize;
  const cutoff = 1n << BigInt(size - 1);
  // On overflow Go's ParseUint gives its maximum, 2^bitSize - 1, which ParseInt then range-checks.
  const value = un.ok ? un.value : (1n << BigInt(size)) - 1n;
  if ((!neg && value >= cutoff) || (neg && value > cutoff)) return fail(numError(fn, s, RANGE));
  return ok(neg ? -value : value);
}

/** Go `strconv.Atoi(s)`: `ParseInt(s, 10, 0)` as an `int` (64-bit). */
export function atoi(s: string): GoParsed<bigint> {
  return parseInt(s, 10, 0, 'Atoi');
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go `strconv.ParseBool(s)`: exactly `1 t T TRUE true True` and `0 f F FALSE false False`. */
export function parseBool(s: string): GoParsed<boolean> {
  if (TRUE.has(s)) return ok(true);
  if (FALSE.has(s)) return ok(false);
  return fail(numError('ParseBool', s, SYNTAX));
}

/** Nanoseconds per unit of a Go duration (`time.unitMap`; both micro signs). */
const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n,
  μs: 1000n,
  ms: 1000000n,
  s: 1000000000n,
  m: 60000000000n,
  h: 3600000000000n,
};
const MAX_DURATION = 1n << 63n;

/** Go `leadingInt`: the leading decimal digits, or undefined when they exceed 2^63. */
function leadingInt(s: string): { x: bigint; rest: string } | undefined {
  let i = 0;
  let x = 0n;
  for (; i < s.length && s.charAt(i) >= '0' && s.charAt(i) <= '9'; i++) {
    x = x * 10n + BigInt(s.charCodeAt(i) - 48);
    if (x > MAX_DURATION) return undefined;
  }
  return { x, rest: s.slice(i) };
}

/** Go `leadingFraction`: the leading fraction digits as `x / scale`, ignoring digits past 2^63-1. */
function leadingFraction(s: string): { x: bigint; scale: number; rest: string } {
  let i = 0;
  let x = 0n;
  let scale = 1;
  let overflow = false;
  for (; i < s.length && s.charAt(i) >= '0' && s.charAt(i) <= '9'; i++) {
    if (overflow) continue;
    const y = x * 10n + BigInt(s.charCodeAt(i) - 48);
    if (x > (MAX_DURATION - 1n) / 10n || y > MAX_DURATION) {
      overflow = true;
      continue;
    }
    x = y;
    scale *= 10;
  }
  return { x, scale, rest: s.slice(i) };
}

/**
 * Go `time.ParseDuration(s)`: nanoseconds of `[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+` or `0`, as
 * `bigint`; more than 2^63-1 ns (about 292 years; -2^63 is allowed) is `time: invalid duration`. Errors are
 * Go's: `time: invalid duration "x"`, `time: missing unit in duration "1"`, `time: unknown unit "d" in duration "1d"`.
 *
 * Long by design: ported recipe (time/format.go `ParseDuration`).
 */
export function parseDuration(orig: string): GoParsed<bigint> {
  const invalid = fail<bigint>(`time: invalid duration ${quote(orig)}`);
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return ok(0n);
  if (s === '') return invalid;
  let d = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || (s.charAt(0) >= '0' && s.charAt(0) <= '9'))) return invalid;
    const before = s.length;
    const int = leadingInt(s);
    if (!int) return invalid;
    s = int.rest;
    const pre = before !== s.length;
    let frac = { x: 0n, scale: 1 };
    let post = false;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      const at = s.length;
      const f = leadingFraction(s);
      s = f.rest;
      frac = f;
      post = at !== s.length;
    }
    if (!pre && !post) return invalid;
    let i = 0;
    while (i < s.length && s[i] !== '.' && !(s.charAt(i) >= '0' && s.charAt(i) <= '9')) i++;
    if (i === 0) return fail(`time: missing unit in duration ${quote(orig)}`);
    const u = s.slice(0, i);
    s = s.slice(i);
    const unit = UNIT_NS[u];
    if (unit === undefined) return fail(`time: unknown unit ${quote(u)} in duration ${quote(orig)}`);
    // Go also refuses v * unit past 2^63 here (uint64 overflow); with bigint the sum's check below covers it.
    let v = int.x * unit;
    if (frac.x > 0n) {
      // Go: v += uint64(float64(f) * (float64(unit) / scale)), truncated.
      v += BigInt(Math.trunc(Number(frac.x) * (Number(unit) / frac.scale)));
      if (v > MAX_DURATION) return invalid;
    }
    d += v;
    if (d > MAX_DURATION) return invalid;
  }
  if (neg) return ok(-d);
  if (d > MAX_DURATION - 1n) return invalid;
  return ok(d);
}

/** The port range a mesh accepts: Kuma's transparent proxy takes 1..65535, a list of exclusions may allow 0. */
export interface PortRange {
  min: number;
  max: number;
}

/**
 * A port as a mesh parses it: Go `strconv.ParseUint(s, 10, bitSize)` (16 for `uint16` ports, 32 for ports read as
 * `uint32` annotations), then the mesh's `range`. Returns the number, or Go's error (syntax or bit range) or
 * `out of range <min>-<max>` (the caller words it as its mesh does).
 */
export function parsePort(s: string, range: PortRange, bitSize = 16): GoParsed<number> {
  const u = parseUint(s, 10, bitSize);
  if (!u.ok) return u;
  const n = Number(u.value);
  return n >= range.min && n <= range.max ? ok(n) : fail(`out of range ${range.min}-${range.max}`);
}

/** Go `special` (strconv/atof.go): `[+-]?(inf|infinity)` and `nan`, any case; `undefined` when `s` is neither. */
function specialFloat(s: string): number | undefined {
  const l = s.toLowerCase();
  const sign = l[0] === '-' ? -1 : 1;
  const body = l[0] === '+' || l[0] === '-' ? l.slice(1) : l;
  if (body === 'inf' || body === 'infinity') return sign * Number.POSITIVE_INFINITY;
  return l === 'nan' ? Number.NaN : undefined;
}

/** Go float literal syntax as `readFloat` reads it: decimal `1_0.5e-3`, hex `0x1.8p-1` (exponent required). */
const DEC_FLOAT = /^[+-]?(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9][0-9_]*)?$/;
const HEX_FLOAT = /^([+-]?)0[xX]([0-9a-fA-F_]*)\.?([0-9a-fA-F_]*)[pP]([+-]?[0-9][0-9_]*)$/;

/** A hex float's value: mantissa `int.frac` in base 16 times 2^`exp`, rounded once (as Go's `atofHex`, barring subnormals). */
function hexFloatValue(int: string, frac: string, exp: string): number {
  const mant = BigInt(`0x${int}${frac}` === '0x' ? '0' : `0x${int}${frac}`);
  const e = Number.parseInt(exp, 10) - 4 * frac.length;
  if (mant === 0n) return 0;
  // Scale the mantissa to 64 significant bits at most so the one rounding happens in Number(bigint).
  const bits = mant.toString(2).length;
  const keep = bits > 64 ? bits - 64 : 0;
  const sticky = keep > 0 && mant & ((1n << BigInt(keep)) - 1n) ? 1n : 0n;
  const m = (mant >> BigInt(keep)) | sticky;
  return Number(m) * 2 ** (e + keep);
}

/**
 * Go `strconv.ParseFloat(s, bitSize)` (bitSize 64): Go's float literals (decimal with an optional exponent, hex
 * with a `p` exponent, `_` between digits as `underscoreOK` allows), `inf`/`infinity` with a sign and `nan` in any
 * case; no blanks. A finite literal past the float64 range is `value out of range` (Go also returns ±Inf then);
 * one that underflows is 0. Decimal values round as Go's (both are correctly rounded); hex subnormals may differ.
 */
export function goParseFloat(s: string, bitSize: 32 | 64 = 64): GoParsed<number> {
  const fn = 'ParseFloat';
  const special = specialFloat(s);
  if (special !== undefined) return ok(special);
  const hex = HEX_FLOAT.exec(s);
  if (!hex && !DEC_FLOAT.test(s)) return fail(numError(fn, s, SYNTAX));
  const mantissa = hex ? s.slice(0, s.search(/[pP]/)) : (s.split(/[eE]/)[0] ?? '');
  if (!/[0-9a-fA-F]/.test(hex ? mantissa.slice(mantissa.search(/[xX]/) + 1) : mantissa))
    return fail(numError(fn, s, SYNTAX));
  if (s.includes('_') && !underscoreOK(s)) return fail(numError(fn, s, SYNTAX));
  const plain = s.replaceAll('_', '');
  let value: number;
  if (hex) {
    const [, sign = '', int = '', frac = '', exp = '0'] = HEX_FLOAT.exec(plain) ?? [];
    value = (sign === '-' ? -1 : 1) * hexFloatValue(int, frac, exp);
  } else {
    value = Number(plain);
  }
  if (bitSize === 32) value = Math.fround(value);
  return Number.isFinite(value) ? ok(value) : fail(numError(fn, s, RANGE));
}

/**
 * The number Go's `strconv.Atoi(s)` returns beside its error, for code that drops the error (Istio's status-port
 * annotation in `patchRewriteProbe`, k8s `intstr.IntOrString.IntValue()`): the value, 0 on a syntax error, and the
 * int64 bound of the sign on overflow (`ParseInt` returns it with `value out of range`).
 */
export function atoiIgnoringError(s: string): bigint {
  const n = atoi(s);
  if (n.ok) return n.value;
  if (!n.error.endsWith(RANGE)) return 0n;
  return s.startsWith('-') ? -(1n << 63n) : (1n << 63n) - 1n;
}

/** Go `int32(v)`: the low 32 bits of an integer, two's complement (a conversion, never an error). */
export function toInt32(v: bigint): number {
  return Number(BigInt.asIntN(32, v));
}

/**
 * Go `net.dtoi` (net/parse.go), the prefix length `net.ParseCIDR` reads: the leading ASCII digits of `s` (leading
 * zeros allowed, no sign), refused when there is none or the value reaches 0xFFFFFF; `end` is where they stop.
 */
export function netDtoi(s: string): { ok: boolean; value: number; end: number } {
  let n = 0;
  let i = 0;
  for (; i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57; i++) {
    n = n * 10 + (s.charCodeAt(i) - 48);
    if (n >= 0xffffff) return { ok: false, value: 0xffffff, end: i };
  }
  return { ok: i > 0, value: n, end: i };
}

/**
 * Go `net.ParseCIDR(s)` (net/ip.go): an IPv4 or IPv6 address without a zone, `/`, and a prefix length `netDtoi`
 * reads whole (ASCII digits, leading zeros allowed) no longer than the family's 32 or 128 bits (an IPv4-mapped IPv6
 * address has 128). Returns `s`, or Go's error `invalid CIDR address: <s>`.
 */
export function parseCIDR(s: string): GoParsed<string> {
  const slash = s.indexOf('/');
  const addr = slash < 0 ? '' : s.slice(0, slash);
  const version = slash < 0 || addr.includes('%') ? 0 : isIP(addr);
  const bits = netDtoi(s.slice(slash + 1));
  const whole = bits.ok && bits.end === s.length - slash - 1 && bits.value <= (version === 4 ? 32 : 128);
  return version !== 0 && whole ? ok(s) : fail(`invalid CIDR address: ${s}`);
}
