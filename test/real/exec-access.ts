// What the real API server tests (kubernetes-authorizer.test.ts, real-node.test.ts) share: the exec
// gateway's accounts and rights as the ExecGateway component grants them, and the execs the API
// server's audit log saw.
import { readFileSync } from "node:fs";
import type { CoreV1Api, RbacAuthorizationV1Api, V1PolicyRule } from "@kubernetes/client-node";
import { grantRole } from "../../testkit/harness/kube-users";

/** Each exec into a pod of `namespace` that completed, from the API server's audit log (JSON lines). */
export function execAuditEvents(auditLog: string, namespace: string): { user: string; pod: string; code: number }[] {
  return readFileSync(auditLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as {
          stage: string;
          objectRef?: { namespace?: string; resource?: string; subresource?: string; name?: string };
          user: { username: string };
          responseStatus?: { code: number };
        },
    )
    .filter(
      (e) =>
        e.stage === "ResponseComplete" &&
        e.objectRef?.resource === "pods" &&
        e.objectRef.subresource === "exec" &&
        e.objectRef.namespace === namespace,
    )
    .map((e) => ({ user: e.user.username, pod: e.objectRef!.name!, code: e.responseStatus?.code ?? 0 }));
}

/**
 * Creates the gateway's namespace and the two teams', the service accounts exec-gateway (in the
 * gateway's) and alice and bob (in team A), a Role `exec-gateway` with `rules` in each team bound
 * to the gateway, and the ClusterRole `reviewRole` with `reviewRules` bound to it.
 */
export async function grantGatewayRights(
  api: { core: CoreV1Api; rbac: RbacAuthorizationV1Api },
  names: { gatewayNamespace: string; teamA: string; teamB: string; reviewRole: string },
  rules: V1PolicyRule[],
  reviewRules: V1PolicyRule[],
): Promise<void> {
  const { core, rbac } = api;
  const { gatewayNamespace, teamA, teamB, reviewRole } = names;
  for (const name of [gatewayNamespace, teamA, teamB]) await core.createNamespace({ body: { metadata: { name } } });
  for (const [namespace, name] of [
    [gatewayNamespace, "exec-gateway"],
    [teamA, "alice"],
    [teamA, "bob"],
  ] as const) {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  }
  const gateway = { namespace: gatewayNamespace, name: "exec-gateway" };
  for (const namespace of [teamA, teamB]) await grantRole(rbac, namespace, { name: "exec-gateway", rules }, [gateway]);
  await rbac.createClusterRole({ body: { metadata: { name: reviewRole }, rules: reviewRules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: reviewRole },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: reviewRole },
      subjects: [{ kind: "ServiceAccount", ...gateway }],
    },
  });
}
