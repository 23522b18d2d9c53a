/**
 * `entryway-exec-rbac`, mandatory (config: allowClusterWideExec, default false): a Role or
 * ClusterRole of the exec gateway, or any role granting exec or its equivalent (attach, adding
 * debug containers, creating or changing pods or the workloads that make them, ServiceAccount
 * tokens, nodes/proxy, impersonate, bind, escalate; or aggregating a built-in role that has them:
 * an aggregationRule selecting rbac.authorization.k8s.io/aggregate-to-edit or -to-admin),
 * names what it grants: no wildcard in
 * apiGroups, resources, verbs or resourceNames, no nonResourceURLs. A ClusterRole grants exec or its
 * equivalent only when the stack's policy config sets allowClusterWideExec: true (the exec gateway's
 * clusterWide: true); otherwise it is a Role per namespace.
 *
 * Upstream:
 * - https://kubernetes.io/docs/concepts/security/rbac-good-practices/ ("Least privilege": grant at
 *   the namespace level, avoid wildcards; "Kubernetes RBAC - privilege escalation risks": workload
 *   creation and token requests reach every ServiceAccount of the namespace);
 * - kubernetes/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go (ResourceMatches: how RBAC reads
 *   "*" and "*" + "/subresource"); KEP-4006 and kubernetes/kubernetes#133515 (exec over WebSocket
 *   authorized as `get` before 1.35).
 */
import {
  builtinExecAggregated,
  execRightsIn,
  label,
  resourcePolicy,
  type EntrywayPolicyConfig,
  type K8sObject,
  type Obj,
} from "./helpers";

export function checkExecRbac(o: K8sObject, config: EntrywayPolicyConfig = {}): string[] {
  if (o.kind !== "Role" && o.kind !== "ClusterRole") return [];
  const rules: Obj[] = (o.rules as Obj[] | undefined) ?? [];
  const isGateway = o.metadata?.labels?.["app.kubernetes.io/name"] === "exec-gateway";
  const execRights = [
    ...execRightsIn(rules),
    ...builtinExecAggregated(o).map((name) => `the built-in ${name}'s rights (aggregated)`),
  ];
  if (!isGateway && execRights.length === 0) return [];
  const problems: string[] = [];
  for (const [i, rule] of rules.entries()) {
    for (const field of ["apiGroups", "resources", "verbs", "resourceNames"]) {
      if ((rule[field] ?? []).some((v: string) => v === "*" || v.endsWith("/*"))) {
        problems.push(`${label(o)} rule ${i}: wildcard in ${field} (exec rights are granted name by name)`);
      }
    }
    if (rule.nonResourceURLs?.length) problems.push(`${label(o)} rule ${i}: nonResourceURLs are not needed to exec`);
  }
  if (o.kind === "ClusterRole" && execRights.length > 0 && !config.allowClusterWideExec) {
    problems.push(
      `${label(o)}: grants ${execRights.join(", ")} (exec or its equivalent) in every namespace; use a Role per namespace, or allow it with the policy config allowClusterWideExec: true`,
    );
  }
  return problems;
}

export const execRbac = resourcePolicy(
  "entryway-exec-rbac",
  "Exec rights (and their equivalents: attach, debug containers, creating or changing pods and workloads, ServiceAccount tokens, nodes/proxy, impersonate, bind, escalate, aggregating edit or admin) without wildcards, and in every namespace only when allowClusterWideExec is set.",
  "mandatory",
  checkExecRbac,
  { properties: { allowClusterWideExec: { type: "boolean", default: false } } },
);
