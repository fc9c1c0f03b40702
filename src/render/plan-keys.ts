/**
 * The key walk of the sidecar plans (`./plans.ts`): the key text of a workload's data, with each slot-safe,
 * unsteered value replaced by a marker and collected in walk order, and the steering a `NoPlan` adds.
 */
import { getOrMake, isJsonObject } from '../json.ts';
import { ANY_TOKEN, isDigitSlot, isNumberSlot, isSlotSafe, type DataPath, type Steer } from './plan-values.ts';

/** Steers `path` under `root`: its values become part of the key from then on (a steered node covers its subtree). */
export function steerAdd(root: Steer, path: DataPath): void {
  let node = root;
  for (const seg of path) {
    if (node.all) return;
    node = getOrMake(node.kids, seg, () => ({ kids: new Map() }));
  }
  node.all = true;
  node.kids.clear();
}

/** Thrown inside the key walk: the data holds a token already, so no plan can tell its slots apart. */
export const HAS_TOKEN = new Error('data holds a placeholder token');

/**
 * The JSON text of each deep-frozen object the key walk wrote as a literal, or null when it holds a token.
 * Module state by design: a memo keyed by deep-frozen objects (checked by `deepFrozen`), whose text never changes;
 * weakly held. (Istio's ProxyConfig of the template data is one object for every pod without
 * `proxy.istio.io/config`.)
 */
const FROZEN_TEXT = new WeakMap<object, string | null>();
/**
 * Objects found deep-frozen: every object and array in them frozen. Frozen stays frozen, so a yes never goes
 * stale (a no is not kept: a value may be frozen later).
 * Module state by design: a memo of a fact that cannot change once true, keyed by the object, weakly held.
 */
const DEEP_FROZEN = new WeakSet<object>();

/** Whether every object and array in `v` (itself included) is frozen, so that its JSON text can never change. */
export function deepFrozen(v: object): boolean {
  if (DEEP_FROZEN.has(v)) return true;
  if (!Object.isFrozen(v)) return false;
  for (const x of Object.values(v)) if (typeof x === 'object' && x !== null && !deepFrozen(x)) return false;
  DEEP_FROZEN.add(v);
  return true;
}

/**
 * The key text of a literal value: its JSON (`u` for undefined); a deep-frozen object's text is worked out
 * once (`FROZEN_TEXT`).
 * @throws HAS_TOKEN when the text holds a placeholder token.
 */
export function literalKey(v: unknown): string {
  if (v === undefined) return 'u';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'object' && v !== null && deepFrozen(v)) {
    let text = FROZEN_TEXT.get(v);
    if (text === undefined) {
      const s = JSON.stringify(v);
      text = ANY_TOKEN.test(s) ? null : s;
      FROZEN_TEXT.set(v, text);
    }
    if (text === null) throw HAS_TOKEN;
    return text;
  }
  const s = JSON.stringify(v);
  if (ANY_TOKEN.test(s)) throw HAS_TOKEN;
  return s;
}

/**
 * The key text of a subtree: its JSON with each unsteered slot replaced by a marker (which JSON text never holds
 * raw: `\u0001` a slot-safe string, `\u0004` a digit string, `\u0003` a number), its value pushed to `values` in
 * walk order.
 * @throws HAS_TOKEN when a literal value or a key holds a placeholder token.
 */
export function slotKey(v: unknown, steer: Steer | undefined, values: string[]): string {
  if (steer?.all) return literalKey(v);
  if (typeof v === 'string') {
    if (isSlotSafe(v)) {
      values.push(v);
      return '\u0001';
    }
    if (isDigitSlot(v)) {
      values.push(v);
      return '\u0004';
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
