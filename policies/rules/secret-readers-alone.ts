/**
 * `entryway-secret-readers-alone`, mandatory, stack-wide: a Role (or a ClusterRole bound by a
 * RoleBinding or ClusterRoleBinding) that may get, list or watch Secrets sits in a namespace where
 * the stack puts no Secret it need not read: only the certificates that namespace's Gateways serve
 * (spec.servers[].tls.credentialName) may sit beside it. It keeps the internet-facing CONNECT
 * gateway's Secret-reading Role alone with its TLS Secret. A ClusterRoleBinding that reads Secrets
 * reads them everywhere; Secrets made outside the stack are not seen.
 *
 * Upstream:
 * - istio pilot/pkg/credentials/kube/secrets.go (CredentialsController.Authorize): istiod serves a
 *   gateway its credentialName certificate only when the gateway's ServiceAccount may list every
 *   Secret of its namespace (a SubjectAccessReview, which resourceNames cannot narrow); istio
 *   manifests/charts/gateway/templates/role.yaml grants the same (docs/upstream-facts.md);
 * - https://kubernetes.io/docs/concepts/security/rbac-good-practices/ ("Listing secrets": list and
 *   watch return the Secrets' contents).
 */
import { label, stackPolicy, type K8sObject, type Obj } from "./helpers";

const READ_VERBS = ["get", "list", "watch", "*"];

/** The Secret names a rule lets its subject read: "*" for every Secret, none when it reads none. */
function secretsReadBy(rule: Obj): string[] {
  const core = (rule.apiGroups ?? []).some((g: string) => g === "" || g === "*");
  const secrets = (rule.resources ?? []).some((r: string) => r === "secrets" || r === "*");
  const reads = (rule.verbs ?? []).some((v: string) => READ_VERBS.includes(v));
  if (!core || !secrets || !reads) return [];
  return rule.resourceNames?.length ? rule.resourceNames : ["*"];
}

/**
 * Every Role (or ClusterRole bound by a RoleBinding) that may get, list or watch Secrets in a
 * namespace where the stack also puts a Secret it need not read. The internet-facing CONNECT
 * gateway is the case in point: istiod serves a gateway its TLS certificate only when the gateway's
 * ServiceAccount may list every Secret of its namespace (istio pilot/pkg/credentials/kube/secrets.go,
 * Authorize), so that namespace must hold nothing but the certificates its Gateways name
 * (spec.servers[].tls.credentialName). A ClusterRoleBinding that reads Secrets reads them everywhere.
 * Secrets the stack does not make (created by hand) are not seen here.
 */
export function checkSecretReaders(objects: K8sObject[]): string[] {
  const namespaceOf = (o: K8sObject) => o.metadata?.namespace ?? "";
  const clusterRoles = new Map(objects.filter((o) => o.kind === "ClusterRole").map((o) => [o.metadata?.name, o]));
  const served = new Set(
    objects
      .filter((o) => o.kind === "Gateway")
      .flatMap((g) =>
        ((g.spec as Obj | undefined)?.servers ?? [])
          .map((server: Obj) => server.tls?.credentialName)
          .filter(Boolean)
          .map((name: string) => `${namespaceOf(g)}/${name}`),
      ),
  );
  const secrets = objects.filter((o) => o.kind === "Secret" && !served.has(`${namespaceOf(o)}/${o.metadata?.name}`));
  const grants: { where: string; namespace: string | undefined; rules: Obj[] }[] = [];
  for (const o of objects) {
    if (o.kind === "Role")
      grants.push({ where: label(o), namespace: namespaceOf(o), rules: (o.rules as Obj[] | undefined) ?? [] });
    if (
      (o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding") &&
      (o.roleRef as Obj | undefined)?.kind === "ClusterRole"
    ) {
      const role = clusterRoles.get((o.roleRef as Obj).name);
      if (role)
        grants.push({
          where: `${label(o)} (${label(role)})`,
          namespace: o.kind === "RoleBinding" ? namespaceOf(o) : undefined,
          rules: (role.rules as Obj[] | undefined) ?? [],
        });
    }
  }
  const problems: string[] = [];
  for (const grant of grants) {
    const readable = grant.rules.flatMap(secretsReadBy);
    if (readable.length === 0) continue;
    const exposed = secrets.filter(
      (s) =>
        (grant.namespace === undefined || namespaceOf(s) === grant.namespace) &&
        (readable.includes("*") || readable.includes(s.metadata?.name ?? "")),
    );
    for (const secret of exposed) {
      problems.push(
        `${grant.where}: may read Secrets where ${label(secret)} lives; a Secret-reading role (the CONNECT gateway's) needs a namespace that holds only the certificates it serves`,
      );
    }
  }
  return problems;
}

export const secretReadersAlone = stackPolicy(
  "entryway-secret-readers-alone",
  "A role that may read Secrets (the CONNECT gateway's) sits in a namespace holding no Secret but the certificates its Gateways serve.",
  "mandatory",
  checkSecretReaders,
);
