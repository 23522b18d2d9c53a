/**
 * The policy pack as a whole, run without the Pulumi CLI: each CrossGuard policy's own
 * validateResource / validateStack callback is called with the arguments the engine would pass
 * (type, props = the resource's inputs, config). The pack has its thirteen rules, and the default
 * stack (Pulumi.dev.yaml, everything on) and every chart scenario pass every rule. Each rule's good
 * and bad fixtures are beside it, in policies/rules/<rule>.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseStackConfig, Stack } from "../../components/stack";
import { entrywayPolicies } from "../../policies/rules";
import { rteTagMatchesApp } from "../../policies/rules/rte-tag-matches-app";
import { allViolations, asResource, type Resource } from "./run-policies";
import { chartScenarios, helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";

async function devStackResources(): Promise<Resource[]> {
  const document = parse(readFileSync(path.join(repoRoot, "Pulumi.dev.yaml"), "utf8")) as {
    config: Record<string, unknown>;
  };
  const config = parseStackConfig(document.config["entryway:stack"]);
  const { resources } = await render(() => new Stack("dev", config));
  return resources.filter((r) => r.custom).map((r) => ({ type: r.type, props: r.inputs }));
}

describe("policy pack", () => {
  it("has the thirteen rules, each with a description; all mandatory but the RTE tag advice", () => {
    expect(entrywayPolicies.map((p) => p.name)).toEqual([
      "entryway-pod-security-restricted",
      "entryway-rte-boundary",
      "entryway-connect-static-clusters",
      "entryway-connect-dedicated-gateway",
      "entryway-exec-rbac",
      "entryway-no-exec-into-gateway-namespace",
      "entryway-exec-gateway-debug-rbac",
      "entryway-workspace-pdb-no-loadbalancer",
      "entryway-no-default-admin-password",
      "entryway-rte-tag-matches-app",
      "entryway-seed-token-references",
      "entryway-rte-own-metrics-token",
      "entryway-secret-readers-alone",
    ]);
    for (const policy of entrywayPolicies) {
      expect(policy.description.length).toBeGreaterThan(20);
      expect(policy.enforcementLevel).toBe(policy === rteTagMatchesApp ? "advisory" : "mandatory");
    }
  });

  it("has each rule in a file of its own, named after it, with its good and bad fixtures beside it", () => {
    const files = readdirSync(path.join(repoRoot, "policies", "rules")).sort();
    const rules = entrywayPolicies.map((p) => p.name.replace(/^entryway-/, ""));
    expect(files).toEqual(
      [...rules.flatMap((rule) => [`${rule}.test.ts`, `${rule}.ts`]), "helpers.ts", "index.ts"].sort(),
    );
  });

  it("passes every rule on the default stack (Pulumi.dev.yaml), which exercises them", async () => {
    const resources = await devStackResources();
    const kinds = new Set(resources.map((r) => r.type.split(":")[2]));
    // The rules must have something to look at, or passing proves nothing.
    expect([...kinds]).toEqual(expect.arrayContaining(["Deployment", "Role", "ClusterRole"]));
    expect(await allViolations(resources)).toEqual([]);
  });

  it("passes every rule on every chart scenario (Helm 4)", async () => {
    const helm = helmBinaries()[0];
    for (const { chart, scenarios } of chartScenarios()) {
      for (const scenario of scenarios) {
        const objects = helmTemplate(helm, chart, { valuesFiles: [scenario] });
        // Chart scenarios may grant cluster-wide exec on purpose (clusterWide: true) with the policy allowing it.
        const allowClusterWide = objects.some(
          (o) => o.kind === "ClusterRole" && String(o.metadata?.name).endsWith("exec-gateway-exec"),
        );
        expect(
          await allViolations(objects.map(asResource), { allowClusterWideExec: allowClusterWide }),
          path.basename(scenario),
        ).toEqual([]);
      }
    }
  });
});
