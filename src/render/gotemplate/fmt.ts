/**
 * Go's `fmt` for the values templates print: `Sprint`, `Sprintln`, `Sprintf` with the verbs
 * `v +v s q d b o O x X c U e E f F g G t T %`, flags `+ - # 0 space`, width, precision, `*` and `[n]`
 * argument indexes, and fmt's error forms (`%!d(string=x)`, `%!v(MISSING)`, `%!(EXTRA int=1)`).
 * Pointers below the top level print as addresses in Go, which cannot be reproduced: that throws.
 */
import { formatGoFloat } from '../go-values.ts';
import { goQuoteString } from './lex.ts';
import { type GoType, type Value, dynamic, fieldOf, sortedKeys, typed } from './value.ts';
import { CHARS_PER_STEP, checkBuild, spendWork } from '../budget.ts';

/** Formatting options of one verb. */
interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width: number | undefined;
  prec: number | undefined;
}

const PLAIN: Spec = {
  minus: false,
  plus: false,
  sharp: false,
  space: false,
  zero: false,
  width: undefined,
  prec: undefined,
};

/** A printf argument: a Go value, or `undefined` for an untyped nil interface. */
export type Arg = Value | undefined;

function pad(s: string, spec: Spec, zeroOk = false): string {
  const w = spec.width;
  if (w === undefined) return s;
  const n = [...s].length;
  if (n >= w) return s;
  if (spec.minus) return s + ' '.repeat(w - n);
  if (spec.zero && zeroOk) {
    const sign = /^[+\- ]/.exec(s)?.[0] ?? '';
    return sign + '0'.repeat(w - n) + s.slice(sign.length);
  }
  return ' '.repeat(w - n) + s;
}

function unpointer(v: Value): Value {
  return v.t.kind === 'interface' && v.v !== null ? dynamic(v.v) : v;
}

function typeName(a: Arg): string {
  return a === undefined || (a.t.kind === 'interface' && a.v === null) ? '<nil>' : a.t.name;
}

function badVerb(verb: string, a: Arg): string {
  if (a === undefined || (a.t.kind === 'interface' && a.v === null)) return `%!${verb}(<nil>)`;
  return `%!${verb}(${a.t.name}=${format(a, 'v', PLAIN, 0)})`;
}

function fmtInt(n: number, verb: string, spec: Spec, unsigned: boolean): string {
  const neg = n < 0 && !unsigned;
  const abs = BigInt(Math.trunc(Math.abs(n)));
  let digits: string;
  let prefix = '';
  switch (verb) {
    case 'v':
    case 'd':
      digits = abs.toString(10);
      break;
    case 'b':
      digits = abs.toString(2);
      if (spec.sharp) prefix = '0b';
      break;
    case 'o':
    case 'O':
      digits = abs.toString(8);
      if (verb === 'O') prefix = '0o';
      else if (spec.sharp && digits !== '0') prefix = '0';
      break;
    case 'x':
      digits = abs.toString(16);
      if (spec.sharp) prefix = '0x';
      break;
    case 'X':
      digits = abs.toString(16).toUpperCase();
      if (spec.sharp) prefix = '0X';
      break;
    default:
      throw new Error(`bad int verb ${verb}`);
  }
  if (spec.prec !== undefined) {
    if (spec.prec === 0 && abs === 0n) digits = '';
    else if (digits.length < spec.prec) digits = '0'.repeat(spec.prec - digits.length) + digits;
  }
  const sign = neg ? '-' : spec.plus ? '+' : spec.space ? ' ' : '';
  let body = prefix + digits;
  if (spec.zero && !spec.minus && spec.prec === undefined && spec.width !== undefined) {
    const n2 = sign.length + body.length;
    if (n2 < spec.width) body = prefix + '0'.repeat(spec.width - n2) + digits;
  }
  return pad(sign + body, { ...spec, zero: false });
}

