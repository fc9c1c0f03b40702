/**
 * Helpers shared by the Sprig function families (sprig-*.ts): Go `interface{}` views of a value, Sprig's
 * conversions (`strval`, `toInt64`, `empty`), Go string helpers and JSON rendering.
 */
import { sprint } from './fmt.ts';
import {
  ANY,
  FALSE,
  NIL,
  SLICE_ANY,
  STRING,
  TRUE,
  Value,
  box,
  goJSON,
  indirectInterface,
  isEmptyValue,
  toJSONValue,
  typed,
} from './value.ts';
import { BudgetExceeded, checkIndent } from '../budget.ts';

/** A Go `string` value. */
export const str = (s: string): Value => new Value(STRING, s);
/** A Go `bool` value (the shared TRUE / FALSE). */
export const bool = (b: boolean): Value => (b ? TRUE : FALSE);

/** A value as Go's `interface{}` argument sees it (NO_VALUE → nil). */
export function iface(v: Value): Value {
  return v.t.kind === 'invalid' ? NIL : v;
}

/** Whether a value is a nil `interface{}` (no value, or an untyped nil). */
export function isNilIface(v: Value): boolean {
  return v.t.kind === 'invalid' || (v.t === ANY && v.v === null);
}

/** Sprig `strval`: strings as is, Stringers by String(), the rest with `%v`. */
export function strval(v: Value): string {
  if (v.t.kind === 'string' && !v.t.stringer) return v.v as string;
  if (isNilIface(v)) return '<nil>';
  return sprint([v]);
}

/** Sprig `empty`: Go's zero-ish values (nil, false, 0, "", empty collections; structs are never empty). */
export function sprigEmpty(v0: Value): boolean {
  const v = indirectInterface(v0);
  return v.t.kind === 'invalid' || isEmptyValue(v);
}

/** A slice's elements as typed values (through interfaces; a nil slice has none), or undefined for a non-slice. */
export function elements(v0: Value): Value[] | undefined {
  const v = indirectInterface(v0);
  if (v.t.kind !== 'slice') return undefined;
  const elem = v.t.elem as Value['t'];
  return ((v.v as unknown[] | null) ?? []).map((x) => typed(elem, x));
}

/** A `[]interface{}` of the given values (Sprig's `list` result). */
export function listOf(items: Value[]): Value {
  return new Value(
    SLICE_ANY,
    items.map((x) => box(iface(x))),
  );
}

/** Sprig `strslice`: a list's elements as strings (nil elements skipped), or `[strval(v)]`. */
export function strslice(v0: Value): string[] {
  const v = indirectInterface(v0);
  if (v.t.kind === 'invalid') return [];
  const items = elements(v);
  if (!items) return [strval(v)];
  return items.filter((x) => !isNilIface(x)).map(strval);
}

/** cast.ToInt64E-like conversion (sprig `toInt64`): numbers truncate, strings parse (base 0), bools 0/1, else 0. */
export function toInt64(v0: Value): number {
  const v = indirectInterface(v0);
  switch (v.t.kind) {
    case 'int':
    case 'uint':
      return v.v as number;
    case 'float':
      return Math.trunc(v.v as number);
    case 'bool':
      return v.v ? 1 : 0;
    case 'string': {
      const s = (v.v as string).replace(/\.0*$/, '');
      if (/^[+-]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9][0-9]*|0)$/.test(s)) {
        const neg = s.startsWith('-');
        const body = s.replace(/^[+-]/, '');
        const n = /^0[0-7]+$/.test(body) ? parseInt(body, 8) : Number(body.replace(/^0[oO]/, '0o'));
        return neg ? -n : n;
      }
      return 0;
    }
    default:
      return 0;
  }
}

/** cast.ToFloat64E-like conversion (sprig `float64`): numbers as is, numeric strings parse, bools 0/1, else 0. */
export function toFloat64(v0: Value): number {
  const v = indirectInterface(v0);
  switch (v.t.kind) {
    case 'int':
    case 'uint':
    case 'float':
      return v.v as number;
    case 'bool':
      return v.v ? 1 : 0;
    case 'string': {
      const n = Number(v.v);
      return (v.v as string).trim() !== '' && Number.isFinite(n) ? n : 0;
    }
    default:
      return 0;
  }
}

