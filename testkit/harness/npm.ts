/**
 * npm as the package tests use it: `npm pack` of the packages this repository publishes, and npm
 * commands whose output is kept for the failure message. Dependencies come from the registry or
 * npm's cache (--prefer-offline where the tests install).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { repoRoot } from "./helm";

export interface RunResult {
  readonly ok: boolean;
  readonly status: number | null;
  readonly stdout: string;
  /** stdout then stderr, for failure messages. */
  readonly output: string;
}

export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): RunResult {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_loglevel: "error", ...env },
  });
  return {
    ok: result.status === 0,
    status: result.status,
    stdout: result.stdout,
    output: `${result.stdout}${result.stderr}`,
  };
}

export interface PackedPackage {
  readonly name: string;
  /** The tarball's path. */
  readonly tarball: string;
  /** The paths inside the tarball (under `package/`). */
  readonly files: string[];
}

/**
 * `npm pack` into `destination`: the root package when no workspace is named, else each named
 * workspace (prepack builds it first, as `npm publish` would).
 */
export function npmPack(destination: string, workspaces: string[] = []): PackedPackage[] {
  const packed = run(
    "npm",
    ["pack", ...workspaces.flatMap((w) => ["-w", w]), "--pack-destination", destination, "--json"],
    repoRoot,
  );
  if (!packed.ok) throw new Error(`npm pack failed: ${packed.output}`);
  // The builds run by prepack print to stdout too: the JSON is the last thing, an array.
  const json = packed.stdout.slice(packed.stdout.search(/^\[/m));
  return (JSON.parse(json) as { name: string; filename: string; files: { path: string }[] }[]).map((info) => ({
    name: info.name,
    tarball: path.join(destination, info.filename),
    files: info.files.map((f) => f.path),
  }));
}
