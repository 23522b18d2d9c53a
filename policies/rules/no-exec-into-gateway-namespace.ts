/**
 * `entryway-no-exec-into-gateway-namespace`, mandatory, stack-wide: no RoleBinding grants exec or
 * its equivalent in a namespace the stack owns: the exec gateway's (its pods hold its
 * service-account token, with cluster-wide TokenReview and SubjectAccessReview), the CONNECT
 * gateway's (its ServiceAccount reads its TLS key), AnsibleForms' (the app's secrets), or a
 * Namespace the stack makes. Exec's equivalents are `create`/`get` on pods/exec and pods/attach,
 * `patch`/`update` on pods/ephemeralcontainers, `create` on pods or serviceaccounts/token, through a
 * Role there or the built-in admin, edit or cluster-admin; and in the exec gateway's namespace
 * `patch`/`update` of its Deployment (which runs anything as the gateway).
 *
 * Upstream:
 * - https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles (admin and edit
 *   include pods/exec, pods/attach and creating pods; cluster-admin is everything);
 * - https://kubernetes.io/docs/concepts/security/rbac-good-practices/ ("Kubernetes RBAC - privilege
 *   escalation risks": workload creation and token requests reach every ServiceAccount of the namespace);
 * - istio pilot/pkg/credentials/kube/secrets.go (Authorize): the CONNECT gateway's ServiceAccount
 *   may list the Secrets of its namespace (docs/upstream-facts.md).
 */
import { execRightsIn, grantsOn, label, stackPolicy, type K8sObject, type Obj } from "./helpers";

/**
 * Built-in ClusterRoles that grant exec and its equivalents (the user-facing roles of Kubernetes
 * RBAC, https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles: admin and
 * edit include pods/exec, pods/attach and creating pods; cluster-admin is everything).
 */
const BUILTIN_EXEC_CLUSTER_ROLES = ["cluster-admin", "admin", "edit"];

/** The workloads whose namespaces the stack owns, by app.kubernetes.io/name, and what exec there reaches. */
const OWNED_BY: Record<string, string> = {
  "exec-gateway": "the exec gateway's own namespace (its pods hold its service-account token)",
  "connect-gateway": "the CONNECT gateway's namespace (its service account reads its TLS key)",
  ansibleforms: "AnsibleForms' namespace (its pods hold the app's secrets)",
};

export function checkNoExecIntoGatewayNamespace(objects: K8sObject[]): string[] {
  const nameOf = (o: K8sObject) => o.metadata?.labels?.["app.kubernetes.io/name"];
  // Every namespace the stack owns, with why: its workloads' namespaces and the Namespaces it makes.
  const owned = new Map<string, string>();
  for (const o of objects) {
    const namespace = o.metadata?.namespace;
    const why = OWNED_BY[nameOf(o) ?? ""];
    if (o.kind === "Deployment" && namespace && why && !owned.get(namespace)?.startsWith("the exec gateway's"))
      owned.set(namespace, why);
  }
  for (const o of objects) {
    if (o.kind === "Namespace" && nameOf(o) === "entryway" && o.metadata?.name && !owned.has(o.metadata.name))
      owned.set(o.metadata.name, "a namespace the stack owns");
  }
  // The exec gateway's Deployments: changing one runs anything as the gateway.
  const gateways = objects.filter((o) => o.kind === "Deployment" && nameOf(o) === "exec-gateway");
  const problems: string[] = [];
  for (const binding of objects.filter((o) => o.kind === "RoleBinding" && owned.has(o.metadata?.namespace ?? ""))) {
    const namespace = binding.metadata!.namespace!;
    const ref = (binding.roleRef as Obj | undefined) ?? {};
    const role = objects.find(
      (o) =>
        o.kind === ref.kind &&
        o.metadata?.name === ref.name &&
        (ref.kind === "ClusterRole" || o.metadata?.namespace === namespace),
    );
    const rules: Obj[] = (role?.rules as Obj[] | undefined) ?? [];
    const rights = role
      ? execRightsIn(rules)
      : ref.kind === "ClusterRole" && BUILTIN_EXEC_CLUSTER_ROLES.includes(ref.name)
        ? [`the built-in ${ref.name} role's exec`]
        : [];
    for (const gateway of gateways.filter((g) => g.metadata?.namespace === namespace)) {
      const changes = rules
        .filter((rule) => !rule.resourceNames?.length || rule.resourceNames.includes(gateway.metadata?.name))
        .flatMap((rule) => grantsOn(rule, "apps", "deployments", ["patch", "update"]));
      if (changes.length > 0) rights.push(...changes.map((right) => `${right} (the exec gateway's Deployment)`));
    }
    if (rights.length > 0) {
      problems.push(
        `${label(binding)}: grants ${[...new Set(rights)].join(", ")} in ${namespace}, ${owned.get(namespace)}; run exec targets in a namespace of their own`,
      );
    }
  }
  return problems;
}

export const noExecIntoGatewayNamespace = stackPolicy(
  "entryway-no-exec-into-gateway-namespace",
  "No RoleBinding grants exec or its equivalent (attach, debug containers, creating pods or ServiceAccount tokens, changing the exec gateway's Deployment) in a namespace the stack owns: the exec gateway's, the CONNECT gateway's, AnsibleForms'.",
  "mandatory",
  checkNoExecIntoGatewayNamespace,
);
