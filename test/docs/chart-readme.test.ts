import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CHART_README, chartReadme, helmValuesTable } from "../../scripts/generate-docs";

describe("charts/entryway/README.md (generated from Chart.yaml and the values)", () => {
  it("is in step with them (npm run generate:docs)", () => {
    if (readFileSync(CHART_README, "utf8") !== chartReadme()) {
      throw new Error(
        "charts/entryway/README.md is out of step with Chart.yaml, values.yaml or values.schema.json: run `npm run generate:docs`",
      );
    }
  });

  it("carries the values table the root README carries, every top-level section in it", () => {
    const readme = chartReadme();
    expect(readme).toContain(helmValuesTable());
    for (const key of [
      "execGateway.enabled",
      "ansibleForms.enabled",
      "connectGateway.enabled",
      "workspaces",
      "workspaceDefaults.image.repository",
      "global.imageRegistry",
      "tests.image.repository",
    ]) {
      expect(readme).toContain(`| \`${key}\` |`);
    }
  });
});
