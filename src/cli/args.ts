import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { MeshDriver } from '../contract/driver.ts';
import { DRIVERS } from '../drivers/registry.ts';
import { defined } from '../checked.ts';
import { suggest } from '../suggest.ts';
import { parseKubeVersion } from '../config/load.ts';

export { suggest };

/**
 * Command-line parsing of meshinject: the subcommand, its options and its inputs. Pure (argv in, a
 * `Command` or a usage error out); `src/cli.ts` reads files and the environment. Options are parsed by
 * Node's built-in `util.parseArgs` (strict: unknown options are errors), with "did you mean" suggestions
 * and checks it lacks (empty values, allowed values, sizes). The drivers' flags (`MeshDriver.flags`) are
 * options of their own, taken from the registry.
 */

/**
 * The subcommands; `inject` is the default when the first argument is not one of them. `uninject` is `inject`
 * with `spec.mode: uninject` (docs/reference/uninject.md), whatever the functionConfig's mode.
 */
export const COMMANDS = ['inject', 'uninject', 'check', 'explain', 'diff', 'migrate', 'completion'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** One option as the parser, the help text and the shell completions see it. */
export interface OptionSpec {
  name: string;
  short?: string;
  /** `string` options take a value; `boolean` ones do not. */
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** The value's name in help (`FILE`, `NS`). */
  arg?: string;
  /** Allowed values (checked here; offered by completions). */
  choices?: readonly string[];
  /** Completions offer file names. */
  file?: boolean;
  help: string;
  /** Subcommands that accept it (absent: every command except `completion`). */
  only?: readonly CommandName[];
  /** The driver that declares it (`MeshDriver.flags`); absent for meshinject's own options. */
  driver?: string;
}

/** meshinject's own options before the drivers' flags, in help order. */
const CORE_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'config',
    short: 'c',
    type: 'string',
    multiple: true,
    arg: 'FILE',
    file: true,
    help: 'functionConfig file (SidecarInjection or ConfigMap); repeat to layer files (later fields win, as Helm values)',
  },
  {
    name: 'platform-config',
    type: 'string',
    multiple: true,
    arg: 'FILE',
    file: true,
    help: 'a functionConfig layer the platform provides, read even outside the root; never a path a tenant chose. The base: --config layers over it may only narrow the fields it owns (docs/security.md, "The platform\'s word")',
  },
  {
    name: 'root',
    type: 'string',
    arg: 'DIR',
    file: true,
    help: 'every path the run opens must resolve inside DIR, symbolic links followed (default: see "Files and the root" below)',
  },
  {
    name: 'load-restrictor',
    type: 'string',
    arg: 'RULE',
    choices: ['LoadRestrictionsRootOnly', 'LoadRestrictionsNone'],
    help: "kustomize's spelling: LoadRestrictionsNone lifts the root (default LoadRestrictionsRootOnly)",
  },
  {
    name: 'filename',
    short: 'f',
    type: 'string',
    multiple: true,
    arg: 'PATH',
    file: true,
    help: 'an input file or directory; same as a PATH argument',
  },
  {
    name: 'mesh',
    type: 'string',
    arg: 'NAME',
    help: 'spec.mesh, over the config files (with --platform-config, only where the platform leaves it open)',
  },
  {
    name: 'policy',
    type: 'string',
    arg: 'POLICY',
    help: 'spec.policy, over the config files (with --platform-config, only disabled where the platform disables it)',
  },
  {
    name: 'default-namespace',
    type: 'string',
    arg: 'NS',
    help: 'namespace of resources without metadata.namespace (default: $ARGOCD_APP_NAMESPACE, else $HELM_NAMESPACE, else spec.defaultNamespace)',
  },
  {
    name: 'output',
    short: 'o',
    type: 'string',
    arg: 'FORMAT',
    choices: ['yaml', 'json', 'patches'],
    help: 'write the output as yaml or json (default: the form of the input); patches: a kustomize Component whose patches apply the injection to the input',
    only: ['inject', 'uninject', 'explain'],
  },
  {
    name: 'output-file',
    type: 'string',
    arg: 'FILE',
    file: true,
    help: 'write the output to FILE instead of stdout (a temporary renamed over FILE: on failure FILE keeps its old content)',
    only: ['inject', 'uninject'],
  },
  {
    name: 'max-input-bytes',
    type: 'string',
    arg: 'SIZE',
    help: 'refuse inputs larger than SIZE (bytes, or with KiB/MiB/GiB; default 512MiB)',
  },
  {
    name: 'report',
    type: 'string',
    multiple: true,
    arg: 'FORMAT[=PATH]',
    help: 'write a report: junit, sarif, github, table (to PATH, else stdout; table goes to stderr)',
    only: ['inject', 'uninject', 'check'],
  },
  {
    name: 'fail-on',
    type: 'string',
    arg: 'LEVEL',
    choices: ['error', 'drift', 'warning'],
    help: 'what fails the check: error (missing or unwanted sidecars, spec.check rules, invalid input), drift (default: also stale injections), warning (also warnings)',
    only: ['check'],
  },
  {
    name: 'in-place',
    short: 'i',
    type: 'boolean',
    help: 'write the changes back into the given files, all or none (untouched files stay untouched)',
    only: ['diff', 'migrate'],
  },
  {
    name: 'color',
    type: 'string',
    arg: 'WHEN',
    choices: ['auto', 'always', 'never'],
    help: 'colour the diff: auto (on a terminal), always, never',
    only: ['diff', 'migrate'],
  },
  {
    name: 'to',
    type: 'string',
    arg: 'TARGET',
    help: "the data plane to move the namespaces to, as the mesh's driver names it (e.g. ambient, sidecar)",
    only: ['migrate'],
  },
  {
    name: 'namespace',
    short: 'n',
    type: 'string',
    multiple: true,
    arg: 'NS',
    help: 'a namespace to migrate (repeat for more)',
    only: ['migrate'],
  },
  {
    name: 'waypoint',
    type: 'string',
    arg: 'NAME',
    help: 'the waypoint Gateway to add (if the package lacks it) and use for the namespaces',
    only: ['migrate'],
  },
  {
    name: 'diff',
    type: 'boolean',
    help: 'print the migration as a unified diff instead of the migrated package (exit 1 when it changes something)',
    only: ['migrate'],
  },
  {
    name: 'kube-version',
    type: 'string',
    arg: 'VERSION',
    help: "the cluster's Kubernetes version (e.g. 1.33), for nativeSidecars: auto (default: $KUBE_VERSION, which Argo CD sets for plugins)",
  },
];