function expForm(s: string): string {
  // JS "1.5e+0" → Go "1.5e+00"
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

function fmtFloat(f: number, verb: string, spec: Spec): string {
  let s: string;
  if (Number.isNaN(f)) s = 'NaN';
  else if (!Number.isFinite(f)) s = f > 0 ? '+Inf' : '-Inf';
  else {
    const prec = spec.prec;
    switch (verb) {
      case 'v':
      case 'g':
      case 'G':
        if (prec === undefined) s = formatGoFloat(f);
        else {
          const p = prec === 0 ? 1 : prec;
          const e = f === 0 ? 0 : Math.floor(Math.log10(Math.abs(Number(Math.abs(f).toPrecision(p)))));
          if (e < -4 || e >= p) s = expForm(Number(f.toPrecision(p)).toExponential());
          else s = String(Number(f.toPrecision(p)));
          if (Object.is(f, -0)) s = '-0';
        }
        if (verb === 'G') s = s.toUpperCase();
        break;
      case 'e':
      case 'E':
        s = expForm(f.toExponential(prec ?? 6));
        if (verb === 'E') s = s.toUpperCase();
        break;
      case 'f':
      case 'F':
        s = f.toFixed(prec ?? 6);
        if (Object.is(f, -0)) s = `-${s}`;
        break;
      default:
        throw new Error(`bad float verb ${verb}`);
    }
  }
  if (spec.plus && !s.startsWith('-') && !s.startsWith('+')) s = `+${s}`;
  else if (spec.space && !s.startsWith('-') && !s.startsWith('+')) s = ` ${s}`;
  if (s === 'NaN' || s.endsWith('Inf')) return pad(s, { ...spec, zero: false });
  return pad(s, spec, !spec.minus);
}

function fmtString(s: string, verb: string, spec: Spec): string {
  let t = s;
  if (spec.prec !== undefined) t = [...t].slice(0, spec.prec).join('');
  switch (verb) {
    case 'v':
    case 's':
      return pad(t, spec);
    case 'q':
      if (spec.sharp && !/[`\x00-\x08\x0a-\x1f\x7f\ufeff]/.test(t)) return pad(`\`${t}\``, spec);
      return pad(
        spec.plus ? goQuoteString(t).replace(/[^\x00-\x7f]/gu, (c) => asciiEscape(c)) : goQuoteString(t),
        spec,
      );
    case 'x':
    case 'X': {
      let hex = Buffer.from(t, 'utf8').toString('hex');
      if (verb === 'X') hex = hex.toUpperCase();
      return pad(hex, spec);
    }
    default:
      throw new Error('bad');
  }
}

function asciiEscape(c: string): string {
  const cp = c.codePointAt(0) as number;
  return cp > 0xffff ? `\\U${cp.toString(16).padStart(8, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
}

const INT_VERBS = 'vdboOxXcqU';
const FLOAT_VERBS = 'veEfFgG';
const STRING_VERBS = 'vsqxX';

/**
 * Formats one value with one verb (Go `printArg` + `printValue`); `depth` > 0 inside composites.
 *
 * Long by design: ported recipe (Go fmt/print.go `printArg` + `printValue`: one case per kind, as in Go,
 * so the verb checks and nil forms of each kind can be compared with the Go source).
 */
function format(a: Value, verb: string, spec: Spec, depth: number): string {
  // Every node printed is work (inside a render, `../budget.ts`): a value that shares itself exponentially stops here.
  spendWork(typeof a.v === 'string' ? 1 + Math.floor(a.v.length / CHARS_PER_STEP) : 1);
  const v = unpointer(a);
  const t = v.t;
  if (t.kind === 'invalid' || (t.kind === 'interface' && v.v === null)) {
    if (depth > 0) return '<nil>';
    return verb === 'v' ? pad('<nil>', spec) : badVerb(verb, undefined);
  }
  if (t.stringer && 'vsqxX'.includes(verb) && !(t.kind === 'ptr' && v.v === null)) {
    return fmtString(t.stringer(v.v), verb === 'v' ? 's' : verb, spec);
  }
  switch (t.kind) {
    case 'bool':
      if (verb === 'v' || verb === 't') return pad(v.v ? 'true' : 'false', spec);
      return badVerb(verb, v);
    case 'int':
    case 'uint': {
      if (!INT_VERBS.includes(verb)) return badVerb(verb, v);
      const n = v.v as number;
      if (verb === 'c') return pad(String.fromCodePoint(n), spec);
      if (verb === 'q')
        return pad(`'${goQuoteString(String.fromCodePoint(n)).slice(1, -1).replace(/\\"/g, '"')}'`, spec);
      if (verb === 'U') return pad(`U+${n.toString(16).toUpperCase().padStart(4, '0')}`, spec);
      return fmtInt(n, verb, spec, t.kind === 'uint');
    }
    case 'float':
      if (!FLOAT_VERBS.includes(verb)) return badVerb(verb, v);
      return fmtFloat(v.v as number, verb, spec);
    case 'string':
      if (!STRING_VERBS.includes(verb)) return badVerb(verb, v);
      return fmtString(v.v as string, verb, spec);
    case 'slice': {
      const elem = t.elem as GoType;
      const items = (v.v as unknown[] | null) ?? [];
      return `[${items.map((x) => format(typed(elem, x), verb, spec, depth + 1)).join(' ')}]`;
    }
    case 'map': {
      const elem = t.elem as GoType;
      const o = (v.v as Record<string, unknown> | null) ?? {};
      const keys = sortedKeys(o);
      return `map[${keys.map((k) => `${fmtString(k, verb === 'v' ? 'v' : verb, PLAIN)}:${format(typed(elem, o[k]), verb, spec, depth + 1)}`).join(' ')}]`;
    }
    case 'struct': {
      if (t.opaque || t.noPrint) throw new Error(`cannot reproduce Go's printing of type ${t.name}`);
      const raw = v.v as Record<string, unknown>;
      const parts = (t.fields ?? []).map((f) => {
        const s = format(fieldOf(raw, f), verb, spec, depth + 1);
        return spec.plus ? `${f.name}:${s}` : s;
      });
      return `{${parts.join(' ')}}`;
    }
    case 'ptr': {
      if (v.v === null) return depth === 0 && verb !== 'v' && verb !== 's' ? badVerb(verb, v) : '<nil>';
      const elem = t.elem as GoType;
      if (depth === 0 && (elem.kind === 'struct' || elem.kind === 'slice' || elem.kind === 'map')) {
        return `&${format(typed(elem, v.v), verb, spec, depth + 1)}`;
      }
      throw new Error(`cannot reproduce Go's printing of pointer type ${t.name} (an address)`);
    }
    default:
      throw new Error(`cannot reproduce Go's printing of type ${t.name}`);
  }
}

