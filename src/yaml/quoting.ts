/**
 * Plain strings that a YAML 1.1 reader (Go's sigs.k8s.io/yaml, i.e. kubectl, kpt, kustomize, the API
 * server) resolves to something else than a string: booleans (y/yes/on/off/...), null (~), numbers in
 * 1.1 forms (0x1f, 0o17, 1_000, 1:20, .5, +1), and timestamps. New string scalars matching it are quoted.
 */
const YAML11_NON_STRING =
  /^(?:[yY]|[yY]es|YES|[nN]|[nN]o|NO|[tT]rue|TRUE|[fF]alse|FALSE|[oO]n|ON|[oO]ff|OFF|~|[nN]ull|NULL|)$|^[-+]?(?:0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][-+]?[0-9]+)?|[1-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$|^\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?$/;

/** Whether a string must be quoted so that YAML 1.1 and 1.2 readers both read it back as a string. */
export function needsQuotes(value: string): boolean {
  return YAML11_NON_STRING.test(value);
}

