/**
 * The real tools the tests and benchmarks run, built from their Go modules by scripts/realcp/build.sh
 * into one cache outside the repository (~/.cache/entryway-realcp, or $ENTRYWAY_REALCP_CACHE), shared
 * with .ci/run and people. A tool that cannot be built fails whatever needs it, with the build
 * script's own line naming the tool and the cause. Plain Node only, and no vitest: scripts run by
 * tsx outside a test (npm run bench:render, bench:scale) import this through the helm, control plane
 * and engine harnesses, and vitest refuses to be loaded there. The gateway's tests import it too
 * (through realcp.ts, compiled there as CommonJS, so no import.meta).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

/** The repository: the first folder up from the working directory with the builder in it. */
function repository(): string {
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "scripts/realcp/build.sh"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`scripts/realcp/build.sh not found above ${process.cwd()}`);
  }
}

const binDirs = new Map<string, string>();

/** The bin folder of a tool (`scripts/realcp/<tool>/`), built first when the cache has none (minutes). */
export function realTool(tool: string): string {
  const known = binDirs.get(tool);
  if (known) return known;
  const script = path.join(repository(), "scripts", "realcp", "build.sh");
  const result = spawnSync("bash", [script, "--bin-dir", tool], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) {
    const reason =
      result.stderr.split("\n").find((line) => line.startsWith("realcp: error:")) ??
      result.stderr.trim().split("\n").pop();
    throw new Error(
      `the real ${tool} could not be had: ${reason ?? `bash ${script} --bin-dir ${tool} exited ${result.status}`}`,
    );
  }
  const dir = result.stdout.trim().split("\n").at(-1)!;
  binDirs.set(tool, dir);
  return dir;
}

/** A tool's binary. */
export function realBinary(tool: string, binary: string = tool): string {
  return path.join(realTool(tool), binary);
}
