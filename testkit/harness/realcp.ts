/**
 * The real tools for test suites: realTool and realBinary (realcp-tool.ts, which has no vitest in
 * it, for scripts), and describeWithRealTool, a suite that needs a tool.
 */
import { describe, it } from "vitest";
import { realTool } from "./realcp-tool";

export { realBinary, realTool } from "./realcp-tool";

const inCI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());

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
