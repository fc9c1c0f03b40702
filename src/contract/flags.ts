import type { Json } from '../model.ts';

/** A command-line option of a driver (istioctl's `--revision`, `--valuesFile`): always takes a value. */
export interface DriverFlag {
  /** The option without `--`, e.g. `valuesFile`. */
  name: string;
  /** The value's name in help (`REV`, `FILE`). */
  arg: string;
  /** The value names a file: the CLI reads it (within `--max-input-bytes`) and hands its text. */
  file?: boolean;
  /** One line for `--help`. */
  help: string;
}

/** A flag's value as the CLI hands it to the driver: the text (a file flag: the file's content) and its name for messages. */
export interface FlagValue {
  /** `--revision` or, for a file flag, `--valuesFile values.json`. */
  name: string;
  text: string;
}

/** A field of a driver's section set from outside the functionConfig (a flag): it wins over the functionConfig. */
export interface SectionOverride {
  /** The field of `spec.<driver>`, e.g. `revision`. */
  field: string;
  value: Json;
  /** Where the value came from, for messages: `--revision`, `--valuesFile values.json`. */
  from: string;
  /**
   * How the ConfigMap form holds it (`data['<driver>.<field>']`): `text` (a string, as is) or `json` (JSON text);
   * absent: only a SidecarInjection can (a ConfigMap functionConfig is then an error naming the flag).
   */
  configMap?: 'text' | 'json';
}

/** A driver's command-line flags and how their values become config overrides. */
export interface DriverFlags {
  /** The options, in `--help` order. */
  readonly options: readonly DriverFlag[];
  /**
   * The overrides of the given flags (`values` by option name, only those given), in a stable order, one per
   * field (a later flag for the same field wins, as the driver documents).
   * @returns the overrides, or the message of the first value that cannot be used (naming the flag and file)
   */
  overrides(
    values: Readonly<Record<string, FlagValue>>,
  ): { ok: true; overrides: SectionOverride[] } | { ok: false; message: string };
}

/** A driver's lines in `meshinject --help` (each without a trailing newline). */
export interface DriverHelp {
  /** Its config section as a YAML sketch with comments, `<name>: ...` (lines may be more; `--help` indents them under `spec:`). */
  config?: string;
  /** Its own opt-in/opt-out, e.g. `Istio sidecar.istio.io/inject`. */
  optIn?: string;
  /** What its flags are, for "Flags (...) win", e.g. `--revision, the istioctl file flags`. */
  flags?: string;
  /** What `nativeSidecars: auto` means for it, e.g. `Linkerd: from 1.29` (see `nativeSidecarsAuto`). */
  nativeSidecarsAuto?: string;
}
