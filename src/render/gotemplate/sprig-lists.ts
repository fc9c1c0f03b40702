/**
 * Sprig list functions (`list`, `append`, `first`, `join`, ...).
 * Part of `SPRIG_FUNCS` (sprig.ts), which assembles the families in Sprig's documented order.
 */
import { bool, isNilIface, sprigEmpty, elements, listOf, deepEqual } from './sprig-helpers.ts';
import { ANY, FALSE, type GoFunc, INT, NIL, Value, goFunc, indirectInterface } from './value.ts';
import { checkList } from '../budget.ts';

/** Sprig list functions, as `[name, function]` entries. */
export const SPRIG_LISTS: ReadonlyArray<readonly [string, GoFunc]> = [
  [
    'list',
    goFunc(
      [ANY],
      (...vs) => {
        checkList(vs.length, 'list');
        return listOf(vs);
      },
      true,
    ),
  ],
  [
    'append',
    goFunc([ANY, ANY], (l, v) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot push on type ${indirectInterface(l).t.name}`);
      checkList(items.length + 1, 'append');
      return listOf([...items, v]);
    }),
  ],
  [
    'push',
    goFunc([ANY, ANY], (l, v) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot push on type ${indirectInterface(l).t.name}`);
      checkList(items.length + 1, 'append');
      return listOf([...items, v]);
    }),
  ],
  [
    'prepend',
    goFunc([ANY, ANY], (l, v) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot prepend on type ${indirectInterface(l).t.name}`);
      checkList(items.length + 1, 'prepend');
      return listOf([v, ...items]);
    }),
  ],
  [
    'first',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find first on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : (items[0] as Value);
    }),
  ],
  [
    'last',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find last on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : (items[items.length - 1] as Value);
    }),
  ],
  [
    'rest',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find rest on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : listOf(items.slice(1));
    }),
  ],
  [
    'initial',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find initial on type ${indirectInterface(l).t.name}`);
      return items.length === 0 ? NIL : listOf(items.slice(0, -1));
    }),
  ],
  [
    'has',
    goFunc([ANY, ANY], (needle, hay) => {
      const items = elements(hay);
      if (!items) {
        if (isNilIface(hay)) return FALSE;
        throw new Error(`Cannot find has on type ${indirectInterface(hay).t.name}`);
      }
      return bool(items.some((x) => deepEqual(x, needle)));
    }),
  ],
  [
    'compact',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot compact on type ${indirectInterface(l).t.name}`);
      return listOf(items.filter((x) => !sprigEmpty(x)));
    }),
  ],
  [
    'uniq',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find uniq on type ${indirectInterface(l).t.name}`);
      const out: Value[] = [];
      for (const x of items) if (!out.some((y) => deepEqual(x, y))) out.push(x);
      return listOf(out);
    }),
  ],
  [
    'without',
    goFunc(
      [ANY, ANY],
      (l, ...omit) => {
        const items = elements(l);
        if (!items) throw new Error(`Cannot find without on type ${indirectInterface(l).t.name}`);
        return listOf(items.filter((x) => !omit.some((o) => deepEqual(x, o))));
      },
      true,
    ),
  ],
  [
    'reverse',
    goFunc([ANY], (l) => {
      const items = elements(l);
      if (!items) throw new Error(`Cannot find reverse on type ${indirectInterface(l).t.name}`);
      return listOf([...items].reverse());
    }),
  ],
  [
    'until',
    goFunc([INT], (n) => {
      const c = n.v as number;
      checkList(Math.abs(c), 'until');
      const out: Value[] = [];
      for (let i = 0; c >= 0 ? i < c : i > c; c >= 0 ? i++ : i--) out.push(new Value(INT, i));
      return new Value(
        { kind: 'slice', name: '[]int', elem: INT },
        out.map((x) => x.v),
      );
    }),
  ],
];
