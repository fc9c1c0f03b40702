import type { Json } from '../model.ts';

/**
 * The one place where plain-scalar rules live: how a plain (unquoted) scalar resolves under YAML 1.1 and
 * YAML 1.2, and whether a string must be quoted to be read back as a string. Every reader and writer of
 * meshinject uses it: the manifest reader (`read/manifest-reader.ts`, YAML 1.2 with 1.1 look-alikes declined),
 * the fragment reader (`read/fragment-reader.ts`, YAML 1.1 as Go reads template output) and the emitter
 * (`emit/emit-block.ts`).
 *
 * The readers it stands for:
 * - **YAML 1.1 as Go reads it**: sigs.k8s.io/yaml (its go-yaml v2 fork, `resolve.go`) as used by kubectl,
 *   the API server and Istio's injector (`YAMLToJSON` of the rendered template). `y/yes/on/n/no/off` are
 *   booleans, integers are whatever `strconv.ParseInt(s without "_", 0, 64)` reads (`0644` octal 420,
 *   `0x1F`, `0o17`, `0b101`, `1_000`), floats need a digit (`yamlStyleFloat`: `1.5e3`, `.5`, `1.`; `.` and
 *   `e5` are strings), `.inf`/`.nan` are floats, timestamps stay strings (go-yaml v2 keeps them as text for
 *   untyped values) and base 60 (`1:20`) is a string: go-yaml never read it.
 * - **YAML 1.2 core schema** (`yaml` by default, yq v4): only `true/false`, `null/~`, decimal, `0o`/`0x`
 *   numbers and `.inf`/`.nan`.
 * - **Other YAML 1.1 readers** (`yaml` with `version: '1.1'`, PyYAML): like Go, and also base 60 numbers,
 *   timestamps, and (in `yaml`) `.`, `-.` and `e5` as NaN.
 */

/** YAML 1.1 booleans that YAML 1.2 reads as strings, with their 1.1 value (go-yaml v2 `resolveMapList`). */
const YAML11_BOOL = new Map<string, boolean>([
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON'].map((w) => [w, true] as const),
  ...['n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF'].map((w) => [w, false] as const),
]);

/** A decimal integer (same value in every reader unless it has a leading zero or exceeds 2^53). */
const INT = /^[-+]?[0-9]+$/;
/** A leading zero: octal in YAML 1.1 (`0644` is 420), decimal in 1.2 (644). */
const LEADING_ZERO = /^[-+]?0[0-9]/;
/** A float with a digit and no `_`: the same value in Go's `yamlStyleFloat`, `yaml` 1.1 and 1.2 core. */
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
/**
 * Numbers that readers disagree on or that are rare in manifests: base prefixes with or without a sign
 * (`0x1F`, `-0x1f`, `0o17`, `+0b1`; Go also reads `0X`, `0O`, `0B`), `.inf`/`.nan`, digits with `_`
 * (`1_000`, `1.5_0`) and base 60 (`1:20`, `-1:20.5`).
 */
const DISPUTED_NUMBER =
  /^[-+]?0[xXoObB]|^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$|^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$|^(?=[^_]*_)[-+]?[0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?$/;

/**
 * YAML 1.1 floats as `yaml`'s 1.1 schema tests them (with `_`), but needing a digit: `yaml`'s own patterns
 * also match `.`, `-.` and `e0`, reading them as NaN, where Go's readers (strconv.ParseFloat) and YAML 1.2
 * read strings. Exponent form: `1e3`, `1.5E-2`, `.5e1`; plain form: `1.5`, `1.`, `.5`, `1_000.5`. Used as
 * the tests of `yaml`'s float tags by `read/readers.ts`.
 */
export const FLOAT_EXP_1_1 = /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$/;
export const FLOAT_1_1 = /^[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9][0-9_]*)$/;

/*
 * Every pattern here runs in linear time on any text (issue 19): no two quantifiers next to each other can
 * match the same characters (`[0-9_]*\.?[0-9_]*` took 11 s on `1_1...1x` of 100 000 characters; it is written
 * `[0-9_]*(?:\.[0-9_]*)?`, the same language). test/core/linear-time.test.ts holds them to it.
 */

/**
 * The value of a plain scalar, or `undefined` where the caller must decline it (leave it to the `yaml`
 * package). With `version: '1.1'`, the value Go's YAML 1.1 reading gives (`yes` is true); with `'1.2'`,
 * the YAML 1.2 core value, declining every form a YAML 1.1 reader reads otherwise (`yes`, `0644`, `1_000`,
 * `-0x1f`, `1:20`), so that what is accepted reads the same in both. In both versions these are declined:
 * integers beyond 2^53, infinite floats, and the numbers of `DISPUTED_NUMBER`. Timestamps, `.`, `e5`
 * and other digit-less look-alikes are strings (Go and 1.2 agree).
 *
 * `s` is the scalar's text without surrounding spaces or comment.
 */
