// The real tools the tests run, from the shared cache scripts/realcp/build.sh fills (one folder per
// tool, built from its Go module on first use and reused after). Plain Node only: the gateway's
// tests import this file too. Under CI a tool that cannot be built FAILS its suite with a line
// naming the tool and the cause; elsewhere the suite is skipped, named so, with the cause on stderr.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "vitest";

/** The repository: the first folder up from the working directory with the builder in it (no import.meta: the gateway compiles this file as CommonJS). */
function repository(): string {
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "scripts/realcp/build.sh"))) return dir;
    if (dirname(dir) === dir) throw new Error(`scripts/realcp/build.sh not found above ${process.cwd()}`);
  }
}
const inCI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());

/** A tool's bin folder (built now when missing: the first build takes minutes), or why there is none. */
export function realcpBinDir(tool: string): { binDir: string } | { error: string } {
  try {
    const repo = repository();
    const out = execFileSync("bash", [join(repo, "scripts/realcp/build.sh"), "--bin-dir", tool], { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60 * 60_000 });
    return { binDir: out.trim().split("\n").at(-1)! };
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? "");
    const line = stderr.split("\n").find((l) => l.startsWith("realcp: error:")) ?? ((error as Error).message.split("\n")[0] || "unknown failure");
    return { error: line };
  }
}

/**
 * describe(name) with the tool's bin folder, or when it cannot be built: a failing test naming the
 * tool under CI, a named skip elsewhere.
 */
export function describeWithRealTool(tool: string, name: string, body: (binDir: string) => void): void {
  const found = realcpBinDir(tool);
  if ("binDir" in found) {
    describe(name, () => body(found.binDir));
    return;
  }
  if (inCI) {
    describe(name, () =>
      it(`builds ${tool} (scripts/realcp/${tool})`, () => {
        throw new Error(`${tool} could not be built: ${found.error}`);
      }),
    );
    return;
  }
  process.stderr.write(`suite ${name} [SKIPPED outside CI: ${tool} could not be built: ${found.error}]\n`);
  describe.skip(`${name} [SKIPPED outside CI: ${tool} could not be built]`, () => body(""));
}
