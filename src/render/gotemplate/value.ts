/**
 * The Go value model the template engine executes on: a `Value` is a Go type plus a JavaScript
 * representation of the data, so that templates see Go's zero values, nil maps, nil pointers and
 * interface boxing exactly where Go would show them.
 *
 * Representations (`Value.v`) by kind:
 * - bool/string: the JS primitive; int/uint/float: a JS number (int64 beyond 2^53 loses precision);
 * - slice: a JS array of element representations, `null` for a nil slice;
 * - map: a JS object of element representations (string keys only), `null` for a nil map;
 * - struct: a JS object keyed by each field's JSON name (Kubernetes/protobuf JSON); an absent key is the
 *   field's zero value;
 * - ptr: the pointee's representation, `null` for nil;
 * - interface: only the nil interface is a Value of interface kind (`v` null). A non-nil interface is
 *   stored as its dynamic value: either a `Value` object, or plain JSON read as Go's `encoding/json`
 *   decodes into `any` (string, float64, bool, []interface {}, map[string]interface {}, nil);
 * - func: a `GoFunc`.
 * `NO_VALUE` is Go's invalid `reflect.Value` (a missing map key, an untyped nil).
 */

import { CHARS_PER_STEP, spendWork } from '../budget.ts';
import { getOrMake, setOwn } from '../../json.ts';
import { activeHooks } from './hooks.ts';

export type Kind =
  | 'invalid'
  | 'bool'
  | 'int'
  | 'uint'
  | 'float'
  | 'string'
  | 'slice'
  | 'map'
  | 'struct'
  | 'ptr'
  | 'interface'
  | 'func';

/** A struct field: Go name, JSON name (the representation's key), type, and `omitempty`. */
export interface GoField {
  name: string;
  json: string;
  type: GoType;
  omitempty: boolean;
  /** Converts the JSON form to the representation (e.g. a protobuf enum name to its number). */
  decode?: (raw: unknown) => unknown;
}

/** The Value of field `f` of a struct representation. */
export function fieldOf(obj: unknown, f: GoField): Value {
  const raw = f.json === '' ? obj : (obj as Record<string, unknown>)[f.json];
  return typed(f.type, f.decode ? f.decode(raw) : raw);
}

/** A method callable from a template (`.Foo.String`, `.ProxyConfig.GetTracing`): receiver representation in, Value out. */
export interface GoMethod {
  params: GoType[];
  call(recv: unknown, args: Value[]): Value;
}

/** A Go type as the template engine needs it. */
export interface GoType {
  kind: Kind;
  /** Go's `reflect.Type.String()`, e.g. `map[string]interface {}`, `*v1alpha1.ProxyConfig`, `int64`. */
  name: string;
  elem?: GoType;
  key?: GoType;
  fields?: GoField[];
  fieldIndex?: Map<string, GoField>;
  /** Methods by name; for a pointer type, those of `*T` (and `T`). */
  methods?: Map<string, GoMethod>;
  /** fmt's Stringer: the `String()` result for a representation. */
  stringer?: (v: unknown) => string;
  /** Custom `encoding/json` marshalling (protobuf enums, durations, opaque Kubernetes objects). */
  marshal?: (v: unknown) => unknown;
  /** For interface types other than `interface {}`: whether a type implements it. */
  implementedBy?: (t: GoType) => boolean;
  /** A type read from JSON without a Go schema: field access is refused, marshalling copies the JSON. */
  opaque?: boolean;
  /** Go prints values of this type in a way not reproduced here (protobuf messages' text form): printing throws. */
  noPrint?: boolean;
  /** The type is declared with only some of Go's fields (a missing one is named in the error). */
  partial?: boolean;
}

/** A Go value: its type and representation (see the module comment). */
export class Value {
  constructor(
    readonly t: GoType,
    // biome-ignore lint/suspicious/noExplicitAny: a Go value's representation depends on its type t (see the module comment); readers narrow by t.kind
    readonly v: any,
  ) {}
}

function basic(kind: Kind, name: string): GoType {
  return { kind, name };
}

