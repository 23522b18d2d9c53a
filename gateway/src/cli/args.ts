/**
 * Command-line parsing shared by the subcommands: node:util parseArgs plus the behaviour every
 * subcommand wants (usage on a bad option, --help to stdout).
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError, ExitCode } from "./exit-codes.js";

type Options = NonNullable<ParseArgsConfig["options"]>;
/** -h/--help, which every subcommand takes. */
const HELP = { help: { type: "boolean", short: "h", default: false } } as const satisfies Options;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; allowPositionals: true; options: O & typeof HELP }>
>;

/**
 * Parses `argv` for `entryway <command>` with `options` and -h/--help. Returns the parsed values, or the exit code to end
 * with: 0 after printing usage for --help, 64 (ExitCode.usage) after a one-line error and usage for a bad option.
 */
export function parseCommand<O extends Options>(
  command: string,
  usage: string,
  argv: string[],
  options: O,
): Parsed<O> | number {
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...options, ...HELP } });
  } catch (error) {
    process.stderr.write(`entryway ${command}: ${(error as Error).message}\n${usage}`);
    return ExitCode.usage;
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    return 0;
  }
  return parsed;
}

/**
 * For the commands whose every failure goes to reportFailure (enter, cp, replay): parses `argv` with `options`
 * (their own -h/--help included), throwing on a bad option; prints `usage` and returns undefined for --help; throws
 * a usage error with `wrongCount`'s message unless exactly `operands` positionals are given.
 */
export function parseOperands<O extends Options>(
  argv: string[],
  options: O,
  usage: string,
  operands: number,
  wrongCount: (positionals: string[]) => string,
): ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>> | undefined {
  const parsed = parseArgs({ args: argv, allowPositionals: true, options });
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    return undefined;
  }
  if (parsed.positionals.length !== operands) throw new CliError(ExitCode.usage, wrongCount(parsed.positionals));
  return parsed;
}
