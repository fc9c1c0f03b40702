/**
 * Kubernetes `resource.ParseQuantity` (k8s.io/apimachinery pkg/api/resource/quantity.go, `parseQuantityString`,
 * `ParseQuantity`; suffix.go `interpret`), as the mesh webhooks run it on resource annotations and as decoding a pod
 * runs it on `resources` (after `strings.TrimSpace`, `Quantity.UnmarshalJSON`). Part of ../go-parse.ts.
 */
import type { GoParsed } from './go-parse.ts';

/**
 * A quantity Go accepted: its value is `(negative ? -1 : 1) * unscaled * 10^exponent` (exact; `unscaled >= 0`).
 * `int64` tells which of Go's two representations holds it (the int64 fast path, or `inf.Dec`), which decides how
 * `ScaledValue` rounds a negative value; `format` is Go's `Format` (the suffix family the text used).
 */
export interface GoQuantity {
  negative: boolean;
  unscaled: bigint;
  exponent: number;
  format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
  int64: boolean;
}

/** Go's error texts (`ErrFormatWrong`, `ErrSuffix`, `ErrNumeric`). */
export const QUANTITY_ERRORS = {
  format: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  suffix: "unable to parse quantity's suffix",
  numeric: 'unable to parse numeric part of quantity',
} as const;

const DECIMAL_SUFFIX = new Map<string, number>([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BINARY_SUFFIX = new Map<string, number>([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const SUFFIX_CHARS = 'eEinumkKMGTP';
const MAX_INT64 = (1n << 63n) - 1n;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** The end of the run of ASCII digits in `s` from `i`. */
function digitsEnd(s: string, i: number): number {
  let j = i;
  while (isDigit(s[j])) j++;
  return j;
}

/** Go `parseQuantityString`: sign, numerator (leading zeros dropped), denominator, suffix; or undefined (`ErrFormatWrong`). */
function splitQuantity(
  str: string,
): { negative: boolean; value: string; num: string; denom: string; suffix: string } | undefined {
  let pos = 0;
  const negative = str[0] === '-';
  if (str[0] === '-' || str[0] === '+') pos = 1;
  while (str[pos] === '0') pos++;
  if (pos >= str.length) return { negative, value: '0', num: '0', denom: '', suffix: '' };
  let end = digitsEnd(str, pos);
  const num = str.slice(pos, end) || '0';
  if (end >= str.length) return { negative, value: str, num, denom: '', suffix: '' };
  let denom = '';
  if (str[end] === '.') {
    const from = end + 1;
    end = digitsEnd(str, from);
    denom = str.slice(from, end);
    if (end >= str.length) return { negative, value: str, num, denom, suffix: '' };
  }
  const value = str.slice(0, end);
  let i = end;
  while (i < str.length && SUFFIX_CHARS.includes(str.charAt(i))) i++;
  if (str[i] === '-' || str[i] === '+') i++;
  if (digitsEnd(str, i) < str.length) return undefined;
  return { negative, value, num, denom, suffix: str.slice(end) };
}

/** Go `suffixHandler.interpret`: base, exponent and format of a suffix; an `e`/`E` exponent is `ParseInt(.., 10, 64)` kept as int32. */
function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number; format: GoQuantity['format'] } | undefined {
  const dec = DECIMAL_SUFFIX.get(suffix);
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BINARY_SUFFIX.get(suffix);
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const body = suffix.slice(1);
    const digits = body[0] === '+' || body[0] === '-' ? body.slice(1) : body;
    if (digits === '' || digitsEnd(digits, 0) !== digits.length) return undefined;
    const n = BigInt(body);
    if (n > MAX_INT64 || n < -MAX_INT64 - 1n) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, n)), format: 'DecimalExponent' };
  }
  return undefined;
}

/**
 * Go `resource.ParseQuantity(str)`: `[+-]?` digits with an optional `.` and fraction (`1.`, `.5`, even `.` and a bare
 * sign read as 0), then a suffix `n u m k M G T P E`, `Ki..Ei` or an exponent `e3`/`E-2`. No blanks (callers that
 * decode a pod trim first), no other suffix (`1K` is `ErrSuffix`), no unicode digits. Values with more than 18
 * digits, a binary suffix on a fraction, or finer than 10^-9 take Go's `inf.Dec` path: rounded up to the nano, a
 * binary one capped at 2^63-1, and refused (`ErrNumeric`) when it has no digit at all.
 *
 * Long by design: ported recipe (quantity.go `ParseQuantity`, the int64 fast path then the `inf.Dec` path).
 */
