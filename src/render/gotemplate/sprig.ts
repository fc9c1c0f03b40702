/**
 * The Sprig v3 text functions (github.com/Masterminds/sprig, `TxtFuncMap`) that Istio's injector makes
 * available to its templates, written from Sprig's documented behaviour: strings (`quote`, `trunc`,
 * `trimSuffix`, `indent`, `nindent`, ...), lists (`list`, `append`, `first`, `join`, ...), dicts
 * (`dict`, `hasKey`, `get`, `pick`), defaults (`default`, `empty`, `coalesce`, `ternary`), conversion,
 * JSON and integer math. Functions that read the clock, randomness, the environment or the file
 * system, and those that mutate their arguments (`set`, `unset`, `merge`), are deliberately absent:
 * a template calling one fails to parse with `function "x" not defined`.
 */
import { createHash } from 'node:crypto';
import { sprint, sprintf } from './fmt.ts';
import { goQuoteString } from './lex.ts';
import {
  ANY,
  BOOL,
  FALSE,
  FLOAT64,
  type GoFunc,
  INT,
  INT64,
  MAP_ANY,
  NIL,
  SLICE_ANY,
  SLICE_STRING,
  STRING,
  TRUE,
  Value,
  box,
  dynamic,
  goFunc,
  goJSON,
  indirectInterface,
  isEmptyValue,
  toJSONValue,
  typed,
} from './value.ts';
import { BudgetExceeded, checkBuild, checkIndent, checkList, spendWork } from '../budget.ts';
import { setOwn } from '../../json.ts';

const str = (s: string): Value => new Value(STRING, s);
const bool = (b: boolean): Value => (b ? TRUE : FALSE);

/** A value as Go's `interface{}` argument sees it (NO_VALUE → nil). */
function iface(v: Value): Value {
  return v.t.kind === 'invalid' ? NIL : v;
}

