/**
 * Go `text/template` value semantics the Istio template ports depend on: truthiness, `fmt.Sprint`
 * formatting of JSON-decoded values, and sprig's notion of "empty". Pure functions, no I/O.
 */

import { CHARS_PER_STEP, spendWork } from './budget.ts';

/**
 * Go template truthiness (`text/template` `isTrue`): false for `nil`, `false`, `0`, `""`, and empty
 * arrays and maps; true otherwise. Differs from Handlebars, where `{}` is truthy and `0` is falsy.
 */
export function isTruthy(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** sprig `empty`: the values `default` replaces (same set as Go falsiness). */
export function isEmpty(v: unknown): boolean {
  return !isTruthy(v);
}

/**
 * Go `%v` of a float64 (what JSON numbers in Istio's `Values` map are): `strconv.FormatFloat(f, 'g', -1, 64)`,
 * i.e. the shortest round-trip digits, in exponent form when the decimal exponent is < -4 or >= 6.
 * Examples: 15020 → `15020`, 1000000 → `1e+06`, 0.5 → `0.5`, 1e-5 → `1e-05`.
 */
export function formatGoFloat(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  // An integer below 10^6 in magnitude prints as its decimal digits in both ('g' keeps exponents < 6 plain):
  // ports and counts, the common case, without the exponent form (`toExponential` costs ~0.2 µs a call).
  if (Number.isInteger(n) && n > -1e6 && n < 1e6) return String(n);
  return goFloatGeneral(n);
}

/** `formatGoFloat` of a finite, non-zero `n` by its shortest digits and exponent: the general path. */
export function goFloatGeneral(n: number): string {
  // Shortest round-trip digits and the decimal exponent, from JS's own shortest formatting.
  const [mant, expStr] = Math.abs(n).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const exp = Number(expStr);
  // strconv 'g' with shortest precision decides the form with eprec = 6.
  const eprec = 6;
  const sign = n < 0 ? '-' : '';
  if (exp < -4 || exp >= eprec) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/**
 * Go `fmt.Sprint` of a JSON-decoded value: `<nil>` for null, `%v` floats, `true`/`false`, `map[k:v ...]`
 * (sorted keys) and `[a b]` for composites. Used by Istio's `annotation` default and by printing.
 */
export function goSprint(v: unknown): string {
  // Every node printed is work (inside a render, `./budget.ts`): a value that shares itself exponentially stops here.
  spendWork(typeof v === 'string' ? 1 + Math.floor(v.length / CHARS_PER_STEP) : 1);
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatGoFloat(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(goSprint).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goSprint(o[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}

/**
 * How a Go template prints a value with `{{ . }}`: like `goSprint`, but a missing map entry prints
 * `<no value>`. `undefined` stands for "missing" here, `null` for an explicit nil.
 */
export function goPrint(v: unknown): string {
  if (v === undefined) return '<no value>';
  return goSprint(v);
}

/**
 * Go `time.Duration.String()` of a protobuf JSON duration (`"45s"`, `"0.5s"`, `"1.5m"` is not
 * valid protobuf JSON but `"90s"` is): `45s`, `500ms`, `1m30s`, `0s`. Unparseable input is returned as is.
 */
export function formatGoDuration(d: unknown): string {
  if (typeof d !== 'string') return '0s';
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(d.trim());
  if (!m) return d;
  const neg = m[1] === '-';
  const totalNs = BigInt(m[2] as string) * 1_000_000_000n + BigInt(`${m[3] ?? ''}000000000`.slice(0, 9));
  if (totalNs === 0n) return '0s';
  const sign = neg ? '-' : '';
  if (totalNs < 1_000_000_000n) {
    const units: Array<[bigint, string]> = [
      [1_000_000n, 'ms'],
      [1_000n, 'µs'],
      [1n, 'ns'],
    ];
    for (const [size, unit] of units) {
      if (totalNs >= size) return `${sign}${fraction(totalNs, size)}${unit}`;
    }
  }
  const h = totalNs / 3_600_000_000_000n;
  const rem = totalNs % 3_600_000_000_000n;
  const min = rem / 60_000_000_000n;
  const secNs = rem % 60_000_000_000n;
  const secs = `${fraction(secNs, 1_000_000_000n)}s`;
  if (h > 0n) return `${sign}${h}h${min}m${secs}`;
  if (min > 0n) return `${sign}${min}m${secs}`;
  return `${sign}${secs}`;
}

function fraction(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const frac = value % unit;
  if (frac === 0n) return `${whole}`;
  const width = unit.toString().length - 1;
  return `${whole}.${frac.toString().padStart(width, '0').replace(/0+$/, '')}`;
}
