/**
 * Go `encoding/json` over typed structs, for the JSON a mesh's Go code writes into a pod (Istio's
 * `ISTIO_KUBE_APP_PROBERS`, pkg/kube/inject/app_probe.go): a value is first decoded into a Go struct type, as Go's
 * decoder fills it, then written as `json.Marshal` writes it.
 * - Decoding keeps only the struct's fields, matched by JSON name (exactly, or with `caseInsensitive` also by
 *   Unicode simple case folding, as `encoding/json` matches keys; a later key wins); a field absent or `null` keeps
 *   its zero value; a value of another type is Go's `UnmarshalTypeError`.
 * - Writing gives the fields in declaration order, leaves out `omitempty` fields that hold their zero value, writes
 *   map keys sorted bytewise (UTF-8) and escapes strings HTML-safe (`<`, `>`, `&`, U+2028, U+2029 as `\u00XX`).
 * Pure.
 */
import { setOwn } from '../json.ts';
import type { Json, JsonObject } from '../model.ts';
import { compareStrings, goJSON, goJSONNumber, goJSONString } from '../render/gotemplate/value.ts';
import { decodeJsonInt } from './go-parse-decode.ts';

/** Go `json.Marshal` of untyped data (keys in the object's order) and of one string: the templates' own writer. */
export { goJSON, goJSONString };

/** A Go type as `encoding/json` sees it. `intOrString` is Kubernetes' `intstr.IntOrString` (its own `UnmarshalJSON`). */
export type GoJsonType =
  | { readonly kind: 'string' | 'int32' | 'intOrString' }
  | { readonly kind: 'pointer'; readonly elem: GoJsonType }
  | { readonly kind: 'slice'; readonly elem: GoJsonType }
  | { readonly kind: 'map'; readonly elem: GoJsonType }
  | { readonly kind: 'struct'; readonly name: string; readonly fields: readonly GoJsonField[] };

/** A struct field: its JSON name (the tag's), its type, and whether the tag says `omitempty`. */
export interface GoJsonField {
  readonly json: string;
  readonly type: GoJsonType;
  readonly omitEmpty?: boolean;
}

/** Go's decoding error (`UnmarshalTypeError` text) and where it is, as a path of JSON names and indexes. */
export class GoJsonError extends Error {
  constructor(
    message: string,
    readonly path: ReadonlyArray<string | number>,
  ) {
    super(message);
  }
}

/** Scalar and composite types used by the tables that describe a mesh's structs. */
export const GO = {
  string: { kind: 'string' },
  int32: { kind: 'int32' },
  intOrString: { kind: 'intOrString' },
  pointer: (elem: GoJsonType): GoJsonType => ({ kind: 'pointer', elem }),
  slice: (elem: GoJsonType): GoJsonType => ({ kind: 'slice', elem }),
  map: (elem: GoJsonType): GoJsonType => ({ kind: 'map', elem }),
  struct: (name: string, fields: readonly GoJsonField[]): GoJsonType => ({ kind: 'struct', name, fields }),
} as const;

/** Unicode simple case folding of a key, as far as `bytes.EqualFold` reaches JSON names (`K` Kelvin, `ſ` long s). */
function fold(s: string): string {
  return s.toUpperCase().toLowerCase();
}

/** `json: cannot unmarshal <what> into Go struct field <Struct.path> of type <type>`, Go's text. */
function typeError(v: Json, type: GoJsonType, owner: string, path: ReadonlyArray<string | number>): GoJsonError {
  const what =
    typeof v === 'string'
      ? 'string'
      : typeof v === 'number'
        ? `number ${goJSONNumber(v)}`
        : typeof v === 'boolean'
          ? 'bool'
          : Array.isArray(v)
            ? 'array'
            : 'object';
  const names = path.filter((p): p is string => typeof p === 'string').join('.');
  const into = owner === '' || names === '' ? 'Go value' : `Go struct field ${owner}.${names}`;
  return new GoJsonError(`json: cannot unmarshal ${what} into ${into} of type ${typeName(type)}`, path);
}

/** The Go spelling of a type, for error messages (`string`, `*v1.GRPCAction`, `[]v1.HTTPHeader`). */
function typeName(t: GoJsonType): string {
  switch (t.kind) {
    case 'pointer':
      return `*${typeName(t.elem)}`;
    case 'slice':
      return `[]${typeName(t.elem)}`;
    case 'map':
      return `map[string]${typeName(t.elem)}`;
    case 'struct':
      return t.name;
    case 'intOrString':
      return 'int32';
    default:
      return t.kind;
  }
}

/** The zero value of a type, in decoded form. */
function zero(t: GoJsonType): Json {
  switch (t.kind) {
    case 'string':
      return '';
    case 'int32':
    case 'intOrString':
      return 0;
    case 'struct': {
      const out: JsonObject = {};
      for (const f of t.fields) out[f.json] = zero(f.type);
      return out;
    }
    default:
      return null;
  }
}

