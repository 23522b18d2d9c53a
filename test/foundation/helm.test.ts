import path from "node:path";
import { describe, expect, it } from "vitest";
import { chartScenarios, helmBinaries, helmLint, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { assertValidObjects } from "../../testkit/harness/validate";
import { checkEnvoyFilter } from "../../testkit/harness/envoy";

const helms = helmBinaries();
const charts = chartScenarios();

describe("helm binaries", () => {
  it("has both majors, Helm 4 and Helm 3", () => {
    expect(helms.map((h) => h.major)).toEqual([4, 3]);
  });
});

describe.each(helms.map((h) => [`helm ${h.version}`, h] as const))("%s", (_label, helm) => {
  for (const { chart, scenarios } of charts) {
    const chartName = path.basename(chart);
    it(`${chartName} has at least one ci/ scenario`, () => {
      expect(scenarios.length).toBeGreaterThan(0);
    });
    for (const scenario of scenarios) {
      const name = `${chartName}/ci/${path.basename(scenario)}`;
      it(`${name}: lint --strict passes and every rendered object is valid`, async () => {
        const lint = helmLint(helm, chart, [scenario]);
        expect(lint.ok, lint.output).toBe(true);
        const objects = helmTemplate(helm, chart, { valuesFiles: [scenario] });
        await assertValidObjects(objects);
        const envoyErrors = (
          await Promise.all(objects.filter((o) => o.kind === "EnvoyFilter").map(checkEnvoyFilter))
        ).flat();
        expect(envoyErrors).toEqual([]);
      });
    }
  }

  it("fails lint --strict and template on a scenario that breaks the values schema", () => {
    const broken = path.join(repoRoot, "test/fixtures/broken-chart-values.yaml");
    const lint = helmLint(helm, path.join(repoRoot, "charts/entryway"), [broken]);
    expect(lint.ok).toBe(false);
    expect(lint.output).toMatch(/comonLabels/);
    expect(() => helmTemplate(helm, path.join(repoRoot, "charts/entryway"), { valuesFiles: [broken] })).toThrow(
      /comonLabels/,
    );
  });
});
