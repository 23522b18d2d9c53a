/**
 * The real tools the tests run, built from their Go modules by scripts/realcp/build.sh into one
 * cache outside the repository (~/.cache/entryway-realcp, or $ENTRYWAY_REALCP_CACHE), shared with
 * .ci/run and people. A tool that cannot be built fails the test that needs it, with the build
 * script's own line naming the tool and the cause. Plain Node only: the gateway's tests import this
 * file too (compiled there as CommonJS, so no import.meta).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, it } from "vitest";

/** The repository: the first folder up from the working directory with the builder in it. */
function repository(): string {
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "scripts/realcp/build.sh"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`scripts/realcp/build.sh not found above ${process.cwd()}`);
  }
}

const binDirs = new Map<string, string>();
const inCI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());

/** The bin folder of a tool (`scripts/realcp/<tool>/`), built first when the cache has none (minutes). */
export function realTool(tool: string): string {
  const known = binDirs.get(tool);
  if (known) return known;
  const script = path.join(repository(), "scripts", "realcp", "build.sh");
  const result = spawnSync("bash", [script, "--bin-dir", tool], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) {
    const reason = result.stderr.split("\n").find((line) => line.startsWith("realcp: error:")) ?? result.stderr.trim().split("\n").pop();
    throw new Error(`the real ${tool} could not be had: ${reason ?? `bash ${script} --bin-dir ${tool} exited ${result.status}`}`);
  }
  const dir = result.stdout.trim().split("\n").at(-1)!;
  binDirs.set(tool, dir);
  return dir;
}

/** A tool's binary. */
export function realBinary(tool: string, binary: string = tool): string {
  return path.join(realTool(tool), binary);
}

/**
 * describe(name) with the tool's bin folder; when it cannot be built: under CI a failing test that
 * names the tool and the cause, elsewhere a skip that says so (with the cause on stderr).
 */
export function describeWithRealTool(tool: string, name: string, body: (binDir: string) => void): void {
  let binDir: string;
  try {
    binDir = realTool(tool);
  } catch (error) {
    const reason = (error as Error).message;
    if (inCI) {
      describe(name, () =>
        it(`builds ${tool} (scripts/realcp/${tool})`, () => {
          throw new Error(reason);
        }),
      );
      return;
    }
    process.stderr.write(`suite ${name} [SKIPPED outside CI: ${reason}]\n`);
    describe.skip(`${name} [SKIPPED outside CI: ${tool} could not be built]`, () => body(""));
    return;
  }
  describe(name, () => body(binDir));
}
