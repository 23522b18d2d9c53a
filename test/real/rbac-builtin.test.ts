/**
 * The built-in ClusterRoles the policy pack knows (policies/rules/helpers.ts
 * BUILTIN_EXEC_CLUSTER_ROLES and BUILTIN_OTHER_CLUSTER_ROLES, written from Kubernetes v1.37.2's
 * bootstrap policy) against the ones the real API server makes (test/real/global-setup.ts), with
 * the rules the aggregation controller gave admin, edit and view: every built-in role whose rules
 * grant exec or its equivalent (execRightsIn) is listed as exec, with its labels (what an
 * aggregationRule selects it by), and none listed as without exec has any.
 */
import { KubeConfig, RbacAuthorizationV1Api, type V1ClusterRole } from "@kubernetes/client-node";
import { expect, inject, it } from "vitest";
import {
  BUILTIN_EXEC_CLUSTER_ROLES,
  BUILTIN_OTHER_CLUSTER_ROLES,
  execRightsIn,
  type Obj,
} from "../../policies/rules/helpers";

const { kubeconfig } = inject("controlPlane");
const admin = new KubeConfig();
admin.loadFromFile(kubeconfig);
const rbac = admin.makeApiClient(RbacAuthorizationV1Api);

it("knows every built-in ClusterRole that grants exec or its equivalent, and its labels", async () => {
  const builtIn = async (): Promise<V1ClusterRole[]> =>
    (await rbac.listClusterRole({ labelSelector: "kubernetes.io/bootstrapping=rbac-defaults" })).items;
  // admin, edit and view hold their rules once the aggregation controller has run.
  await expect
    .poll(async () => (await builtIn()).find((r) => r.metadata?.name === "edit")?.rules?.length ?? 0, {
      timeout: 60_000,
    })
    .toBeGreaterThan(0);
  const roles = await builtIn();
  const withExec = roles
    .filter((r) => execRightsIn((r.rules ?? []) as Obj[]).length > 0)
    .map((r) => r.metadata!.name!)
    .sort();
  expect(withExec).toEqual(Object.keys(BUILTIN_EXEC_CLUSTER_ROLES).sort());
  for (const role of roles.filter((r) => r.metadata!.name! in BUILTIN_EXEC_CLUSTER_ROLES)) {
    const aggregationLabels = Object.fromEntries(
      Object.entries(role.metadata?.labels ?? {}).filter(
        ([key]) => key.startsWith("rbac.authorization.k8s.io/aggregate-to-") || key === "kubernetes.io/bootstrapping",
      ),
    );
    expect(BUILTIN_EXEC_CLUSTER_ROLES[role.metadata!.name!], role.metadata!.name).toEqual(aggregationLabels);
  }
  const names = roles.map((r) => r.metadata!.name!);
  for (const name of BUILTIN_OTHER_CLUSTER_ROLES) expect(names, name).toContain(name);
});