export function parseQuantity(str: string): GoParsed<GoQuantity> {
  const err = (e: keyof typeof QUANTITY_ERRORS): GoParsed<GoQuantity> => ({ ok: false, error: QUANTITY_ERRORS[e] });
  if (str === '') return err('format');
  if (str === '0')
    return { ok: true, value: { negative: false, unscaled: 0n, exponent: 0, format: 'DecimalSI', int64: true } };
  const parts = splitQuantity(str);
  if (!parts) return err('format');
  const suffix = interpretSuffix(parts.suffix);
  if (!suffix) return err('suffix');
  const { negative, num, denom } = parts;
  const { base, exponent, format } = suffix;
  let precision: number;
  let shift = 0n;
  if (format === 'BinarySI') {
    precision = exponent >= 0 && denom.length === 0 ? 15 - num.length - Math.trunc((exponent * 3) / 10) - 1 : -1;
    shift = BigInt(exponent);
  } else {
    precision = 18 - (num.length + denom.length);
  }
  const scale = (format === 'BinarySI' ? 0 : exponent) - denom.length;
  if (precision >= 0 && scale >= -9) {
    const value = BigInt(num + denom);
    const result = value << shift;
    if (result <= MAX_INT64)
      return {
        ok: true,
        value: { negative: negative && result !== 0n, unscaled: result, exponent: scale, format, int64: true },
      };
  }
  // The inf.Dec path: the text before the suffix as a decimal (`inf.Dec.SetString` needs a digit).
  const digits = parts.value.replace(/^[+-]/, '');
  if (!/[0-9]/.test(digits)) return err('numeric');
  const [whole = '', frac = ''] = digits.split('.');
  let unscaled = BigInt(`0${whole}${frac}`);
  let exp = -frac.length;
  if (base === 10) exp += exponent;
  else unscaled <<= BigInt(exponent);
  if (unscaled !== 0n && exp < -9) {
    // amount.Round(amount, 9, inf.RoundUp): away from zero, at the nano.
    const drop = -9 - exp;
    const div = drop > unscaled.toString().length ? undefined : 10n ** BigInt(drop);
    unscaled = div === undefined ? 1n : (unscaled + div - 1n) / div;
    exp = -9;
  }
  let fmt = format;
  if (format === 'BinarySI') {
    // The binary exponent went into `unscaled`: `exp` is the fraction's (<= 0). Capped at 2^63-1 (`maxAllowed`).
    if (unscaled > MAX_INT64 * 10n ** BigInt(-exp)) [unscaled, exp] = [MAX_INT64, 0];
    if (unscaled !== 0n && exp < 0 && unscaled < 10n ** BigInt(-exp)) fmt = 'DecimalSI';
  }
  return {
    ok: true,
    value: { negative: negative && unscaled !== 0n, unscaled, exponent: exp, format: fmt, int64: false },
  };
}

/**
 * Go `Quantity.ScaledValue(scale)`: the value in units of 10^`scale` (`-3`: `MilliValue`, `0`: `Value`) as a
 * `bigint`, rounded up when it does not divide: away from zero on the int64 path, towards +infinity on the
 * `inf.Dec` path (`scaledValue`'s Euclidean division). Go wraps past int64; this does not (no mesh gets there).
 */
export function scaledValue(q: GoQuantity, scale: number): bigint {
  const signed = q.negative ? -q.unscaled : q.unscaled;
  const dif = scale - q.exponent;
  if (dif <= 0) return signed * 10n ** BigInt(-dif);
  const div = 10n ** BigInt(dif);
  const whole = q.unscaled / div;
  const exact = whole * div === q.unscaled;
  if (!q.negative) return exact ? whole : whole + 1n;
  if (exact) return -whole;
  return q.int64 ? -whole - 1n : -whole;
}