export const INVALID: GoType = basic('invalid', '<invalid reflect.Value>');
export const BOOL = basic('bool', 'bool');
export const INT = basic('int', 'int');
export const INT32 = basic('int', 'int32');
export const INT64 = basic('int', 'int64');
export const UINT32 = basic('uint', 'uint32');
export const UINT64 = basic('uint', 'uint64');
export const FLOAT64 = basic('float', 'float64');
export const STRING = basic('string', 'string');
export const ANY: GoType = basic('interface', 'interface {}');
export const FUNC = basic('func', 'func');
/** The parameter type of builtins that take `reflect.Value` (they see the value as it is). */
export const REFLECT_VALUE: GoType = basic('interface', 'reflect.Value');

export const NO_VALUE = new Value(INVALID, undefined);
export const NIL = new Value(ANY, null);
export const TRUE = new Value(BOOL, true);
export const FALSE = new Value(BOOL, false);
export const EMPTY_STRING = new Value(STRING, '');

/** Module state by design: interned Go types keyed by immutable element types: the same type for every call. */
const sliceTypes = new Map<GoType, GoType>();
/** Module state by design: interned Go types keyed by immutable element types: the same type for every call. */
const mapTypes = new Map<GoType, GoType>();
/** Module state by design: interned Go types keyed by immutable element types: the same type for every call. */
const ptrTypes = new Map<GoType, GoType>();

/** `[]elem` (interned). */
export function sliceOf(elem: GoType): GoType {
  return getOrMake(sliceTypes, elem, () => ({ kind: 'slice', name: `[]${elem.name}`, elem }));
}

/** `map[string]elem` (interned). */
export function mapOf(elem: GoType): GoType {
  return getOrMake(mapTypes, elem, () => ({ kind: 'map', name: `map[string]${elem.name}`, key: STRING, elem }));
}

/** `*elem` (interned); carries the methods of `elem` (a pointer's method set includes T's). */
export function ptrTo(elem: GoType): GoType {
  let t = ptrTypes.get(elem);
  if (!t) {
    t = { kind: 'ptr', name: `*${elem.name}`, elem };
    if (elem.methods) t.methods = elem.methods;
    if (elem.stringer) t.stringer = elem.stringer;
    ptrTypes.set(elem, t);
  }
  return t;
}

export const SLICE_ANY = sliceOf(ANY);
export const MAP_ANY = mapOf(ANY);
export const MAP_STRING = mapOf(STRING);
export const SLICE_STRING = sliceOf(STRING);

/** Declares a struct type from its fields (in Go declaration order). */
export function structType(name: string, fields: GoField[], methods?: Map<string, GoMethod>): GoType {
  const t: GoType = { kind: 'struct', name, fields, fieldIndex: new Map(fields.map((f) => [f.name, f])) };
  if (methods) t.methods = methods;
  return t;
}

/** A field with `json:"<json>,omitempty"` (the Kubernetes and protobuf convention). */
export function field(
  name: string,
  type: GoType,
  json = name.charAt(0).toLowerCase() + name.slice(1),
  omitempty = true,
): GoField {
  return { name, json, type, omitempty };
}

/** The representation of a type's zero value. */
export function zeroRaw(t: GoType): unknown {
  switch (t.kind) {
    case 'bool':
      return false;
    case 'int':
    case 'uint':
    case 'float':
      return 0;
    case 'string':
      return '';
    case 'struct':
      return {};
    default:
      return null;
  }
}

/** The zero Value of a type (Go `reflect.Zero`). */
export function zero(t: GoType): Value {
  if (t === ANY) return NIL;
  if (t === STRING) return EMPTY_STRING;
  return new Value(t, zeroRaw(t));
}

/**
 * The Value of element representation `raw` whose static type is `t`: for `interface {}` the dynamic
 * value (JSON decoding rules), otherwise `raw` typed as `t` (`undefined`/`null` → zero where Go has no nil).
 */
export function typed(t: GoType, raw: unknown): Value {
  if (t.kind === 'interface') return dynamic(raw);
  if (raw === undefined || (raw === null && t.kind !== 'ptr' && t.kind !== 'map' && t.kind !== 'slice')) return zero(t);
  return new Value(t, raw);
}

