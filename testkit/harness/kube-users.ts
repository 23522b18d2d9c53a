/**
 * A test user's rights and credentials on an API server: a Role and its RoleBinding for some
 * ServiceAccounts, a ServiceAccount's token from the TokenRequest API, and a kubeconfig that
 * authenticates with a token (as a pod's mounted token would).
 */
import { readFileSync } from "node:fs";
import { KubeConfig, type CoreV1Api, type RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";

/** A user's right to exec into the namespace's pods (the gateway's SubjectAccessReview asks for it). */
export const POD_EXEC_RULE: V1PolicyRule = { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] };

/** A ServiceAccount, by namespace and name. */
export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Creates the Role `role` with `rules` in `namespace` and a RoleBinding of it (named `binding`,
 * the Role's name unless given) for the ServiceAccounts `subjects`.
 */
export async function grantRole(
  rbac: RbacAuthorizationV1Api,
  namespace: string,
  role: { readonly name: string; readonly rules: V1PolicyRule[]; readonly binding?: string },
  subjects: readonly ServiceAccountRef[],
): Promise<void> {
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: role.name }, rules: role.rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: role.binding ?? role.name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.name },
      subjects: subjects.map((s) => ({ kind: "ServiceAccount", name: s.name, namespace: s.namespace })),
    },
  });
}

/** A token of the ServiceAccount `namespace/name` for `audiences` (the TokenRequest API), valid `seconds`. */
export async function serviceAccountToken(
  core: CoreV1Api,
  { namespace, name }: ServiceAccountRef,
  audiences: string[],
  seconds = 600,
): Promise<string> {
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences, expirationSeconds: seconds } },
  });
  if (!request.status?.token) throw new Error(`no token for ${namespace}/${name}`);
  return request.status.token;
}

/** A kubeconfig for the API server at `server` (its CA in `caFile`) that authenticates with `token`. */
export function tokenKubeConfig(server: string, caFile: string, token: string, user = "exec-gateway"): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "real", server, caData: readFileSync(caFile).toString("base64") }],
    users: [{ name: user, token }],
    contexts: [{ name: "real", cluster: "real", user }],
    currentContext: "real",
  });
  return config;
}
