/**
 * Go's decoders of typed config, as the webhooks run them on the YAML a user gives (part of ./go-parse.ts):
 * - `encoding/json` into a Go struct field, after `sigs.k8s.io/yaml` turned the YAML into JSON (kuma-cp's
 *   `config.Load`, pkg/config/loader.go; Linkerd `ValuesFromConfigMap`, pkg/charts/linkerd2/values.go): a JSON
 *   number into an integer field must be an integer literal in the type's range; a string, a bool, a list or an
 *   object is refused (`json: cannot unmarshal string into Go struct field X of type uint32`); only JSON `true` and
 *   `false` go into a bool field.
 * - `github.com/golang/protobuf/jsonpb` into a proto field (Istio `protomarshal.ApplyYAML` of mesh config and
 *   values, pkg/util/protomarshal): like `encoding/json`, except that an integer field also takes a string holding
 *   the JSON number (`trimQuote`: the quotes stripped, the rest decoded as JSON, jsonpb/decode.go).
 *
 * The JSON value here is what the YAML parser gave: a number is a JS number, written back as Go's `json.Marshal`
 * writes a float64 (`1.0` → `1`, `1e3` → `1000`, `1e21` → `1e+21`), which is the text Go then decodes.
 */
import type { Json } from '../model.ts';
import type { GoParsed } from './go-parse.ts';
import { goJSONNumber } from '../render/gotemplate/value.ts';

/** The Go integer types of the config fields the drivers read (`int` and `uint` are 64-bit, as on every kuma-cp build). */
export type GoIntType = 'int' | 'int32' | 'int64' | 'uint' | 'uint16' | 'uint32' | 'uint64';

const RANGES: Readonly<Record<GoIntType, readonly [bigint, bigint]>> = {
  int: [-(1n << 63n), (1n << 63n) - 1n],
  int64: [-(1n << 63n), (1n << 63n) - 1n],
  int32: [-(1n << 31n), (1n << 31n) - 1n],
  uint: [0n, (1n << 64n) - 1n],
  uint64: [0n, (1n << 64n) - 1n],
  uint32: [0n, (1n << 32n) - 1n],
  uint16: [0n, (1n << 16n) - 1n],
};

/** The word Go's `UnmarshalTypeError` uses for a JSON value: `string`, `number <text>`, `bool`, `array`, `object`. */
function jsonValueWord(v: Json): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return `number ${goJSONNumber(v)}`; // as json.Marshal wrote it: `1e+21`, `1e-7`
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

/** Go's `UnmarshalTypeError` text for `field` (a dotted path of json names). */
function typeError(v: Json, field: string, type: string): string {
  return `json: cannot unmarshal ${jsonValueWord(v)} into Go struct field ${field} of type ${type}`;
}

/** The integer a JSON number literal holds when Go's `strconv.ParseInt`/`ParseUint` reads its text, else undefined. */
function integerOf(n: number): bigint | undefined {
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? BigInt(n) : undefined;
}

/**
 * Go `encoding/json` of a JSON value into an integer field of `type` (`field` names it in the error). `null` leaves
 * the field as it was: `undefined`. Values past 2^53 come back rounded (the JSON number was already a double).
 */
export function decodeJsonInt(v: Json, type: GoIntType, field: string): GoParsed<number> | undefined {
  if (v === null) return undefined;
  const n = typeof v === 'number' ? integerOf(v) : undefined;
  const [min, max] = RANGES[type];
  if (n === undefined || n < min || n > max) return { ok: false, error: typeError(v, field, type) };
  return { ok: true, value: Number(n) };
}

/** Go `encoding/json` of a JSON value into a `bool` field: only `true` and `false`; `null` is `undefined`. */
export function decodeJsonBool(v: Json, field: string): GoParsed<boolean> | undefined {
  if (v === null) return undefined;
  return typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, error: typeError(v, field, 'bool') };
}

/** Go `encoding/json` into a `[]<type>` field: a list whose every item decodes (`field[i]` names a bad one). */
export function decodeJsonIntList(v: Json, type: GoIntType, field: string): GoParsed<number[]> | undefined {
  if (v === null) return undefined;
  if (!Array.isArray(v)) return { ok: false, error: typeError(v, field, `[]${type}`) };
  const out: number[] = [];
  for (const item of v) {
    const d = decodeJsonInt(item, type, field);
    if (d && !d.ok) return d;
    out.push(d ? d.value : 0);
  }
  return { ok: true, value: out };
}

/** Go `quoteChar` (encoding/json scanner errors): `'x'`, `'\\''` for a quote, escapes as `strconv.Quote` writes them. */
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return `'"'`;
  return `'${JSON.stringify(c).slice(1, -1)}'`;
}

/**
 * The syntax error Go's JSON scanner gives for `text` as one JSON number (blanks around it allowed), or undefined
 * when it is one. Covers what reaches an integer field: signs, digits, a fraction, an exponent, other characters.
 */
function jsonNumberSyntax(text: string): string | undefined {
  const s = text.replace(/^[ ]+/, '');
  if (s === '') return 'unexpected end of JSON input';
  const m = /^(-?)(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][+-]?[0-9]*)?/.exec(s);
  const [all = '', sign = '', int, frac, exp] = m ?? [];
  if (sign === '' && int === undefined)
    return `invalid character ${quoteChar(s[0] ?? '')} looking for beginning of value`;
  const next = s[all.length];
  const where =
    int === undefined
      ? ' in numeric literal'
      : frac === '.'
        ? ' after decimal point in numeric literal'
        : exp !== undefined && /[eE][+-]?$/.test(exp)
          ? ' in exponent of numeric literal'
          : undefined;
  if (where !== undefined)
    return next === undefined ? 'unexpected end of JSON input' : `invalid character ${quoteChar(next)}${where}`;
  const rest = s.slice(all.length).replace(/^[ ]+/, '');
  return rest === '' ? undefined : `invalid character ${quoteChar(rest[0] ?? '')} after top-level value`;
}

/**
 * `jsonpb` of a JSON value into a proto integer field (`int32`, `uint32`, `int64`, `uint64`): a number as
 * `encoding/json` takes it, or a string holding one (`"15020"`, `" 15020 "`; not `"+1"`, `"015"`, `"0x10"`; `"1e3"`
 * and `"1.5"` are JSON numbers that are not integer literals). Only spaces count as blanks: YAML's tabs and newlines
 * reach jsonpb escaped (`\t`), which is not JSON. Errors are Go's (`json: cannot unmarshal number 1.5 into Go value
 * of type int32`, `invalid character '+' looking for beginning of value`); `field` names the field in a type error.
 */
export function decodeJsonpbInt(v: Json, type: GoIntType, field: string): GoParsed<number> | undefined {
  if (typeof v !== 'string') return decodeJsonInt(v, type, field);
  const syntax = jsonNumberSyntax(v);
  if (syntax !== undefined) return { ok: false, error: syntax };
  const literal = v.trim();
  const n = /^-?[0-9]+$/.test(literal) ? BigInt(literal) : undefined;
  const [min, max] = RANGES[type];
  if (n !== undefined && n >= min && n <= max) return { ok: true, value: Number(n) };
  return { ok: false, error: `json: cannot unmarshal number ${literal} into Go value of type ${type}` };
}

/** `jsonpb` of a JSON value into a proto `bool` or `google.protobuf.BoolValue` field: only `true` and `false`. */
export function decodeJsonpbBool(v: Json, field: string): GoParsed<boolean> | undefined {
  return decodeJsonBool(v, field);
}
