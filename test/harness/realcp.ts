/**
 * The real tools built from their Go modules by scripts/realcp/build.sh (cached under
 * ~/.cache/entryway-realcp, built on first use). A tool that cannot be built throws an error whose
 * first line names it and ends with build.sh's own reason: tests let it fail, never skip.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { repoRoot } from "./helm";

const binDirs = new Map<string, string>();

/** The folder holding `tool`'s binaries; builds the tool first when its cache entry is missing. */
export function realcpBinDir(tool: string): string {
  const known = binDirs.get(tool);
  if (known) return known;
  const result = spawnSync("bash", [path.join(repoRoot, "scripts/realcp/build.sh"), "--bin-dir", tool], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) {
    const reason = (result.stderr ?? "").split("\n").filter((line) => line.startsWith("realcp: error:")).join("\n") || (result.stderr ?? "").trim() || String(result.error);
    throw new Error(`real tool ${tool} could not be built (scripts/realcp/build.sh --bin-dir ${tool}): ${reason}`);
  }
  const dir = result.stdout.trim().split("\n").pop()!;
  binDirs.set(tool, dir);
  return dir;
}
