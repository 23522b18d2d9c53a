import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTRACT_FILE, generateContract, POLICY_CONTRACT_FILE } from "../../scripts/generate-contract";

describe("the chart's contract file", () => {
  it("is in step with the components' constants (npm run generate:contract)", () => {
    expect(readFileSync(CONTRACT_FILE, "utf8")).toBe(generateContract());
  });
  it("and so is the policy pack's copy (npm run generate:contract)", () => {
    expect(readFileSync(POLICY_CONTRACT_FILE, "utf8")).toBe(generateContract());
  });
});