/** The dynamic value inside an `interface {}` holding `raw` (a boxed Value or decoded JSON). */
export function dynamic(raw: unknown): Value {
  const kind = activeHooks()?.kindOf(raw);
  if (kind) return new Value(kind === 'float64' ? FLOAT64 : STRING, raw);
  if (raw instanceof Value) return raw;
  switch (typeof raw) {
    case 'string':
      return raw === '' ? EMPTY_STRING : new Value(STRING, raw);
    case 'number':
      return new Value(FLOAT64, raw);
    case 'boolean':
      return raw ? TRUE : FALSE;
    case 'object':
      if (raw === null) return NIL;
      return new Value(Array.isArray(raw) ? SLICE_ANY : MAP_ANY, raw);
    case 'undefined':
      return NIL;
    default:
      throw new Error(`unsupported data value of type ${typeof raw}`);
  }
}

/** The representation to store `v` in an `interface {}` slot (plain JSON when JSON decoding gives the same type back). */
export function box(v: Value): unknown {
  switch (v.t) {
    case STRING:
    case FLOAT64:
    case BOOL:
      return v.v;
    case SLICE_ANY:
    case MAP_ANY:
      return v.v === null ? v : v.v;
    case ANY:
    case INVALID:
      return null;
    default:
      return v;
  }
}

/** Whether the value is nil (Go `IsNil` for pointer, map, slice, func and interface kinds). */
export function isNil(v: Value): boolean {
  const k = v.t.kind;
  return (k === 'ptr' || k === 'map' || k === 'slice' || k === 'interface' || k === 'func') && v.v === null;
}

/** Go's `indirect`: follows pointers; stops at (and reports) a nil one. */
export function indirect(v: Value): { v: Value; isNil: boolean } {
  let cur = v;
  while (cur.t.kind === 'ptr' || cur.t.kind === 'interface') {
    if (cur.v === null) return { v: cur, isNil: true };
    cur = new Value(cur.t.elem as GoType, cur.v);
  }
  return { v: cur, isNil: false };
}

/** Go's `indirectInterface`: a nil interface becomes NO_VALUE. */
export function indirectInterface(v: Value): Value {
  return v.t.kind === 'interface' && v.v === null ? NO_VALUE : v;
}

/** Length of a string (in bytes, as Go counts), slice or map. */
export function lenOf(v: Value): number | undefined {
  switch (v.t.kind) {
    case 'string':
      return utf8Length(v.v as string);
    case 'slice':
      return v.v === null ? 0 : (v.v as unknown[]).length;
    case 'map':
      return v.v === null ? 0 : Object.keys(v.v as object).length;
    default:
      return undefined;
  }
}

/** UTF-8 byte length of a JS string. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Go template truth (`isTrue`); `ok` false for kinds Go cannot test. */
export function truth(v: Value): boolean {
  switch (v.t.kind) {
    case 'invalid':
      return false;
    case 'bool':
      return v.v as boolean;
    case 'int':
    case 'uint':
    case 'float':
      return v.v !== 0;
    case 'string':
      // A non-string representation is a sidecar-plan placeholder (src/render/plans.ts): never empty.
      return typeof v.v === 'string' ? v.v.length > 0 : true;
    case 'slice':
      return v.v !== null && (v.v as unknown[]).length > 0;
    case 'map':
      return v.v !== null && Object.keys(v.v as object).length > 0;
    case 'struct':
      return true;
    default:
      return v.v !== null;
  }
}

/** Map keys in Go's `fmtsort` order (strings sorted bytewise). */
export function sortedKeys(o: object): string[] {
  return Object.keys(o).sort(compareStrings);
}

/** Go string comparison (UTF-8 byte order; UTF-16 order agrees except for astral vs. U+E000–U+FFFF). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xs = x >= 0xd800 && x < 0xe000;
      const ys = y >= 0xd800 && y < 0xe000;
      if (xs !== ys) return xs ? 1 : -1;
      return x < y ? -1 : 1;
    }
  }
  return a.length < b.length ? -1 : 1;
}

/** Whether a value of type `from` can be passed where `to` is expected (Go assignability, by type identity). */
export function assignable(from: GoType, to: GoType): boolean {
  if (from === to || to === ANY || to === REFLECT_VALUE) return true;
  if (to.kind === 'interface') return to.implementedBy ? to.implementedBy(from) : false;
  return from.name === to.name;
}

