/**
 * Where the text editor (src/edit/text-edit.ts) writes new keys of a block mapping: each after the closest key
 * before it in the new data that the text already has, or before the first one, in the new data's order; the keys
 * the text keeps stay in their text order (the editor's own text, before any read-back). Mappings of up to 12 keys, on both sides of the size up to which the
 * editor finds a key's pair by searching the pairs instead of a `Map` of them (issue #40).
 */
import t from 'tap';
import fc from 'fast-check';
import type { Json } from '../../src/model.ts';
import { editMapping } from '../helpers/edit-mapping.ts';

/** The key order the rule gives: kept keys in text order, each followed by the new keys anchored to it. */
function expectedOrder(textKeys: readonly string[], nextKeys: readonly string[]): string[] {
  const kept = new Set(textKeys.filter((k) => nextKeys.includes(k)));
  const runs = new Map<string | null, string[]>();
  let anchor: string | null = null;
  for (const k of nextKeys) {
    if (kept.has(k)) anchor = k;
    else runs.set(anchor, [...(runs.get(anchor) ?? []), k]);
  }
  const order = [...(runs.get(null) ?? [])];
  for (const k of textKeys) if (kept.has(k)) order.push(k, ...(runs.get(k) ?? []));
  return order;
}

t.test('new keys of a block mapping go after the closest existing key before them in the new data', async (t) => {
  let edited = 0;
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 0, max: 5 }),
      fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
      fc.array(fc.nat(), { minLength: 17, maxLength: 17 }),
      fc.boolean(),
      (n, added, drop, shuffle, changeOne) => {
        const textKeys = Array.from({ length: n }, (_, i) => `k${i}`);
        // At least one key stays (a mapping losing every key is rewritten whole, not edited key by key).
        const keptKeys = textKeys.filter((_, i) => i === 0 || drop[i] !== true);
        const newKeys = Array.from({ length: added }, (_, i) => `new${i}`);
        const all = [...keptKeys, ...newKeys];
        // A random order of the kept and new keys (a shuffle by the generated numbers).
        const nextKeys = all
          .map((k, i) => ({ k, r: shuffle[i] ?? 0 }))
          .sort((a, b) => a.r - b.r)
          .map((x) => x.k);
        const m: { [k: string]: Json } = {};
        for (const k of nextKeys) m[k] = changeOne && k === keptKeys[0] ? 'changed' : `v-${k}`;
        const r = editMapping(textKeys, m);
        if (!r) return false;
        edited++;
        return (
          r.ok &&
          JSON.stringify(Object.keys(r.got)) === JSON.stringify(expectedOrder(textKeys, nextKeys)) &&
          nextKeys.every((k) => r.got[k] === m[k]) &&
          r.text.endsWith('end: 1\n')
        );
      },
    ),
    { numRuns: 400 },
  );
  t.equal(edited, 400, 'every generated mapping edited and read back');
});
