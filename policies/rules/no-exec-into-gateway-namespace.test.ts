/**
 * `entryway-no-exec-into-gateway-namespace`: its good fixtures (it passes them) and bad ones (it
 * fires on each, with its message), run through the policy's own CrossGuard callback as the engine
 * would (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { execRules, role, type Obj } from "../../test/policies/fixtures";
import { asResource, runStackPolicy } from "../../test/policies/run-policies";
import { noExecIntoGatewayNamespace } from "./no-exec-into-gateway-namespace";

describe("no exec into the exec gateway's own namespace", () => {
  const gateway = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "entryway-exec-gateway",
      namespace: "entryway",
      labels: { "app.kubernetes.io/name": "exec-gateway" },
    },
    spec: {},
  };
  const binding = (namespace: string, roleRef: Obj) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "entryway-exec-gateway", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
    subjects: [{ kind: "ServiceAccount", name: "entryway-exec-gateway", namespace: "entryway" }],
  });
  const roleIn = (namespace: string) => ({
    ...role("Role", execRules),
    metadata: { ...role("Role", execRules).metadata, namespace },
  });
  it("passes exec bindings in other namespaces", async () => {
    const objects = [gateway, roleIn("team-a"), binding("team-a", { kind: "Role", name: "entryway-exec-gateway" })];
    expect(await runStackPolicy(noExecIntoGatewayNamespace, objects.map(asResource))).toEqual([]);
  });
  it("fires on a RoleBinding granting exec in the gateway's namespace, through its Role or a built-in ClusterRole", async () => {
    const own = [gateway, roleIn("entryway"), binding("entryway", { kind: "Role", name: "entryway-exec-gateway" })];
    expect((await runStackPolicy(noExecIntoGatewayNamespace, own.map(asResource))).join()).toMatch(
      /RoleBinding entryway\/entryway-exec-gateway: grants create pods\/exec in entryway, the exec gateway's own namespace/,
    );
    const edit = [gateway, binding("entryway", { kind: "ClusterRole", name: "edit" })];
    expect((await runStackPolicy(noExecIntoGatewayNamespace, edit.map(asResource))).join()).toMatch(
      /the exec gateway's own namespace/,
    );
    const view = [gateway, binding("entryway", { kind: "ClusterRole", name: "view" })];
    expect(await runStackPolicy(noExecIntoGatewayNamespace, view.map(asResource))).toEqual([]);
  });

  // A Role in `namespace` with `rules`, bound there.
  const grant = (namespace: string, rules: Obj[]) => [
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "ops", namespace }, rules },
    { ...binding(namespace, { kind: "Role", name: "ops" }), metadata: { name: "ops", namespace } },
  ];
  const workloadIn = (namespace: string, name: string) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: `entryway-${name}`, namespace, labels: { "app.kubernetes.io/name": name } },
    spec: {},
  });
  it.each([
    ["get pods/exec", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] }]],
    ["create pods/attach", [{ apiGroups: [""], resources: ["pods/attach"], verbs: ["create"] }]],
    ["get pods/attach", [{ apiGroups: [""], resources: ["pods/attach"], verbs: ["get"] }]],
    [
      "patch pods/ephemeralcontainers",
      [{ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }],
    ],
    [
      "update pods/ephemeralcontainers",
      [{ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["update"] }],
    ],
    ["create pods", [{ apiGroups: [""], resources: ["pods"], verbs: ["create"] }]],
    ["create serviceaccounts/token", [{ apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }]],
    ["create pods/exec", [{ apiGroups: [""], resources: ["*/exec"], verbs: ["*"] }]],
    [
      "patch deployments (the exec gateway's Deployment)",
      [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"] }],
    ],
    [
      "update deployments (the exec gateway's Deployment)",
      [
        {
          apiGroups: ["apps"],
          resources: ["deployments"],
          verbs: ["update"],
          resourceNames: ["entryway-exec-gateway"],
        },
      ],
    ],
  ])("fires on %s in the exec gateway's namespace", async (right, rules) => {
    const violations = await runStackPolicy(
      noExecIntoGatewayNamespace,
      [gateway, ...grant("entryway", rules)].map(asResource),
    );
    expect(violations.join()).toContain(`RoleBinding entryway/ops: grants ${right}`);
    expect(violations.join()).toContain("in entryway, the exec gateway's own namespace");
  });
  it("fires on exec's equivalents in the CONNECT gateway's and AnsibleForms' namespaces and a Namespace the stack makes; not on read-only rights or another Deployment", async () => {
    const createPods = [{ apiGroups: [""], resources: ["pods"], verbs: ["create"] }];
    const connect = await runStackPolicy(
      noExecIntoGatewayNamespace,
      [gateway, workloadIn("entryway-connect", "connect-gateway"), ...grant("entryway-connect", createPods)].map(
        asResource,
      ),
    );
    expect(connect.join()).toMatch(/grants create pods in entryway-connect, the CONNECT gateway's namespace/);
    const app = await runStackPolicy(
      noExecIntoGatewayNamespace,
      [
        workloadIn("forms", "ansibleforms"),
        ...grant("forms", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] }]),
      ].map(asResource),
    );
    expect(app.join()).toMatch(/grants get pods\/exec in forms, AnsibleForms' namespace/);
    const namespace = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "quiet", labels: { "app.kubernetes.io/name": "entryway" } },
    };
    expect(
      (
        await runStackPolicy(noExecIntoGatewayNamespace, [namespace, ...grant("quiet", createPods)].map(asResource))
      ).join(),
    ).toMatch(/in quiet, a namespace the stack owns/);
    const harmless = [
      { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"], resourceNames: ["another-app"] },
      { apiGroups: [""], resources: ["pods/*"], verbs: ["get"] }, // no wildcard to RBAC: only "*" and "*" + "/exec" are
    ];
    expect(
      await runStackPolicy(noExecIntoGatewayNamespace, [gateway, ...grant("entryway", harmless)].map(asResource)),
    ).toEqual([]);
    expect(
      await runStackPolicy(noExecIntoGatewayNamespace, [gateway, ...grant("team-a", createPods)].map(asResource)),
    ).toEqual([]);
  });
});