/** Returns a Go-like JSON value (`encoding/json` `Marshal` semantics, as a JS value to `JSON.stringify`). */
export function toJSONValue(v: Value): unknown {
  // Every node read is work (inside a render, `../budget.ts`): a value that shares itself exponentially stops here.
  spendWork(typeof v.v === 'string' ? 1 + Math.floor(v.v.length / CHARS_PER_STEP) : 1);
  const t = v.t;
  if (t.marshal)
    return v.v === null && (t.kind === 'ptr' || t.kind === 'map' || t.kind === 'slice') ? null : t.marshal(v.v);
  switch (t.kind) {
    case 'invalid':
      return null;
    case 'bool':
    case 'string':
    case 'int':
    case 'uint':
    case 'float':
      return v.v;
    case 'interface':
      return v.v === null ? null : toJSONValue(dynamic(v.v));
    case 'ptr':
      return v.v === null ? null : toJSONValue(new Value(t.elem as GoType, v.v));
    case 'slice': {
      if (v.v === null) return null;
      const elem = t.elem as GoType;
      return (v.v as unknown[]).map((x) => toJSONValue(typed(elem, x)));
    }
    case 'map': {
      if (v.v === null) return null;
      const elem = t.elem as GoType;
      const out: Record<string, unknown> = {};
      for (const k of sortedKeys(v.v as object))
        setOwn(out, k, toJSONValue(typed(elem, (v.v as Record<string, unknown>)[k])));
      return out;
    }
    case 'struct': {
      const raw = v.v as Record<string, unknown>;
      if (t.opaque) return raw;
      const out: Record<string, unknown> = {};
      for (const f of t.fields ?? []) {
        if (f.json === '-') continue;
        const fv = fieldOf(raw, f);
        if (f.omitempty && isEmptyValue(fv)) continue;
        out[f.json] = toJSONValue(fv);
      }
      return out;
    }
    default:
      throw new Error(`json: unsupported type: ${t.name}`);
  }
}

/** encoding/json `isEmptyValue` (what `omitempty` leaves out): false, 0, "", nil, empty map or slice; structs never. */
export function isEmptyValue(v: Value): boolean {
  switch (v.t.kind) {
    case 'bool':
      return v.v === false;
    case 'int':
    case 'uint':
    case 'float':
      return v.v === 0;
    case 'string':
      return v.v === '';
    case 'slice':
    case 'map':
      return v.v === null || lenOf(v) === 0;
    case 'ptr':
    case 'interface':
    case 'func':
      return v.v === null;
    default:
      return false;
  }
}

/** Go `json.Marshal` text of a JSON-like JS value: HTML-safe escaping, Go float formatting, as `encoding/json`. */
export function goJSON(x: unknown): string {
  if (x === null || x === undefined) return 'null';
  switch (typeof x) {
    case 'string':
      return goJSONString(x);
    case 'number':
      return goJSONNumber(x);
    case 'boolean':
      return x ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(x)) return `[${x.map(goJSON).join(',')}]`;
      const o = x as Record<string, unknown>;
      return `{${Object.keys(o)
        .map((k) => `${goJSONString(k)}:${goJSON(o[k])}`)
        .join(',')}}`;
    }
    default:
      throw new Error(`json: unsupported value ${String(x)}`);
  }
}

/** encoding/json string escaping (HTML-safe: `<`, `>`, `&`, U+2028, U+2029 as `\u00XX`). */
export function goJSONString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** encoding/json float64 formatting: `%f`-like unless the exponent is < -6 or >= 21, then `1e+21` form with a short exponent. */
export function goJSONNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`json: unsupported value: ${n}`);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) {
    return n.toExponential();
  }
  return String(n) === '-0' ? '-0' : String(n);
}

/**
 * A function callable from templates: Go parameter types (the last one is the element type when
 * `variadic`), and an implementation on Values. It throws an `Error` for Go's returned error (shown as
 * `error calling NAME: <message>`).
 */
export interface GoFunc {
  params: GoType[];
  variadic: boolean;
  fn: (...args: Value[]) => Value;
  /**
   * The function's own sidecar-plan rule (see `plan-rules.ts`), for functions a driver adds: called instead of
   * `fn` when an argument holds plan data; `real` is `fn`. It throws `NoPlan` for what it cannot plan.
   */
  plan?: (args: Value[], real: (...args: Value[]) => Value) => Value;
}

/** Declares a function: `fn(params, impl)` or `fn(params, impl, true)` for a variadic last parameter. */
export function goFunc(params: GoType[], impl: (...args: Value[]) => Value, variadic = false): GoFunc {
  return { params, variadic, fn: impl };
}
