/**
 * The text editor and the workload template path keep keys named like `Object.prototype` members (`constructor`,
 * `toString`, `__proto__`, ...) as plain keys: a key the new data drops is removed from the text, one it keeps or
 * changes is written as the data says, whatever its name (session 47: the editor asked `k in next`, which is true
 * for `constructor` on every object, and kept a dropped key).
 */
import t from 'tap';
import fc from 'fast-check';
import type { Json } from '../../src/model.ts';
import { setOwn } from '../../src/json.ts';
import { editMapping } from '../helpers/edit-mapping.ts';

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
          const r = editMapping(textKeys, m);
          if (!r) return false;
          edited++;
          return (
            r.ok && JSON.stringify(Object.keys(r.got)) === JSON.stringify(kept) && kept.every((k) => r.got[k] === m[k])
          );
        },
      ),
      { numRuns: 300 },
    );
    t.equal(edited, 300, 'every generated mapping edited and read back');
  },
);
