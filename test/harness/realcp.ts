/**
 * The real tools the tests run, built from their Go modules by scripts/realcp/build.sh into one
 * cache outside the repository (~/.cache/entryway-realcp, or $ENTRYWAY_REALCP_CACHE), shared with
 * .ci/run and people. A tool that cannot be built fails the test that needs it, with the build
 * script's own line naming the tool and the cause: never a skip.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const script = path.join(repoRoot, "scripts", "realcp", "build.sh");
const binDirs = new Map<string, string>();

/** The bin folder of a tool (`scripts/realcp/<tool>/`), built first when the cache has none. */
export function realTool(tool: string): string {
  const known = binDirs.get(tool);
  if (known) return known;
  // A cold build takes minutes: its progress lines go to this process's stderr as they come.
  const result = spawnSync("bash", [script, "--bin-dir", tool], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) {
    const reason = result.stderr.split("\n").find((line) => line.startsWith("realcp: error:")) ?? result.stderr.trim().split("\n").pop();
    throw new Error(`the real ${tool} could not be had: ${reason ?? `bash ${script} --bin-dir ${tool} exited ${result.status}`}`);
  }
  const dir = result.stdout.trim();
  binDirs.set(tool, dir);
  return dir;
}

/** A tool's binary. */
export function realBinary(tool: string, binary: string = tool): string {
  return path.join(realTool(tool), binary);
}