function isNilIface(v: Value): boolean {
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

function elements(v0: Value): Value[] | undefined {
  const v = indirectInterface(v0);
  if (v.t.kind !== 'slice') return undefined;
  const elem = v.t.elem as Value['t'];
  return ((v.v as unknown[] | null) ?? []).map((x) => typed(elem, x));
}

function listOf(items: Value[]): Value {
  return new Value(
    SLICE_ANY,
    items.map((x) => box(iface(x))),
  );
}

/** Sprig `strslice`: a list's elements as strings (nil elements skipped), or `[strval(v)]`. */
function strslice(v0: Value): string[] {
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

function toFloat64(v0: Value): number {
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

function goTrunc(c: number, s: string): string {
  const b = Buffer.from(s, 'utf8');
  if (c < 0 && b.length + c > 0) return b.subarray(b.length + c).toString('utf8');
  if (c >= 0 && b.length > c) return b.subarray(0, c).toString('utf8');
  return s;
}

/** Go `strings.Trim(s, cutset)`. */
function trimSet(s: string, cutset: string): string {
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

function jsonOf(v: Value): string {
  return goJSON(toJSONValue(v));
}

function prettyJSON(x: unknown, indent: string): string {
  if (x === null || typeof x !== 'object') return goJSON(x);
  const inner = `${indent}  `;
  if (Array.isArray(x))
    return x.length === 0 ? '[]' : `[\n${x.map((e) => inner + prettyJSON(e, inner)).join(',\n')}\n${indent}]`;
  const keys = Object.keys(x);
  if (keys.length === 0) return '{}';
  const o = x as Record<string, unknown>;
  return `{\n${keys.map((k) => `${inner}${goJSON(k)}: ${prettyJSON(o[k], inner)}`).join(',\n')}\n${indent}}`;
}

function mapEntries(v0: Value): Record<string, unknown> {
  const v = indirectInterface(v0);
  return v.t.kind === 'map' && v.v !== null ? (v.v as Record<string, unknown>) : {};
}

/** Go `reflect.Kind.String()` of a value (sprig `kindOf`). */
function kindName(v0: Value): string {
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

/** Sprig's text functions by name. */
export const SPRIG_FUNCS: ReadonlyMap<string, GoFunc> = new Map<string, GoFunc>([
  // defaults
  [
    'default',
    goFunc(
      [ANY, ANY],
      (d, ...given) => (given.length === 0 || sprigEmpty(given[0] as Value) ? d : (given[0] as Value)),
      true,
    ),
  ],
  ['empty', goFunc([ANY], (v) => bool(sprigEmpty(v)))],
  ['coalesce', goFunc([ANY], (...vs) => vs.find((v) => !sprigEmpty(v)) ?? NIL, true)],
  ['ternary', goFunc([ANY, ANY, BOOL], (vt, vf, c) => (c.v ? vt : vf))],
  // strings
  [
    'quote',
    goFunc(
      [ANY],
      (...vs) =>
        str(
          vs
            .filter((v) => !isNilIface(v))
            .map((v) => goQuoteString(strval(v)))
            .join(' '),
        ),
      true,
    ),
  ],
  [
    'squote',
    goFunc(
      [ANY],
      (...vs) =>
        str(
          vs
            .filter((v) => !isNilIface(v))
            .map((v) => `'${strval(v)}'`)
            .join(' '),
        ),
      true,
    ),
  ],
  [
    'cat',
    goFunc(
      [ANY],
      (...vs) => {
        const kept = vs.filter((v) => !isNilIface(v));
        return str(sprintf(kept.map(() => '%v').join(' '), kept));
      },
      true,
    ),
  ],
  ['trunc', goFunc([INT, STRING], (c, s) => str(goTrunc(c.v as number, s.v as string)))],
  ['trim', goFunc([STRING], (s) => str(goTrimSpace(s.v as string)))],
  ['trimAll', goFunc([STRING, STRING], (a, s) => str(trimSet(s.v as string, a.v as string)))],
  [
    'trimSuffix',
    goFunc([STRING, STRING], (a, s) =>
      str(
        (s.v as string).endsWith(a.v as string) && a.v !== ''
          ? (s.v as string).slice(0, -(a.v as string).length)
          : (s.v as string),
      ),
    ),
  ],
  [
    'trimPrefix',
    goFunc([STRING, STRING], (a, s) =>
      str((s.v as string).startsWith(a.v as string) ? (s.v as string).slice((a.v as string).length) : (s.v as string)),
    ),
  ],
  ['upper', goFunc([STRING], (s) => str((s.v as string).toUpperCase()))],
  ['lower', goFunc([STRING], (s) => str((s.v as string).toLowerCase()))],
  [
    'repeat',
    goFunc([INT, STRING], (n, s) => {
      if ((n.v as number) < 0) throw new Error('strings: negative Repeat count');
      checkBuild((n.v as number) * (s.v as string).length, 'repeat');
      return str((s.v as string).repeat(n.v as number));
    }),
  ],
  [
    'replace',
    goFunc([STRING, STRING, STRING], (o, n, s) => {
      const parts = (s.v as string).split(o.v as string);
      checkBuild(
        (s.v as string).length + (parts.length - 1) * Math.max(0, (n.v as string).length - (o.v as string).length),
        'replace',
      );
      return str(parts.join(n.v as string));
    }),
  ],
  ['hasPrefix', goFunc([STRING, STRING], (p, s) => bool((s.v as string).startsWith(p.v as string)))],
  ['hasSuffix', goFunc([STRING, STRING], (p, s) => bool((s.v as string).endsWith(p.v as string)))],
  ['contains', goFunc([STRING, STRING], (sub, s) => bool((s.v as string).includes(sub.v as string)))],
  ['nospace', goFunc([STRING], (s) => str((s.v as string).replace(/\s/gu, '')))],
  [
    'substr',
    goFunc([INT, INT, STRING], (a, b, s) => {
      const bytes = Buffer.from(s.v as string, 'utf8');
      const start = a.v as number;
      const end = b.v as number;
      if (start < 0) return str(bytes.subarray(0, end).toString('utf8'));
      if (end < 0 || end > bytes.length) return str(bytes.subarray(start).toString('utf8'));
      return str(bytes.subarray(start, end).toString('utf8'));
    }),
  ],
  ['indent', goFunc([INT, STRING], (n, s) => str(sprigIndent(n.v as number, s.v as string)))],
  ['nindent', goFunc([INT, STRING], (n, s) => str(`\n${sprigIndent(n.v as number, s.v as string)}`))],
  ['splitList', goFunc([STRING, STRING], (sep, s) => new Value(SLICE_STRING, (s.v as string).split(sep.v as string)))],
  [
    'split',
    goFunc([STRING, STRING], (sep, s) => {
      const out: Record<string, unknown> = {};
      const parts = (s.v as string).split(sep.v as string);
      spendWork(parts.length);
      parts.forEach((p, i) => {
        setOwn(out, `_${i}`, p);
      });
      return new Value(MAP_ANY, out);
    }),
  ],
  [
    'join',
    goFunc([STRING, ANY], (sep, v) => {
      const items = strslice(v);
      checkBuild(
        items.reduce((n, x) => n + x.length, 0) + Math.max(0, items.length - 1) * (sep.v as string).length,
        'join',
      );
      return str(items.join(sep.v as string));
    }),
  ],
  ['toString', goFunc([ANY], (v) => str(strval(v)))],
  ['toStrings', goFunc([ANY], (v) => new Value(SLICE_STRING, strslice(v)))],
  [
    'sha256sum',
    goFunc([STRING], (s) =>
      str(
        createHash('sha256')
          .update(s.v as string, 'utf8')
          .digest('hex'),
      ),
    ),
  ],
  ['b64enc', goFunc([STRING], (s) => str(Buffer.from(s.v as string, 'utf8').toString('base64')))],
  [
    'b64dec',
    goFunc([STRING], (s) => {
      const t = s.v as string;
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.length % 4 !== 0) return str('illegal base64 data at input byte 0');
      return str(Buffer.from(t, 'base64').toString('utf8'));
    }),
  ],
  // lists
  [
    'list',
    goFunc(
      [ANY],
      (...vs) => {
        checkList(vs.length, 'list');
        return listOf(vs);
      },
      true,
    ),
  ],
  [
    'append',
    goFunc([ANY, ANY], (l, v) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot push on type ${indirectInterface(l).t.name}`);
      checkList(items.length + 1, 'append');
      return listOf([...items, v]);
    }),
  ],
  [
    'push',
    goFunc([ANY, ANY], (l, v) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot push on type ${indirectInterface(l).t.name}`);
      checkList(items.length + 1, 'append');
      return listOf([...items, v]);
    }),
  ],
  [
    'prepend',
    goFunc([ANY, ANY], (l, v) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot prepend on type ${indirectInterface(l).t.name}`);
      checkList(items.length + 1, 'prepend');
      return listOf([v, ...items]);
    }),
  ],
  [
    'first',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find first on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : (items[0] as Value);
    }),
  ],
  [
    'last',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find last on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : (items[items.length - 1] as Value);
    }),
  ],
  [
    'rest',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find rest on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : listOf(items.slice(1));
    }),
  ],
  [
    'initial',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find initial on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : listOf(items.slice(0, -1));
    }),
  ],
  [
    'has',
    goFunc([ANY, ANY], (needle, hay) => {
      const items = elements(hay);
      if (!items) {
        if (isNilIface(hay)) return FALSE;
        throw new Error(`Cannot find has on type ${indirectInterface(hay).t.name}`);
      }
      return bool(items.some((x) => deepEqual(x, needle)));
    }),
  ],
  [
    'compact',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot compact on type ${indirectInterface(l).t.name}`);
      return listOf(items.filter((x) => !sprigEmpty(x)));
    }),
  ],
  [
    'uniq',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find uniq on type ${indirectInterface(l).t.name}`);
      const out: Value[] = [];
      for (const x of items) if (!out.some((y) => deepEqual(x, y))) out.push(x);
      return listOf(out);
    }),
  ],
  [
    'without',
    goFunc(
      [ANY, ANY],
      (l, ...omit) => {
        const items = elements(l);
        if (!items) throw new Error(`Cannot find without on type ${indirectInterface(l).t.name}`);
        return listOf(items.filter((x) => !omit.some((o) => deepEqual(x, o))));
      },
      true,
    ),
  ],
  [
    'reverse',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find reverse on type ${indirectInterface(l).t.name}`);
      return listOf([...items].reverse());
    }),
  ],
  [
    'until',
    goFunc([INT], (n) => {
      const c = n.v as number;
      checkList(Math.abs(c), 'until');
      const out: Value[] = [];
      for (let i = 0; c >= 0 ? i < c : i > c; c >= 0 ? i++ : i--) out.push(new Value(INT, i));
      return new Value(
        { kind: 'slice', name: '[]int', elem: INT },
        out.map((x) => x.v),
      );
    }),
  ],
  // dicts
  [
    'dict',
    goFunc(
      [ANY],
      (...vs) => {
        const out: Record<string, unknown> = {};
        for (let i = 0; i < vs.length; i += 2)
          setOwn(out, strval(vs[i] as Value), i + 1 < vs.length ? box(iface(vs[i + 1] as Value)) : '');
        return new Value(MAP_ANY, out);
      },
      true,
    ),
  ],
  ['hasKey', goFunc([MAP_ANY, STRING], (d, k) => bool(Object.hasOwn(mapEntries(d), k.v as string)))],
  [
    'get',
    goFunc([MAP_ANY, STRING], (d, k) => {
      const o = mapEntries(d);
      return Object.hasOwn(o, k.v as string) ? dynamic(o[k.v as string]) : str('');
    }),
  ],
  [
    'pick',
    goFunc(
      [MAP_ANY, STRING],
      (d, ...keys) => {
        const o = mapEntries(d);
        const out: Record<string, unknown> = {};
        for (const k of keys) if (Object.hasOwn(o, k.v as string)) setOwn(out, k.v as string, o[k.v as string]);
        return new Value(MAP_ANY, out);
      },
      true,
    ),
  ],
  // conversion and JSON
  ['int', goFunc([ANY], (v) => new Value(INT, toInt64(v)))],
  ['int64', goFunc([ANY], (v) => new Value(INT64, toInt64(v)))],
  ['float64', goFunc([ANY], (v) => new Value(FLOAT64, toFloat64(v)))],
  ['atoi', goFunc([STRING], (s) => new Value(INT, /^[+-]?\d+$/.test(s.v as string) ? Number(s.v) : 0))],
  [
    'toJson',
    goFunc([ANY], (v) => {
      try {
        return str(jsonOf(iface(v)));
      } catch (e) {
        return failedJSON(e);
      }
    }),
  ],
  [
    'toPrettyJson',
    goFunc([ANY], (v) => {
      try {
        return str(prettyJSON(toJSONValue(iface(v)), ''));
      } catch (e) {
        return failedJSON(e);
      }
    }),
  ],
  [
    'toRawJson',
    goFunc([ANY], (v) => {
      try {
        return str(JSON.stringify(toJSONValue(iface(v))) ?? 'null');
      } catch (e) {
        return failedJSON(e);
      }
    }),
  ],
  [
    'fromJson',
    goFunc([STRING], (s) => {
      try {
        return dynamic(JSON.parse(s.v as string));
      } catch {
        return NIL;
      }
    }),
  ],
  ['kindOf', goFunc([ANY], (v) => str(kindName(v)))],
  ['kindIs', goFunc([STRING, ANY], (k, v) => bool(kindName(v) === k.v))],
  ['typeOf', goFunc([ANY], (v) => str(isNilIface(v) ? '<nil>' : v.t.name))],
  ['typeIs', goFunc([STRING, ANY], (k, v) => bool((isNilIface(v) ? '<nil>' : v.t.name) === k.v))],
  // integer math (sprig converts through toInt64)
  [
    'add',
    goFunc(
      [ANY],
      (...vs) =>
        new Value(
          INT64,
          vs.reduce((a, v) => a + toInt64(v), 0),
        ),
      true,
    ),
  ],
  ['add1', goFunc([ANY], (v) => new Value(INT64, toInt64(v) + 1))],
  ['sub', goFunc([ANY, ANY], (a, b) => new Value(INT64, toInt64(a) - toInt64(b)))],
  [
    'mul',
    goFunc(
      [ANY, ANY],
      (a, ...vs) =>
        new Value(
          INT64,
          vs.reduce((x, v) => x * toInt64(v), toInt64(a)),
        ),
      true,
    ),
  ],
  [
    'div',
    goFunc([ANY, ANY], (a, b) => {
      const d = toInt64(b);
      if (d === 0) throw new Error('runtime error: integer divide by zero');
      return new Value(INT64, Math.trunc(toInt64(a) / d));
    }),
  ],
  [
    'mod',
    goFunc([ANY, ANY], (a, b) => {
      const d = toInt64(b);
      if (d === 0) throw new Error('runtime error: integer divide by zero');
      return new Value(INT64, toInt64(a) % d);
    }),
  ],
  [
    'max',
    goFunc(
      [ANY, ANY],
      (a, ...vs) =>
        new Value(
          INT64,
          vs.reduce((x, v) => Math.max(x, toInt64(v)), toInt64(a)),
        ),
      true,
    ),
  ],
  [
    'min',
    goFunc(
      [ANY, ANY],
      (a, ...vs) =>
        new Value(
          INT64,
          vs.reduce((x, v) => Math.min(x, toInt64(v)), toInt64(a)),
        ),
      true,
    ),
  ],
  // failures
  [
    'fail',
    goFunc([STRING], (m) => {
      throw new Error(m.v as string);
    }),
  ],
  [
    'required',
    goFunc([STRING, ANY], (warn, v) => {
      if (isNilIface(v) || (v.t.kind === 'string' && v.v === '')) throw new Error(warn.v as string);
      return v;
    }),
  ],
]);

/** reflect.DeepEqual on template values (as JSON plus type name). */
function deepEqual(a: Value, b: Value): boolean {
  if (isNilIface(a) || isNilIface(b)) return isNilIface(a) && isNilIface(b);
  if (a.t.name !== b.t.name) return false;
  return jsonOf(a) === jsonOf(b);
}
