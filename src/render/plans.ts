/**
 * Sidecar plans: render a template once per *shape* of its data, then fill each workload's own strings in.
 *
 * Two workloads of the same shape differ only in strings that the template copies into its output: names,
 * label values, container names. A plan is the parsed output of one render in which every such string was a
 * *placeholder*; later workloads with the same key get a copy of that output with their strings filled in,
 * with no render and no parse.
 *
 * How a render is recorded:
 * - Data strings under the slot roots of a {@link PlanShape} that are "slot-safe" (see {@link isSlotSafe})
 *   become placeholder objects. A placeholder prints as a token (`mi7ph<N>x`) and throws {@link NoPlan} on any
 *   other use: a property read, `in`, `Object.keys`, a prototype test. So a template or helper that looks at a
 *   value, rather than copying it, cannot silently see the token instead of the value.
 * - Helpers run through the engine's plan semantics (`./plan-helpers.ts`): helpers that only copy or select
 *   text get tokens and give text with tokens; `trunc n` records a length limit; any other helper given a
 *   placeholder, or a container holding placeholders, throws {@link NoPlan}.
 * - A {@link NoPlan} names the data paths it read. Those paths are *steered*: from then on their values are
 *   part of the key, not placeholders, so the plan for that key holds their real values. (The paths a template
 *   uses only as output text stay placeholders; the paths that steer control flow go into the key.)
 *
 * A plan is used only when it is provably the same as a render: every filled string that changed must read as
 * the same string in any YAML reader (`needsQuotes` false, so no filled scalar turns into a number or a
 * boolean) and fit its recorded length limits; filled keys must not collide. Otherwise the workload is
 * rendered in full. With verification on (`MESHINJECT_VERIFY_PLANS=1`, set by the CLI, on in the test suite),
 * every planned result is compared with a full render and a difference throws.
 */
import type { Json, JsonObject } from '../model.ts';
import { isJsonObject, setOwn } from '../json.ts';
import { needsQuotes } from '../yaml/scalars.ts';

/**
 * Placeholder tokens. Two families: plans are recorded with family 0 and checked against a second render with
 * family 1 (see `record`). String slots print as `mi7ph<i>x` (family 1: `mi8ph<i>x`); number slots as 11-digit
 * integers `8<i:5>91737` (family 1: `9<i:5>82646`), so a plain scalar holding one still reads as a number.
 */
const STRING_TOKEN = ['mi7ph', 'mi8ph'] as const;
const NUMBER_TOKEN_END = ['91737', '82646'] as const;
const FILL_STRING = /mi7ph(\d+)x/g;
const FILL_NUMBER = /8(\d{5})91737/g;
/** Any token of either family: data holding one is never planned. */
const ANY_TOKEN = /mi[78]ph|[89]\d{5}(?:91737|82646)/;
/** Slots per plan: number tokens have five digits for the index. */
const MAX_SLOTS = 100_000;

function tokenOf(i: number, numeric: boolean, family: 0 | 1): string {
  return numeric ? `${8 + family}${String(i).padStart(5, '0')}${NUMBER_TOKEN_END[family]}` : `${STRING_TOKEN[family]}${i}x`;
}

/** Whether `text` is exactly one string-slot token (of either family). */
export function isStringToken(text: string): boolean {
  return /^mi[78]ph\d+x$/.test(text);
}

/**
 * Whether a data number may become a placeholder: an integer from 1 to 999 999 (ports, ids). Go and Handlebars
 * print those as plain digits, and none is falsy (0 is left in the key).
 */
function isNumberSlot(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= 999_999;
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
  return SAFE.test(s) && !ANY_TOKEN.test(s) && !needsQuotes(s);
}

/** A data path: top-level key, then keys and array indices (as strings). */
export type DataPath = readonly string[];

