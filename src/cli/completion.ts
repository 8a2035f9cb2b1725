/**
 * Shell completion for `haptic`, generated from the command tree commander holds, so every
 * command, subcommand and option the binary has completes and nothing else does. bash and zsh
 * (through zsh's bashcompinit) run the same script; after an option that takes a value the
 * shell's own file completion applies.
 */
import type { Command } from 'commander';

/** One command of the tree, as completion needs it. */
export interface CompletionNode {
  readonly name: string;
  /** Every long and short option flag, `--help` included. */
  readonly options: readonly string[];
  /** The flags of options that take a value. */
  readonly valued: readonly string[];
  readonly children: readonly CompletionNode[];
}

export const completionShells = ['bash', 'zsh'] as const;
export type CompletionShell = (typeof completionShells)[number];

/** The completion tree of `command` and its subcommands (hidden help commands left out). */
export function completionTree(command: Command): CompletionNode {
  const options = command.options.flatMap((option) =>
    [option.long, option.short].filter((flag): flag is string => flag !== undefined),
  );
  const valued = command.options
    .filter((option) => option.required || option.optional)
    .flatMap((option) =>
      [option.long, option.short].filter((flag): flag is string => flag !== undefined),
    );
  return {
    name: command.name(),
    options: [...options, '--help'],
    valued,
    children: command.commands
      .filter((child) => child.name() !== 'help')
      .map((child) => completionTree(child)),
  };
}

interface PathEntry {
  readonly path: string;
  readonly node: CompletionNode;
}

function paths(node: CompletionNode, path: string): PathEntry[] {
  return [
    { path, node },
    ...node.children.flatMap((child) => paths(child, `${path} ${child.name}`)),
  ];
}

/** A word as bash reads it inside double quotes (names and flags are plain words already). */
function quoted(words: readonly string[]): string {
  return `"${words.join(' ').replace(/["$`\\]/g, '\\$&')}"`;
}

/** The completion script for `shell` (bash, or zsh through bashcompinit). */
export function completionScript(tree: CompletionNode, shell: CompletionShell): string {
  const program = tree.name;
  const fn = `_${program.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  const entries = paths(tree, '');
  // Command paths as bash sees them: words joined by '/', the root as ''.
  const slashed = (path: string) => path.trim().replace(/ /g, '/');
  const commands = entries.filter((entry) => entry.path !== '').map((entry) => slashed(entry.path));
  const valued = [...new Set(entries.flatMap((entry) => entry.node.valued))].sort();
  const cases = entries
    .map(({ path, node }) => {
      const words = [...node.children.map((child) => child.name), ...node.options];
      return `    ${quoted([slashed(path)])}) words=${quoted(words)} ;;`;
    })
    .join('\n');
  const prelude = shell === 'zsh' ? 'autoload -U +X bashcompinit && bashcompinit\n' : '';
  return `# ${shell} completion for ${program}: source <(${program} completion ${shell})
${prelude}${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local commands=${quoted([' ', ...commands, ' '])} valued=${quoted([' ', ...valued, ' '])}
  local path="" word words next i
  # After an option that takes a value: the shell's own (file) completion.
  [[ $valued == *" $prev "* ]] && COMPREPLY=() && return 0
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if [[ $valued == *" $word "* ]]; then
      ((i++))
      continue
    fi
    next=\${path:+$path/}$word
    [[ $commands == *" $next "* ]] && path=$next
  done
  case "$path" in
${cases}
    *) words="" ;;
  esac
  mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -o default -F ${fn} ${program}
`;
}
