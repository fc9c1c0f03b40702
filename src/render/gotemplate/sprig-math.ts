/**
 * Sprig integer math (`add`, `sub`, `div`, `max`, ...); sprig converts every operand through `toInt64`.
 * Part of `SPRIG_FUNCS` (sprig.ts), which assembles the families in Sprig's documented order.
 */
import { toInt64 } from './sprig-helpers.ts';
import { ANY, type GoFunc, INT64, Value, goFunc } from './value.ts';

/** Sprig integer math, as `[name, function]` entries. */
export const SPRIG_MATH: ReadonlyArray<readonly [string, GoFunc]> = [
  [
    'add',
    goFunc(
      [ANY],
      (...vs) =>
        new Value(
          INT64,
          vs.reduce((a, v) => a + toInt64(v), 0),
        ),
      true,
    ),
  ],
  ['add1', goFunc([ANY], (v) => new Value(INT64, toInt64(v) + 1))],
  ['sub', goFunc([ANY, ANY], (a, b) => new Value(INT64, toInt64(a) - toInt64(b)))],
  [
    'mul',
    goFunc(
      [ANY, ANY],
      (a, ...vs) =>
        new Value(
          INT64,
          vs.reduce((x, v) => x * toInt64(v), toInt64(a)),
        ),
      true,
    ),
  ],
  [
    'div',
    goFunc([ANY, ANY], (a, b) => {
      const d = toInt64(b);
      if (d === 0) throw new Error('runtime error: integer divide by zero');
      return new Value(INT64, Math.trunc(toInt64(a) / d));
    }),
  ],
  [
    'mod',
    goFunc([ANY, ANY], (a, b) => {
      const d = toInt64(b);
      if (d === 0) throw new Error('runtime error: integer divide by zero');
      return new Value(INT64, toInt64(a) % d);
    }),
  ],
  [
    'max',
    goFunc(
      [ANY, ANY],
      (a, ...vs) =>
        new Value(
          INT64,
          vs.reduce((x, v) => Math.max(x, toInt64(v)), toInt64(a)),
        ),
      true,
    ),
  ],
  [
    'min',
    goFunc(
      [ANY, ANY],
      (a, ...vs) =>
        new Value(
          INT64,
          vs.reduce((x, v) => Math.min(x, toInt64(v)), toInt64(a)),
        ),
      true,
    ),
  ],
];