export function resolvePlain(s: string, version: '1.1' | '1.2'): Json | undefined {
  const c = s.charCodeAt(0);
  if (s.length <= 5) {
    if (s === '' || s === '~' || s === 'null' || s === 'Null' || s === 'NULL') return null;
    if (s === 'true' || s === 'True' || s === 'TRUE') return true;
    if (s === 'false' || s === 'False' || s === 'FALSE') return false;
    if (s.length <= 3) {
      const b = YAML11_BOOL.get(s);
      if (b !== undefined) return version === '1.1' ? b : undefined;
    }
  }
  // Digits, signs and `.`: the only starts of a number (ints, floats, .inf) in either version.
  if ((c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46) {
    if (INT.test(s)) {
      if (LEADING_ZERO.test(s)) return undefined;
      const n = Number(s);
      return Number.isSafeInteger(n) ? n : undefined;
    }
    if (FLOAT.test(s)) {
      const n = Number(s);
      return Number.isFinite(n) ? n : undefined;
    }
    if (DISPUTED_NUMBER.test(s)) return undefined;
  }
  return s;
}

/**
 * A plain scalar's value in both readings of a manifest, or undefined where they may differ (the caller declines):
 * the Kubernetes reading (src/yaml/read/readers.ts `K8S_YAML_OPTIONS`) and YAML 1.2 core. It is
 * `resolvePlain(s, '1.2')`, except that the YAML 1.1 booleans (`yes`, `on`, `n`) are the strings they are in both
 * (go-yaml v3, kustomize, and kubectl's typed decoding of string fields keep them as text). What the manifest reader
 * (read/manifest-reader.ts, read/plain-cache.ts) resolves plain scalars with.
 */
export function resolveManifestPlain(s: string): Json | undefined {
  return s.length <= 3 && YAML11_BOOL.has(s) ? s : resolvePlain(s, '1.2');
}

/** Whether `s` is a YAML 1.1 boolean (`y`, `yes`, `on`, `n`, `no`, `off`, in their cases) that YAML 1.2 reads as a string. */
export function isYaml11Bool(s: string): boolean {
  return s.length <= 3 && YAML11_BOOL.has(s);
}

/**
 * Plain strings that some YAML 1.1 reader resolves to something else than a string: booleans
 * (y/yes/on/off/...), null (~), numbers in 1.1 forms (0x1f, 017, 1_000, 1:20, .5, +1; and the looser
 * patterns of `yaml`'s 1.1 schema: `.`, `e5`), and timestamps.
 */
const YAML11_NON_STRING =
  /^(?:[yY]|[yY]es|YES|[nN]|[nN]o|NO|[tT]rue|TRUE|[fF]alse|FALSE|[oO]n|ON|[oO]ff|OFF|~|[nN]ull|NULL|)$|^[-+]?(?:0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|(?:[0-9_]*|(?:[0-9][0-9_]*)?\.[0-9_]*)(?:[eE][-+]?[0-9]+)?|[1-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$|^\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?$/;

/**
 * Plain strings that a YAML 1.2 core reader, or Go's `strconv.ParseInt(s, 0, 64)`, reads as numbers and
 * `YAML11_NON_STRING` misses: `0o17`, upper-case prefixes `0X1F`/`0O17`/`0B1` (Go), signed `.inf`, and
 * decimal numbers (listed again for clarity).
 */
const OTHER_NON_STRING =
  /^[-+]?(?:\.inf|\.Inf|\.INF)$|^(?:\.nan|\.NaN|\.NAN)$|^[-+]?0[oO][0-7_]+$|^[-+]?0[XB][0-9a-fA-F_]+$|^[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$/;

/**
 * Whether a one-line string must be quoted so that every YAML 1.1 and 1.2 reader (Go's sigs.k8s.io/yaml,
 * `yaml` in either version, PyYAML) reads it back as that string: true for every plain form that any of
 * them reads as null, a boolean, a number or a timestamp. (Indicators, `: `, ` #` and spaces are the
 * emitter's business: `emit/emit-block.ts`.)
 */
export function needsQuotes(value: string): boolean {
  return YAML11_NON_STRING.test(value) || OTHER_NON_STRING.test(value);
}