/** meshinject's own options after the drivers' flags. */
const LAST_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'quiet',
    short: 'q',
    type: 'boolean',
    help: 'no summary line and no warning lines on stderr (errors still show)',
  },
  { name: 'help', short: 'h', type: 'boolean', help: 'show help' },
  { name: 'version', short: 'v', type: 'boolean', help: 'print the version' },
];

/** The options of the drivers' flags, in registry order (each takes a value). */
export function driverOptions(drivers: readonly MeshDriver<unknown>[]): OptionSpec[] {
  return drivers.flatMap((d) =>
    (d.flags?.options ?? []).map(
      (f): OptionSpec => ({
        name: f.name,
        type: 'string',
        arg: f.arg,
        ...(f.file ? { file: true } : {}),
        help: f.help,
        driver: d.name,
      }),
    ),
  );
}

/** Every option of every subcommand, in help order: meshinject's own, with the drivers' flags before the last few. */
export const OPTIONS: readonly OptionSpec[] = [...CORE_OPTIONS, ...driverOptions(DRIVERS), ...LAST_OPTIONS];

/** A parsed command line. */
export interface Command {
  command: CommandName;
  /** Input paths in order (`-` is stdin); empty means stdin. */
  inputs: string[];
  /** `--config` and `--platform-config` files, in command-line order (the layering order). */
  configs: string[];
  /** Indexes into `configs` of the `--platform-config` files (read outside the root). */
  platformConfigs: number[];
  /** `--root DIR`. */
  root?: string;
  /** `--load-restrictor` (kustomize's values). */
  loadRestrictor: 'LoadRestrictionsRootOnly' | 'LoadRestrictionsNone';
  defaultNamespace?: string;
  /** `--mesh` and `--policy`: `spec.mesh` and `spec.policy` over the config files (override layers). */
  mesh?: string;
  policy?: string;
  output?: 'yaml' | 'json' | 'patches';
  outputFile?: string;
  /** Input size limit in bytes. */
  maxInputBytes: number;
  reports: Array<{ format: ReportFormat; path?: string }>;
  failOn: 'error' | 'drift' | 'warning';
  inPlace: boolean;
  color: 'auto' | 'always' | 'never';
  /** `--kube-version`: the cluster's Kubernetes version, for `nativeSidecars: auto`. */
  kubeVersion?: string;
  /** The drivers' flags given (`MeshDriver.flags`), by driver name, then option name: the raw value. */
  driverFlags: Record<string, Record<string, string>>;
  quiet: boolean;
  help: boolean;
  version: boolean;
  /** `completion SHELL`. */
  shell?: 'bash' | 'zsh' | 'fish';
  /** `migrate`: `--to`, `--namespace` (in order), `--waypoint`, `--diff`. */
  migrate?: { to?: string; namespaces: string[]; waypoint?: string; diff: boolean };
}

