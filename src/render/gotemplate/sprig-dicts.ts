/**
 * Sprig dict functions (`dict`, `hasKey`, `get`, `pick`).
 * Part of `SPRIG_FUNCS` (sprig.ts), which assembles the families in Sprig's documented order.
 */
import { str, bool, iface, strval, mapEntries } from './sprig-helpers.ts';
import { ANY, type GoFunc, MAP_ANY, STRING, Value, box, dynamic, goFunc } from './value.ts';
import { setOwn } from '../../json.ts';

/** Sprig dict functions, as `[name, function]` entries. */
export const SPRIG_DICTS: ReadonlyArray<readonly [string, GoFunc]> = [
  [
    'dict',
    goFunc(
      [ANY],
      (...vs) => {
        const out: Record<string, unknown> = {};
        for (let i = 0; i < vs.length; i += 2)
          setOwn(out, strval(vs[i] as Value), i + 1 < vs.length ? box(iface(vs[i + 1] as Value)) : '');
        return new Value(MAP_ANY, out);
      },
      true,
    ),
  ],
  ['hasKey', goFunc([MAP_ANY, STRING], (d, k) => bool(Object.hasOwn(mapEntries(d), k.v as string)))],
  [
    'get',
    goFunc([MAP_ANY, STRING], (d, k) => {
      const o = mapEntries(d);
      return Object.hasOwn(o, k.v as string) ? dynamic(o[k.v as string]) : str('');
    }),
  ],
  [
    'pick',
    goFunc(
      [MAP_ANY, STRING],
      (d, ...keys) => {
        const o = mapEntries(d);
        const out: Record<string, unknown> = {};
        for (const k of keys) if (Object.hasOwn(o, k.v as string)) setOwn(out, k.v as string, o[k.v as string]);
        return new Value(MAP_ANY, out);
      },
      true,
    ),
  ],
];
