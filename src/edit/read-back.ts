import { isJsonObject, jsonEqual, withoutNulls } from '../json.ts';
import type { Json } from '../model.ts';
import { matchEntries } from './flow-edit.ts';
import { readBlockStream } from '../yaml/read/manifest-reader.ts';
import { verifyFragmentFast } from '../yaml/read/fragment-verifier.ts';
import { readCore, readKubernetes } from '../yaml/read/readers.ts';

/**
 * The read-back check of a rewritten resource: the new text is read again, as Kubernetes reads it
 * (YAML 1.1, merge keys) and as a YAML 1.2 reader does, and must read as intended: what meshinject
 * changed reads as the new data, everything else exactly as the input did (integers compared digit for
 * digit, as `bigint`). Issue #14 / #8: "never a wrong output with exit 0".
 */

type Value = unknown;

/** Exact deep equality of read values (bigints by value, key order ignored, null distinct from absent). */
function sameRead(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint') return typeof a === typeof b && a === b;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameRead(x, b[i]));
  if (!isJsonObject<Value>(a) || !isJsonObject<Value>(b) || Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameRead(a[k], b[k]));
}

/**
 * Whether a read value is the intended data (null map values mean absent; a bigint equals its number).
 * Allocates nothing.
 */
export function readsAs(b: Value, n: Json | undefined): boolean {
  if (n === undefined || n === null) return b === undefined || b === null;
  if (typeof b === 'bigint') return typeof n === 'number' && Number(b) === n && Number.isSafeInteger(n);
  if (Array.isArray(n)) return Array.isArray(b) && b.length === n.length && n.every((x, i) => readsAs(b[i], x));
  if (isJsonObject(n)) {
    if (!isJsonObject<Value>(b)) return false;
    // Own keys only (a key named like an Object.prototype member is a plain key); a key on one side only
    // must be null or absent on the other.
    for (const k in n) if (!readsAs(Object.hasOwn(b, k) ? b[k] : undefined, n[k])) return false;
    for (const k in b) if (!Object.hasOwn(n, k) && b[k] !== null && b[k] !== undefined) return false;
    return true;
  }
  return b === n;
}

/**
 * Whether `after` (a reading of the new text) equals `before` (the same reading of the old text) plus
 * exactly the change from `old` to `next` (the Kubernetes reading the pipeline worked on): unchanged
 * parts compare exactly, changed parts must read as `next`. List entries are matched as the text editor
 * matches them (`matchEntries`: by the merge key of `field`, the key the values are under).
 */
export function equalsWithDelta(
  before: Value,
  after: Value,
  old: Json | undefined,
  next: Json | undefined,
  mergedOnly = false,
  field?: string,
): boolean {
  const o = old === undefined ? null : old;
  const n = next === undefined ? null : next;
  // `mergedOnly` (the YAML 1.2 pass): content only a merge key brings in has no 1.2 reading to keep.
  if (mergedOnly && before === undefined && old !== undefined) return true;
  if (jsonEqual(withoutNulls(o), withoutNulls(n)))
    return sameRead(before, after) || (n === null && readsAs(after, null) && readsAs(before, null));
  if (before === undefined || before === null) return readsAs(after, n);
  if (isJsonObject(o) && isJsonObject(n) && isJsonObject<Value>(before) && isJsonObject<Value>(after)) {
    const keys = new Set([...Object.keys(o), ...Object.keys(n), ...Object.keys(before), ...Object.keys(after)]);
    // Own keys only: a key named like an Object.prototype member is a plain key, absent where it is not own.
    for (const k of keys) {
      const inData = Object.hasOwn(o, k) || Object.hasOwn(n, k);
      if (!inData) {
        if (!sameRead(own(before, k), own(after, k))) return false;
        continue;
      }
      if (!equalsWithDelta(own(before, k), own(after, k), own(o, k), own(n, k), mergedOnly, k)) return false;
    }
    return true;
  }
  if (Array.isArray(o) && Array.isArray(n) && Array.isArray(before) && Array.isArray(after)) {
    if (after.length !== n.length || before.length !== o.length) return false;
    const matched = matchEntries(o, n, field);
    return n.every((v, j) => {
      const i = matched[j] ?? -1;
      return i < 0 ? readsAs(after[j], v) : equalsWithDelta(before[i], after[j], o[i], v, mergedOnly);
    });
  }
  return readsAs(after, n);
}

/** `m[k]` when `k` is an own key of `m`, else undefined (never a member of `Object.prototype`). */
function own<V>(m: { [key: string]: V }, k: string): V | undefined {
  return Object.hasOwn(m, k) ? m[k] : undefined;
}

/** Integer literals too long for a double to hold exactly (16 digits or more), in order. */
function longIntegers(text: string): string[] {
  return text.match(/-?\d{16,}/g) ?? [];
}

