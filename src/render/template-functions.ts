/**
 * The shared template helpers every driver's Handlebars templates may use: the Go `text/template`
 * builtins, the sprig functions mesh templates use, and the mesh-neutral part of Istio's
 * `InjectionFuncmap` (pkg/kube/inject/template.go: `annotation`, `isset`, `toJSON`, `toYaml`, `indent`, ...).
 * Mesh-specific functions live in their driver (e.g. src/drivers/istio/template-functions.ts) and are
 * added to that driver's engine. Every helper is pure (no environment, time or randomness). Handlebars
 * passes an `options` hash as the last argument; `args()` drops it. Argument order follows the Go call
 * (`default DEFAULT GIVEN`, `join SEP LIST`, `contains NEEDLE HAYSTACK`), so a Go pipeline
 * `x | default "a"` reads `(default "a" x)` here.
 */
import type { Json } from '../model.ts';
import { emitInline, emitMapLines, emitSeqLines } from '../yaml/emit/emit-block.ts';
import { formatGoDuration, goPrint, goSprint, isEmpty, isTruthy } from './go-values.ts';
import { isJsonObject, setOwn } from '../json.ts';
import { CHARS_PER_STEP, checkIndent, spendWalk, spendWork } from './budget.ts';

/** A template helper: Handlebars passes its options object last (see `args`). */
export type Helper = (...args: unknown[]) => unknown;

/** Whether `v` is the options object Handlebars passes a helper last. */
export function isHelperOptions(v: unknown): boolean {
  return typeof v === 'object' && v !== null && 'hash' in v && 'data' in v;
}

/**
 * Drops the trailing Handlebars options object from a helper's arguments, in place: `raw` must be the helper's
 * own rest parameter (a fresh array per call; no copy is made, which thousands of helper calls per workload
 * would pay for). Returns `raw`.
 */
export function args(raw: unknown[]): unknown[] {
  if (isHelperOptions(raw[raw.length - 1])) raw.pop();
  return raw;
}

/** The value as a plain object, or undefined. */
export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return isJsonObject<unknown>(v) ? v : undefined;
}

/** Go's `%v` text of a value; `''` for null/undefined. */
export function str(v: unknown): string {
  return v === null || v === undefined ? '' : goSprint(v);
}

/** Go `strconv.Quote` for printable text (JSON escaping is valid YAML and Go for the common cases). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** sigs.k8s.io/yaml `Marshal`: block YAML with sorted keys and a trailing newline; `null` → `null\n`. */
export function toYamlText(v: unknown): string {
  if (v === undefined || v === null) return 'null\n';
  const sorted = sortKeys(v as Json);
  if (Array.isArray(sorted)) return sorted.length ? emitSeqLines(sorted, 0, GO_STYLE) : '[]\n';
  if (typeof sorted === 'object' && sorted !== null) {
    return Object.keys(sorted).length ? emitMapLines(sorted, 0, GO_STYLE) : '{}\n';
  }
  return `${emitInline(sorted) ?? JSON.stringify(sorted)}\n`;
}

/** Go's sigs.k8s.io/yaml list style: `- ` at the key's column. */
const GO_STYLE = { seqIndent: 'compact', keepNulls: true } as const;

function sortKeys(v: Json): Json {
  spendWork(typeof v === 'string' ? 1 + Math.floor(v.length / CHARS_PER_STEP) : 1);
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'object' && v !== null) {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) {
      const x = v[k];
      if (x !== undefined) setOwn(out, k, sortKeys(x));
    }
    return out;
  }
  return v;
}

/** Istio `indent` (sprig-style, pkg/kube/inject/template.go): pads every line but the first with `n` spaces. */
function goIndent(n: unknown, s: unknown): string {
  checkIndent(n, str(s));
  const pad = ' '.repeat(Number(n));
  return str(s)
    .split('\n')
    .map((line, i) => (i > 0 ? pad + line : line))
    .join('\n');
}

/** Pads every line (including the first) with `n` spaces; drops one trailing newline. */
export function indentBlock(n: unknown, s: unknown): string {
  checkIndent(n, str(s));
  const pad = ' '.repeat(Number(n));
  return str(s)
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}

/**
 * Dotted paths already split (templates look the same few paths up for every workload; a split path's
 * parts are then the same strings every time, which property lookups find faster). Bounded.
 * Module state by design: a bounded memo of a pure function of a string (its split).
 */
const PATH_PARTS = new Map<string, readonly string[]>();
const PATH_PARTS_MAX = 4096;

function pathParts(path: string): readonly string[] {
  let parts = PATH_PARTS.get(path);
  if (parts === undefined) {
    parts = path.split('.');
    if (PATH_PARTS.size < PATH_PARTS_MAX) PATH_PARTS.set(path, parts);
  }
  return parts;
}

function lookupPath(root: unknown, path: unknown): unknown {
  let cur: unknown = root;
  for (const part of pathParts(str(path))) {
    const r = asRecord(cur);
    if (!r || !Object.hasOwn(r, part)) return undefined;
    cur = r[part];
  }
  return cur;
}

function goEq(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b) && typeof a === typeof b;
  return (a ?? null) === (b ?? null);
}

function printf(format: unknown, ...rest: unknown[]): string {
  let i = 0;
  return str(format).replace(/%([%vsdtq])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    const v = rest[i++];
    if (verb === 'q') return goQuote(str(v));
    if (verb === 'd') return typeof v === 'number' ? Math.trunc(v).toFixed(0) : `%!d(${goSprint(v)})`;
    if (verb === 't') return typeof v === 'boolean' ? String(v) : `%!t(${goSprint(v)})`;
    return goSprint(v);
  });
}

