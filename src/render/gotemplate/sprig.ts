/**
 * The Sprig v3 text functions (github.com/Masterminds/sprig, `TxtFuncMap`) that Istio's injector makes
 * available to its templates, written from Sprig's documented behaviour: strings (`quote`, `trunc`,
 * `trimSuffix`, `indent`, `nindent`, ...), lists (`list`, `append`, `first`, `join`, ...), dicts
 * (`dict`, `hasKey`, `get`, `pick`), defaults (`default`, `empty`, `coalesce`, `ternary`), conversion,
 * JSON and integer math. Functions that read the clock, randomness, the environment or the file
 * system, and those that mutate their arguments (`set`, `unset`, `merge`), are deliberately absent:
 * a template calling one fails to parse with `function "x" not defined`.
 */
import { SPRIG_CONVERSION } from './sprig-conversion.ts';
import { SPRIG_DEFAULTS } from './sprig-defaults.ts';
import { SPRIG_DICTS } from './sprig-dicts.ts';
import { SPRIG_FAILURES } from './sprig-failures.ts';
import { SPRIG_LISTS } from './sprig-lists.ts';
import { SPRIG_MATH } from './sprig-math.ts';
import { SPRIG_STRINGS } from './sprig-strings.ts';
import type { GoFunc } from './value.ts';

export { goTrimSpace } from './sprig-helpers.ts';

/** Sprig's text functions by name. */
export const SPRIG_FUNCS: ReadonlyMap<string, GoFunc> = new Map<string, GoFunc>([
  ...SPRIG_DEFAULTS,
  ...SPRIG_STRINGS,
  ...SPRIG_LISTS,
  ...SPRIG_DICTS,
  ...SPRIG_CONVERSION,
  ...SPRIG_MATH,
  ...SPRIG_FAILURES,
]);
