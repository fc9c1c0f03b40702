/**
 * Sprig conversion, JSON and type functions (`int`, `toJson`, `kindOf`, ...).
 * Part of `SPRIG_FUNCS` (sprig.ts), which assembles the families in Sprig's documented order.
 */
import {
  str,
  bool,
  iface,
  isNilIface,
  toInt64,
  toFloat64,
  failedJSON,
  jsonOf,
  prettyJSON,
  kindName,
} from './sprig-helpers.ts';
import { ANY, FLOAT64, type GoFunc, INT, INT64, NIL, STRING, Value, dynamic, goFunc, toJSONValue } from './value.ts';

/** Sprig conversion, JSON and type functions, as `[name, function]` entries. */
export const SPRIG_CONVERSION: ReadonlyArray<readonly [string, GoFunc]> = [
  ['int', goFunc([ANY], (v) => new Value(INT, toInt64(v)))],
  ['int64', goFunc([ANY], (v) => new Value(INT64, toInt64(v)))],
  ['float64', goFunc([ANY], (v) => new Value(FLOAT64, toFloat64(v)))],
  ['atoi', goFunc([STRING], (s) => new Value(INT, /^[+-]?\d+$/.test(s.v as string) ? Number(s.v) : 0))],
  [
    'toJson',
    goFunc([ANY], (v) => {
      try {
        return str(jsonOf(iface(v)));
      } catch (e) {
        return failedJSON(e);
      }
    }),
  ],
  [
    'toPrettyJson',
    goFunc([ANY], (v) => {
      try {
        return str(prettyJSON(toJSONValue(iface(v)), ''));
      } catch (e) {
        return failedJSON(e);
      }
    }),
  ],
  [
    'toRawJson',
    goFunc([ANY], (v) => {
      try {
        return str(JSON.stringify(toJSONValue(iface(v))) ?? 'null');
      } catch (e) {
        return failedJSON(e);
      }
    }),
  ],
  [
    'fromJson',
    goFunc([STRING], (s) => {
      try {
        return dynamic(JSON.parse(s.v as string));
      } catch {
        return NIL;
      }
    }),
  ],
  ['kindOf', goFunc([ANY], (v) => str(kindName(v)))],
  ['kindIs', goFunc([STRING, ANY], (k, v) => bool(kindName(v) === k.v))],
  ['typeOf', goFunc([ANY], (v) => str(isNilIface(v) ? '<nil>' : v.t.name))],
  ['typeIs', goFunc([STRING, ANY], (k, v) => bool((isNilIface(v) ? '<nil>' : v.t.name) === k.v))],
];
