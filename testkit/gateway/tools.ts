// Suites that need a tool on the machine (podman, tmux, Chromium). Outside CI a missing tool skips
// the suite and says which tool, in the suite's name and on stderr; under CI a missing tool FAILS,
// so nothing vanishes from a CI run. CI is any value of $CI but "", "0" and "false".
import { describe, it } from "vitest";

export const inCI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());

/** The names of the tools whose check is false. */
export function missingTools(checks: Record<string, boolean>): string[] {
  return Object.entries(checks)
    .filter(([, present]) => !present)
    .map(([name]) => name);
}

/** What a suite does: run, fail (tools missing under CI), or skip (tools missing elsewhere). */
export function toolPlan(checks: Record<string, boolean>, ci: boolean = inCI): "run" | "fail" | "skip" {
  if (missingTools(checks).length === 0) return "run";
  return ci ? "fail" : "skip";
}

function failure(missing: string[]): () => never {
  return () => {
    throw new Error(
      `missing ${missing.join(", ")}: under CI a missing tool fails the test (install it: .ci/apt-packages.txt)`,
    );
  };
}

function skipNote(kind: string, name: string, missing: string[]): string {
  const note = `${name} [SKIPPED outside CI: missing ${missing.join(", ")}]`;
  process.stderr.write(`${kind} ${note}\n`);
  return note;
}

/** describe(), unless tools are missing: then a failing test under CI, a named skip elsewhere. */
export function describeNeeding(checks: Record<string, boolean>, name: string, body: () => void): void {
  const missing = missingTools(checks);
  const plan = toolPlan(checks);
  if (plan === "run") describe(name, body);
  else if (plan === "fail") describe(name, () => it(`needs ${missing.join(", ")}`, failure(missing)));
  else describe.skip(skipNote("suite", name, missing), body);
}

/** it(), unless tools are missing: then a failing test under CI, a named skip elsewhere. */
export function itNeeding(
  checks: Record<string, boolean>,
  name: string,
  body: () => Promise<void>,
  timeout?: number,
): void {
  const missing = missingTools(checks);
  const plan = toolPlan(checks);
  if (plan === "run") it(name, body, timeout);
  else if (plan === "fail") it(name, failure(missing));
  else it.skip(skipNote("test", name, missing), body);
}
