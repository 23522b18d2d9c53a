/**
 * The names Entryway could not confirm upstream (docs/ansibleforms.md, "Assumptions to check") are settings:
 * the outbound RTE's app-URL variable (remoteRte.appUrlEnv) and extra RTE variables (extraEnv),
 * alike in both front ends; a name the front end sets itself is refused, never duplicated.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseStackConfig, Stack } from "../../components/stack";
import { helmBinaries, helmTemplate, repoRoot, runHelm } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";
import { container, envOf, find, podSpec } from "./helpers";

const chart = path.join(repoRoot, "charts/entryway");
const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-af-overrides-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const remoteRte = {
  appUrl: "https://forms.example.com",
  existingTokenSecret: "t",
  appUrlEnv: "AF_APP_URL",
  extraEnv: [{ name: "RTE_EXTRA", value: "1" }],
};

function expectOverrides(objects: readonly ObjectLike[]): void {
  const rte = container(podSpec(find(objects, "StatefulSet", "entryway-remote-rte")), "rte");
  expect(envOf(rte, "AF_APP_URL")?.value).toBe("https://forms.example.com");
  expect(envOf(rte, "RTE_APP_URL")).toBeUndefined();
  expect(rte.env!.at(-1)).toEqual({ name: "RTE_EXTRA", value: "1" });
}

describe("assumed names are settings", () => {
  it.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("chart (%s)", (_label, helm) => {
    const file = path.join(scratch, `values-${helm.major}.yaml`);
    writeFileSync(file, stringify({ remoteRte: { enabled: true, ...remoteRte } }));
    expectOverrides(helmTemplate(helm, chart, { valuesFiles: [file] }));
    const clash = path.join(scratch, `clash-${helm.major}.yaml`);
    writeFileSync(
      clash,
      stringify({ remoteRte: { enabled: true, ...remoteRte, extraEnv: [{ name: "RTE_MODE", value: "inbound" }] } }),
    );
    const result = runHelm(helm, ["template", "entryway", chart, "-f", clash]);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/extraEnv RTE_MODE: set by the chart/);
  });

  it("components", async () => {
    const { manifests } = await render(() => new Stack("o", parseStackConfig({ namespace: "entryway", remoteRte })));
    expectOverrides(manifests as ObjectLike[]);
    const clash = parseStackConfig({
      namespace: "entryway",
      remoteRte: { ...remoteRte, extraEnv: [{ name: "RTE_MODE", value: "inbound" }] },
    });
    await expect(render(() => new Stack("o", clash))).rejects.toThrow(/extraEnv RTE_MODE: set by the component/);
  });
});
