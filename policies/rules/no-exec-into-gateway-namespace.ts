/**
 * `entryway-no-exec-into-gateway-namespace`, mandatory, stack-wide: no RoleBinding there, and no
 * ClusterRoleBinding (which grants in every namespace), grants exec or its equivalent in a
 * namespace the stack owns: the exec gateway's (its pods hold its service-account token, with
 * cluster-wide TokenReview and SubjectAccessReview), the CONNECT gateway's (its ServiceAccount reads
 * its TLS key), AnsibleForms' (the app's secrets), or a Namespace the stack makes. Exec's
 * equivalents are helpers.ts EXEC_EQUIVALENT (exec, attach, debug containers, creating or changing
 * pods and the workloads that make them, ServiceAccount tokens, nodes/proxy, impersonate, bind,
 * escalate), through a role of the stack (an aggregated ClusterRole with the rules of every role
 * it selects) or a built-in one that has them (helpers.ts BUILTIN_EXEC_CLUSTER_ROLES, from
 * Kubernetes' bootstrap policy). A binding to a role the stack does not make and the pack does not
 * know is reported: the pack cannot see its rules. The exec gateway's own cluster-wide binding
 * (clusterWide: true) is entryway-exec-rbac's to allow.
 *
 * Upstream:
 * - https://kubernetes.io/docs/reference/access-authn-authz/rbac/#user-facing-roles (admin and edit
 *   include pods/exec, pods/attach and creating pods; cluster-admin is everything);
 * - https://kubernetes.io/docs/concepts/security/rbac-good-practices/ ("Kubernetes RBAC - privilege
 *   escalation risks": workload creation and token requests reach every ServiceAccount of the namespace);
 * - istio pilot/pkg/credentials/kube/secrets.go (Authorize): the CONNECT gateway's ServiceAccount
 *   may list the Secrets of its namespace (docs/upstream-facts.md).
 */
import {
  BUILTIN_EXEC_CLUSTER_ROLES,
  BUILTIN_OTHER_CLUSTER_ROLES,
  execRightsIn,
  label,
  selects,
  stackPolicy,
  type K8sObject,
  type Obj,
} from "./helpers";

/** The workloads whose namespaces the stack owns, by app.kubernetes.io/name, and what exec there reaches. */
const OWNED_BY: Record<string, string> = {
  "exec-gateway": "the exec gateway's own namespace (its pods hold its service-account token)",
  "connect-gateway": "the CONNECT gateway's namespace (its service account reads its TLS key)",
  ansibleforms: "AnsibleForms' namespace (its pods hold the app's secrets)",
};

/**
 * What a binding's role grants of exec and its equivalents: `rights`, or `unknown` when the pack
 * cannot see the role's rules (made outside the stack and not a built-in it knows).
 */
function roleRights(
  objects: K8sObject[],
  ref: Obj,
  namespace: string | undefined,
): { rights: string[]; unknown?: string } {
  const role = objects.find(
    (o) =>
      o.kind === ref.kind &&
      o.metadata?.name === ref.name &&
      (ref.kind === "ClusterRole" || o.metadata?.namespace === namespace),
  );
  if (role) {
    const rights = execRightsIn((role.rules as Obj[] | undefined) ?? []);
    // An aggregated ClusterRole holds the rules of every ClusterRole its selectors pick: the
    // stack's own, and the built-in ones (whose labels BUILTIN_EXEC_CLUSTER_ROLES lists).
    for (const selector of ((role.aggregationRule as Obj | undefined)?.clusterRoleSelectors ?? []) as Obj[]) {
      for (const other of objects.filter((o) => o.kind === "ClusterRole" && o !== role)) {
        if (selects(selector, other.metadata?.labels ?? {}))
          rights.push(...execRightsIn((other.rules as Obj[] | undefined) ?? []));
      }
      for (const [name, labels] of Object.entries(BUILTIN_EXEC_CLUSTER_ROLES)) {
        if (selects(selector, labels)) rights.push(`the built-in ${name}'s rights (aggregated)`);
      }
    }
    return { rights };
  }
  if (ref.kind === "ClusterRole" && ref.name in BUILTIN_EXEC_CLUSTER_ROLES)
    return { rights: [`the built-in ${ref.name} role's exec`] };
  if (ref.kind === "ClusterRole" && BUILTIN_OTHER_CLUSTER_ROLES.includes(ref.name)) return { rights: [] };
  return { rights: [], unknown: `${ref.kind} ${ref.name}` };
}

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
  // The exec gateway's own ServiceAccounts: a ClusterRoleBinding of the gateway's cluster-wide exec
  // (clusterWide: true, which entryway-exec-rbac allows only with allowClusterWideExec) gives them
  // nothing they do not hold (their own token), and the gateway refuses its own namespace and the
  // stack's others itself (gateway/src/server.ts: gatewayNamespace, refusedNamespaces).
  const gatewayAccounts = objects
    .filter((o) => o.kind === "Deployment" && nameOf(o) === "exec-gateway")
    .map((o) => {
      const pod = ((o.spec as Obj | undefined)?.template?.spec ?? {}) as Obj;
      return `${o.metadata?.namespace}/${pod.serviceAccountName ?? pod.serviceAccount ?? "default"}`;
    });
  const onlyGateway = (binding: K8sObject) => {
    const subjects = (binding.subjects as Obj[] | undefined) ?? [];
    return (
      subjects.length > 0 &&
      subjects.every((s) => s.kind === "ServiceAccount" && gatewayAccounts.includes(`${s.namespace}/${s.name}`))
    );
  };
  const problems: string[] = [];
  for (const binding of objects) {
    const namespaces =
      binding.kind === "RoleBinding" && owned.has(binding.metadata?.namespace ?? "")
        ? [binding.metadata!.namespace!]
        : binding.kind === "ClusterRoleBinding" && !onlyGateway(binding)
          ? [...owned.keys()]
          : [];
    if (namespaces.length === 0) continue;
    const { rights, unknown } = roleRights(
      objects,
      (binding.roleRef as Obj | undefined) ?? {},
      binding.metadata?.namespace,
    );
    const where = namespaces.map((namespace) => `${namespace}, ${owned.get(namespace)}`).join("; ");
    const scope = binding.kind === "ClusterRoleBinding" ? "in every namespace, among them " : "in ";
    if (rights.length > 0) {
      problems.push(
        `${label(binding)}: grants ${[...new Set(rights)].join(", ")} ${scope}${where}; run exec targets in a namespace of their own`,
      );
    } else if (unknown) {
      problems.push(
        `${label(binding)}: binds ${unknown}, which the stack does not make and the pack does not know, so it cannot tell whether it grants exec or its equivalent ${scope}${where}; make the role in the stack or bind one whose rules the pack can see`,
      );
    }
  }
  return problems;
}

export const noExecIntoGatewayNamespace = stackPolicy(
  "entryway-no-exec-into-gateway-namespace",
  "No RoleBinding or ClusterRoleBinding grants exec or its equivalent (attach, debug containers, creating or changing pods or workloads, ServiceAccount tokens, nodes/proxy, impersonate, bind, escalate; every built-in role that has them, aggregated roles included) in a namespace the stack owns: the exec gateway's, the CONNECT gateway's, AnsibleForms'; a binding to a role the pack cannot see is reported, not passed.",
  "mandatory",
  checkNoExecIntoGatewayNamespace,
);
