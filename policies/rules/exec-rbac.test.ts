/**
 * `entryway-exec-rbac`: its good fixtures (it passes them) and bad ones (it fires on each, with
 * its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { execRules, role, type Obj } from "../../test/policies/fixtures";
import { asResource, runResourcePolicy } from "../../test/policies/run-policies";
import { execRbac } from "./exec-rbac";

describe("exec gateway RBAC", () => {
  it("passes a Role per namespace without wildcards", async () => {
    expect(await runResourcePolicy(execRbac, asResource(role("Role", execRules)))).toEqual([]);
  });
  it.each([
    ["verbs", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["*"] }]],
    ["resources", [{ apiGroups: [""], resources: ["*"], verbs: ["create"] }]],
    ["apiGroups", [{ apiGroups: ["*"], resources: ["pods"], verbs: ["get"] }]],
  ])("fires on a wildcard in %s", async (field, rules) => {
    const violations = await runResourcePolicy(execRbac, asResource(role("Role", rules)));
    expect(violations.join("\n")).toMatch(new RegExp(`wildcard in ${field}`));
  });
  it("fires on cluster-wide exec unless allowClusterWideExec is set", async () => {
    expect((await runResourcePolicy(execRbac, asResource(role("ClusterRole", execRules)))).join()).toMatch(
      /grants create pods\/exec \(exec or its equivalent\) in every namespace/,
    );
    expect(
      await runResourcePolicy(execRbac, asResource(role("ClusterRole", execRules)), { allowClusterWideExec: true }),
    ).toEqual([]);
  });
  it.each([
    ["get pods/exec", { apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] }],
    ["create pods/attach", { apiGroups: [""], resources: ["pods/attach"], verbs: ["create"] }],
    ["patch pods/ephemeralcontainers", { apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }],
    ["create pods", { apiGroups: [""], resources: ["pods"], verbs: ["create"] }],
    ["create serviceaccounts/token", { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }],
    // The attack (issue 33): rights that equal exec.
    ["create deployments", { apiGroups: ["apps"], resources: ["deployments"], verbs: ["create"] }],
    ["create jobs", { apiGroups: ["batch"], resources: ["jobs"], verbs: ["create"] }],
    ["create cronjobs", { apiGroups: ["batch"], resources: ["cronjobs"], verbs: ["create"] }],
    ["create statefulsets", { apiGroups: ["apps"], resources: ["statefulsets"], verbs: ["create"] }],
    ["patch pods", { apiGroups: [""], resources: ["pods"], verbs: ["patch"] }],
    ["update pods", { apiGroups: [""], resources: ["pods"], verbs: ["update"] }],
    ["get nodes/proxy", { apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get"] }],
    ["create nodes/proxy", { apiGroups: [""], resources: ["nodes/proxy"], verbs: ["create"] }],
    ["impersonate users", { apiGroups: [""], resources: ["users"], verbs: ["impersonate"] }],
    ["impersonate serviceaccounts", { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"] }],
    ["bind clusterroles", { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["bind"] }],
    ["escalate roles", { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["escalate"] }],
  ])("fires on a cluster-wide role that grants %s (exec's equivalent), not on read-only pods", async (right, rule) => {
    const other = { ...role("ClusterRole", [rule]), metadata: { name: "ci" } };
    expect((await runResourcePolicy(execRbac, asResource(other))).join()).toContain(
      `grants ${right} (exec or its equivalent) in every namespace`,
    );
    const readOnly = {
      ...role("ClusterRole", [{ apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list"] }]),
      metadata: { name: "viewer" },
    };
    expect(await runResourcePolicy(execRbac, asResource(readOnly))).toEqual([]);
  });
  it("fires on any other role that grants exec with a wildcard", async () => {
    const other = {
      ...role("Role", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["*"] }]),
      metadata: { name: "debug", namespace: "x" },
    };
    expect((await runResourcePolicy(execRbac, asResource(other))).join()).toMatch(/wildcard in verbs/);
  });
  it.each([
    [
      "aggregate-to-edit",
      { matchLabels: { "rbac.authorization.k8s.io/aggregate-to-edit": "true" } },
      "system:aggregate-to-edit",
    ],
    ["aggregate-to-admin", { matchLabels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" } }, "edit"],
    ["everything (an empty selector)", {}, "cluster-admin"],
  ])(
    "fires on a ClusterRole aggregating %s, as exec; not on one aggregating aggregate-to-view",
    async (_what, selector, builtin) => {
      const aggregated = (clusterRoleSelectors: Obj[]) => ({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "team" },
        aggregationRule: { clusterRoleSelectors },
        rules: [],
      });
      expect((await runResourcePolicy(execRbac, asResource(aggregated([selector])))).join()).toContain(
        `grants the built-in ${builtin}'s rights (aggregated)`,
      );
      const view = aggregated([{ matchLabels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } }]);
      expect(await runResourcePolicy(execRbac, asResource(view))).toEqual([]);
    },
  );
});
