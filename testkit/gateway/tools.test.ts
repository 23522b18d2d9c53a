// testkit/gateway/tools.ts: a suite that needs a tool fails under CI when it is missing, and skips only outside.
import { describe, expect, it } from "vitest";
import { missingTools, toolPlan } from "./tools.js";

describe("suites that need tools", () => {
  it("fail under CI when a tool is missing, are skipped (and named) only outside CI", () => {
    expect(toolPlan({ podman: true, tmux: true }, true)).toBe("run");
    expect(toolPlan({ podman: true, tmux: false }, true)).toBe("fail");
    expect(toolPlan({ podman: false }, false)).toBe("skip");
    expect(missingTools({ podman: false, tmux: true, chromium: false })).toEqual(["podman", "chromium"]);
  });
});