/**
 * Go `json.Unmarshal` of `v` (JSON data) into a fresh value of type `t`: a struct becomes an object with every
 * field, in declaration order (zero values for the absent ones); a nil pointer, slice or map is null. Keys match
 * exactly, or with `caseInsensitive` as `encoding/json` matches them.
 * @throws GoJsonError where Go's decoder reports an `UnmarshalTypeError` (named after `t` when it is a struct)
 */
export function decodeGo(v: Json, t: GoJsonType, opts: { caseInsensitive?: boolean } = {}): Json {
  return decodeAt(v, t, t.kind === 'struct' ? t.name : '', [], opts.caseInsensitive === true);
}

function decodeAt(
  v: Json,
  t: GoJsonType,
  owner: string,
  path: ReadonlyArray<string | number>,
  caseInsensitive: boolean,
): Json {
  if (v === null) return zero(t); // null leaves a fresh value as it is (nil for a pointer, slice or map)
  switch (t.kind) {
    case 'string':
      if (typeof v !== 'string') throw typeError(v, t, owner, path);
      return v;
    case 'int32':
    case 'intOrString': {
      // IntOrString.UnmarshalJSON: a JSON string is the string form; anything else decodes into its int32
      if (t.kind === 'intOrString' && typeof v === 'string') return v;
      const n = decodeJsonInt(v, 'int32', '');
      if (!n?.ok) throw typeError(v, t, owner, path);
      return n.value;
    }
    case 'pointer':
      return decodeAt(v, t.elem, owner, path, caseInsensitive);
    case 'slice':
      if (!Array.isArray(v)) throw typeError(v, t, owner, path);
      return v.map((x, i) => decodeAt(x, t.elem, owner, [...path, i], caseInsensitive));
    case 'map': {
      if (typeof v !== 'object' || Array.isArray(v)) throw typeError(v, t, owner, path);
      const out: JsonObject = {};
      for (const [k, x] of Object.entries(v)) setOwn(out, k, decodeAt(x, t.elem, owner, [...path, k], caseInsensitive));
      return out;
    }
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) throw typeError(v, t, owner, path);
      const out = zero(t) as JsonObject;
      for (const [k, x] of Object.entries(v)) {
        const f =
          t.fields.find((g) => g.json === k) ??
          (caseInsensitive ? t.fields.find((g) => fold(g.json) === fold(k)) : undefined);
        if (f) out[f.json] = decodeAt(x, f.type, owner, [...path, f.json], caseInsensitive);
      }
      return out;
    }
  }
}

/** Whether Go's `omitempty` leaves a decoded value out: `""`, `0`, a nil pointer, an empty or nil slice or map. */
function isEmpty(v: Json, t: GoJsonType): boolean {
  if (t.kind === 'struct') return false; // omitempty never leaves out a struct value
  if (t.kind === 'intOrString') return false; // a struct in Go
  if (t.kind === 'pointer') return v === null; // a pointer to "" or 0 is kept
  if (v === null || v === '' || v === 0) return true;
  return (
    (t.kind === 'slice' && Array.isArray(v) && v.length === 0) ||
    (t.kind === 'map' && typeof v === 'object' && Object.keys(v as object).length === 0)
  );
}

/** Go `json.Marshal` of `v`, a value in decoded form ({@link decodeGo}) of type `t`. */
export function encodeGo(v: Json, t: GoJsonType): string {
  switch (t.kind) {
    case 'string':
      return goJSONString(typeof v === 'string' ? v : '');
    case 'int32':
      return goJSONNumber(typeof v === 'number' ? v : 0);
    case 'intOrString':
      return typeof v === 'string' ? goJSONString(v) : goJSONNumber(typeof v === 'number' ? v : 0);
    case 'pointer':
      return v === null ? 'null' : encodeGo(v, t.elem);
    case 'slice':
      return Array.isArray(v) ? `[${v.map((x) => encodeGo(x, t.elem)).join(',')}]` : 'null';
    case 'map': {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'null';
      const o = v;
      const parts = Object.keys(o)
        .sort(compareStrings)
        .map((k) => `${goJSONString(k)}:${encodeGo(o[k] ?? null, t.elem)}`);
      return `{${parts.join(',')}}`;
    }
    case 'struct': {
      const o = (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : zero(t)) as JsonObject;
      const parts: string[] = [];
      for (const f of t.fields) {
        const x = Object.hasOwn(o, f.json) ? (o[f.json] as Json) : zero(f.type);
        if (f.omitEmpty && isEmpty(x, f.type)) continue;
        parts.push(`${goJSONString(f.json)}:${encodeGo(x, f.type)}`);
      }
      return `{${parts.join(',')}}`;
    }
  }
}
