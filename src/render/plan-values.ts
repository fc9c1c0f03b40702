/**
 * The values of sidecar plans (`./plans.ts`): placeholder tokens and which data may become one, the placeholder
 * objects and composed texts, the recording of a planned render with the assumptions helpers make
 * (`trunc`, `eq`), the token forms helpers get (`asTokens`, `deepTokens`) and give back (`fromTokens`), the
 * placeholder copy of template data, and the fill that puts a workload's values where the tokens are.
 */
import { defined } from '../checked.ts';
import type { Json, JsonObject } from '../model.ts';
import { getOrMake, isJsonObject, setOwn, share } from '../json.ts';
import { needsQuotes } from '../yaml/scalars.ts';
import { plainByFirstLetter } from './plain-start.ts';

/**
 * Placeholder tokens. Two families: plans are recorded with family 0 and checked against a second render with
 * family 1 (see `record`). String slots print as `mi7ph<i>x` (family 1: `mi8ph<i>x`); number slots as 11-digit
 * integers `8<i:5>91737` (family 1: `9<i:5>82646`), so a plain scalar holding one still reads as a number.
 */
const STRING_TOKEN = ['mi7ph', 'mi8ph'] as const;
const NUMBER_TOKEN_END = ['91737', '82646'] as const;
/** Any token of either family: data holding one is never planned. */
export const ANY_TOKEN = /mi[78]ph|[89]\d{5}(?:91737|82646)/;
/** Slots per plan: number tokens have five digits for the index. */
export const MAX_SLOTS = 100_000;

function tokenOf(i: number, numeric: boolean, family: 0 | 1): string {
  return numeric
    ? `${8 + family}${String(i).padStart(5, '0')}${NUMBER_TOKEN_END[family]}`
    : `${STRING_TOKEN[family]}${i}x`;
}

/** Whether `text` is exactly one string-slot token (of either family). */
export function isStringToken(text: string): boolean {
  return /^mi[78]ph\d+x$/.test(text);
}

/**
 * Whether a data number may become a placeholder: an integer from 1 to 999 999 (ports, ids). Go and Handlebars
 * print those as plain digits, and none is falsy (0 is left in the key).
 */
export function isNumberSlot(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= 999_999;
}

/**
 * Whether a data string may become a *digit-string* placeholder: the decimal text of an integer from 1 to
 * 999 999 with no sign and no leading zero (`"15020"`, an annotation's port list of one port). Such text is not
 * slot-safe (a plain scalar reads it as a number), so its token is a number token's digits (`tokenOf`) with the
 * semantics of a string (not `PlanText.numeric`): where the template quotes it, the token and the value both
 * read as strings; where it prints it plain, both read as integers, and the fill puts the value's number there.
 * Any other scalar that holds the token reads the same for the token and the value, or the fill refuses it.
 */
export function isDigitSlot(s: string): boolean {
  return s.length <= 6 && /^[1-9]\d*$/.test(s);
}

/** Slot-safe text: 1..253 characters of `[A-Za-z0-9._:/@-]`, alphanumeric at both ends (see `isSlotSafe`). */
const SAFE = /^[A-Za-z0-9](?:[A-Za-z0-9._:/@-]{0,251}[A-Za-z0-9])?$/;

/**
 * Whether a data string may become a placeholder: 1–253 characters from `[A-Za-z0-9._:/@-]`, alphanumeric
 * first and last, no token inside, and a plain string for every YAML reader (`needsQuotes` false: not `123`,
 * `yes`, `1e3`). Such text means the same in a plain, quoted or block scalar, in flow and in block context,
 * in a key or a value, so putting it where the token was is the same as rendering it there.
 */
export function isSlotSafe(s: string): boolean {
  return SAFE.test(s) && !ANY_TOKEN.test(s) && (plainByFirstLetter(s.charCodeAt(0)) || !needsQuotes(s));
}

/** A data path: top-level key, then keys and array indices (as strings). */
export type DataPath = readonly string[];

/** A render used a placeholder (or a container holding some) other than as text; `paths` are the data read. */
export class NoPlan extends Error {
  constructor(
    readonly paths: readonly DataPath[],
    detail: string,
  ) {
    super(`no plan: ${detail}`);
  }
}