/** The helpers, by name; register them on an isolated Handlebars environment. */
export const TEMPLATE_FUNCTIONS: Readonly<Record<string, Helper>> = {
  // Go text/template builtins (and/or return an operand, like Go).
  eq: (...raw) => {
    const [a, ...rest] = args(raw);
    return rest.some((b) => goEq(a, b));
  },
  ne: (...raw) => {
    const [a, b] = args(raw);
    return !goEq(a, b);
  },
  and: (...raw) => {
    const xs = args(raw);
    for (const x of xs) if (!isTruthy(x)) return x;
    return xs[xs.length - 1];
  },
  or: (...raw) => {
    const xs = args(raw);
    for (const x of xs) if (isTruthy(x)) return x;
    return xs[xs.length - 1];
  },
  not: (...raw) => !isTruthy(args(raw)[0]),
  truthy: (...raw) => isTruthy(args(raw)[0]),
  len: (...raw) => {
    const v = args(raw)[0];
    return Array.isArray(v) || typeof v === 'string' ? v.length : Object.keys(asRecord(v) ?? {}).length;
  },
  ge: (...raw) => {
    const [a, b] = args(raw);
    return Number(a) >= Number(b);
  },
  gt: (...raw) => {
    const [a, b] = args(raw);
    return Number(a) > Number(b);
  },
  index: (...raw) => {
    const [m, ...keys] = args(raw);
    let cur: unknown = m;
    for (const k of keys) {
      if (Array.isArray(cur)) cur = cur[Number(k)];
      else {
        const r = asRecord(cur);
        cur = r && Object.hasOwn(r, str(k)) ? r[str(k)] : undefined;
      }
    }
    return cur;
  },
  printf: (...raw) => {
    const [f, ...rest] = args(raw);
    return printf(f, ...rest);
  },
  // Printing and paths.
  str: (...raw) => goPrint(args(raw)[0]),
  at: (...raw) => {
    const [root, path] = args(raw);
    return lookupPath(root, path);
  },
  // sprig.
  default: (...raw) => {
    const [d, given] = args(raw);
    return isEmpty(given) ? d : given;
  },
  coalesce: (...raw) => args(raw).find((x) => !isEmpty(x)) ?? null,
  quote: (...raw) =>
    args(raw)
      .filter((x) => x !== null && x !== undefined)
      .map((x) => goQuote(goSprint(x)))
      .join(' '),
  trunc: (...raw) => {
    const [n, s] = args(raw);
    const t = str(s);
    const k = Number(n);
    return k >= 0 ? t.slice(0, k) : t.slice(Math.max(0, t.length + k));
  },
  trimAll: (...raw) => {
    const [cut, s] = args(raw);
    const set = new Set(str(cut));
    const a = [...str(s)];
    let i = 0;
    let j = a.length;
    while (i < j && set.has(a[i] as string)) i++;
    while (j > i && set.has(a[j - 1] as string)) j--;
    return a.slice(i, j).join('');
  },
  trimSuffix: (...raw) => {
    const [suf, s] = args(raw);
    const t = str(s);
    const x = str(suf);
    return x && t.endsWith(x) ? t.slice(0, -x.length) : t;
  },
  join: (...raw) => {
    const [sep, list] = args(raw);
    return (Array.isArray(list) ? list : []).map(str).join(str(sep));
  },
  list: (...raw) => args(raw),
  nindent: (...raw) => {
    const [n, s] = args(raw);
    return `\n${indentBlock(n, s)}`;
  },
  // Istio InjectionFuncmap.
  annotation: (...raw) => {
    const [meta, key, def] = args(raw);
    const a = asRecord(asRecord(meta)?.annotations);
    const k = str(key);
    return a && Object.hasOwn(a, k) ? str(a[k]) : goSprint(def);
  },
  isset: (...raw) => {
    const [m, key] = args(raw);
    const r = asRecord(m);
    return !!r && Object.hasOwn(r, str(key));
  },
  valueOrDefault: (...raw) => {
    const [v, d] = args(raw);
    return v === '' || v === null || v === undefined ? d : v;
  },
  toJSON: (...raw) => {
    const v = args(raw)[0];
    if (!asRecord(v)) return '{}';
    spendWalk(v);
    return JSON.stringify(v);
  },
  fromJSON: (...raw) => {
    try {
      return JSON.parse(str(args(raw)[0]));
    } catch {
      return '{}';
    }
  },
  structToJSON: (...raw) => {
    const v = args(raw)[0];
    if (v === null || v === undefined) return '{}';
    spendWalk(v);
    return JSON.stringify(v);
  },
  formatDuration: (...raw) => formatGoDuration(args(raw)[0]),
  toYaml: (...raw) => toYamlText(args(raw)[0]),
  indent: (...raw) => {
    const [n, s] = args(raw);
    return goIndent(n, s);
  },
  indentBlock: (...raw) => {
    const [n, s] = args(raw);
    return indentBlock(n, s);
  },
  directory: (...raw) => {
    const p = str(args(raw)[0]);
    return p.slice(0, p.lastIndexOf('/') + 1);
  },
  contains: (...raw) => {
    const [needle, hay] = args(raw);
    return str(hay).includes(str(needle));
  },
  toLower: (...raw) => str(args(raw)[0]).toLowerCase(),
  /** Sorted `{key, value}` pairs of a map (Go `range` over a map visits keys in sorted order). */
  entries: (...raw) => {
    const r = asRecord(args(raw)[0]) ?? {};
    const keys = Object.keys(r);
    spendWork(keys.length);
    return keys.sort().map((key) => ({ key, value: r[key] }));
  },
  /** JSON text of a value (a YAML flow node). */
  json: (...raw) => {
    const v = args(raw)[0] ?? null;
    spendWalk(v);
    return JSON.stringify(v);
  },
};
