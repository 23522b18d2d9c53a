// The cluster decides: TokenReview authenticates the bearer token, then a SubjectAccessReview asks
// whether that user may `create` `pods/exec` in the target namespace (on the named pod when the client
// named one). The gateway's own service account needs `create` on tokenreviews and subjectaccessreviews.
//
// The TokenReview names the audiences the gateway accepts (default "entryway": users run
// `kubectl create token <sa> --audience entryway`), so a token made for the API server itself is
// refused. The API says (kubernetes/api authentication/v1/types.go, TokenReviewSpec.Audiences and
// TokenReviewStatus.Audiences): audience-aware authenticators check the token against spec.audiences,
// and a client that sets spec.audiences must check status.audiences holds one of them, because an
// authenticated review with empty status.audiences means the token is valid for the API server's
// own audience only.
//
// A debug container takes a second SubjectAccessReview for the same user: `patch` `pods/ephemeralcontainers`
// on the pod (what `kubectl debug` needs, kubernetes/kubectl pkg/cmd/debug/debug.go), so exec rights
// alone never add a container to somebody's pod.
//
// Reviewers of recordings are known by their groups: TokenReviewStatus.User (UserInfo.Groups, "the
// names of groups this user is a part of", same file).
//
// A session lasts no longer than its grant: the token's own exp (a service-account token from
// `kubectl create token --duration 10m` is a JWT; TokenReview has just verified it, and its status
// carries no expiry), and both reviews are asked again for a running session (recheck), so a deleted
// ServiceAccount (the token no longer authenticates: `expired`) or a removed RoleBinding (`denied`)
// ends it.
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig, type V1UserInfo } from "@kubernetes/client-node";
import {
  failClosed,
  identifyFailClosed,
  jwtExpiry,
  recheckFailSoft,
  type Authorizer,
  type DebugAccess,
  type Identity,
  type Recheck,
} from "./authorizer.js";

export function kubernetesAuthorizer(kubeConfig: KubeConfig, audiences: string[]): Authorizer {
  if (audiences.length === 0) throw new Error("tokenAudiences must name at least one audience");
  const authentication = kubeConfig.makeApiClient(AuthenticationV1Api);
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  /** The TokenReview's user (with uid, groups, extra), or why the token is refused. */
  async function review(
    token: string,
  ): Promise<{ ok: true; user: string; info: V1UserInfo } | { ok: false; reason: string; detail?: string }> {
    const { status } = await authentication.createTokenReview({
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token, audiences } },
    });
    const user = status?.user?.username;
    if (!status?.authenticated || !user)
      return { ok: false, reason: "token rejected", ...(status?.error ? { detail: status.error } : {}) };
    if (!status.audiences?.some((audience) => audiences.includes(audience))) {
      return {
        ok: false,
        reason: `token rejected: not made for audience ${audiences.join(" or ")} (kubectl create token --audience ${audiences[0]})`,
      };
    }
    return { ok: true, user, info: status.user! };
  }
  const { authorize } = failClosed("kubernetes", async ({ token, target }) => {
    if (target.kind === "docker")
      return { allow: false, reason: "the kubernetes authorizer only covers Kubernetes targets" };
    const reviewed = await review(token);
    if (!reviewed.ok)
      return { allow: false, reason: reviewed.reason, ...(reviewed.detail ? { detail: reviewed.detail } : {}) };
    const { user } = reviewed;
    /** The cluster's answer to "may this user (as TokenReview knows them) <verb> pods/<subresource> here?", and its reason. */
    const accessReview = async (
      { user: username, info }: { user: string; info: V1UserInfo },
      verb: string,
      subresource: string,
      namespace: string,
      name?: string,
    ) => {
      const access = await authorization.createSubjectAccessReview({
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: username,
            groups: info.groups,
            uid: info.uid,
            extra: info.extra,
            resourceAttributes: { namespace, verb, resource: "pods", subresource, ...(name ? { name } : {}) },
          },
        },
      });
      return {
        allowed: access.status?.allowed === true,
        why: access.status?.reason ? `: ${access.status.reason}` : "",
      };
    };
    const mayExec = (who: { user: string; info: V1UserInfo }) =>
      accessReview(who, "create", "exec", target.namespace, target.kind === "pod" ? target.pod : undefined);
    const exec = await mayExec(reviewed);
    if (!exec.allowed)
      return { allow: false, reason: `${user} may not exec in namespace ${target.namespace}${exec.why}`, user };
    const recheck = recheckFailSoft(async (): Promise<Recheck> => {
      const again = await review(token);
      if (!again.ok)
        return {
          outcome: "revoked",
          closeCode: "expired",
          reason: `the access token is no longer valid (${again.reason})`,
        };
      const still = await mayExec(again);
      if (still.allowed) return { outcome: "allowed" };
      return {
        outcome: "revoked",
        closeCode: "denied",
        reason: `permission denied: ${user} may no longer exec in namespace ${target.namespace}${still.why}`,
      };
    });
    const mayDebug: DebugAccess = async ({ namespace, pod }) => {
      try {
        const debug = await accessReview(reviewed, "patch", "ephemeralcontainers", namespace, pod);
        return debug.allowed
          ? { allow: true }
          : { allow: false, reason: `${user} may not add debug containers to pod ${namespace}/${pod}${debug.why}` };
      } catch (error) {
        return {
          allow: false,
          reason: "kubernetes authorizer unavailable",
          detail: error instanceof Error ? error.message : String(error),
        };
      }
    };
    const expiresAt = jwtExpiry(token);
    return { allow: true, user, mayDebug, recheck, ...(expiresAt !== undefined ? { expiresAt } : {}) };
  });
  // Groups as the API server authenticated them (TokenReviewStatus.user.groups).
  const identify = identifyFailClosed("kubernetes", async ({ token }): Promise<Identity> => {
    const reviewed = await review(token);
    if (!reviewed.ok)
      return { known: false, reason: reviewed.reason, ...(reviewed.detail ? { detail: reviewed.detail } : {}) };
    return { known: true, user: reviewed.user, groups: reviewed.info.groups ?? [] };
  });
  return { authorize, identify };
}
