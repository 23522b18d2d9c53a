// The project's rule for suites that need tools from the machine (podman, Chromium, ...): under CI=true a
// missing tool FAILS the suite; elsewhere the suite is skipped and its title names what is missing.

export interface ToolCheck {
  /** The suite's title, with the missing tools named when it is skipped. */
  title: string;
  skip: boolean;
  /** Throws when a tool is missing (call it in beforeAll): only reached under CI=true. */
  assertPresent(): void;
}

export function needTools(title: string, tools: Record<string, boolean>): ToolCheck {
  const missing = Object.entries(tools)
    .filter(([, present]) => !present)
    .map(([name]) => name);
  const skip = missing.length > 0 && process.env.CI !== "true";
  return {
    title: skip ? `${title} (skipped: no ${missing.join(", ")} on this machine)` : title,
    skip,
    assertPresent() {
      if (missing.length > 0) throw new Error(`CI=true and this suite's tools are missing: ${missing.join(", ")}`);
    },
  };
}
