/**
 * The text editor and the workload template path keep keys named like `Object.prototype` members (`constructor`,
 * `toString`, `__proto__`, ...) as plain keys: a key the new data drops is removed from the text, one it keeps or
 * changes is written as the data says, whatever its name (session 47: the editor asked `k in next`, which is true
 * for `constructor` on every object, and kept a dropped key).
 */
import t from 'tap';
import fc from 'fast-check';
import { parseDocument } from 'yaml';
import { parseSource } from '../../src/krm/source.ts';
import { editText } from '../../src/edit/text-edit.ts';
import type { Json } from '../../src/model.ts';
import { setOwn } from '../../src/json.ts';

const NAMES = Object.getOwnPropertyNames(Object.prototype).filter((k) => k !== '__proto__');

t.test(
  'a block mapping edited key by key: prototype-named keys dropped, kept and changed as the data says',
  async (t) => {
    let edited = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...NAMES, 'a', 'b', 'c'), { minLength: 2, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (textKeys, drop, change) => {
          // The first key stays (a mapping losing every key is rewritten whole, not edited key by key).
          const kept = textKeys.filter((_, i) => i === 0 || drop[i] !== true);
          const m: { [k: string]: Json } = {};
          for (const [i, k] of kept.entries()) setOwn(m, k, change[i] === true ? `new-${k}` : `v-${k}`);
          const text = `kind: X\nm:\n${textKeys.map((k) => `  ${k}: v-${k}\n`).join('')}end: 1\n`;
          const src = parseSource(text);
          const item = src.items[0];
          if (!item) return false;
          const next = { kind: 'X', m, end: 1 };
          const out = editText(text, item.node, item.value, next, [item.start, item.end], { seqIndent: 'compact' });
          const whole = out === undefined ? text : text.slice(0, item.start) + out + text.slice(item.end);
          const doc = parseDocument(whole);
          const got = (doc.toJS() as { m?: { [k: string]: Json } }).m ?? {};
          edited++;
          return (
            doc.errors.length === 0 &&
            JSON.stringify(Object.keys(got)) === JSON.stringify(kept) &&
            kept.every((k) => got[k] === m[k])
          );
        },
      ),
      { numRuns: 300 },
    );
    t.equal(edited, 300, 'every generated mapping edited and read back');
  },
);
