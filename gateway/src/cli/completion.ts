// `entryway completion bash|zsh|fish`: a completion script made from main.ts's one subcommand table
// and each subcommand's own option table (its exported `options`, the one parseArgs reads), so a
// new command or flag completes without editing anything here. Context names complete from
// `entryway config get-contexts -o name`.
import { parseCommand } from "./args.js";
import { ExitCode } from "./exit-codes.js";

const USAGE = `usage: entryway completion bash|zsh|fish

Prints a shell completion script:
  bash:  source <(entryway completion bash)        (or save it in ~/.local/share/bash-completion/completions/entryway)
  zsh:   source <(entryway completion zsh)         (after compinit)
  fish:  entryway completion fish > ~/.config/fish/completions/entryway.fish
`;

export const verbs = ["bash", "zsh", "fish"] as const;
export const options = {} as const;

type Option = { type: "string" | "boolean"; short?: string };
/** What completion needs of a subcommand: its options, and the words it takes first (verbs). */
export interface CommandSpec {
  name: string;
  summary: string;
  options: Record<string, Option>;
  verbs: readonly string[];
}

const HELP_OPTION: Record<string, Option> = { help: { type: "boolean", short: "h" } };

function flags(spec: CommandSpec): string[] {
  return Object.entries({ ...spec.options, ...HELP_OPTION }).flatMap(([name, option]) => [
    `--${name}`,
    ...(option.short ? [`-${option.short}`] : []),
  ]);
}

const CONTEXTS = "entryway config get-contexts -o name 2>/dev/null";

export function bashScript(specs: CommandSpec[]): string {
  const cases = specs
    .map((spec) => `    ${spec.name}) words_="${[...spec.verbs, ...flags(spec)].join(" ")}" ;;`)
    .join("\n");
  return `# entryway completion for bash: source <(entryway completion bash)
_entryway() {
  local cur prev words_
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${specs.map((s) => s.name).join(" ")} --help --version" -- "$cur"))
    return
  fi
  if [ "$prev" = "--context" ]; then
    COMPREPLY=($(compgen -W "$(${CONTEXTS})" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) words_="" ;;
  esac
  COMPREPLY=($(compgen -W "$words_" -- "$cur"))
  [ \${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _entryway entryway
`;
}

const zshQuote = (text: string) => text.replace(/'/g, "'\\''").replace(/:/g, "\\:");

export function zshScript(specs: CommandSpec[]): string {
  const commands = specs.map((spec) => `    '${spec.name}:${zshQuote(spec.summary)}'`).join("\n");
  const cases = specs
    .map((spec) => {
      const words = [...spec.verbs, ...flags(spec)].join(" ");
      return `    ${spec.name}) compadd -- ${words} ;;`;
    })
    .join("\n");
  return `#compdef entryway
# entryway completion for zsh: source <(entryway completion zsh)
_entryway() {
  if (( CURRENT == 2 )); then
    local -a commands
    commands=(
${commands}
    )
    _describe 'command' commands
    return
  fi
  if [[ \${words[CURRENT-1]} == --context ]]; then
    compadd -- $(${CONTEXTS})
    return
  fi
  case \${words[2]} in
${cases}
  esac
  _files
}
compdef _entryway entryway
`;
}

const fishQuote = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

export function fishScript(specs: CommandSpec[]): string {
  const names = specs.map((s) => s.name).join(" ");
  const lines = [
    "# entryway completion for fish: entryway completion fish > ~/.config/fish/completions/entryway.fish",
    "complete -c entryway -f",
    ...specs.map(
      (spec) =>
        `complete -c entryway -n "not __fish_seen_subcommand_from ${names}" -a ${spec.name} -d ${fishQuote(spec.summary)}`,
    ),
    ...specs.flatMap((spec) => {
      const when = `-n "__fish_seen_subcommand_from ${spec.name}"`;
      return [
        ...spec.verbs.map((verb) => `complete -c entryway ${when} -a ${verb}`),
        ...Object.entries({ ...spec.options, ...HELP_OPTION }).map(([name, option]) => {
          const short = option.short ? ` -s ${option.short}` : "";
          const value = option.type === "string" ? (name === "context" ? ` -x -a "(${CONTEXTS})"` : " -r -F") : "";
          return `complete -c entryway ${when} -l ${name}${short}${value}`;
        }),
      ];
    }),
  ];
  return lines.join("\n") + "\n";
}

/** Runs with the specs of every subcommand (main.ts loads them). */
export async function runWith(argv: string[], specs: () => Promise<CommandSpec[]>): Promise<number> {
  const parsed = parseCommand("completion", USAGE, argv, options);
  if (typeof parsed === "number") return parsed;
  const [shell, ...rest] = parsed.positionals;
  const scripts = { bash: bashScript, zsh: zshScript, fish: fishScript };
  if (rest.length > 0 || !shell || !(shell in scripts)) {
    process.stderr.write(`entryway completion: name one shell: bash, zsh or fish\n${USAGE}`);
    return ExitCode.usage;
  }
  process.stdout.write(scripts[shell as keyof typeof scripts](await specs()));
  return ExitCode.ok;
}
