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

/** Appends the key text of a literal value (its JSON; `u` for undefined). */
export function literalKey(v: unknown): string {
  if (v === undefined) return 'u';
  const s = JSON.stringify(v);
  if (ANY_TOKEN.test(s)) throw HAS_TOKEN;
  return s;
}

/**
 * The key text of a subtree: its JSON with each unsteered slot replaced by a marker (which JSON text never holds
 * raw: `\u0001` a slot-safe string, `\u0004` a digit string, `\u0003` a number), its value pushed to `values` in
 * walk order.
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
