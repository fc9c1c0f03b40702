import { COMMANDS, OPTIONS, REPORT_FORMATS, type OptionSpec } from './args.ts';

/**
 * `meshinject completion bash|zsh|fish`: shell completion scripts generated from the option table
 * (`OPTIONS`), so they never drift from the parser. Subcommands complete as the first word; options with
 * `choices` complete their values, file options complete file names, `--report` completes its formats.
 * Install: bash `source <(meshinject completion bash)`; zsh `meshinject completion zsh > "${fpath[1]}/_meshinject"`;
 * fish `meshinject completion fish > ~/.config/fish/completions/meshinject.fish`.
 */

function words(o: OptionSpec): string[] {
  return [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])];
}

function bash(): string {
  const all = OPTIONS.flatMap(words).join(' ');
  const fileOpts = OPTIONS.filter((o) => o.file)
    .flatMap(words)
    .join('|');
  const choiceCases = OPTIONS.flatMap((o) =>
    o.choices
      ? [`    ${words(o).join('|')}) COMPREPLY=($(compgen -W "${o.choices.join(' ')}" -- "$cur")); return ;;`]
      : [],
  ).join('\n');
  const valueOpts = OPTIONS.filter((o) => o.type === 'string' && !o.file && !o.choices && o.name !== 'report')
    .flatMap(words)
    .join('|');
  return `# bash completion for meshinject (meshinject completion bash)
_meshinject() {
  local cur prev
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
    ${fileOpts}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
${choiceCases}
    --report) COMPREPLY=($(compgen -W "${REPORT_FORMATS.join(' ')}" -- "$cur")); return ;;
    ${valueOpts}) COMPREPLY=(); return ;;
  esac
  if [[ $COMP_CWORD -eq 2 && "\${COMP_WORDS[1]}" == completion ]]; then
    COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "${all}" -- "$cur")); return
  fi
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "${COMMANDS.join(' ')}" -- "$cur") $(compgen -f -- "$cur")); return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _meshinject meshinject
`;
}

function zshQuote(s: string): string {
  return s.replace(/'/g, "'\\''").replace(/\[/g, '\\[').replace(/\]/g, '\\]').replace(/:/g, '\\:');
}

function zsh(): string {
  const specs = OPTIONS.map((o) => {
    const help = zshQuote(o.help);
    const value =
      o.type === 'boolean'
        ? ''
        : o.file
          ? `:${o.arg ?? 'file'}:_files`
          : o.choices
            ? `:${o.arg}:(${o.choices.join(' ')})`
            : o.name === 'report'
              ? `:${o.arg}:(${REPORT_FORMATS.join(' ')})`
              : `:${o.arg ?? 'value'}:`;
    const repeat = o.multiple ? '*' : '';
    return o.short
      ? `    '${repeat}'{-${o.short},--${o.name}}'[${help}]${value}'`
      : `    '${repeat}--${o.name}[${help}]${value}'`;
  });
  return `#compdef meshinject
# zsh completion for meshinject (meshinject completion zsh)
_meshinject() {
  if (( CURRENT == 3 )) && [[ \${words[2]} == completion ]]; then
    _values 'shell' bash zsh fish
    return
  fi
  _arguments -s \\
${specs.join(' \\\n')} \\
    '1: :(${COMMANDS.join(' ')})' \\
    '*:manifest:_files'
}
_meshinject "$@"
`;
}

function fishQuote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fish(): string {
  const lines = [
    '# fish completion for meshinject (meshinject completion fish)',
    `complete -c meshinject -n '__fish_use_subcommand' -a '${COMMANDS.join(' ')}'`,
    "complete -c meshinject -n '__fish_seen_subcommand_from completion' -f -a 'bash zsh fish'",
  ];
  for (const o of OPTIONS) {
    const parts = ['complete -c meshinject', `-l ${o.name}`];
    if (o.short) parts.push(`-s ${o.short}`);
    if (o.type === 'string') parts.push(o.file ? '-r -F' : '-x');
    if (o.choices) parts.push(`-a ${fishQuote(o.choices.join(' '))}`);
    if (o.name === 'report') parts.push(`-a ${fishQuote(REPORT_FORMATS.join(' '))}`);
    parts.push(`-d ${fishQuote(o.help)}`);
    lines.push(parts.join(' '));
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script for a shell. */
export function completionScript(shell: 'bash' | 'zsh' | 'fish'): string {
  return shell === 'bash' ? bash() : shell === 'zsh' ? zsh() : fish();
}