/** Report formats of `--report`. */
export const REPORT_FORMATS = ['junit', 'sarif', 'github', 'table'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** 512 MiB: the default input size limit. */
export const DEFAULT_MAX_INPUT_BYTES = 512 * 1024 * 1024;

/**
 * Parses a size: a non-negative integer of bytes, optionally with `K`/`KiB`, `M`/`MiB`, `G`/`GiB`
 * (powers of 1024). Undefined when malformed.
 */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+)\s*(|B|K|KB|KiB|M|MB|MiB|G|GB|GiB)$/i.exec(text.trim());
  if (!m) return undefined;
  const [, digits, suffix = ''] = m;
  const unit = suffix.toUpperCase()[0];
  const factor = unit === 'K' ? 1024 : unit === 'M' ? 1024 ** 2 : unit === 'G' ? 1024 ** 3 : 1;
  const n = Number(digits) * factor;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A usage error: the message for stderr (exit 2). */
export interface UsageError {
  error: string;
}

function optionLabel(o: OptionSpec): string {
  return `--${o.name}`;
}

/**
 * Parses meshinject's arguments (without `node` and the script).
 *
 * - The first argument selects a subcommand when it is one of `COMMANDS`; otherwise the command is `inject`
 *   (a file named like a command is given as `./check`).
 * - `--` ends options: everything after it is an input path.
 * - Unknown options are errors with a "did you mean" suggestion; an empty value (`--config=`) is an error
 *   naming the option; values of options with `choices` are checked.
 *
 * @returns the command, or a usage error message (exit 2)
 *
 * Long by design: parser (the command line, option by option).
 */
