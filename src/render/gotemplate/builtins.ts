/**
 * The predefined functions of Go `text/template` (funcs.go): `and or not len index slice print printf
 * println eq ne lt le gt ge html js urlquery call`, with Go's comparison rules and error messages.
 * `and`/`or` short-circuit in the executor; the entries here give their signature.
 */
import { sprint, sprintf, sprintln } from './fmt.ts';
import {
  FALSE,
  type GoFunc,
  type GoType,
  INT,
  NO_VALUE,
  REFLECT_VALUE,
  STRING,
  TRUE,
  Value,
  dynamic,
  goFunc,
  indirect,
  indirectInterface,
  lenOf,
  truth,
  typed,
  compareStrings,
} from './value.ts';

type BasicKind = 'invalid' | 'bool' | 'int' | 'uint' | 'float' | 'string' | 'other';

function basicKind(v: Value): BasicKind {
  switch (v.t.kind) {
    case 'bool':
    case 'int':
    case 'uint':
    case 'float':
    case 'string':
    case 'invalid':
      return v.t.kind;
    default:
      return 'other';
  }
}

/** Go `eq arg1 arg2...`: true if arg1 equals any of the others. */
export function goEq(a0: Value, rest: Value[]): boolean {
  const a = indirectInterface(a0);
  if (rest.length === 0) throw new Error('missing argument for comparison');
  const k1 = basicKind(a);
  for (const b0 of rest) {
    const b = indirectInterface(b0);
    const k2 = basicKind(b);
    let t = false;
    if (k1 !== k2) {
      if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) t = a.v === b.v;
      else if (k1 !== 'invalid' && k2 !== 'invalid') throw new Error('incompatible types for comparison');
    } else if (k1 === 'other') {
      const an = a.v === null;
      const bn = b.v === null;
      if (
        a.t.kind === 'map' ||
        a.t.kind === 'slice' ||
        a.t.kind === 'func' ||
        b.t.kind === 'map' ||
        b.t.kind === 'slice' ||
        b.t.kind === 'func'
      ) {
        if (!an && !bn) throw new Error(`non-comparable type ${a.t.name}`);
        t = an === bn;
      } else if (an || bn) t = an === bn;
      else if (a.t !== b.t) throw new Error(`non-comparable types ${a.t.name}: ${b.t.name}`);
      else t = a.v === b.v;
    } else if (k1 === 'invalid') {
      t = true;
    } else t = a.v === b.v;
    if (t) return true;
  }
  return false;
}

/** Go `lt a b`. */
export function goLt(a0: Value, b0: Value): boolean {
  const a = indirectInterface(a0);
  const b = indirectInterface(b0);
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === 'invalid' || k1 === 'other' || k2 === 'invalid' || k2 === 'other')
    throw new Error('invalid type for comparison');
  if (k1 !== k2) {
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return (a.v as number) < (b.v as number);
    throw new Error('incompatible types for comparison');
  }
  if (k1 === 'bool') throw new Error('invalid type for comparison');
  if (k1 === 'string') return compareStrings(a.v as string, b.v as string) < 0;
  return (a.v as number) < (b.v as number);
}

function indexArg(index: Value, cap: number): number {
  const i = indirectInterface(index);
  if (i.t.kind === 'invalid') throw new Error('cannot index slice/array with nil');
  if (i.t.kind !== 'int' && i.t.kind !== 'uint') throw new Error(`cannot index slice/array with type ${i.t.name}`);
  const x = i.v as number;
  if (x < 0 || x > cap) throw new Error(`index out of range: ${x}`);
  return x;
}

/** Go `index item keys...`. */
export function goIndex(item0: Value, indexes: Value[]): Value {
  let item = indirectInterface(item0);
  if (item.t.kind === 'invalid') throw new Error('index of untyped nil');
  for (const index0 of indexes) {
    const index = indirectInterface(index0);
    const r = indirect(item);
    if (r.isNil) throw new Error('index of nil pointer');
    item = r.v;
    switch (item.t.kind) {
      case 'slice':
      case 'string': {
        const n = lenOf(item) as number;
        const x = indexArg(index, n);
        if (x === n) throw new Error(`index out of range: ${x}`);
        if (item.t.kind === 'string') {
          const bytes = Buffer.from(item.v as string, 'utf8');
          return new Value({ kind: 'uint', name: 'uint8' }, bytes[x]);
        }
        item = typed(item.t.elem as GoType, (item.v as unknown[])[x]);
        break;
      }
      case 'map': {
        if (index.t.kind === 'invalid') throw new Error(`value is nil; should be of type ${item.t.key?.name}`);
        if (index.t.kind !== 'string') throw new Error(`value has type ${index.t.name}; should be ${item.t.key?.name}`);
        const o = item.v as Record<string, unknown> | null;
        const key = index.v as string;
        const elem = item.t.elem as GoType;
        item = o !== null && Object.hasOwn(o, key) ? typed(elem, o[key]) : typed(elem, undefined);
        break;
      }
      default:
        throw new Error(`can't index item of type ${item.t.name}`);
    }
  }
  return item;
}