function isStringArg(a: Arg): boolean {
  if (a === undefined) return false;
  const v = unpointer(a);
  return v.t.kind === 'string';
}

/** Go `fmt.Sprint`: operands formatted with `%v`, a space between two operands when neither is a string. */
export function sprint(args: Arg[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && !isStringArg(a) && !isStringArg(args[i - 1])) out += ' ';
    out += a === undefined ? '<nil>' : format(a, 'v', PLAIN, 0);
  });
  return out;
}

/** Go `fmt.Sprintln`: operands with `%v`, always space-separated, then a newline. */
export function sprintln(args: Arg[]): string {
  return `${args.map((a) => (a === undefined ? '<nil>' : format(a, 'v', PLAIN, 0))).join(' ')}\n`;
}

function intArg(a: Arg): number | undefined {
  if (a === undefined) return undefined;
  const v = unpointer(a);
  return v.t.kind === 'int' || v.t.kind === 'uint' ? (v.v as number) : undefined;
}

/**
 * Go `fmt.Sprintf`.
 *
 * Long by design: parser (the format-string scan of Go fmt/print.go `doPrintf`: flags, `[n]` argument
 * indexes, `*` width and precision, the verb, then the `%!(EXTRA ...)` tail, in Go's order, since the
 * error forms depend on where in that scan a problem is found).
 */
