/**
 * Sprig failures (`fail`, `required`): each throws the message, which the executor reports as the template error.
 * Part of `SPRIG_FUNCS` (sprig.ts), which assembles the families in Sprig's documented order.
 */
import { isNilIface } from './sprig-helpers.ts';
import { ANY, type GoFunc, STRING, goFunc } from './value.ts';

/** Sprig failures, as `[name, function]` entries. */
export const SPRIG_FAILURES: ReadonlyArray<readonly [string, GoFunc]> = [
  [
    'fail',
    goFunc([STRING], (m) => {
      throw new Error(m.v as string);
    }),
  ],
  [
    'required',
    goFunc([STRING, ANY], (warn, v) => {
      if (isNilIface(v) || (v.t.kind === 'string' && v.v === '')) throw new Error(warn.v as string);
      return v;
    }),
  ],
];