/** What a placeholder or a composed text stands for. */
export interface PlanText {
  /** The text with tokens, as it prints. */
  readonly text: string;
  /** The data paths of the slots it holds (steered when it is used other than as text). */
  readonly paths: readonly DataPath[];
  /** A number slot: it may only be printed (helpers that format text would print a number differently). */
  readonly numeric?: boolean;
}

/** Module state by design: a mark on placeholder objects made for one planned render, keyed by the object. */
const PLAN_TEXT = new WeakMap<object, PlanText>();
/**
 * Containers (copies made for a planned render) that hold placeholders, with their data path.
 * Module state by design: a mark on the copies made for one planned render, keyed by the object.
 */
const TAINTED = new WeakMap<object, DataPath>();

/** The placeholder or composed text `v` stands for, or undefined for ordinary values. */
export function planText(v: unknown): PlanText | undefined {
  return typeof v === 'object' && v !== null ? PLAN_TEXT.get(v) : undefined;
}

/** The data path of a container that holds placeholders, or undefined. */
export function taintedPath(v: unknown): DataPath | undefined {
  return typeof v === 'object' && v !== null ? TAINTED.get(v) : undefined;
}

/**
 * A value that prints as `info.text` and throws {@link NoPlan} on every other use (property reads, `in`,
 * `Object.keys`, prototype tests, writes). A frozen null-prototype target keeps the proxy invariants.
 */
export function planValue(info: PlanText): object {
  const fail = (what: string): never => {
    throw new NoPlan(info.paths, `the template ${what} a value it should only copy`);
  };
  const proxy = new Proxy(Object.freeze(Object.create(null) as object), {
    get: (_t, prop) =>
      prop === Symbol.toPrimitive
        ? (hint: string) => (hint === 'number' ? fail('does arithmetic with') : info.text)
        : fail(`reads .${String(prop)} of`),
    has: () => fail('tests a key of'),
    ownKeys: () => fail('lists the keys of'),
    getOwnPropertyDescriptor: () => fail('inspects'),
    getPrototypeOf: () => fail('tests the type of'),
    set: () => fail('writes to'),
    defineProperty: () => fail('writes to'),
    deleteProperty: () => fail('writes to'),
  });
  PLAN_TEXT.set(proxy, info);
  return proxy;
}

/** A {@link NoPlan} naming the slots of every placeholder and tainted container among `values`. */
export function noPlanFor(values: readonly unknown[], detail: string): NoPlan {
  const paths: DataPath[] = [];
  for (const v of values) {
    const t = planText(v);
    if (t) paths.push(...t.paths);
    const p = taintedPath(v);
    if (p) paths.push(p);
  }
  return new NoPlan(paths, detail);
}

/** What a plan assumed about its slots' values; a value that breaks an assumption is rendered in full. */
export interface Limits {
  /** Slot index → the longest value this plan allows (`trunc n` kept the value whole). */
  readonly maxLen: Map<number, number>;
  /** Slot index → values this plan assumed it does not have (`eq name "istio-proxy"` was false). */
  readonly notIn: Map<number, Set<string>>;
}

/** The state of the planned render in progress (renders are synchronous, so one at a time). */
export interface Recording {
  /** Placeholder by token, to map helper results back. */
  byToken: Map<string, object>;
  limits: Limits;
}

/** Module state by design: the dynamic extent of one planned render (`beginRecording`/`endRecording` restore the recording before), so it holds nothing between renders; the helpers a template calls get its arguments only. */
let recording: Recording | undefined;

/**
 * Starts recording a planned render with the placeholders `byToken`; returns the recording that was in progress
 * (give it to `endRecording`). Renders are synchronous, so recordings nest at most through `endRecording`.
 */
export function beginRecording(byToken: Map<string, object>): Recording | undefined {
  const outer = recording;
  recording = { byToken, limits: { maxLen: new Map(), notIn: new Map() } };
  return outer;
}

/** The limits the current recording collected. */
export function recordedLimits(): Limits {
  return defined(recording, 'the recording in progress').limits;
}

/** Ends the current recording and restores `outer`. */
export function endRecording(outer: Recording | undefined): void {
  recording = outer;
}

/** Whether a planned render is in progress (template engines then run their functions through plan rules). */
export function isRecording(): boolean {
  return recording !== undefined;
}

/**
 * The slot index of a string placeholder (a slot-safe or a digit-string slot), or undefined (composed text,
 * number slot, ordinary value).
 */