export function parseCommandLine(argv: readonly string[]): Command | UsageError {
  let command: CommandName = 'inject';
  let rest = [...argv];
  const first = rest[0];
  if (first !== undefined && (COMMANDS as readonly string[]).includes(first)) {
    command = first as CommandName;
    rest = rest.slice(1);
  }
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const o of OPTIONS) {
    options[o.name] = {
      type: o.type,
      ...(o.short ? { short: o.short } : {}),
      ...(o.multiple ? { multiple: true } : {}),
    };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    return { error: explainParseError(e as Error & { code?: string }, rest) };
  }
  const v = parsed.values as Record<string, string | string[] | boolean | undefined>;
  const commandName = command === 'inject' ? 'meshinject' : `meshinject ${command}`;
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option') continue;
    const spec = defined(
      OPTIONS.find((o) => o.name === t.name),
      'the option table entry of a parsed option',
    );
    if (spec.type === 'string' && t.value === '')
      return { error: `option ${t.rawName} needs a value (got an empty one)` };
    if (command === 'completion' && spec.name !== 'help')
      return { error: `option ${t.rawName} does not apply to meshinject completion` };
    if (spec.only && !spec.only.includes(command)) {
      return {
        error: `option ${t.rawName} does not apply to ${commandName} (it is for: ${spec.only.map((c) => (c === 'inject' ? 'meshinject' : `meshinject ${c}`)).join(', ')})`,
      };
    }
    if (spec.choices && t.value !== undefined && !spec.choices.includes(t.value)) {
      return { error: `option ${t.rawName} must be one of ${spec.choices.join(', ')}; got "${t.value}"` };
    }
  }
  const str = (k: string) => v[k] as string | undefined;
  const list = (k: string) => (v[k] as string[] | undefined) ?? [];
  let maxInputBytes = DEFAULT_MAX_INPUT_BYTES;
  const maxInputText = str('max-input-bytes');
  if (maxInputText !== undefined) {
    const n = parseSize(maxInputText);
    if (n === undefined || n === 0)
      return {
        error: `option --max-input-bytes must be a positive size such as 1048576, 64MiB or 2GiB; got "${maxInputText}"`,
      };
    maxInputBytes = n;
  }
  const reports: Command['reports'] = [];
  for (const r of list('report')) {
    const eq = r.indexOf('=');
    const format = eq < 0 ? r : r.slice(0, eq);
    const path = eq < 0 ? undefined : r.slice(eq + 1);
    if (!(REPORT_FORMATS as readonly string[]).includes(format)) {
      const s = suggest(format, REPORT_FORMATS);
      return {
        error: `option --report: unknown format "${format}"${s ? ` (did you mean ${s}?)` : ''}; formats: ${REPORT_FORMATS.join(', ')}`,
      };
    }
    if (path === '') return { error: `option --report ${format}= needs a path after '=' (or no '=' for stdout)` };
    reports.push({ format: format as ReportFormat, ...(path !== undefined ? { path } : {}) });
  }
  // --config and --platform-config layer in the order given.
  const configs: string[] = [];
  const platformConfigs: number[] = [];
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option' || (t.name !== 'config' && t.name !== 'platform-config') || t.value === undefined) continue;
    if (t.name === 'platform-config') platformConfigs.push(configs.length);
    configs.push(t.value);
  }
  const cmd: Command = {
    command,
    inputs: [...list('filename'), ...parsed.positionals],
    configs,
    platformConfigs,
    loadRestrictor: (str('load-restrictor') as Command['loadRestrictor'] | undefined) ?? 'LoadRestrictionsRootOnly',
    maxInputBytes,
    reports,
    failOn: (str('fail-on') as Command['failOn'] | undefined) ?? 'drift',
    inPlace: v['in-place'] === true,
    color: (str('color') as Command['color'] | undefined) ?? 'auto',
    driverFlags: driverFlagValues(str),
    quiet: v.quiet === true,
    help: v.help === true,
    version: v.version === true,
  };
  const copy = (key: 'root' | 'defaultNamespace' | 'mesh' | 'policy' | 'outputFile' | 'kubeVersion', name: string) => {
    const value = str(name);
    if (value !== undefined) cmd[key] = value;
  };
  copy('root', 'root');
  copy('defaultNamespace', 'default-namespace');
  copy('mesh', 'mesh');
  copy('policy', 'policy');
  const output = str('output');
  // One of the option's `choices`, checked above.
  if (output !== undefined) cmd.output = output as NonNullable<Command['output']>;
  copy('outputFile', 'output-file');
  copy('kubeVersion', 'kube-version');
  if (cmd.kubeVersion !== undefined) {
    const bad = kubeVersionError(cmd.kubeVersion, '--kube-version');
    if (bad) return { error: bad };
  }
  if (command === 'migrate') {
    const to = str('to');
    const waypoint = str('waypoint');
    cmd.migrate = {
      namespaces: list('namespace'),
      diff: v.diff === true,
      ...(to !== undefined ? { to } : {}),
      ...(waypoint !== undefined ? { waypoint } : {}),
    };
    if (!cmd.help && cmd.migrate.to === undefined)
      return { error: 'meshinject migrate needs --to TARGET (e.g. --to ambient)' };
    if (!cmd.help && cmd.migrate.namespaces.length === 0)
      return { error: 'meshinject migrate needs at least one --namespace NS' };
    if (cmd.inPlace && cmd.migrate.diff)
      return { error: 'meshinject migrate: --diff and --in-place exclude each other' };
  }
  if (cmd.output === 'patches' && command !== 'inject')
    return { error: `option --output patches is for meshinject (inject), not ${commandName}` };
  if (command === 'completion' && !cmd.help) {
    const shell = cmd.inputs[0];
    if (shell !== 'bash' && shell !== 'zsh' && shell !== 'fish') {
      return { error: `meshinject completion needs a shell: bash, zsh or fish${shell ? `; got "${shell}"` : ''}` };
    }
    if (cmd.inputs.length > 1) return { error: `meshinject completion takes one shell; got ${cmd.inputs.join(' ')}` };
    cmd.shell = shell;
    cmd.inputs = [];
  }
  return cmd;
}

