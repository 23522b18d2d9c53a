#!/usr/bin/env node
// The `entryway` command: each subcommand lives in its own module and exports `run(argv)`,
// which resolves to the process exit code.
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { CommandSpec } from "./completion.js";

import { exitCodeHelp, ExitCode } from "./exit-codes.js";

/** A subcommand's module: `run`, and for completion its parseArgs `options` and the verbs it takes first. */
interface Command {
  run(argv: string[]): Promise<number>;
  options: CommandSpec["options"];
  verbs?: readonly string[];
}
type Subcommand = { summary: string; load: () => Promise<Command> };

export const subcommands: Record<string, Subcommand> = {
  serve: { summary: "run the exec gateway service", load: () => import("./serve.js") },
  enter: { summary: "open a shell in a container through the gateway", load: () => import("./enter.js") },
  cp: { summary: "copy files to or from a container through the gateway", load: () => import("./cp.js") },
  login: { summary: "sign in with OpenID Connect (browser, or --device)", load: () => import("./login.js") },
  logout: { summary: "sign out: revoke and remove the sign-in's tokens", load: () => import("./logout.js") },
  ls: { summary: "list the targets you may enter", load: () => import("./ls.js") },
  recordings: {
    summary: "recordings ls: the session recordings you may replay",
    load: () => import("./recordings-command.js"),
  },
  replay: { summary: "play a session recording (a .cast file or a recording id)", load: () => import("./replay.js") },
  "ssh-config": { summary: "print ~/.ssh/config blocks for SSH workspaces", load: () => import("./ssh-config.js") },
  "connect-proxy": {
    summary: "an ssh ProxyCommand through the CONNECT gateway",
    load: () => import("./connect-proxy.js"),
  },
  config: {
    summary: "contexts: get-contexts, current-context, use-context, set-context, delete-context",
    load: () => import("./config-command.js"),
  },
  version: {
    summary: "the client's version, and the gateway's when reachable",
    load: () => import("./version-command.js"),
  },
  completion: {
    summary: "a shell completion script: bash, zsh or fish",
    load: async () => {
      const completion = await import("./completion.js");
      return { ...completion, run: (argv: string[]) => completion.runWith(argv, specs) };
    },
  },
};

/** Every subcommand's name, summary, options and verbs, for completion. */
async function specs(): Promise<CommandSpec[]> {
  return Promise.all(
    Object.entries(subcommands).map(async ([name, { summary, load }]) => {
      const command = await load();
      return { name, summary, options: command.options, verbs: command.verbs ?? [] };
    }),
  );
}

function usage(): string {
  const lines = Object.entries(subcommands).map(([name, { summary }]) => `  ${name.padEnd(16)}${summary}`);
  return [
    "usage: entryway <command> [options]",
    "",
    "commands:",
    ...lines,
    "",
    "entryway <command> --help for a command's options; entryway --version for the versions",
    "",
    "exit status, the same for every command: 0, a remote command's own code, or after one line on",
    "stderr starting with entryway:",
    exitCodeHelp().trimEnd(),
    "  1   an unexpected error in the CLI itself (a bug: please report it)",
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-v") return (await subcommands.version!.load()).run(rest);
  if (!name || name === "--help" || name === "-h" || name === "help") {
    (name ? process.stdout : process.stderr).write(usage() + "\n");
    return name ? ExitCode.ok : ExitCode.usage;
  }
  const subcommand = subcommands[name];
  if (!subcommand) {
    process.stderr.write(`entryway: unknown command ${name}\n${usage()}\n`);
    return ExitCode.usage;
  }
  return (await subcommand.load()).run(rest);
}

// Run when started as a program. npm installs the `entryway` bin as a symlink to this file: Node
// loads the main module by its real path (unless --preserve-symlinks-main, nodejs.org/api/cli.html)
// but leaves process.argv[1] as the symlink, so compare real paths.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`entryway: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