/** A render used a placeholder (or a container holding some) other than as text; `paths` are the data read. */
export class NoPlan extends Error {
  constructor(readonly paths: readonly DataPath[], detail: string) {
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

const PLAN_TEXT = new WeakMap<object, PlanText>();
/** Containers (copies made for a planned render) that hold placeholders, with their data path. */
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
    get: (_t, prop) => (prop === Symbol.toPrimitive
      ? (hint: string) => (hint === 'number' ? fail('does arithmetic with') : info.text)
      : fail(`reads .${String(prop)} of`)),
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
interface Limits {
  /** Slot index → the longest value this plan allows (`trunc n` kept the value whole). */
  readonly maxLen: Map<number, number>;
  /** Slot index → values this plan assumed it does not have (`eq name "istio-proxy"` was false). */
  readonly notIn: Map<number, Set<string>>;
}

/** The state of the planned render in progress (renders are synchronous, so one at a time). */
interface Recording {
  /** Placeholder by token, to map helper results back. */
  byToken: Map<string, object>;
  limits: Limits;
}

let recording: Recording | undefined;

/** Whether a planned render is in progress (template engines then run their functions through plan rules). */
export function isRecording(): boolean {
  return recording !== undefined;
}

/** The slot index of a string-slot placeholder, or undefined (composed text, number slot, ordinary value). */
function slotOf(v: unknown): number | undefined {
  const t = planText(v);
  const m = t ? /^mi[78]ph(\d+)x$/.exec(t.text) : null;
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
  if (!recording || slot === undefined || typeof other !== 'string' || ANY_TOKEN.test(other)) throw noPlanFor([v, other], 'compares');
  let set = recording.limits.notIn.get(slot);
  if (!set) recording.limits.notIn.set(slot, (set = new Set()));
  set.add(other);
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
  if (exact && !planText(exact)!.numeric) return exact;
  return composed(result);
}

/** Plan text for `text`, which holds tokens of the render being recorded: it names their slots. */
function composed(text: string): object {
  const paths: DataPath[] = [];
  for (const m of text.matchAll(/mi[78]ph\d+x|[89]\d{5}(?:91737|82646)/g)) {
    const p = recording?.byToken.get(m[0]);
    if (p) paths.push(...planText(p)!.paths);
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

/**
 * Which parts of the template data a planner may turn into placeholders.
 * - `slotRoots`: top-level keys whose slot-safe strings become placeholders (deeply);
 * - `identityRoots`: top-level keys whose values are the same object for every workload of a run (values,
 *   mesh config): keyed by object identity, never walked;
 * - `derived`: see below;
 * - every other top-level key is keyed by its JSON text.
 */
export interface PlanShape {
  readonly slotRoots: readonly string[];
  readonly identityRoots: readonly string[];
  /**
   * Top-level fields computed from the slot roots alone: left out of the key, and rebuilt for a planned render
   * from the placeholder data (e.g. with {@link plannedJson}); they may throw {@link NoPlan}.
   */
  readonly derived?: Readonly<Record<string, (planned: Record<string, unknown>) => unknown>>;
}

/** Steered paths as a trie: `all` means the subtree is part of the key as it is. */
interface Steer {
  all?: boolean;
  kids: Map<string, Steer>;
}

function steerAdd(root: Steer, path: DataPath): void {
  let node = root;
  for (const seg of path) {
    if (node.all) return;
    let next = node.kids.get(seg);
    if (!next) node.kids.set(seg, (next = { kids: new Map() }));
    node = next;
  }
  node.all = true;
  node.kids.clear();
}

/** Thrown inside the key walk: the data holds a token already, so no plan can tell its slots apart. */
const HAS_TOKEN = new Error('data holds a placeholder token');

/** Appends the key text of a literal value (its JSON; `u` for undefined). */
function literalKey(v: unknown): string {
  if (v === undefined) return 'u';
  const s = JSON.stringify(v);
  if (ANY_TOKEN.test(s)) throw HAS_TOKEN;
  return s;
}

/**
 * The key text of a subtree: its JSON with each slot-safe, unsteered string replaced by `\u0001` (which JSON
 * text never holds raw), its value pushed to `values` in walk order.
 */
function slotKey(v: unknown, steer: Steer | undefined, values: string[]): string {
  if (steer?.all) return literalKey(v);
  if (typeof v === 'string') {
    if (isSlotSafe(v)) {
      values.push(v);
      return '\u0001';
    }
    return literalKey(v);
  }
  if (typeof v === 'number' && isNumberSlot(v)) {
    values.push(String(v));
    return '\u0003';
  }
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += `${slotKey(v[i], steer?.kids.get(String(i)), values)},`;
    return `${s}]`;
  }
  if (isJsonObject<unknown>(v)) {
    let s = '{';
    for (const k of Object.keys(v)) {
      if (ANY_TOKEN.test(k)) throw HAS_TOKEN;
      s += `${JSON.stringify(k)}:${slotKey(v[k], steer?.kids.get(k), values)},`;
    }
    return `${s}}`;
  }
  return literalKey(v);
}

/** What `plannedCopy` fills: the placeholders in walk order, by token, of one token family. */
interface Slots {
  list: object[];
  byToken: Map<string, object>;
  family: 0 | 1;
}

/** A copy of a subtree with placeholders where `slotKey` put slots (same walk order); tainted containers registered. */
function plannedCopy(v: unknown, steer: Steer | undefined, path: string[], slots: Slots): unknown {
  if (steer?.all) return v;
  const numeric = typeof v === 'number' && isNumberSlot(v);
  if ((typeof v === 'string' && isSlotSafe(v)) || numeric) {
    const token = tokenOf(slots.list.length, numeric, slots.family);
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

/** A recorded plan: the parsed output with tokens, and what it assumed about its slots' values. */
interface Plan {
  readonly output: Json;
  readonly limits: Limits;
}

/** Thrown inside `fill` when a filled string or key would not read the same. */
const UNFAITHFUL = new Error('filled text reads differently');

/**
 * `s` with its tokens replaced by their values. A result some YAML reader would read as a non-string is
 * refused unless the token text already was such (then the scalar was quoted or a block: it stays a string).
 */
function fillString(s: string, values: readonly string[]): string {
  if (!ANY_TOKEN.test(s)) return s;
  const out = s.replace(FILL_STRING, (_m, i: string) => values[Number(i)]!).replace(FILL_NUMBER, (_m, i: string) => values[Number(i)]!);
  if (needsQuotes(out) && !needsQuotes(s)) throw UNFAITHFUL;
  return out;
}

/** A number of the output: a number slot's token becomes the slot's value; any other number holding a token is refused. */
function fillNumber(n: number, values: readonly string[]): number {
  const text = String(n);
  if (!ANY_TOKEN.test(text)) return n;
  const m = /^8(\d{5})91737$/.exec(text);
  if (!m) throw UNFAITHFUL;
  return Number(values[Number(m[1])]);
}

/** A fresh copy of `v` with tokens replaced by `values`. @throws UNFAITHFUL (see `fillString`), or on a key collision. */
function fill(v: Json, values: readonly string[]): Json {
  if (typeof v === 'string') return fillString(v, values);
  if (typeof v === 'number') return fillNumber(v, values);
  if (Array.isArray(v)) return v.map((x) => fill(x, values));
  if (v === null || typeof v !== 'object') return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v)) {
    const key = fillString(k, values);
    if (key !== k && Object.hasOwn(out, key)) throw UNFAITHFUL;
    setOwn(out, key, fill(v[k]!, values));
  }
  return out;
}

/** Plan switches: `enabled` (default on; `MESHINJECT_PLANS=0` turns plans off) and `verify` (`MESHINJECT_VERIFY_PLANS=1`). */
export interface PlanSettings {
  enabled: boolean;
  verify: boolean;
}

const settings: PlanSettings = { enabled: true, verify: false };
/** Set by the test suite's preload (test/setup), where no CLI runs: verification on in-process too. */
const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

/** Sets the plan switches for the process (the CLI reads them from the environment). */
export function configurePlans(s: Partial<PlanSettings>): void {
  Object.assign(settings, s);
}

function verifying(): boolean {
  return settings.verify || (globalThis as Record<symbol, unknown>)[VERIFY_GLOBAL] === true;
}

/**
 * Counters over the process, for `npm run bench` (`MESHINJECT_PLAN_STATS=1` prints them): renders asked for,
 * renders served by a plan, plans recorded, full renders.
 */
export interface PlanStats {
  lookups: number;
  hits: number;
  recorded: number;
  full: number;
}

const stats: PlanStats = { lookups: 0, hits: 0, recorded: 0, full: 0 };

/** A copy of the counters. */
export function planStats(): PlanStats {
  return { ...stats };
}

/** Plans kept per planner before the cache starts over (a run of distinct shapes cannot grow memory without bound). */
const MAX_PLANS = 4096;
/**
 * Plans a planner records before it looks at its hit rate: once it has recorded this many and served fewer
 * hits than it recorded, it records no more (workloads whose shapes do not repeat are rendered in full).
 */
const RECORDING_TRIAL = 64;
/** Steering rounds for one key before the workload is rendered in full. */
const MAX_ROUNDS = 8;

/** One template source as a planner sees it. */
export interface PlanSource {
  /** The render, parsed: the truth (a fresh object each call). */
  render(data: Record<string, unknown>): Json;
  /** The same render with placeholder data, through the plan semantics of the helpers (`./plan-helpers.ts`). */
  renderPlanned(data: Record<string, unknown>): Json;
}

/** Renders through plans; see the module comment. */
export interface Planner {
  /**
   * The output of `source` (named `name`, one of the same source text each time) for `data`: a fresh object,
   * the same JSON as `source.render(data)`.
   * @throws what `source.render` throws (a planned render never throws for the user: it falls back).
   */
  render(name: string, source: PlanSource, data: Record<string, unknown>): Json;
}

const identityIds = new WeakMap<object, number>();
let nextIdentity = 1;

function identityKey(v: unknown): string {
  if (typeof v !== 'object' || v === null) return literalKey(v);
  let id = identityIds.get(v);
  if (id === undefined) {
    if (ANY_TOKEN.test(JSON.stringify(v))) throw HAS_TOKEN;
    identityIds.set(v, (id = nextIdentity++));
  }
  return `#${id}`;
}

/** Creates a planner for data of `shape`; plans and steering are kept per template name. */
export function createPlanner(shape: PlanShape): Planner {
  return new PlanCache(shape);
}

/** Length limits hold and filled text reads the same: the filled copy; otherwise undefined (render in full). */
function fromPlan(plan: Plan, values: readonly string[]): Json | undefined {
  for (const [slot, n] of plan.limits.maxLen) if (values[slot]!.length > n) return undefined;
  for (const [slot, set] of plan.limits.notIn) if (set.has(values[slot]!)) return undefined;
  try {
    return fill(plan.output, values);
  } catch (e) {
    if (e === UNFAITHFUL) return undefined;
    throw e;
  }
}

/** The planner of one data shape (see `createPlanner`). */
class PlanCache implements Planner {
  private readonly plans = new Map<string, Plan | null>();
  private readonly steering = new Map<string, Steer>();
  private readonly slotRoots: ReadonlySet<string>;
  private readonly identityRoots: ReadonlySet<string>;
  private readonly derived: ReadonlyArray<[string, (planned: Record<string, unknown>) => unknown]>;
  private readonly derivedKeys: ReadonlySet<string>;
  private hits = 0;
  private recorded = 0;

  constructor(shape: PlanShape) {
    this.slotRoots = new Set(shape.slotRoots);
    this.identityRoots = new Set(shape.identityRoots);
    this.derived = Object.entries(shape.derived ?? {});
    this.derivedKeys = new Set(Object.keys(shape.derived ?? {}));
  }

  render(name: string, source: PlanSource, data: Record<string, unknown>): Json {
    stats.lookups++;
    if (!settings.enabled) return source.render(data);
    const out = this.planned(name, source, data);
    if (out === undefined) {
      stats.full++;
      return source.render(data);
    }
    if (verifying()) {
      const truth = JSON.stringify(source.render(data));
      const got = JSON.stringify(out);
      if (truth !== got) throw new Error(`plan verification failed for template "${name}":\n rendered ${truth}\n planned  ${got}`);
    }
    return out;
  }

  /** The key of `data`: the template name, then each top-level field (see `PlanShape`); slot values go to `values`. */
  private keyOf(name: string, data: Record<string, unknown>, steer: Steer, values: string[]): string {
    let key = `${name}\u0002`;
    for (const k of Object.keys(data)) {
      if (this.derivedKeys.has(k)) continue;
      const v = data[k];
      key += `${k}=`;
      if (this.slotRoots.has(k)) key += slotKey(v, steer.kids.get(k), values);
      else if (this.identityRoots.has(k)) key += identityKey(v);
      else key += literalKey(v);
      key += ';';
    }
    return key;
  }

  /** The planned output for `data`, or undefined when it must be rendered in full. */
  private planned(name: string, source: PlanSource, data: Record<string, unknown>): Json | undefined {
    let steer = this.steering.get(name);
    if (!steer) this.steering.set(name, (steer = { kids: new Map() }));
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const values: string[] = [];
      let key: string;
      try {
        key = this.keyOf(name, data, steer, values);
      } catch (e) {
        if (e === HAS_TOKEN) return undefined;
        throw e;
      }
      const plan = this.plans.get(key);
      if (plan === undefined) {
        // Shapes that never repeat (every workload different) would pay for recording and gain nothing.
        if (this.recorded >= RECORDING_TRIAL && this.hits < this.recorded) return undefined;
        const r = this.record(source, data, steer);
        if (r instanceof NoPlan && r.paths.length > 0) {
          for (const p of r.paths) steerAdd(steer, p);
          continue;
        }
        return this.keep(key, r instanceof NoPlan ? null : r, values);
      }
      const out = plan ? fromPlan(plan, values) : undefined;
      if (out !== undefined) {
        stats.hits++;
        this.hits++;
      }
      return out;
    }
    return undefined;
  }

  /** Caches the plan (or null: none for this key) and gives this workload's output from it. */
  private keep(key: string, plan: Plan | null, values: readonly string[]): Json | undefined {
    if (this.plans.size >= MAX_PLANS) this.plans.clear();
    this.plans.set(key, plan);
    if (!plan) return undefined;
    stats.recorded++;
    this.recorded++;
    return fromPlan(plan, values);
  }

  /**
   * Records the plan of a key: renders with family-0 tokens, and again with family-1 tokens; the plan is kept
   * only when filling the first output with the second family's tokens gives the second output exactly (a
   * template that computes with a token, rather than copying it, fails this). Returns the NoPlan of a render
   * that used a placeholder, or null when no plan can be kept for this key.
   */
  private record(source: PlanSource, data: Record<string, unknown>, steer: Steer): Plan | NoPlan | null {
    try {
      const a = this.renderFamily(source, data, steer, 0);
      const b = this.renderFamily(source, data, steer, 1);
      const plan: Plan = { output: a.output, limits: a.limits };
      // The second family's tokens stand in for values; length limits are about real values, so not checked here.
      return JSON.stringify(fill(a.output, b.tokens)) === JSON.stringify(b.output) ? plan : null;
    } catch (e) {
      if (e instanceof NoPlan) return e;
      return null;
    }
  }

  /** One planned render with tokens of `family`: its parsed output, length limits and the slots' token texts. */
  private renderFamily(source: PlanSource, data: Record<string, unknown>, steer: Steer, family: 0 | 1) {
    const slots: Slots = { list: [], byToken: new Map(), family };
    const outer = recording;
    recording = { byToken: slots.byToken, limits: { maxLen: new Map(), notIn: new Map() } };
    try {
      const planned: Record<string, unknown> = {};
      for (const k of Object.keys(data)) {
        planned[k] = this.slotRoots.has(k) ? plannedCopy(data[k], steer.kids.get(k), [k], slots) : data[k];
      }
      for (const [k, derive] of this.derived) planned[k] = derive(planned);
      if (slots.list.length > MAX_SLOTS) throw new NoPlan([], 'too many slots');
      const output = source.renderPlanned(planned);
      return { output, limits: recording.limits, tokens: slots.list.map((p) => planText(p)!.text) };
    } finally {
      recording = outer;
    }
  }
}