function slotOf(v: unknown): number | undefined {
  const t = planText(v);
  if (!t || t.numeric) return undefined;
  const m = /^mi[78]ph(\d+)x$/.exec(t.text) ?? /^[89](\d{5})(?:91737|82646)$/.exec(t.text);
  return m ? Number(m[1]) : undefined;
}

/** Records that slot text `v` (a placeholder) passed through `trunc n` whole: the plan needs length ≤ n. */
export function recordMaxLength(v: object, n: number): void {
  const slot = slotOf(v);
  if (!recording || slot === undefined) throw noPlanFor([v], 'truncates');
  const prev = recording.limits.maxLen.get(slot);
  recording.limits.maxLen.set(slot, prev === undefined ? n : Math.min(prev, n));
}

/**
 * Records that placeholder `v` was compared with the literal `other` and taken as different (the template's
 * `eq` was false): the plan holds for values other than `other`.
 * @throws NoPlan when `v` is not a string-slot placeholder or `other` is not plain text
 */
export function recordNotEqual(v: unknown, other: unknown): void {
  const slot = slotOf(v);
  if (!recording || slot === undefined || typeof other !== 'string' || ANY_TOKEN.test(other))
    throw noPlanFor([v, other], 'compares');
  getOrMake(recording.limits.notIn, slot, () => new Set()).add(other);
}

/**
 * `eq`/`ne` of two values during a planned render, where one is a placeholder and the other plain data: records
 * that the plan assumes they differ (`recordNotEqual`).
 * @throws NoPlan for any other pair (two placeholders, a container, a composed text)
 */
export function assumeDiffer(x: unknown, y: unknown): void {
  if (planText(x) && !holdsPlan(y)) recordNotEqual(x, y);
  else if (planText(y) && !holdsPlan(x)) recordNotEqual(y, x);
  else throw noPlanFor([x, y], 'compares');
}

/**
 * A copy of `v` with every placeholder replaced by its token (a number slot's as a number), through arrays,
 * maps and containers: what a helper that writes data out as text (`toJSON`, `toYaml`) gets during a planned
 * render. Slot-safe text and 1–999 999 integers are written the same way as their tokens.
 */
export function deepTokens(v: unknown): unknown {
  const t = planText(v);
  if (t) return t.numeric ? Number(t.text) : t.text;
  if (Array.isArray(v)) return v.some(holdsPlan) ? v.map(deepTokens) : v;
  if (typeof v === 'object' && v !== null && holdsPlan(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) setOwn(out as JsonObject, k, deepTokens((v as Record<string, unknown>)[k]) as Json);
    return out;
  }
  return v;
}

/** Whether `v` is plan data: a placeholder, a composed text, a container holding some, or an array of those. */
export function holdsPlan(v: unknown): boolean {
  if (planText(v) !== undefined || taintedPath(v) !== undefined) return true;
  return Array.isArray(v) && v.some((x) => planText(x) !== undefined || taintedPath(x) !== undefined);
}

/**
 * The value to give a text-copying helper in place of `v`: a placeholder's or composed text's token text, an
 * array with its placeholders replaced so; other values unchanged.
 * @throws NoPlan for a tainted container that is not an array of texts (only arrays of names are joined).
 */
export function asTokens(v: unknown): unknown {
  const t = planText(v);
  if (t?.numeric) throw noPlanFor([v], 'formats the number');
  if (t) return t.text;
  if (Array.isArray(v) && taintedPath(v)) {
    return v.map((x) => {
      const xt = planText(x);
      if (xt?.numeric) throw noPlanFor([x], 'formats the number');
      if (xt) return xt.text;
      if (taintedPath(x)) throw noPlanFor([v], 'formats a container of');
      return x;
    });
  }
  if (taintedPath(v)) throw noPlanFor([v], 'formats');
  return v;
}

/**
 * A helper's result back in plan terms: a string that is exactly a token is that placeholder, a string with
 * tokens is a composed text naming their slots; anything else unchanged.
 */
export function fromTokens(result: unknown): unknown {
  if (typeof result !== 'string' || !recording || !ANY_TOKEN.test(result)) return result;
  const exact = recording.byToken.get(result);
  if (exact && !defined(planText(exact), 'the plan text of a placeholder').numeric) return exact;
  return composed(result);
}