/**
 * The usage error for a Kubernetes version that is not one (`--kube-version`, `KUBE_VERSION`,
 * `ARGOCD_ENV_KUBE_VERSION`), naming where it came from and the accepted forms; undefined when it reads as
 * `MAJOR.MINOR` (`parseKubeVersion`, src/config/load.ts: `1.33`, `v1.33.2`, `1.33.2-eks-1234`, `v1.30.4+k3s1`).
 */
export function kubeVersionError(value: string, from: string): string | undefined {
  if (parseKubeVersion(value) !== undefined) return undefined;
  return `${from} must be a Kubernetes version: MAJOR.MINOR with an optional leading v, .PATCH and -/+ suffix (1.33, v1.33.2, 1.33.2-eks-1234, v1.30.4+k3s1); got "${value}"`;
}

/** The drivers' flags given, by driver then option name. */
function driverFlagValues(str: (k: string) => string | undefined): Command['driverFlags'] {
  const out: Command['driverFlags'] = {};
  for (const o of OPTIONS) {
    const value = o.driver === undefined ? undefined : str(o.name);
    if (value === undefined || o.driver === undefined) continue;
    const flags = out[o.driver] ?? {};
    flags[o.name] = value;
    out[o.driver] = flags;
  }
  return out;
}

/** `util.parseArgs` errors in meshinject's terms, with "did you mean" for unknown options. */
function explainParseError(e: Error & { code?: string }, argv: readonly string[]): string {
  const m = /'(-[^' ,]*)/.exec(e.message);
  const raw = m?.[1] ?? '';
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const isLong = raw.startsWith('--');
    const word = isLong ? (raw.slice(2).split('=')[0] ?? '') : raw.slice(1);
    const known = isLong ? OPTIONS.map((o) => o.name) : OPTIONS.flatMap((o) => (o.short ? [o.short] : []));
    const s = isLong ? suggest(word, known) : undefined;
    const hint = s ? ` (did you mean --${s}?)` : '';
    const dash = argv.includes('--') ? '' : `; to name a file that starts with '-', put it after '--'`;
    return `unknown option ${isLong ? `--${word}` : raw}${hint}${s ? '' : dash}`;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const spec = OPTIONS.find((o) => `--${o.name}` === raw || `-${o.short}` === raw || raw.startsWith(`--${o.name}`));
    const name = spec ? `${raw.startsWith('--') ? optionLabel(spec) : raw}` : raw;
    if (/argument missing|ambiguous/.test(e.message))
      return `option ${name} needs ${spec?.arg ? `a value (${spec.arg})` : 'a value'}`;
    if (spec?.type === 'boolean') return `option ${optionLabel(spec)} takes no value`;
  }
  return e.message.split('\n')[0] ?? '';
}