/** Sprig `trunc`: the first `c` bytes of `s` (UTF-8), or for negative `c` the last `-c`; `s` when shorter. */
export function goTrunc(c: number, s: string): string {
  const b = Buffer.from(s, 'utf8');
  if (c < 0 && b.length + c > 0) return b.subarray(b.length + c).toString('utf8');
  if (c >= 0 && b.length > c) return b.subarray(0, c).toString('utf8');
  return s;
}

/** Go `strings.Trim(s, cutset)`. */
export function trimSet(s: string, cutset: string): string {
  const set = new Set([...cutset]);
  const chars = [...s];
  let i = 0;
  let j = chars.length;
  while (i < j && set.has(chars[i] as string)) i++;
  while (j > i && set.has(chars[j - 1] as string)) j--;
  return chars.slice(i, j).join('');
}

/** Go `strings.TrimSpace`. */
export function goTrimSpace(s: string): string {
  return s.replace(/^[\t\n\v\f\r \u0085\u00a0]+|[\t\n\v\f\r \u0085\u00a0]+$/g, '');
}

/**
 * Sprig `indent`: every line, the first included, gets `n` spaces.
 * @throws BudgetExceeded (`../budget.ts`) for a result past the output budget, before it is made
 */
export function sprigIndent(n: number, s: string): string {
  checkIndent(n, s);
  const pad = ' '.repeat(Math.max(0, n));
  return pad + s.split('\n').join(`\n${pad}`);
}

/**
 * What sprig's JSON functions return when encoding fails: `""` (sprig drops the error), except that a template
 * budget running out (`BudgetExceeded`) stops the render as everywhere else.
 * @throws BudgetExceeded
 */
export function failedJSON(e: unknown): Value {
  if (e instanceof BudgetExceeded) throw e;
  return str('');
}

/** A value as compact JSON, Go `encoding/json` style (sprig `toJson`). */
export function jsonOf(v: Value): string {
  return goJSON(toJSONValue(v));
}

/** JSON with two-space indentation after `indent`, like Go's `json.MarshalIndent(x, "", "  ")`. */
export function prettyJSON(x: unknown, indent: string): string {
  if (x === null || typeof x !== 'object') return goJSON(x);
  const inner = `${indent}  `;
  if (Array.isArray(x))
    return x.length === 0 ? '[]' : `[\n${x.map((e) => inner + prettyJSON(e, inner)).join(',\n')}\n${indent}]`;
  const keys = Object.keys(x);
  if (keys.length === 0) return '{}';
  const o = x as Record<string, unknown>;
  return `{\n${keys.map((k) => `${inner}${goJSON(k)}: ${prettyJSON(o[k], inner)}`).join(',\n')}\n${indent}}`;
}

/** A map's entries by key (through interfaces; a nil map or a non-map gives no entries). */
export function mapEntries(v0: Value): Record<string, unknown> {
  const v = indirectInterface(v0);
  return v.t.kind === 'map' && v.v !== null ? (v.v as Record<string, unknown>) : {};
}

/** Go `reflect.Kind.String()` of a value (sprig `kindOf`). */
export function kindName(v0: Value): string {
  const v = indirectInterface(v0);
  switch (v.t.kind) {
    case 'invalid':
      return 'invalid';
    case 'int':
    case 'uint':
    case 'float':
      return v.t.name === 'int' ? 'int' : v.t.name;
    case 'ptr':
      return 'ptr';
    default:
      return v.t.kind;
  }
}

/** reflect.DeepEqual on template values (as JSON plus type name). */
export function deepEqual(a: Value, b: Value): boolean {
  if (isNilIface(a) || isNilIface(b)) return isNilIface(a) && isNilIface(b);
  if (a.t.name !== b.t.name) return false;
  return jsonOf(a) === jsonOf(b);
}
