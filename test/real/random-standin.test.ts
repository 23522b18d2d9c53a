/**
 * The random provider's STAND-IN (scripts/realcp/random-standin: the real pulumi-resource-random
 * cannot be had here, see its main.go) through the real engine: it makes a secret password of the
 * asked length that stays encrypted in the state, replaces it when an input (keepers) changes, and
 * refuses what the real provider's schema refuses and the SDK does not check: a length below 1, and
 * a length shorter than the minimums it must hold (@pulumi/random randomPassword.d.ts, `length`).
 */
import path from "node:path";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, inject, it } from "vitest";
import { PulumiStack } from "../../testkit/harness/pulumi-engine";

const { kubeconfig } = inject("controlPlane");
const program = path.join(path.dirname(new URL(import.meta.url).pathname), "fixtures", "random-password.ts");
const stacks: PulumiStack[] = [];

function stackWith(args: Record<string, unknown>): PulumiStack {
  const stack = new PulumiStack({
    stackName: `random${stacks.length}`,
    projectName: "fixture",
    config: { "fixture:args": args },
    kubeconfig,
    program,
  });
  stacks.push(stack);
  return stack;
}

afterEach(() => stacks.splice(0).forEach((s) => s.remove()));

describe("the random provider's stand-in on the real engine", () => {
  it("makes a secret password of the asked length, encrypted in the state; a changed keeper replaces it", async () => {
    const stack = stackWith({ length: 24, special: false, minUpper: 3, keepers: { rotation: "1" } });
    const up = await stack.expect("up");
    const result = up.outputs.result!;
    expect(result.secret).toBe(true);
    expect(result.value).toMatch(/^[A-Za-z0-9]{24}$/);
    expect((result.value as string).replace(/[^A-Z]/g, "").length).toBeGreaterThanOrEqual(3);
    expect(readFileSync(stack.stateFile(), "utf8")).not.toContain(result.value as string);

    expect(Object.keys((await stack.expect("up")).summary)).toEqual(["same"]);
    stack.setConfig({ "fixture:args": { length: 24, special: false, minUpper: 3, keepers: { rotation: "2" } } });
    const preview = await stack.expect("preview");
    // The engine's steps of a replacement: create the new one, replace, delete the old one.
    expect(
      preview.steps
        .filter((s) => s.type === "random:index/randomPassword:RandomPassword")
        .map((s) => s.op)
        .sort(),
    ).toEqual(["create-replacement", "delete-replaced", "replace"]);
  });

  it.each([
    [{ length: 0 }, /length must be a whole number >= 1/],
    [
      { length: 4, minUpper: 3, minNumeric: 3 },
      /length \(4\) must be >= minUpper \+ minLower \+ minNumeric \+ minSpecial \(6\)/,
    ],
  ])("refuses %j", async (args, message) => {
    const result = await stackWith(args).run("preview");
    expect(result.ok).toBe(false);
    expect(`${result.error}\n${result.diagnostics.join("\n")}`).toMatch(message);
  });
});