/**
 * The read-back of a strict JSON resource (both texts parse with `JSON.parse`): strict JSON reads the
 * same in YAML 1.1 and 1.2, so one reading suffices; long integers must keep their digits (compared as
 * text, in order). Returns undefined when either text is not strict JSON (comments, YAML flow syntax),
 * '' when it reads as intended, else the difference. `JSON.parse` instead of `yaml`: `yaml` reads long
 * single-line flow collections slowly (compact JSON).
 */
function readBackJson(oldText: string, newText: string, next: Json): string | undefined {
  if (!oldText.startsWith('{') || !newText.startsWith('{')) return undefined;
  let after: Json;
  try {
    JSON.parse(oldText);
    after = JSON.parse(newText) as Json;
  } catch {
    return undefined;
  }
  if (!jsonEqual(withoutNulls(after), withoutNulls(next))) return 'the new JSON reads differently';
  const a = longIntegers(oldText);
  const b = longIntegers(newText);
  if (a.length !== b.length || a.some((x, i) => x !== b[i])) return 'an integer beyond 2^53 would lose digits';
  return '';
}

/** The one document a read produced, or undefined when the text did not read as exactly one document. */
function single(r: ReturnType<typeof readKubernetes>): { value: Value } | undefined {
  return r.ok && r.values.length === 1 ? { value: r.values[0] } : undefined;
}

/**
 * Checks a rewritten resource. `oldText`/`newText` are the resource's source text before and after (the
 * first line starting at `column`); `old`/`next` its data as the pipeline read it and wants it.
 *
 * `simple`: the resource was read by the fast block reader (no anchors, merge keys, tags or plain scalars the
 * two readings read otherwise, so both readings are `old`); the new text is checked by the verifier
 * (`verifyFragmentFast`), else re-read with the same fast block reader (which reads as both readings do), and with
 * the `yaml` package where neither reads it. `preamble`: the document's directives (`%TAG`) and `---`.
 *
 * @returns undefined when the new text reads as intended, else a short description of the difference
 */
export function checkReadBack(
  oldText: string,
  newText: string,
  column: number,
  old: Json,
  next: Json,
  simple: boolean,
  preamble = '',
): string | undefined {
  // The column matters only for continuation lines (a one-line resource, e.g. compact JSON, reads alone).
  const standalone = (text: string): string => preamble + (text.includes('\n') ? ' '.repeat(column) : '') + text;
  if (simple) {
    // Both readings of the input are `old` (the fast block reader declines what the two read otherwise), so
    // one reading of the new text that both readings share suffices. The verifier's first (it reads no plain
    // YAML 1.1 boolean, where Go's template reading differs), without building the data; it answers only
    // "reads as intended". Else the fast block reader's, which reads what it accepts as both readings do
    // (test/yaml/manifest-reader.test.ts); the full check below when it declines.
    const text = ' '.repeat(newText.includes('\n') ? column : 0) + newText;
    if (verifyFragmentFast(text, next, readsAs)) return undefined;
    const fast = onlyBlockDocument(standalone(newText));
    if (fast) return deltaProblem(old, fast, old, fast, old, next);
  }
  const json = readBackJson(oldText, newText, next);
  if (json !== undefined) return json || undefined;
  const after11 = single(readKubernetes(standalone(newText), !simple));
  if (!after11) return 'the new text is not one YAML document';
  const before11 = simple ? { value: old } : single(readKubernetes(standalone(oldText), true));
  if (!before11) return 'the new text reads differently as YAML 1.1 (kubectl)';
  const after12 = single(readCore(standalone(newText), !simple));
  const before12 = simple ? { value: old } : single(readCore(standalone(oldText), true));
  if (!after12 || !before12) {
    return equalsWithDelta(before11.value, after11.value, old, next)
      ? 'the new text reads differently as YAML 1.2'
      : 'the new text reads differently as YAML 1.1 (kubectl)';
  }
  return deltaProblem(before11.value, after11.value, before12.value, after12.value, old, next);
}

/**
 * The full check's verdict on the two readings (Kubernetes YAML 1.1, then YAML 1.2) of the old and the new text:
 * undefined when each new reading is its old reading plus the change from `old` to `next` (`equalsWithDelta`).
 */
function deltaProblem(
  before11: Value,
  after11: Value,
  before12: Value,
  after12: Value,
  old: Json,
  next: Json,
): string | undefined {
  if (!equalsWithDelta(before11, after11, old, next)) return 'the new text reads differently as YAML 1.1 (kubectl)';
  if (!equalsWithDelta(before12, after12, old, next, true)) return 'the new text reads differently as YAML 1.2';
  return undefined;
}

/**
 * The data of `text` when the fast block reader reads it as exactly one non-empty document (it then reads as both
 * the Kubernetes and the YAML 1.2 reading do), else undefined.
 */
function onlyBlockDocument(text: string): Value {
  const docs = readBlockStream(text);
  const [only] = docs ?? [];
  return docs?.length === 1 && only && !('declined' in only) && only.node !== null ? only.value : undefined;
}