export function sprintf(format0: string, args: Arg[]): string {
  let out = '';
  let argNum = 0;
  let reordered = false;
  let i = 0;
  const end = format0.length;
  const argIndex = (): number | 'bad' | undefined => {
    if (format0[i] !== '[') return undefined;
    reordered = true;
    const close = format0.indexOf(']', i);
    if (close < 0) return 'bad';
    const n = Number(format0.slice(i + 1, close));
    i = close + 1;
    if (!Number.isInteger(n) || n < 1 || n > args.length) return 'bad';
    return n - 1;
  };
  while (i < end) {
    const pct = format0.indexOf('%', i);
    if (pct < 0) {
      out += format0.slice(i);
      break;
    }
    out += format0.slice(i, pct);
    i = pct + 1;
    const spec: Spec = { ...PLAIN };
    for (; i < end; i++) {
      const c = format0[i];
      if (c === '#') spec.sharp = true;
      else if (c === '0') spec.zero = !spec.minus;
      else if (c === '+') spec.plus = true;
      else if (c === '-') {
        spec.minus = true;
        spec.zero = false;
      } else if (c === ' ') spec.space = true;
      else break;
    }
    let badIndex = false;
    let idx = argIndex();
    if (idx === 'bad') badIndex = true;
    else if (idx !== undefined) argNum = idx;
    // width
    if (format0[i] === '*') {
      i++;
      const w = intArg(args[argNum]);
      argNum++;
      if (w === undefined) out += '%!(BADWIDTH)';
      else if (w < 0) {
        spec.minus = true;
        spec.width = -w;
      } else spec.width = w;
    } else {
      const m = /^\d+/.exec(format0.slice(i));
      if (m) {
        spec.width = Number(m[0]);
        i += m[0].length;
      }
    }
    if (format0[i] === '.') {
      i++;
      idx = argIndex();
      if (idx === 'bad') badIndex = true;
      else if (idx !== undefined) argNum = idx;
      if (format0[i] === '*') {
        i++;
        const p = intArg(args[argNum]);
        argNum++;
        if (p === undefined || p < 0) out += '%!(BADPREC)';
        else spec.prec = p;
      } else {
        const m = /^\d+/.exec(format0.slice(i));
        spec.prec = m ? Number(m[0]) : 0;
        if (m) i += m[0].length;
      }
    }
    // A width or precision pads before anything is written: refused past the output budget, before padding.
    if (spec.width !== undefined) checkBuild(spec.width, 'a printf width');
    if (spec.prec !== undefined) checkBuild(spec.prec, 'a printf precision');
    idx = argIndex();
    if (idx === 'bad') badIndex = true;
    else if (idx !== undefined) argNum = idx;
    if (i >= end) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format0.codePointAt(i) as number);
    i += verb.length;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (badIndex) {
      out += `%!${verb}(BADINDEX)`;
      continue;
    }
    if (argNum >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const a = args[argNum++];
    if (verb === 'T') {
      out += pad(typeName(a), spec);
      continue;
    }
    if (verb === 'v' && spec.sharp) throw new Error('the %#v verb is not supported');
    if (a === undefined) {
      out += verb === 'v' ? pad('<nil>', spec) : badVerb(verb, undefined);
      continue;
    }
    out += format(a, verb, spec, 0);
  }
  if (!reordered && argNum < args.length) {
    out += `%!(EXTRA ${args
      .slice(argNum)
      .map((a) => `${typeName(a)}=${a === undefined ? '<nil>' : format(a, 'v', PLAIN, 0)}`)
      .join(', ')})`;
  }
  return out;
}