/** Plan text for `text`, which holds tokens of the render being recorded: it names their slots. */
function composed(text: string): object {
  const paths: DataPath[] = [];
  for (const m of text.matchAll(/mi[78]ph\d+x|[89]\d{5}(?:91737|82646)/g)) {
    const p = recording?.byToken.get(m[0]);
    if (p) paths.push(...defined(planText(p), 'the plan text of a placeholder').paths);
  }
  return planValue({ text, paths });
}

/**
 * The JSON text of a flat object whose values may be placeholders (a string slot prints quoted, a number slot
 * as its digits: slot-safe text needs no escaping), as plan text when it holds any, else a plain string. For
 * data fields derived from slots (Istio's `PodPorts`).
 * @throws NoPlan when a value is a container holding placeholders.
 */
export function plannedJson(obj: Readonly<Record<string, unknown>>): unknown {
  let text = '{';
  let planned = false;
  for (const [k, v] of Object.entries(obj)) {
    const t = planText(v);
    if (!t && taintedPath(v)) throw noPlanFor([v], 'writes as JSON');
    if (t) planned = true;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(k)}:${t ? (t.numeric ? t.text : `"${t.text}"`) : JSON.stringify(v)}`;
  }
  text += '}';
  return planned ? composed(text) : text;
}

/** Steered paths as a trie: `all` means the subtree is part of the key as it is. */
export interface Steer {
  all?: boolean;
  kids: Map<string, Steer>;
}

/** What `plannedCopy` fills: the placeholders in walk order, by token, of one token family. */
export interface Slots {
  list: object[];
  byToken: Map<string, object>;
  family: 0 | 1;
}

/** A copy of a subtree with placeholders where `slotKey` put slots (same walk order); tainted containers registered. */
export function plannedCopy(v: unknown, steer: Steer | undefined, path: string[], slots: Slots): unknown {
  if (steer?.all) return v;
  const numeric = typeof v === 'number' && isNumberSlot(v);
  const digits = typeof v === 'string' && isDigitSlot(v);
  if ((typeof v === 'string' && isSlotSafe(v)) || numeric || digits) {
    const token = tokenOf(slots.list.length, numeric || digits, slots.family);
    const p = planValue({ text: token, paths: [path.slice()], ...(numeric ? { numeric } : {}) });
    slots.list.push(p);
    slots.byToken.set(token, p);
    return p;
  }
  if (typeof v !== 'object' || v === null) return v;
  const before = slots.list.length;
  let copy: unknown[] | Record<string, unknown>;
  if (Array.isArray(v)) {
    copy = v.map((x, i) => {
      path.push(String(i));
      const c = plannedCopy(x, steer?.kids.get(String(i)), path, slots);
      path.pop();
      return c;
    });
  } else if (isJsonObject<unknown>(v)) {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      path.push(k);
      setOwn(o as JsonObject, k, plannedCopy(v[k], steer?.kids.get(k), path, slots) as Json);
      path.pop();
    }
    copy = o;
  } else {
    return v;
  }
  if (slots.list.length > before) TAINTED.set(copy, path.slice());
  return copy;
}

/**
 * Thrown by a filler (`compileFill`) when a filled string or key would not read the same: a result some YAML reader would
 * read as a non-string, where the text with the token would not (had it, the scalar was quoted or a block, and
 * stays a string), or a key collision.
 */
export const UNFAITHFUL = new Error('filled text reads differently');

/**
 * The value of slot `i` (a token's slot index). A token-like text beyond the slots comes from the template's own
 * text, not from a slot: filling it would not read the same (a plan is verified by filling, so no kept plan holds
 * one).
 * @throws UNFAITHFUL when `values` has no slot `i`
 */
function tokenValue(values: readonly string[], i: number): string {
  const value = values[i];
  if (value === undefined) throw UNFAITHFUL;
  return value;
}

/**
 * Whether a collection of a plan's output holds no token (keys included), memoised per object: a plan's
 * output is filled once per workload and never changes, so its token-free parts are copied as they are.
 * Module state by design: a memo keyed by a plan's output, which never changes.
 */
const TOKEN_FREE = new WeakMap<object, boolean>();

/**
 * Whether `v` (a plan's output or part of it: a scalar, a map key, a collection) holds a token, that is a
 * place a filler (`compileFill`) writes a workload's value into. Memoised per collection.
 */
export function holdsToken(v: Json): boolean {
  return !tokenFree(v);
}

function tokenFree(v: Json): boolean {
  if (typeof v === 'string') return !ANY_TOKEN.test(v);
  if (typeof v === 'number') return !ANY_TOKEN.test(String(v));
  if (v === null || typeof v !== 'object') return true;
  let free = TOKEN_FREE.get(v);
  if (free === undefined) {
    free = Array.isArray(v)
      ? v.every(tokenFree)
      : Object.entries(v).every(([k, x]) => !ANY_TOKEN.test(k) && tokenFree(x));
    TOKEN_FREE.set(v, free);
  }
  return free;
}

/** A plan's output compiled for filling (`compileFill`): the filled value for one workload's slot values. */
export type Filler = (values: readonly string[]) => Json;

/** A family-0 token: a string slot's (`mi7ph<i>x`, group 1) or a number or digit-string slot's (group 2). */
const FILL_ANY = /mi7ph(\d+)x|8(\d{5})91737/g;

/**
 * One text with its tokens replaced by their values (see {@link UNFAITHFUL}), compiled: its pieces between family-0 tokens and the slots in between are found once;
 * undefined when it holds no token (it is filled as it is). The filled text is one pass over the pieces, so a
 * value never forms a token with the text around it.
 */
function compileString(s: string): ((values: readonly string[]) => string) | undefined {
  if (!ANY_TOKEN.test(s)) return undefined;
  const pieces: string[] = [];
  const slots: number[] = [];
  let last = 0;
  for (const m of s.matchAll(FILL_ANY)) {
    pieces.push(s.slice(last, m.index));
    slots.push(Number(m[1] ?? m[2]));
    last = m.index + m[0].length;
  }
  if (slots.length === 0) return undefined;
  pieces.push(s.slice(last));
  const quoted = needsQuotes(s);
  return (values) => {
    let out = pieces[0] ?? '';
    for (let i = 0; i < slots.length; i++) out += tokenValue(values, slots[i] ?? -1) + (pieces[i + 1] ?? '');
    if (!quoted && !plainByFirstLetter(out.charCodeAt(0)) && needsQuotes(out)) throw UNFAITHFUL;
    return out;
  };
}

/**
 * The fill of a plan's output `v`, compiled once per plan: a filler gives `v` with its tokens replaced by a
 * workload's `values`. Each text with tokens is split once (`compileString`); each token-free collection is the
 * same in every workload, so it is shared (`share` of ../json.ts: deep-frozen) and given as it is; the parts that
 * hold a token are fresh copies per call. The filled keys of a map must not collide with each other or its others.
 * @throws from the filler: UNFAITHFUL (see {@link UNFAITHFUL}).
 */
export function compileFill(v: Json): Filler {
  if (typeof v === 'string') return compileString(v) ?? (() => v);
  if (typeof v === 'number') {
    // A number slot's token becomes the slot's value; any other number holding a token is refused.
    const text = String(v);
    if (!ANY_TOKEN.test(text)) return () => v;
    const m = /^8(\d{5})91737$/.exec(text);
    if (!m) {
      return () => {
        throw UNFAITHFUL;
      };
    }
    const slot = Number(m[1]);
    return (values) => Number(tokenValue(values, slot));
  }
  if (v === null || typeof v !== 'object') return () => v;
  // Token-free parts are the same in every workload: shared, not copied (`share` of ../json.ts).
  if (tokenFree(v)) {
    const shared = share(v);
    return () => shared;
  }
  if (Array.isArray(v)) {
    const items = v.map(compileFill);
    return (values) => items.map((f) => f(values));
  }
  const entries = Object.keys(v).map((k) => ({ k, key: compileString(k), value: compileFill(v[k] as Json) }));
  if (entries.every((e) => e.key === undefined)) {
    // Keys as they are: a clone of a skeleton holding the token-free values (keys in order), then the rest filled.
    const skeleton: JsonObject = {};
    for (const e of entries) setOwn(skeleton, e.k, tokenFree(v[e.k] as Json) ? e.value([]) : null);
    const filled = entries.filter((e) => !tokenFree(v[e.k] as Json));
    return (values) => {
      const out = { ...skeleton };
      for (const e of filled) setOwn(out, e.k, e.value(values));
      return out;
    };
  }
  return (values) => {
    const out: JsonObject = {};
    for (const e of entries) {
      const key = e.key ? e.key(values) : e.k;
      if (Object.hasOwn(out, key)) throw UNFAITHFUL;
      setOwn(out, key, e.value(values));
    }
    return out;
  };
}
