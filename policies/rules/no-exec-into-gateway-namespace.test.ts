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
    spec: { template: { spec: { serviceAccountName: "entryway-exec-gateway" } } },
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
    ["patch deployments", [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"] }]],
    [
      "update deployments",
      [
        {
          apiGroups: ["apps"],
          resources: ["deployments"],
          verbs: ["update"],
          resourceNames: ["entryway-exec-gateway"],
        },
      ],
    ],
    // Any Deployment's template may name the gateway's ServiceAccount.
    [
      "patch deployments",
      [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"], resourceNames: ["another-app"] }],
    ],
    // The attack (issue 33): workload creation, changing a pod, the kubelet's proxy, impersonation, bind, escalate.
    ["create deployments", [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["create"] }]],
    ["create jobs", [{ apiGroups: ["batch"], resources: ["jobs"], verbs: ["create"] }]],
    ["create cronjobs", [{ apiGroups: ["batch"], resources: ["cronjobs"], verbs: ["create"] }]],
    ["create daemonsets", [{ apiGroups: ["apps"], resources: ["daemonsets"], verbs: ["create"] }]],
    ["patch pods", [{ apiGroups: [""], resources: ["pods"], verbs: ["patch"] }]],
    ["update pods", [{ apiGroups: [""], resources: ["pods"], verbs: ["update"] }]],
    ["get nodes/proxy", [{ apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get"] }]],
    ["create nodes/proxy", [{ apiGroups: [""], resources: ["nodes/proxy"], verbs: ["create"] }]],
    ["impersonate serviceaccounts", [{ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"] }]],
    ["impersonate users", [{ apiGroups: [""], resources: ["users"], verbs: ["impersonate"] }]],
    ["bind clusterroles", [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["bind"] }]],
    ["escalate roles", [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["escalate"] }]],
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
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] },
      { apiGroups: [""], resources: ["pods/*"], verbs: ["get"] }, // no wildcard to RBAC: only "*" and "*" + "/exec" are
    ];
    expect(
      await runStackPolicy(noExecIntoGatewayNamespace, [gateway, ...grant("entryway", harmless)].map(asResource)),
    ).toEqual([]);
    expect(
      await runStackPolicy(noExecIntoGatewayNamespace, [gateway, ...grant("team-a", createPods)].map(asResource)),
    ).toEqual([]);
  });

  // A ClusterRoleBinding: exec in every namespace, the stack's own among them.
  const clusterBinding = (roleRef: Obj, subjects: Obj[] = [{ kind: "Group", name: "developers" }]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "devs" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
    subjects,
  });
  const run = async (objects: Obj[]) =>
    (await runStackPolicy(noExecIntoGatewayNamespace, objects.map(asResource))).join("\n");

  it.each([
    // Built in, and carries pods/exec: kubernetes v1.37.2 bootstrappolicy/policy.go, editRules.
    ["system:aggregate-to-edit"],
    ["edit"],
    ["admin"],
    ["cluster-admin"],
    ["system:kubelet-api-admin"],
    ["system:controller:job-controller"],
  ])(
    "fires on a RoleBinding in the gateway's namespace, and a ClusterRoleBinding, to the built-in %s",
    async (name) => {
      expect(await run([gateway, binding("entryway", { kind: "ClusterRole", name })])).toMatch(
        new RegExp(
          `RoleBinding entryway/entryway-exec-gateway: grants the built-in ${name} role's exec in entryway, the exec gateway's own namespace`,
        ),
      );
      expect(await run([gateway, clusterBinding({ kind: "ClusterRole", name })])).toMatch(
        new RegExp(
          `ClusterRoleBinding devs: grants the built-in ${name} role's exec in every namespace, among them entryway, the exec gateway's own namespace`,
        ),
      );
    },
  );

  it("passes ClusterRoleBindings to roles without exec, and any when the stack owns no namespace", async () => {
    const viewer = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "pod-reader" },
      rules: [{ apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] }],
    };
    expect(await run([gateway, clusterBinding({ kind: "ClusterRole", name: "view" })])).toBe("");
    expect(await run([gateway, clusterBinding({ kind: "ClusterRole", name: "system:aggregate-to-admin" })])).toBe("");
    expect(await run([gateway, viewer, clusterBinding({ kind: "ClusterRole", name: "pod-reader" })])).toBe("");
    expect(await run([clusterBinding({ kind: "ClusterRole", name: "edit" })])).toBe("");
  });

  it("says so, instead of passing, when it cannot see the bound role's rules", async () => {
    expect(await run([gateway, binding("entryway", { kind: "ClusterRole", name: "made-elsewhere" })])).toMatch(
      /RoleBinding entryway\/entryway-exec-gateway: binds ClusterRole made-elsewhere, which the stack does not make and the pack does not know, so it cannot tell whether it grants exec or its equivalent in entryway/,
    );
    expect(await run([gateway, binding("entryway", { kind: "Role", name: "made-elsewhere" })])).toMatch(
      /binds Role made-elsewhere, which the stack does not make/,
    );
    expect(await run([gateway, clusterBinding({ kind: "ClusterRole", name: "made-elsewhere" })])).toMatch(
      /ClusterRoleBinding devs: binds ClusterRole made-elsewhere, .* in every namespace, among them entryway/,
    );
  });

  it("treats an aggregated ClusterRole as the roles it selects: built-in edit or admin, or the stack's own", async () => {
    const aggregated = (selector: Obj) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "team" },
      aggregationRule: { clusterRoleSelectors: [selector] },
      rules: [],
    });
    const toEdit = aggregated({ matchLabels: { "rbac.authorization.k8s.io/aggregate-to-edit": "true" } });
    expect(await run([gateway, toEdit, binding("entryway", { kind: "ClusterRole", name: "team" })])).toMatch(
      /grants the built-in system:aggregate-to-edit's rights \(aggregated\) in entryway/,
    );
    const toAdmin = aggregated({
      matchExpressions: [{ key: "rbac.authorization.k8s.io/aggregate-to-admin", operator: "In", values: ["true"] }],
    });
    expect(await run([gateway, toAdmin, clusterBinding({ kind: "ClusterRole", name: "team" })])).toMatch(
      /grants the built-in edit's rights \(aggregated\) in every namespace/,
    );
    const deployer = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "deployer", labels: { "example.com/team": "true" } },
      rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["create"] }],
    };
    const ours = aggregated({ matchLabels: { "example.com/team": "true" } });
    expect(await run([gateway, deployer, ours, binding("entryway", { kind: "ClusterRole", name: "team" })])).toMatch(
      /grants create deployments in entryway/,
    );
    const toView = aggregated({ matchLabels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } });
    expect(await run([gateway, toView, binding("entryway", { kind: "ClusterRole", name: "team" })])).toBe("");
  });

  it("passes the exec gateway's own cluster-wide binding (clusterWide: true, entryway-exec-rbac's to allow)", async () => {
    const own = clusterBinding({ kind: "ClusterRole", name: "entryway-exec-gateway" }, [
      { kind: "ServiceAccount", name: "entryway-exec-gateway", namespace: "entryway" },
    ]);
    const clusterRole = { ...role("ClusterRole", execRules) };
    expect(await run([gateway, clusterRole, own])).toBe("");
    // Another subject beside it is not the gateway.
    const shared = { ...own, subjects: [...own.subjects, { kind: "Group", name: "developers" }] };
    expect(await run([gateway, clusterRole, shared])).toMatch(
      /ClusterRoleBinding devs: grants create pods\/exec in every namespace/,
    );
  });
});
