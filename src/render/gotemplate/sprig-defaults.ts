/**
 * Sprig defaults (`default`, `empty`, `coalesce`, `ternary`).
 * Part of `SPRIG_FUNCS` (sprig.ts), which assembles the families in Sprig's documented order.
 */
import { bool, sprigEmpty } from './sprig-helpers.ts';
import { ANY, BOOL, type GoFunc, NIL, type Value, goFunc } from './value.ts';

/** Sprig defaults, as `[name, function]` entries. */
export const SPRIG_DEFAULTS: ReadonlyArray<readonly [string, GoFunc]> = [
  [
    'default',
    goFunc(
      [ANY, ANY],
      (d, ...given) => (given.length === 0 || sprigEmpty(given[0] as Value) ? d : (given[0] as Value)),
      true,
    ),
  ],
  ['empty', goFunc([ANY], (v) => bool(sprigEmpty(v)))],
  ['coalesce', goFunc([ANY], (...vs) => vs.find((v) => !sprigEmpty(v)) ?? NIL, true)],
  ['ternary', goFunc([ANY, ANY, BOOL], (vt, vf, c) => (c.v ? vt : vf))],
];