/** Go `slice item [i [j [k]]]`. */
function goSlice(item0: Value, indexes: Value[]): Value {
  const r = indirect(indirectInterface(item0));
  const item = r.v;
  if (item.t.kind === 'invalid') throw new Error('slice of untyped nil');
  if (indexes.length > 3) throw new Error(`too many slice indexes: ${indexes.length}`);
  if (item.t.kind === 'string') {
    if (indexes.length === 3) throw new Error('cannot 3-index slice a string');
  } else if (item.t.kind !== 'slice') throw new Error(`can't slice item of type ${item.t.name}`);
  const n = lenOf(item) as number;
  const idx = [0, n];
  indexes.forEach((ix, i) => {
    idx[i] = indexArg(ix, n);
  });
  if ((idx[0] as number) > (idx[1] as number)) throw new Error(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (item.t.kind === 'string') {
    return new Value(
      STRING,
      Buffer.from(item.v as string, 'utf8')
        .subarray(idx[0], idx[1])
        .toString('utf8'),
    );
  }
  return new Value(item.t, ((item.v as unknown[] | null) ?? []).slice(idx[0], idx[1]));
}

function argsToString(args: Value[]): string {
  if (args.length === 1) {
    const v = indirectInterface(args[0] as Value);
    if (v.t.kind === 'string') return v.v as string;
  }
  return sprint(args.map(printable));
}

/** A template value as fmt receives it (`v.Interface()`): NO_VALUE is an untyped nil. */
export function printable(v: Value): Value | undefined {
  return v.t.kind === 'invalid' ? undefined : v;
}

/** Go `template.HTMLEscapeString`. */
export function htmlEscape(s: string): string {
  return s.replace(
    /[\0"'&<>]/g,
    (c) => ({ '\0': '\uFFFD', '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] as string,
  );
}

/** Go `template.JSEscapeString`. */
export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '<') out += '\\u003C';
    else if (ch === '>') out += '\\u003E';
    else if (ch === '&') out += '\\u0026';
    else if (ch === '=') out += '\\u003D';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20) out += `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

/** Go `url.QueryEscape`. */
export function queryEscape(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const R = REFLECT_VALUE;
const bool = (b: boolean): Value => (b ? TRUE : FALSE);
const str = (s: string): Value => new Value(STRING, s);

/** The builtins by name. */
export const BUILTINS: ReadonlyMap<string, GoFunc> = new Map<string, GoFunc>([
  ['and', goFunc([R, R], () => NO_VALUE, true)],
  ['or', goFunc([R, R], () => NO_VALUE, true)],
  ['not', goFunc([R], (a) => bool(!truth(indirectInterface(a))))],
  [
    'len',
    goFunc([R], (a0) => {
      const r = indirect(a0);
      if (r.isNil) throw new Error('len of nil pointer');
      const n = lenOf(r.v);
      if (n === undefined) throw new Error(`len of type ${r.v.t.name}`);
      return new Value(INT, n);
    }),
  ],
  ['index', goFunc([R, R], (item, ...ix) => goIndex(item, ix), true)],
  ['slice', goFunc([R, R], (item, ...ix) => goSlice(item, ix), true)],
  ['print', goFunc([R], (...a) => str(sprint(a.map(printable))), true)],
  ['println', goFunc([R], (...a) => str(sprintln(a.map(printable))), true)],
  ['printf', goFunc([STRING, R], (f, ...a) => str(sprintf(f.v as string, a.map(printable))), true)],
  ['eq', goFunc([R, R], (a, ...b) => bool(goEq(a, b)), true)],
  ['ne', goFunc([R, R], (a, b) => bool(!goEq(a, [b])))],
  ['lt', goFunc([R, R], (a, b) => bool(goLt(a, b)))],
  ['le', goFunc([R, R], (a, b) => bool(goLt(a, b) || goEq(a, [b])))],
  ['gt', goFunc([R, R], (a, b) => bool(!goLt(a, b) && !goEq(a, [b])))],
  ['ge', goFunc([R, R], (a, b) => bool(!goLt(a, b)))],
  ['html', goFunc([R], (...a) => str(htmlEscape(argsToString(a))), true)],
  ['js', goFunc([R], (...a) => str(jsEscape(argsToString(a))), true)],
  ['urlquery', goFunc([R], (...a) => str(queryEscape(argsToString(a))), true)],
  [
    'call',
    goFunc(
      [R, R],
      (fn0, ...args) => {
        const fn = indirectInterface(fn0);
        if (fn.t.kind === 'invalid') throw new Error('call of nil');
        if (fn.t.kind !== 'func') throw new Error(`non-function of type ${fn.t.name}`);
        const f = fn.v as GoFunc;
        return f.fn(
          ...args.map((a, i) => {
            const p = f.variadic && i >= f.params.length - 1 ? f.params[f.params.length - 1] : f.params[i];
            if (!p) throw new Error(`wrong number of args: got ${args.length} want ${f.params.length}`);
            return p === R || p.kind === 'interface' ? dynamicOr(a) : a;
          }),
        );
      },
      true,
    ),
  ],
]);

function dynamicOr(v: Value): Value {
  return v.t.kind === 'invalid' ? dynamic(null) : v;
}
